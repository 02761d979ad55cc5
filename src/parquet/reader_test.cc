// ParquetReader on files written by DuckDB (testdata/, see make_testdata.mjs)
// and on small hand-built files, valid and corrupt.
#include "parquet/reader.h"

#include <gtest/gtest.h>

#include "columnar/json_writer.h"
#include "common/endian.h"
#include "common/testing.h"
#include "io/file_io.h"

namespace sluice::parquet {
namespace {

Result<std::unique_ptr<ParquetReader>> OpenLocal(const std::string& path,
                                                 ReaderOptions options = {}) {
  auto io = MakeLocalFileIO();
  ASSIGN_OR_RETURN(auto file, io->OpenInput(path));
  return ParquetReader::Open(std::move(file), std::move(options));
}

int FieldIndex(const Batch& b, const std::string& name) {
  for (size_t i = 0; i < b.schema->fields.size(); ++i) {
    if (b.schema->fields[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

// The rows of testdata/duck_*.parquet follow the formulas of make_testdata.mjs
// for row i; check the columns that exercise levels and encodings against them.
void CheckDuckRows(const std::string& path, int64_t expected_rows) {
  SCOPED_TRACE(path);
  ASSERT_OK_AND_ASSIGN(auto reader, OpenLocal(path));
  Batch b;
  int64_t i = 0;
  while (true) {
    ASSERT_OK_AND_ASSIGN(bool more, reader->Next(&b));
    if (!more) break;
    const Column& id = b.columns[FieldIndex(b, "id")];
    const Column& small = b.columns[FieldIndex(b, "small")];
    const Column& str = b.columns[FieldIndex(b, "str")];
    const Column& ints = b.columns[FieldIndex(b, "ints")];
    const Column& strs = b.columns[FieldIndex(b, "strs")];
    const Column& st = b.columns[FieldIndex(b, "st")];
    const Column& m = b.columns[FieldIndex(b, "m")];
    const Column& nested = b.columns[FieldIndex(b, "nested")];
    const Column& u64 = b.columns[FieldIndex(b, "u64")];
    const Column& ts_ms = b.columns[FieldIndex(b, "ts_ms")];
    for (int64_t r = 0; r < b.num_rows(); ++r, ++i) {
      ASSERT_EQ(id.Value<int64_t>(r), i);
      ASSERT_EQ(small.IsNull(r), i % 7 == 0) << i;
      if (i % 7) {
        ASSERT_EQ(small.Value<int32_t>(r), i * 37 % 1000);
      }
      ASSERT_EQ(str.IsNull(r), i % 5 == 0) << i;
      if (i % 5) {
        ASSERT_EQ(str.GetBytes(r), "name-" + std::to_string(i % 50) + std::string(i % 13, 'x'));
      }
      // ints: null when i%4==0, else [i, i+1, ..., i + i%5 - 1]
      ASSERT_EQ(ints.IsNull(r), i % 4 == 0) << i;
      ASSERT_EQ(ints.ListEnd(r) - ints.ListBegin(r), i % 4 == 0 ? 0u : uint32_t(i % 5)) << i;
      for (uint32_t k = ints.ListBegin(r); k < ints.ListEnd(r); ++k) {
        ASSERT_EQ(ints.child(0).Value<int64_t>(k), i + (k - ints.ListBegin(r)));
      }
      // strs: null when i%6==0, else i%3 elements, the one at x==1 null.
      ASSERT_EQ(strs.IsNull(r), i % 6 == 0);
      if (i % 6) {
        ASSERT_EQ(strs.ListEnd(r) - strs.ListBegin(r), uint32_t(i % 3));
        for (uint32_t k = strs.ListBegin(r), x = 0; k < strs.ListEnd(r); ++k, ++x) {
          ASSERT_EQ(strs.child(0).IsNull(k), x == 1);
          if (x != 1) {
            ASSERT_EQ(strs.child(0).GetBytes(k), "s" + std::to_string(x + i));
          }
        }
      }
      // st: null when i%9==0; b null when i even; c.d = 2i.
      ASSERT_EQ(st.IsNull(r), i % 9 == 0);
      ASSERT_EQ(st.child(0).IsNull(r), i % 9 == 0);
      if (i % 9) {
        ASSERT_EQ(st.child(0).Value<int64_t>(r), i);
        ASSERT_EQ(st.child(1).IsNull(r), i % 2 == 0);
        ASSERT_EQ(st.child(2).child(0).Value<int64_t>(r), 2 * i);
      }
      // m: null when i%8==0, else keys k0..k{i%4-1}, value x*i (null at x==2).
      ASSERT_EQ(m.IsNull(r), i % 8 == 0);
      if (i % 8) {
        ASSERT_EQ(m.ListEnd(r) - m.ListBegin(r), uint32_t(i % 4));
        for (uint32_t k = m.ListBegin(r), x = 0; k < m.ListEnd(r); ++k, ++x) {
          ASSERT_EQ(m.child(0).GetBytes(k), "k" + std::to_string(x));
          ASSERT_EQ(m.child(1).IsNull(k), x == 2);
          if (x != 2) {
            ASSERT_EQ(m.child(1).Value<int64_t>(k), int64_t(x) * i);
          }
        }
      }
      // nested: i%3 inner lists, the x-th holding [i, ..., i + x - 1].
      ASSERT_EQ(nested.ListEnd(r) - nested.ListBegin(r), uint32_t(i % 3));
      const Column& inner = nested.child(0);
      for (uint32_t k = nested.ListBegin(r), x = 0; k < nested.ListEnd(r); ++k, ++x) {
        ASSERT_EQ(inner.ListEnd(k) - inner.ListBegin(k), x);
        for (uint32_t e = inner.ListBegin(k); e < inner.ListEnd(k); ++e) {
          ASSERT_EQ(inner.child(0).Value<int64_t>(e), i + (e - inner.ListBegin(k)));
        }
      }
      ASSERT_EQ(u64.Value<int128_t>(r), int128_t(i) * 4000000000000000);
      // TIMESTAMP_MS: 1234567 µs steps, which DuckDB's cast rounds to ms; read back in µs.
      int64_t base = 1622505600000000;  // 2021-06-01T00:00:00Z
      ASSERT_EQ(ts_ms.Value<int64_t>(r), base + (i * 1234567 + 500) / 1000 * 1000);
    }
  }
  EXPECT_EQ(i, expected_rows);
}

TEST(ReaderTest, DuckDbNestedV1Pages) {
  CheckDuckRows("src/parquet/testdata/duck_v1.parquet", 1000);
}

TEST(ReaderTest, DuckDbV2PagesWithDeltaAndByteStreamSplit) {
  CheckDuckRows("src/parquet/testdata/duck_v2.parquet", 3000);
}

// Row 1 as DuckDB 1.5 reads it (checked with read_parquet through
// @duckdb/node-api; DuckDB prints the map as [k0=>0] and timestamps without
// the 'T').
TEST(ReaderTest, DuckDbRowAsJson) {
  ASSERT_OK_AND_ASSIGN(auto reader, OpenLocal("src/parquet/testdata/duck_v2.parquet"));
  Batch b;
  ASSERT_OK_AND_ASSIGN(bool more, reader->Next(&b));
  ASSERT_TRUE(more);
  std::string line;
  AppendJsonRow(b, 1, &line);
  EXPECT_EQ(line, R"({"id":1,"small":37,"big":1000003,"dbl":0.3333333333333333,"flt":0.25,)"
                  R"("str":"name-1x","dec9":"12.34","dec18":"1234567.891",)"
                  R"("dec38":"98765432109876.5432","d":"2020-01-02",)"
                  R"("ts":"2021-06-01T00:00:01.234567","ts_ms":"2021-06-01T00:00:01.235000",)"
                  R"("ts_ns":"2021-06-01T00:00:01.234567000",)"
                  R"("tstz":"2021-06-01T00:00:00.000007+00:00","t":"00:00:01.000001","u8":1,)"
                  R"("u32":100000,"u64":"4000000000000000","flag":false,"ints":[1],"strs":["s1"],)"
                  R"("st":{"a":1,"b":"b1","c":{"d":2}},"m":{"k0":0},"nested":[[]],)"
                  R"("structs":[{"p":0,"q":"q0"}]})");
}

TEST(ReaderTest, ProjectionByNestedFieldId) {
  ASSERT_OK_AND_ASSIGN(auto full, OpenLocal("src/parquet/testdata/duck_v1.parquet"));
  const Field* st = full->schema().FindByName("st");
  ASSERT_NE(st, nullptr);
  int32_t d_id = st->type->fields()[2].type->fields()[0].id;  // st.c.d
  int32_t m_key_id = full->schema().FindByName("m")->type->fields()[0].id;
  int32_t id_id = full->schema().FindByName("id")->id;
  ReaderOptions options;
  options.field_ids = {m_key_id, d_id, id_id};
  ASSERT_OK_AND_ASSIGN(auto reader, OpenLocal("src/parquet/testdata/duck_v1.parquet", options));
  const Schema& p = *reader->projected_schema();
  ASSERT_EQ(p.fields.size(), 3u);  // file order: id, st, m
  EXPECT_EQ(p.fields[0].name, "id");
  EXPECT_EQ(p.fields[1].type->ToString(), "struct<" + std::to_string(st->type->fields()[2].id) +
                                              ": c: optional struct<" + std::to_string(d_id) +
                                              ": d: optional long>>");
  EXPECT_EQ(p.fields[2].type->id(), TypeId::kMap);  // maps are kept whole
  Batch b;
  ASSERT_OK_AND_ASSIGN(bool more, reader->Next(&b));
  ASSERT_TRUE(more);
  ASSERT_EQ(b.num_rows(), 1000);
  EXPECT_TRUE(b.columns[1].IsNull(9));
  EXPECT_EQ(b.columns[1].child(0).child(0).Value<int64_t>(10), 20);
  std::string line;
  AppendJsonRow(b, 3, &line);
  EXPECT_EQ(line, R"({"id":3,"st":{"c":{"d":6}},"m":{"k0":0,"k1":3,"k2":null}})");
}

// ---------------------------------------------------------------- hand-built files

std::string Levels1(const std::vector<bool>& present) {
  // One bit-packed run at width 1, with the v1 4-byte length prefix.
  std::string runs;
  size_t groups = (present.size() + 7) / 8;
  AppendVarint(&runs, (groups << 1) | 1);
  std::string bits(groups, '\0');
  for (size_t i = 0; i < present.size(); ++i) {
    if (present[i]) bits[i / 8] = static_cast<char>(bits[i / 8] | (1 << (i % 8)));
  }
  runs += bits;
  std::string out;
  AppendLE<uint32_t>(&out, static_cast<uint32_t>(runs.size()));
  return out + runs;
}

struct BuildOptions {
  bool dictionary = false;
  int32_t extra_compressed_size = 0;     // added to the data page's compressed size
  int dict_index_override = -1;          // replaces the first dictionary index
  std::optional<std::string> def_bytes;  // replaces the definition levels
};

BuildOptions Opt(bool dictionary, int32_t extra = 0, int dict_index = -1,
                 std::optional<std::string> def_bytes = std::nullopt) {
  BuildOptions o;
  o.dictionary = dictionary;
  o.extra_compressed_size = extra;
  o.dict_index_override = dict_index;
  o.def_bytes = std::move(def_bytes);
  return o;
}

// A file with one optional INT32 column "x" (field id 1) and one row group per
// entry of `groups` (nullopt = null), uncompressed, with min/max statistics.
std::string BuildFile(const std::vector<std::vector<std::optional<int32_t>>>& groups,
                      const BuildOptions& opt = BuildOptions()) {
  std::string file = "PAR1";
  FileMetaData md;
  SchemaElement root;
  root.name = "schema";
  root.num_children = 1;
  SchemaElement x;
  x.name = "x";
  x.type = PhysicalType::kInt32;
  x.repetition_type = Repetition::kOptional;
  x.field_id = 1;
  md.schema = {root, x};
  for (const auto& values : groups) {
    ColumnMetaData cm;
    cm.type = PhysicalType::kInt32;
    cm.path_in_schema = {"x"};
    cm.num_values = static_cast<int64_t>(values.size());
    std::vector<bool> present;
    std::vector<int32_t> dense;
    for (const auto& v : values) {
      present.push_back(v.has_value());
      if (v) dense.push_back(*v);
    }
    int64_t start = static_cast<int64_t>(file.size());
    std::string body = opt.def_bytes ? *opt.def_bytes : Levels1(present);
    if (opt.dictionary) {
      std::string dict_body;
      for (int32_t v : dense) AppendLE(&dict_body, v);  // one entry per value
      PageHeader dh;
      dh.type = PageType::kDictionaryPage;
      dh.uncompressed_page_size = dh.compressed_page_size = static_cast<int32_t>(dict_body.size());
      dh.dictionary_page_header = DictionaryPageHeader{};
      dh.dictionary_page_header->num_values = static_cast<int32_t>(dense.size());
      SerializePageHeader(dh, &file);
      file += dict_body;
      cm.dictionary_page_offset = start;
      // Indices 0..n-1 at width 8 as one bit-packed run.
      body.push_back(8);
      size_t groups8 = (dense.size() + 7) / 8;
      AppendVarint(&body, (groups8 << 1) | 1);
      for (size_t i = 0; i < groups8 * 8; ++i) {
        int idx = i < dense.size() ? static_cast<int>(i) : 0;
        if (i == 0 && opt.dict_index_override >= 0) idx = opt.dict_index_override;
        body.push_back(static_cast<char>(idx));
      }
      cm.encodings = {Encoding::kPlain, Encoding::kRleDictionary, Encoding::kRle};
    } else {
      for (int32_t v : dense) AppendLE(&body, v);
      cm.encodings = {Encoding::kPlain, Encoding::kRle};
    }
    cm.data_page_offset = static_cast<int64_t>(file.size());
    PageHeader h;
    h.type = PageType::kDataPage;
    h.uncompressed_page_size = static_cast<int32_t>(body.size());
    h.compressed_page_size = static_cast<int32_t>(body.size()) + opt.extra_compressed_size;
    DataPageHeader dp;
    dp.num_values = static_cast<int32_t>(values.size());
    dp.encoding = opt.dictionary ? Encoding::kRleDictionary : Encoding::kPlain;
    h.data_page_header = dp;
    SerializePageHeader(h, &file);
    file += body;
    cm.total_compressed_size = cm.total_uncompressed_size =
        static_cast<int64_t>(file.size()) - start;
    if (!dense.empty()) {
      Statistics st;
      std::string lo, hi;
      AppendLE(&lo, *std::min_element(dense.begin(), dense.end()));
      AppendLE(&hi, *std::max_element(dense.begin(), dense.end()));
      st.min_value = lo;
      st.max_value = hi;
      cm.statistics = st;
    }
    RowGroup rg;
    rg.num_rows = static_cast<int64_t>(values.size());
    ColumnChunk cc;
    cc.file_offset = start;
    cc.meta_data = cm;
    rg.columns.push_back(cc);
    md.row_groups.push_back(rg);
    md.num_rows += rg.num_rows;
  }
  std::string footer;
  SerializeFileMetaData(md, &footer);
  file += footer;
  AppendLE<uint32_t>(&file, static_cast<uint32_t>(footer.size()));
  return file + "PAR1";
}

// Opens `bytes` from memory and reads all rows; returns the first error.
Status ReadAllFromMemory(const std::string& bytes, ReaderOptions options = {},
                         std::vector<int32_t>* values = nullptr) {
  auto io = MakeMemoryFileIO();
  RETURN_IF_ERROR(io->WriteFile("mem/t.parquet", bytes));
  ASSIGN_OR_RETURN(auto file, io->OpenInput("mem/t.parquet"));
  ASSIGN_OR_RETURN(auto reader, ParquetReader::Open(std::move(file), std::move(options)));
  Batch b;
  while (true) {
    ASSIGN_OR_RETURN(bool more, reader->Next(&b));
    if (!more) break;
    for (int64_t r = 0; values != nullptr && r < b.num_rows(); ++r) {
      values->push_back(b.columns[0].IsNull(r) ? -1 : b.columns[0].Value<int32_t>(r));
    }
  }
  return Status::OK();
}

TEST(ReaderTest, HandBuiltFilePlainAndDictionary) {
  std::vector<std::vector<std::optional<int32_t>>> groups = {
      {1, std::nullopt, 3, 4, std::nullopt, 6, 7, 8, 9, 10}, {100, 200}};
  for (bool dict : {false, true}) {
    std::vector<int32_t> got;
    ASSERT_OK(ReadAllFromMemory(BuildFile(groups, Opt(dict)), {}, &got));
    EXPECT_EQ(got, std::vector<int32_t>({1, -1, 3, 4, -1, 6, 7, 8, 9, 10, 100, 200}));
  }
}

TEST(ReaderTest, PrunesRowGroupsByStatistics) {
  std::string bytes = BuildFile({{1, 2, 3}, {10, 20, std::nullopt}, {30, 40}});
  ReaderOptions options;
  options.int_ranges.push_back({1, 15, 25});
  std::vector<int32_t> got;
  ASSERT_OK(ReadAllFromMemory(bytes, options, &got));
  EXPECT_EQ(got, std::vector<int32_t>({10, 20, -1}));
  options.int_ranges = {{1, 3, 30}};
  got.clear();
  ASSERT_OK(ReadAllFromMemory(bytes, options, &got));
  EXPECT_EQ(got.size(), 8u);  // all three groups overlap [3, 30]
  ReaderOptions hook;
  hook.row_group_filter = [](int index, const RowGroup& rg) { return index == 2; };
  got.clear();
  ASSERT_OK(ReadAllFromMemory(bytes, hook, &got));
  EXPECT_EQ(got, std::vector<int32_t>({30, 40}));
}

TEST(ReaderTest, CorruptFilesGiveClearErrors) {
  const std::vector<std::vector<std::optional<int32_t>>> groups = {{1, 2, std::nullopt, 4}};
  const std::string good = BuildFile(groups, Opt(true));
  ASSERT_OK(ReadAllFromMemory(good));

  ASSERT_ERROR(ReadAllFromMemory("PAR1PAR"), StatusCode::kCorruption, "too small");
  std::string bad_magic = good;
  bad_magic.back() = 'X';
  ASSERT_ERROR(ReadAllFromMemory(bad_magic), StatusCode::kCorruption, "bad magic");
  std::string long_footer = good;
  StoreLE<uint32_t>(long_footer.data() + long_footer.size() - 8, 1u << 30);
  ASSERT_ERROR(ReadAllFromMemory(long_footer), StatusCode::kCorruption, "footer length");
  // Truncated footer: drop bytes just before the length field.
  uint32_t len = LoadLE<uint32_t>(good.data() + good.size() - 8);
  std::string truncated = good.substr(0, good.size() - 8 - len / 2) + good.substr(good.size() - 8);
  StoreLE<uint32_t>(truncated.data() + truncated.size() - 8, len / 2);
  ASSERT_ERROR(ReadAllFromMemory(truncated), StatusCode::kCorruption, "file mem/t.parquet");

  ASSERT_ERROR(ReadAllFromMemory(BuildFile(groups, Opt(false, 1000))), StatusCode::kCorruption,
               "row group 0: column x: page 0: sizes");
  ASSERT_ERROR(ReadAllFromMemory(BuildFile(groups, Opt(true, 0, 7))), StatusCode::kCorruption,
               "column x: page 1: RLE_DICTIONARY values: dictionary index 7");
  // Definition levels: a length prefix of 1 and a bit-packed run with no data.
  std::string rle_past_end = {1, 0, 0, 0, 3};
  ASSERT_ERROR(ReadAllFromMemory(BuildFile(groups, Opt(false, 0, -1, rle_past_end))),
               StatusCode::kCorruption, "page 0: definition levels: levels: invalid RLE run");
}

// Every single-byte corruption and every truncation of a small file must give
// a status (OK or an error), never a crash; run under ASan/UBSan to be sure.
TEST(ReaderTest, ByteFlipsAndTruncationsNeverCrash) {
  const std::string good = BuildFile({{1, 2, std::nullopt, 4, 5, 6, 7, 8, 9}, {10}}, Opt(true));
  for (size_t i = 0; i < good.size(); ++i) {
    for (uint8_t x : {0x01, 0x80, 0xff}) {
      std::string bad = good;
      bad[i] = static_cast<char>(bad[i] ^ x);
      (void)ReadAllFromMemory(bad).ok();
    }
    (void)ReadAllFromMemory(good.substr(0, i)).ok();
  }
}

}  // namespace
}  // namespace sluice::parquet
