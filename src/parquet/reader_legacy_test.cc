// Hand-built files with legacy layouts (2-level lists, bare repeated fields,
// no field ids), data page v1 and v2, compressed pages.
#include <gtest/gtest.h>

#include <limits>

#include "columnar/json_writer.h"
#include "common/endian.h"
#include "common/testing.h"
#include "io/file_io.h"
#include "parquet/compression.h"
#include "parquet/reader.h"
#include "parquet/rle_decoder.h"

namespace sluice::parquet {
namespace {

// Levels as one bit-packed hybrid run (LSB first).
std::string HybridLevels(const std::vector<int>& levels, int width) {
  std::string out;
  size_t groups = (levels.size() + 7) / 8;
  AppendVarint(&out, (groups << 1) | 1);
  std::string bits(groups * width, '\0');
  size_t bit = 0;
  for (size_t i = 0; i < groups * 8; ++i) {
    int v = i < levels.size() ? levels[i] : 0;
    for (int b = 0; b < width; ++b, ++bit) {
      if ((v >> b) & 1) bits[bit / 8] = static_cast<char>(bits[bit / 8] | (1 << (bit % 8)));
    }
  }
  return out + bits;
}

struct LeafPage {
  std::vector<int> rep, def;
  std::string plain_values;  // PLAIN encoding of the present values
  int max_rep = 0, max_def = 0;
  bool v2 = false;
  CompressionCodec codec = CompressionCodec::kUncompressed;
  PhysicalType type = PhysicalType::kInt32;
  std::vector<std::string> path;
};

// Appends one column chunk holding a single data page; returns its metadata.
ColumnChunk WriteChunk(const LeafPage& p, std::string* file) {
  std::string rep = p.max_rep ? HybridLevels(p.rep, BitWidth(p.max_rep)) : "";
  std::string def = p.max_def ? HybridLevels(p.def, BitWidth(p.max_def)) : "";
  PageHeader h;
  std::string body;
  if (p.v2) {
    std::string values;
    EXPECT_TRUE(Compress(p.codec, 0, p.plain_values, &values).ok());
    body = rep + def + values;
    h.type = PageType::kDataPageV2;
    h.uncompressed_page_size =
        static_cast<int32_t>(rep.size() + def.size() + p.plain_values.size());
    DataPageHeaderV2 d;
    d.num_values = static_cast<int32_t>(p.def.size());
    d.num_rows = 0;
    for (int r : p.rep) d.num_rows += r == 0;
    d.definition_levels_byte_length = static_cast<int32_t>(def.size());
    d.repetition_levels_byte_length = static_cast<int32_t>(rep.size());
    h.data_page_header_v2 = d;
  } else {
    std::string raw;
    for (const std::string* lv : {&rep, &def}) {
      if (lv->empty()) continue;
      AppendLE<uint32_t>(&raw, static_cast<uint32_t>(lv->size()));
      raw += *lv;
    }
    raw += p.plain_values;
    EXPECT_TRUE(Compress(p.codec, 0, raw, &body).ok());
    h.type = PageType::kDataPage;
    h.uncompressed_page_size = static_cast<int32_t>(raw.size());
    DataPageHeader d;
    d.num_values = static_cast<int32_t>(p.def.size());
    h.data_page_header = d;
  }
  h.compressed_page_size = static_cast<int32_t>(body.size());
  ColumnChunk cc;
  ColumnMetaData cm;
  cm.type = p.type;
  cm.path_in_schema = p.path;
  cm.codec = p.codec;
  cm.num_values = static_cast<int64_t>(p.def.size());
  cm.data_page_offset = static_cast<int64_t>(file->size());
  cc.file_offset = cm.data_page_offset;
  SerializePageHeader(h, file);
  *file += body;
  cm.total_compressed_size = static_cast<int64_t>(file->size()) - cm.data_page_offset;
  cm.total_uncompressed_size = cm.total_compressed_size;
  cc.meta_data = cm;
  return cc;
}

// Appends the footer of `md`, its length and the closing magic.
void EndFile(const FileMetaData& md, std::string* file) {
  std::string footer;
  SerializeFileMetaData(md, &footer);
  *file += footer;
  AppendLE<uint32_t>(file, static_cast<uint32_t>(footer.size()));
  *file += "PAR1";
}

SchemaElement Element(const std::string& name, std::optional<PhysicalType> type, Repetition rep,
                      int children = 0) {
  SchemaElement e;
  e.name = name;
  e.type = type;
  e.repetition_type = rep;
  if (children) e.num_children = children;
  return e;
}

std::vector<std::string> ReadJson(const std::string& bytes, Schema* schema = nullptr) {
  std::vector<std::string> rows;
  auto io = MakeMemoryFileIO();
  EXPECT_TRUE(io->WriteFile("legacy.parquet", bytes).ok());
  auto file = io->OpenInput("legacy.parquet");
  auto reader = ParquetReader::Open(std::move(*file));
  EXPECT_TRUE(reader.ok()) << reader.status().ToString();
  if (!reader.ok()) return rows;
  if (schema != nullptr) *schema = (*reader)->schema();
  Batch b;
  while (true) {
    auto more = (*reader)->Next(&b);
    EXPECT_TRUE(more.ok()) << more.status().ToString();
    if (!more.ok() || !*more) break;
    for (int64_t r = 0; r < b.num_rows(); ++r) {
      std::string line;
      AppendJsonRow(b, r, &line);
      rows.push_back(line);
    }
  }
  return rows;
}

TEST(ReaderLegacyTest, TwoLevelListAndBareRepeatedWithV1AndV2Pages) {
  for (bool v2 : {false, true}) {
    for (CompressionCodec codec : {CompressionCodec::kUncompressed, CompressionCodec::kZstd}) {
      SCOPED_TRACE(std::string(v2 ? "v2 " : "v1 ") + std::string(CodecName(codec)));
      FileMetaData md;
      md.schema.push_back(Element("spark_schema", std::nullopt, Repetition::kRequired, 2));
      SchemaElement l = Element("l", std::nullopt, Repetition::kOptional, 1);
      l.converted_type = ConvertedType::kList;
      md.schema.push_back(l);
      md.schema.push_back(Element("l_elem", PhysicalType::kInt32, Repetition::kRepeated));
      SchemaElement r = Element("r", PhysicalType::kByteArray, Repetition::kRepeated);
      r.converted_type = ConvertedType::kUtf8;
      md.schema.push_back(r);
      // l: [1, 2], null, [], [3]
      LeafPage lp;
      lp.path = {"l", "l_elem"};
      lp.max_rep = 1;
      lp.max_def = 2;
      lp.rep = {0, 1, 0, 0, 0};
      lp.def = {2, 2, 0, 1, 2};
      for (int32_t v : {1, 2, 3}) AppendLE(&lp.plain_values, v);
      lp.v2 = v2;
      lp.codec = codec;
      // r: ["a"], [], ["b", "c"], []
      LeafPage rp;
      rp.path = {"r"};
      rp.type = PhysicalType::kByteArray;
      rp.max_rep = 1;
      rp.max_def = 1;
      rp.rep = {0, 0, 0, 1, 0};
      rp.def = {1, 0, 1, 1, 0};
      for (const char* s : {"a", "b", "c"}) {
        AppendLE<uint32_t>(&rp.plain_values, 1);
        rp.plain_values += s;
      }
      rp.v2 = v2;
      rp.codec = codec;
      std::string file = "PAR1";
      RowGroup rg;
      rg.num_rows = 4;
      rg.columns.push_back(WriteChunk(lp, &file));
      rg.columns.push_back(WriteChunk(rp, &file));
      md.row_groups.push_back(rg);
      md.num_rows = 4;
      EndFile(md, &file);
      Schema schema;
      std::vector<std::string> rows = ReadJson(file, &schema);
      EXPECT_EQ(schema.ToString(), "struct<1: l: optional list<int>, 2: r: required list<string>>");
      EXPECT_EQ(rows,
                std::vector<std::string>({R"({"l":[1,2],"r":["a"]})", R"({"l":null,"r":[]})",
                                          R"({"l":[],"r":["b","c"]})", R"({"l":[3],"r":[]})"}));
    }
  }
}

// Footers whose counts and sizes lie (a value width of 2 GB, 2^40 values, an
// uncompressed size of INT64_MIN) size nothing by them: the file reads, or
// fails with an error, and never asks for terabytes.
TEST(ReaderLegacyTest, FooterCountsAndSizesThatLieAllocateNothingByThem) {
  struct Lie {
    const char* what;
    PhysicalType type;
    int32_t type_length;
    int64_t num_values;  // the chunk's claim (its page holds 3)
    int64_t uncompressed;
    bool reads;  // the rows come back (else an error)
  };
  const Lie lies[] = {
      {"a 2 GB fixed width", PhysicalType::kFixedLenByteArray, 2000000000, 4096, 0, false},
      {"2^40 values", PhysicalType::kInt64, 0, int64_t{1} << 40, 0, false},
      {"an uncompressed size of INT64_MIN", PhysicalType::kByteArray, 0, 3,
       std::numeric_limits<int64_t>::min(), true},
      {"an uncompressed size of INT64_MAX", PhysicalType::kByteArray, 0, 3,
       std::numeric_limits<int64_t>::max(), true},
  };
  for (const Lie& lie : lies) {
    SCOPED_TRACE(lie.what);
    FileMetaData md;
    md.schema.push_back(Element("schema", std::nullopt, Repetition::kRequired, 1));
    SchemaElement v = Element("v", lie.type, Repetition::kRequired);
    if (lie.type_length != 0) v.type_length = lie.type_length;
    md.schema.push_back(v);
    LeafPage p;
    p.path = {"v"};
    p.type = lie.type;
    p.def = {0, 0, 0};  // (three values; no levels: a required column)
    for (int64_t x : {7, 8, 9}) {
      if (lie.type == PhysicalType::kByteArray) {
        AppendLE<uint32_t>(&p.plain_values, 1);
        p.plain_values += static_cast<char>('a' + x);
      } else {
        AppendLE<int64_t>(&p.plain_values, x);
      }
    }
    std::string file = "PAR1";
    RowGroup rg;
    rg.num_rows = 3;
    ColumnChunk cc = WriteChunk(p, &file);
    cc.meta_data->num_values = lie.num_values;
    if (lie.uncompressed != 0) cc.meta_data->total_uncompressed_size = lie.uncompressed;
    rg.columns.push_back(cc);
    md.row_groups.push_back(rg);
    md.num_rows = 3;
    EndFile(md, &file);
    auto io = MakeMemoryFileIO();
    ASSERT_OK(io->WriteFile("lie.parquet", file));
    ASSERT_OK_AND_ASSIGN(auto in, io->OpenInput("lie.parquet"));
    auto reader = ParquetReader::Open(std::move(in));
    Result<bool> more = reader.ok() ? Result<bool>(false) : Result<bool>(reader.status());
    Batch b;
    if (reader.ok()) more = (*reader)->Next(&b);
    if (lie.reads) {
      ASSERT_OK(more.status());
      EXPECT_EQ(b.num_rows(), 3);
    } else {
      EXPECT_FALSE(more.ok());
    }
  }
}

}  // namespace
}  // namespace sluice::parquet
