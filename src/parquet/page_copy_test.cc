// Pages copied between files (page_copy.h, ParquetWriter::AppendRows): the
// merged file reads back as the rows a rewrite writes, with the same
// statistics and metrics but for what copying cannot know (NaN counts) or
// must keep (truncated bounds stay inexact); pages compressed more lightly
// or with another codec are recompressed, the others kept byte for byte.
#include "parquet/page_copy.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <set>

#include "columnar/json_writer.h"
#include "common/testing.h"
#include "parquet/reader.h"
#include "parquet/statistics.h"
#include "parquet/test_util.h"
#include "parquet/writer.h"

namespace sluice::parquet {
namespace {

constexpr std::string_view kColumns =
    "id BIGINT NOT NULL, url STRING, amount DOUBLE, price DECIMAL(20,2), flag BOOLEAN, "
    "ts TIMESTAMPTZ, kind STRING";

class PageCopyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("sluice_page_copy_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    io_ = MakeLocalFileIO();
    schema_ = MakeSchema(kColumns);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string Path(const std::string& name) { return (dir_ / name).string(); }

  // Rows [first, last): long distinct URLs (their bounds are truncated),
  // or with `short_urls` five short ones (a dictionary), some null; a kind
  // of three values.
  Batch Rows(int first, int last, bool short_urls = false) {
    std::string lines;
    for (int i = first; i < last; ++i) {
      std::string url = i % 7 == 3   ? "null"
                        : short_urls ? fmt::format("\"u{}\"", i % 5)
                                     : fmt::format("\"https://example.com/item/{}\"", i);
      lines += fmt::format(
          R"({{"id":{},"url":{},"amount":{},"price":"{}.25","flag":{},"ts":"2024-01-01T00:00:{:02d}Z","kind":"{}"}})"
          "\n",
          i, url, i % 11 == 0 ? "null" : std::to_string(i * 0.5), i - 500,
          i % 3 == 0 ? "true" : "false", i % 60, i % 3 == 0 ? "a" : (i % 3 == 1 ? "bb" : "ccc"));
    }
    return FromJson(schema_, lines);
  }

  Result<FileMetrics> Write(const std::string& path, const Batch& rows, WriterOptions o) {
    ASSIGN_OR_RETURN(auto out, io_->OpenOutput(path, true));
    ASSIGN_OR_RETURN(auto w, ParquetWriter::Open(std::move(out), *schema_, std::move(o)));
    RETURN_IF_ERROR(w->Write(rows));
    return w->Close();
  }

  // Merges `inputs` into `path` as compaction does (OpenMergeInput,
  // ReadMergePieces); `copied_bytes` counts the bytes of pages copied.
  // (amount, field 3, is known to hold no NaN unless `nan_free` says otherwise)
  Result<FileMetrics> Merge(const std::string& path, const std::vector<std::string>& inputs,
                            int64_t* copied_bytes, int64_t min_bytes = 0,
                            const std::set<int32_t>& nan_free = {3}, WriterOptions options = {}) {
    ASSIGN_OR_RETURN(auto out, io_->OpenOutput(path, true));
    ASSIGN_OR_RETURN(auto w, ParquetWriter::Open(std::move(out), *schema_, std::move(options)));
    PageCompressor compressor(CompressionCodec::kZstd, 0);  // as the output's
    MergePieces pieces;
    for (const std::string& input : inputs) {
      ASSIGN_OR_RETURN(auto footer_file, io_->OpenInput(input));
      ASSIGN_OR_RETURN(auto footer, ParquetReader::Open(std::move(footer_file)));
      ASSIGN_OR_RETURN(auto values_file, io_->OpenInput(input));
      ASSIGN_OR_RETURN(MergeInput in, OpenMergeInput(std::move(footer), std::move(values_file),
                                                     *schema_, min_bytes, nan_free));
      for (int g = 0; g < in.footer->num_row_groups(); ++g) {
        RETURN_IF_ERROR(ReadMergePieces(in, g, schema_, &compressor, &pieces));
        RETURN_IF_ERROR(w->AppendRows(pieces.num_rows, pieces.values, pieces.copied));
        *copied_bytes += pieces.copied_bytes;
      }
    }
    return w->Close();
  }

  Result<std::vector<std::string>> ReadBack(const std::string& path, FileMetaData* md) {
    ASSIGN_OR_RETURN(auto in, io_->OpenInput(path));
    ASSIGN_OR_RETURN(auto reader, ParquetReader::Open(std::move(in)));
    *md = reader->metadata();
    std::vector<std::string> rows;
    Batch b;
    while (true) {
      ASSIGN_OR_RETURN(bool more, reader->Next(&b));
      if (!more) break;
      for (int64_t r = 0; r < b.num_rows(); ++r) {
        std::string s;
        AppendJsonRow(b, r, &s);
        rows.push_back(std::move(s));
      }
    }
    return rows;
  }

  // The bytes of column `col`'s chunk in row group `rg` of `path`.
  std::string ChunkBytes(const std::string& path, int rg, int col) {
    FileMetaData md;
    EXPECT_OK(ReadBack(path, &md).status());
    const ColumnMetaData& c = *md.row_groups[rg].columns[col].meta_data;
    auto bytes = io_->ReadFile(path);
    EXPECT_OK(bytes.status());
    return bytes->substr(static_cast<size_t>(c.data_page_offset),
                         static_cast<size_t>(c.total_compressed_size));
  }

  std::filesystem::path dir_;
  std::unique_ptr<FileIO> io_;
  std::shared_ptr<const Schema> schema_;
};

TEST_F(PageCopyTest, AMergedFileReadsAsARewriteWithItsStatisticsAndMetrics) {
  // a: zstd level 1 (as pipelines write), two row groups, dictionaries on
  // (kind keeps one: it is decoded); b: snappy, v2 pages, no dictionaries
  // (every column copied, recompressed); c: zstd 3 (kept byte for byte);
  // d, first: short URLs with a dictionary (url decoded there: its exact
  // bounds meet the others' truncated ones, and its dictionary pages come
  // before the copied pages, which the dictionary falls back from).
  WriterOptions a;
  a.compression_level = 1;
  a.row_group_rows = 300;
  WriterOptions b;
  b.codec = CompressionCodec::kSnappy;
  b.data_page_v2 = true;
  b.dictionary = false;
  ASSERT_OK(Write(Path("a.parquet"), Rows(0, 600), a).status());
  ASSERT_OK(Write(Path("b.parquet"), Rows(600, 900), b).status());
  ASSERT_OK(Write(Path("c.parquet"), Rows(900, 1200), WriterOptions{}).status());
  ASSERT_OK(Write(Path("d.parquet"), Rows(1200, 1500, true), WriterOptions{}).status());
  const std::vector<std::string> inputs = {Path("d.parquet"), Path("a.parquet"), Path("b.parquet"),
                                           Path("c.parquet")};
  FileMetrics want;
  {
    ASSERT_OK_AND_ASSIGN(auto out, io_->OpenOutput(Path("rewrite.parquet"), true));
    ASSERT_OK_AND_ASSIGN(auto w, ParquetWriter::Open(std::move(out), *schema_, WriterOptions{}));
    ASSERT_OK(w->Write(Rows(1200, 1500, true)));
    ASSERT_OK(w->Write(Rows(0, 1200)));
    ASSERT_OK_AND_ASSIGN(want, w->Close());
  }

  int64_t copied = 0;
  ASSERT_OK_AND_ASSIGN(FileMetrics got, Merge(Path("merged.parquet"), inputs, &copied));
  EXPECT_GT(copied, 0);
  FileMetaData merged, rewrite;
  ASSERT_OK_AND_ASSIGN(auto rows, ReadBack(Path("merged.parquet"), &merged));
  ASSERT_OK_AND_ASSIGN(auto want_rows, ReadBack(Path("rewrite.parquet"), &rewrite));
  ASSERT_EQ(rows.size(), 1500u);
  EXPECT_EQ(rows, want_rows);
  ASSERT_EQ(merged.row_groups.size(), 1u) << "one row group of the merged rows";

  EXPECT_EQ(got.record_count, want.record_count);
  for (const auto& [id, w] : want.fields) {
    const FieldMetrics& g = got.fields.at(id);
    EXPECT_EQ(g.value_count, w.value_count) << id;
    EXPECT_EQ(g.null_count, w.null_count) << id;
    EXPECT_EQ(g.lower_bound, w.lower_bound) << id;
    EXPECT_EQ(g.upper_bound, w.upper_bound) << id;
    EXPECT_EQ(g.nan_count, w.nan_count) << id;
  }
  // The chunks' metadata as a rewrite's (but their sizes and encodings), laid
  // out one after the other.
  const RowGroup& rg = merged.row_groups[0];
  for (size_t c = 0; c < schema_->fields.size(); ++c) {
    const ColumnMetaData& g = *rg.columns[c].meta_data;
    const ColumnMetaData& w = *rewrite.row_groups[0].columns[c].meta_data;
    EXPECT_EQ(g.codec, CompressionCodec::kZstd) << c;
    EXPECT_EQ(g.num_values, w.num_values) << c;
    const int64_t start = g.dictionary_page_offset.value_or(g.data_page_offset);
    EXPECT_EQ(rg.columns[c].file_offset, start) << c;
    if (c + 1 < schema_->fields.size()) {
      const ColumnMetaData& next = *rg.columns[c + 1].meta_data;
      EXPECT_EQ(start + g.total_compressed_size,
                next.dictionary_page_offset.value_or(next.data_page_offset))
          << c;
    }
    ASSERT_TRUE(g.statistics && w.statistics) << c;
    EXPECT_EQ(g.statistics->null_count, w.statistics->null_count) << c;
    EXPECT_EQ(g.statistics->min_value, w.statistics->min_value) << c;
    EXPECT_EQ(g.statistics->max_value, w.statistics->max_value) << c;
    EXPECT_EQ(g.statistics->is_min_value_exact, w.statistics->is_min_value_exact) << c;
    EXPECT_EQ(g.statistics->is_max_value_exact, w.statistics->is_max_value_exact) << c;
  }
  const ColumnMetaData& id = *rg.columns[0].meta_data;
  EXPECT_FALSE(id.dictionary_page_offset) << "id's pages are all copied";
  EXPECT_EQ(id.encodings, (std::vector<Encoding>{Encoding::kPlain}));
  const ColumnMetaData& url = *rg.columns[1].meta_data;
  EXPECT_TRUE(url.dictionary_page_offset) << "d's short URLs, decoded, have a dictionary";
  EXPECT_EQ(url.statistics->is_min_value_exact, false) << "a copied chunk's truncated prefix";
  EXPECT_EQ(url.statistics->is_max_value_exact, true) << "\"u4\", a decoded value";

  // Without amount's NaN count known its pages are decoded; the rest as before.
  int64_t without_amount = 0;
  ASSERT_OK_AND_ASSIGN(FileMetrics decoded_amount,
                       Merge(Path("merged2.parquet"), inputs, &without_amount, 0, {}));
  EXPECT_GT(without_amount, 0);
  EXPECT_LT(without_amount, copied);
  EXPECT_EQ(decoded_amount.fields.at(3).nan_count, want.fields.at(3).nan_count);

  // Chunks smaller than min_bytes are decoded: the same rows, nothing copied.
  int64_t none = 0;
  ASSERT_OK(Merge(Path("decoded.parquet"), inputs, &none, int64_t{1} << 40).status());
  EXPECT_EQ(none, 0);
  FileMetaData decoded;
  ASSERT_OK_AND_ASSIGN(auto decoded_rows, ReadBack(Path("decoded.parquet"), &decoded));
  EXPECT_EQ(decoded_rows, want_rows);

  // c's pages (zstd 3, as the output) are in the merged file as they were;
  // a's (zstd 1) were compressed again.
  ASSERT_OK_AND_ASSIGN(std::string bytes, io_->ReadFile(Path("merged.parquet")));
  EXPECT_NE(bytes.find(ChunkBytes(Path("c.parquet"), 0, 0)), std::string::npos);
  EXPECT_EQ(bytes.find(ChunkBytes(Path("a.parquet"), 0, 0)), std::string::npos);
}

// A merge writes the leaves it decodes in pages of at most the output's
// page_rows, as any write does; the pages it copies keep the rows they hold.
TEST_F(PageCopyTest, AMergeCutsTheLeavesItWritesAtThePageRowLimitAndKeepsCopiedPagesWhole) {
  // x: no dictionaries and no row limit, so each chunk is one page of 3,000
  // rows, all copied; y: its short URLs, timestamps and kinds keep their
  // dictionaries (5, 60 and 3 values), so those chunks are decoded and
  // written anew; its other columns (distinct values, booleans) keep none
  // and are copied too.
  WriterOptions x;
  x.dictionary = false;
  x.page_rows = 0;
  WriterOptions y;
  y.page_rows = 0;
  ASSERT_OK(Write(Path("x.parquet"), Rows(0, 3000), x).status());
  ASSERT_OK(Write(Path("y.parquet"), Rows(3000, 6000, true), y).status());
  WriterOptions out;
  out.page_rows = 1000;
  int64_t copied = 0;
  ASSERT_OK(
      Merge(Path("merged.parquet"), {Path("x.parquet"), Path("y.parquet")}, &copied, 0, {3}, out)
          .status());
  EXPECT_GT(copied, 0);
  FileMetaData md;
  ASSERT_OK_AND_ASSIGN(auto rows, ReadBack(Path("merged.parquet"), &md));
  std::vector<std::string> want;
  for (const Batch& b : {Rows(0, 3000), Rows(3000, 6000, true)}) {
    for (int64_t r = 0; r < b.num_rows(); ++r) {
      std::string s;
      AppendJsonRow(b, r, &s);
      want.push_back(std::move(s));
    }
  }
  EXPECT_EQ(rows, want);
  ASSERT_EQ(md.row_groups.size(), 1u);
  ASSERT_OK_AND_ASSIGN(std::string bytes, io_->ReadFile(Path("merged.parquet")));
  const std::vector<int64_t> copied_twice = {3000, 3000};
  const std::vector<int64_t> copied_then_written = {3000, 1000, 1000, 1000};
  const std::vector<std::vector<int64_t>> want_pages = {
      copied_twice,         // id
      copied_then_written,  // url
      copied_twice,         // amount
      copied_twice,         // price
      copied_twice,         // flag
      copied_then_written,  // ts
      copied_then_written,  // kind
  };
  for (size_t c = 0; c < schema_->fields.size(); ++c) {
    EXPECT_EQ(DataPageValues(bytes, *md.row_groups[0].columns[c].meta_data), want_pages[c])
        << "column " << schema_->fields[c].name;
  }
}

TEST(CopiedBytesBoundsTest, TheLeastAndGreatestBoundsWinAndATieWithAValueIsExact) {
  CopiedBytesBounds b;
  b.Merge("b", false, "x", false, false);
  b.Merge("c", true, "w", true, false);
  EXPECT_EQ(b.min, "b");
  EXPECT_FALSE(b.min_exact);
  EXPECT_EQ(b.max, "x");
  EXPECT_FALSE(b.max_exact);
  b.Merge("b", true, "x", true, false);  // the same bounds, as values
  EXPECT_TRUE(b.min_exact);
  EXPECT_TRUE(b.max_exact);
  b.Merge("a", false, "y", false, false);
  EXPECT_FALSE(b.min_exact);
  EXPECT_FALSE(b.max_exact);

  EncodedStats values;  // exact values of decoded pages
  values.has_min_max = true;
  values.min = "a";
  values.max = "z";
  b.FoldInto(&values, false);
  EXPECT_EQ(values.min, "a") << "a tie: the decoded value is in the data";
  EXPECT_TRUE(values.min_exact);
  EXPECT_EQ(values.max, "z");
  EXPECT_TRUE(values.max_exact);
  EncodedStats narrow;
  narrow.has_min_max = true;
  narrow.min = narrow.max = "m";
  b.FoldInto(&narrow, false);
  EXPECT_EQ(narrow.min, "a");
  EXPECT_FALSE(narrow.min_exact);
  EXPECT_EQ(narrow.max, "y");
  EXPECT_FALSE(narrow.max_exact);
}

TEST_F(PageCopyTest, OnlyChunksWithoutADictionaryAndWithStatisticsAreCopied) {
  ASSERT_OK(Write(Path("a.parquet"), Rows(0, 300), WriterOptions{}).status());
  FileMetaData md;
  ASSERT_OK(ReadBack(Path("a.parquet"), &md).status());
  ASSERT_OK_AND_ASSIGN(auto in, io_->OpenInput(Path("a.parquet")));
  ASSERT_OK_AND_ASSIGN(auto reader, ParquetReader::Open(std::move(in)));
  const std::vector<ColumnDescriptor>& leaves = reader->columns();
  std::string why;
  EXPECT_TRUE(CanCopyChunk(leaves[0], md.row_groups[0].columns[0], 0, &why)) << why;
  EXPECT_FALSE(CanCopyChunk(leaves[6], md.row_groups[0].columns[6], 0, &why)) << "kind";
  EXPECT_EQ(why, "a dictionary page");
  ColumnChunk no_stats = md.row_groups[0].columns[0];
  no_stats.meta_data->statistics.reset();
  EXPECT_FALSE(CanCopyChunk(leaves[0], no_stats, 0, &why));
  EXPECT_EQ(why, "no statistics");
  ColumnChunk no_nulls = md.row_groups[0].columns[1];
  no_nulls.meta_data->statistics->null_count.reset();
  EXPECT_FALSE(CanCopyChunk(leaves[1], no_nulls, 0, &why));
  EXPECT_EQ(why, "no null count");
  ColumnChunk nan = md.row_groups[0].columns[2];
  const double q = std::numeric_limits<double>::quiet_NaN();
  nan.meta_data->statistics->max_value = std::string(reinterpret_cast<const char*>(&q), 8);
  EXPECT_FALSE(CanCopyChunk(leaves[2], nan, 0, &why));
  EXPECT_EQ(why, "NaN bounds");
  ColumnChunk inexact = md.row_groups[0].columns[0];
  inexact.meta_data->statistics->is_max_value_exact = false;
  EXPECT_FALSE(CanCopyChunk(leaves[0], inexact, 0, &why));
  EXPECT_EQ(why, "inexact bounds");
  ColumnChunk narrow = md.row_groups[0].columns[0];
  narrow.meta_data->statistics->min_value->resize(4);
  EXPECT_FALSE(CanCopyChunk(leaves[0], narrow, 0, &why));
  EXPECT_EQ(why, "bounds of another width");
  ColumnChunk other = md.row_groups[0].columns[0];
  other.meta_data->type = PhysicalType::kInt32;
  EXPECT_FALSE(CanCopyChunk(leaves[0], other, 0, &why));
  EXPECT_EQ(why, "another physical type");
  const int64_t id_bytes = md.row_groups[0].columns[0].meta_data->total_uncompressed_size;
  EXPECT_TRUE(CanCopyChunk(leaves[0], md.row_groups[0].columns[0], id_bytes, &why)) << why;
  EXPECT_FALSE(CanCopyChunk(leaves[0], md.row_groups[0].columns[0], id_bytes + 1, &why));
  EXPECT_EQ(why, "small pages");
}

TEST_F(PageCopyTest, ACorruptPageHeaderIsAnErrorNamingTheFileAndColumn) {
  ASSERT_OK(Write(Path("a.parquet"), Rows(0, 300), WriterOptions{}).status());
  FileMetaData md;
  ASSERT_OK(ReadBack(Path("a.parquet"), &md).status());
  const ColumnChunk chunk = md.row_groups[0].columns[0];
  ASSERT_OK_AND_ASSIGN(std::string bytes, io_->ReadFile(Path("a.parquet")));
  // The first page header's first byte: a field header of type 9 (a list)
  // where PageHeader's first field, an i32, is.
  bytes[static_cast<size_t>(chunk.meta_data->data_page_offset)] = 0x19;
  ASSERT_OK(io_->WriteFile(Path("bad.parquet"), bytes, true));
  ASSERT_OK_AND_ASSIGN(auto in, io_->OpenInput(Path("bad.parquet")));
  ASSERT_OK_AND_ASSIGN(auto reader, ParquetReader::Open(std::move(in)));
  PageCompressor compressor(CompressionCodec::kZstd, 0);
  for (bool verbatim : {true, false}) {
    auto pages =
        ReadPagesToCopy(reader->file(), reader->columns()[0], chunk, verbatim, &compressor);
    ASSERT_FALSE(pages.ok());
    EXPECT_EQ(pages.status().code(), StatusCode::kCorruption) << pages.status().ToString();
    EXPECT_NE(pages.status().message().find("bad.parquet"), std::string::npos);
    EXPECT_NE(pages.status().message().find("column id"), std::string::npos);
    EXPECT_NE(pages.status().message().find("page 0"), std::string::npos);
  }
}

}  // namespace
}  // namespace sluice::parquet
