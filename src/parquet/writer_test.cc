#include "parquet/writer.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "columnar/json_reader.h"
#include "columnar/json_writer.h"
#include "columnar/sql_schema.h"
#include "common/testing.h"
#include "parquet/reader.h"
#include "parquet/test_util.h"

namespace sluice::parquet {
namespace {

std::vector<std::string> Rows(const Batch& b) {
  std::vector<std::string> out;
  for (int64_t r = 0; r < b.num_rows(); ++r) {
    std::string s;
    AppendJsonRow(b, r, &s);
    out.push_back(std::move(s));
  }
  return out;
}

struct Written {
  std::string bytes;
  FileMetrics metrics;
};

Result<Written> WriteFile(FileIO* io, const std::string& path, const Schema& schema,
                          const std::vector<const Batch*>& batches, WriterOptions options) {
  ASSIGN_OR_RETURN(auto out, io->OpenOutput(path, true));
  ASSIGN_OR_RETURN(auto w, ParquetWriter::Open(std::move(out), schema, options));
  for (const Batch* b : batches) RETURN_IF_ERROR(w->Write(*b));
  Written result;
  ASSIGN_OR_RETURN(result.metrics, w->Close());
  ASSIGN_OR_RETURN(result.bytes, io->ReadFile(path));
  return result;
}

Result<std::vector<std::string>> ReadBack(FileIO* io, const std::string& path,
                                          FileMetaData* md = nullptr) {
  ASSIGN_OR_RETURN(auto in, io->OpenInput(path));
  ASSIGN_OR_RETURN(auto reader, ParquetReader::Open(std::move(in)));
  if (md) *md = reader->metadata();
  std::vector<std::string> rows;
  Batch b;
  while (true) {
    ASSIGN_OR_RETURN(bool more, reader->Next(&b));
    if (!more) break;
    for (auto& r : Rows(b)) rows.push_back(std::move(r));
  }
  return rows;
}

// Random rows of every type, nulls and nesting included.
void FillRandom(std::mt19937_64& rng, Column* c, bool allow_null) {
  const DataType& t = *c->type();
  auto pick = [&](int n) { return static_cast<int>(rng() % n); };
  if (allow_null && pick(5) == 0) {
    c->AppendNull();
    return;
  }
  switch (t.id()) {
    case TypeId::kBoolean: c->AppendBool(pick(2)); break;
    case TypeId::kInt:
    case TypeId::kDate: c->Append<int32_t>(static_cast<int32_t>(rng() % 200000) - 100000); break;
    case TypeId::kLong:
    case TypeId::kTimestamp:
    case TypeId::kTimestampTz:
    case TypeId::kTimestampNs:
    case TypeId::kTimestampTzNs:
      c->Append<int64_t>(static_cast<int64_t>(rng() % 4000000000000000ull) - 2000000000000000);
      break;
    case TypeId::kTime: c->Append<int64_t>(static_cast<int64_t>(rng() % 86400000000ull)); break;
    case TypeId::kFloat: {
      float v[] = {std::numeric_limits<float>::quiet_NaN(), -0.0f, 1.5f, -3.25f, 1e30f};
      c->Append<float>(pick(3) ? static_cast<float>(pick(1000)) / 8 : v[pick(5)]);
      break;
    }
    case TypeId::kDouble: {
      double v[] = {std::numeric_limits<double>::quiet_NaN(), -0.0, 0.0,
                    -std::numeric_limits<double>::infinity(), 1e300};
      c->Append<double>(pick(3) ? static_cast<double>(static_cast<int64_t>(rng())) / 7
                                : v[pick(5)]);
      break;
    }
    case TypeId::kDecimal: {
      int128_t max = 1;
      for (int i = 0; i < t.precision(); ++i) max *= 10;
      int128_t v = static_cast<int128_t>((static_cast<unsigned __int128>(rng()) << 64) | rng());
      c->Append<int128_t>(v % max);
      break;
    }
    case TypeId::kString: {
      static const char* kWords[] = {"a",
                                     "bb",
                                     "\xc3\xa9t\xc3\xa9",
                                     "zz\xf0\x9f\x98\x80",
                                     "",
                                     "long long long long string value"};
      c->AppendBytes(kWords[pick(6)]);
      break;
    }
    case TypeId::kBinary:
    case TypeId::kFixed:
    case TypeId::kUuid: {
      int len = t.id() == TypeId::kFixed ? t.width() : t.id() == TypeId::kUuid ? 16 : pick(20);
      std::string s;
      for (int i = 0; i < len; ++i) s.push_back(static_cast<char>(rng()));
      c->AppendBytes(s);
      break;
    }
    case TypeId::kStruct:
      for (int i = 0; i < c->num_children(); ++i) {
        FillRandom(rng, c->mutable_child(i), !t.fields()[i].required);
      }
      c->FinishNested();
      break;
    case TypeId::kList:
    case TypeId::kMap:
      for (int n = pick(4); n > 0; --n) {
        if (t.id() == TypeId::kMap) FillRandom(rng, c->mutable_child(0), false);
        FillRandom(rng, c->mutable_child(t.id() == TypeId::kMap ? 1 : 0),
                   !t.fields().back().required);
      }
      c->FinishNested();
      break;
  }
}

Batch RandomBatch(const std::shared_ptr<const Schema>& schema, int rows, uint64_t seed) {
  std::mt19937_64 rng(seed);
  Batch b = Batch::Make(schema);
  for (int r = 0; r < rows; ++r) {
    for (size_t c = 0; c < b.columns.size(); ++c) {
      FillRandom(rng, &b.columns[c], !schema->fields[c].required);
    }
  }
  return b;
}

const char* kAllTypes =
    "id BIGINT NOT NULL, b BOOLEAN, i INT, l BIGINT, f FLOAT, d DOUBLE, d9 DECIMAL(9,2), "
    "d18 DECIMAL(18,3), d38 DECIMAL(38,10) NOT NULL, dt DATE, t TIME, ts TIMESTAMP, "
    "tz TIMESTAMPTZ, tn TIMESTAMP_NS, s STRING, bin BINARY, fx FIXED(5), u UUID, "
    "tags ARRAY<STRING>, nums ARRAY<INT NOT NULL> NOT NULL, m MAP<STRING, DOUBLE>, "
    "mi MAP<INT, ARRAY<STRING>>, st STRUCT<a INT NOT NULL, b STRUCT<c STRING, "
    "d ARRAY<STRUCT<e DATE, f DECIMAL(20,2)>>>>";

struct Config {
  CompressionCodec codec;
  bool v2;
  bool dictionary;
};

TEST(ParquetWriter, RoundTripsEveryTypeWithEachCodecAndPageVersion) {
  auto schema = MakeSchema(kAllTypes);
  Batch batch = RandomBatch(schema, 2500, 1);
  auto expected = Rows(batch);
  auto io = MakeMemoryFileIO();
  const Config configs[] = {
      {CompressionCodec::kUncompressed, false, true}, {CompressionCodec::kSnappy, true, true},
      {CompressionCodec::kGzip, false, false},        {CompressionCodec::kZstd, false, true},
      {CompressionCodec::kZstd, true, false},         {CompressionCodec::kLz4Raw, false, true}};
  for (const Config& cfg : configs) {
    SCOPED_TRACE(
        fmt::format("codec {} v2 {} dict {}", CodecName(cfg.codec), cfg.v2, cfg.dictionary));
    WriterOptions o;
    o.codec = cfg.codec;
    o.data_page_v2 = cfg.v2;
    o.dictionary = cfg.dictionary;
    o.page_bytes = 4096;  // many pages per chunk
    ASSERT_OK_AND_ASSIGN(Written w, WriteFile(io.get(), "f.parquet", *schema, {&batch}, o));
    FileMetaData md;
    ASSERT_OK_AND_ASSIGN(auto got, ReadBack(io.get(), "f.parquet", &md));
    ASSERT_EQ(got.size(), expected.size());
    for (size_t r = 0; r < got.size(); ++r) ASSERT_EQ(got[r], expected[r]) << "row " << r;
    EXPECT_EQ(md.created_by, std::optional<std::string>("sluice version 0.1.0"));
    ASSERT_EQ(md.row_groups.size(), 1u);
    EXPECT_EQ(md.column_orders.size(), md.row_groups[0].columns.size());
    for (const ColumnChunk& cc : md.row_groups[0].columns) {
      EXPECT_EQ(cc.meta_data->codec, cfg.codec);
    }
    EXPECT_EQ(w.metrics.file_size, static_cast<int64_t>(w.bytes.size()));
    EXPECT_EQ(w.bytes.substr(0, 4), "PAR1");
    EXPECT_EQ(w.bytes.substr(w.bytes.size() - 4), "PAR1");
  }
}

TEST(ParquetWriter, MultipleRowGroupsAndBatches) {
  auto schema = MakeSchema("id BIGINT NOT NULL, s STRING, tags ARRAY<INT>");
  Batch a = RandomBatch(schema, 2300, 2);
  Batch b = RandomBatch(schema, 1200, 3);
  auto io = MakeMemoryFileIO();
  WriterOptions o;
  o.row_group_rows = 1000;
  ASSERT_OK_AND_ASSIGN(Written w, WriteFile(io.get(), "g.parquet", *schema, {&a, &b}, o));
  FileMetaData md;
  ASSERT_OK_AND_ASSIGN(auto got, ReadBack(io.get(), "g.parquet", &md));
  auto expected = Rows(a);
  for (auto& r : Rows(b)) expected.push_back(r);
  EXPECT_EQ(got, expected);
  ASSERT_EQ(md.row_groups.size(), 4u);
  EXPECT_EQ(md.num_rows, 3500);
  EXPECT_EQ(md.row_groups[3].num_rows, 500);
  ASSERT_EQ(w.metrics.split_offsets.size(), 4u);
  EXPECT_EQ(w.metrics.split_offsets[0], 4);
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(w.metrics.split_offsets[i], md.row_groups[i].columns[0].file_offset);
  }
  EXPECT_EQ(w.metrics.record_count, 3500);
}

// Without options a row group holds at most 1 Mi rows, however few bytes they
// take: a narrow column compresses far below the 128 MiB byte limit.
TEST(ParquetWriter, ARowGroupHoldsAtMostAMebiRowByDefault) {
  auto schema = MakeSchema("id BIGINT NOT NULL");
  const int64_t rows = (int64_t{1} << 20) + 5;
  Batch b = Batch::Make(schema);
  for (int64_t i = 0; i < rows; ++i) b.columns[0].Append<int64_t>(i);
  auto io = MakeMemoryFileIO();
  ASSERT_OK_AND_ASSIGN(Written w, WriteFile(io.get(), "m.parquet", *schema, {&b}, {}));
  FileMetaData md;
  ASSERT_OK_AND_ASSIGN(auto got, ReadBack(io.get(), "m.parquet", &md));
  ASSERT_EQ(md.row_groups.size(), 2u);
  EXPECT_EQ(md.row_groups[0].num_rows, int64_t{1} << 20);
  EXPECT_EQ(md.row_groups[1].num_rows, 5);
  EXPECT_EQ(got, Rows(b));
}

const ColumnMetaData& Chunk(const FileMetaData& md, int rg, int col) {
  return *md.row_groups[rg].columns[col].meta_data;
}

// Each column cuts its own pages at the limit: a list column, whose rows
// span several levels each (empty and null lists too), and a string column
// whose pages close by their bytes first, out of step with the other's.
TEST(ParquetWriter, APageOfListsOrOfPagesClosedByBytesHoldsAtMostItsRowLimit) {
  auto schema = MakeSchema("s STRING NOT NULL, l ARRAY<BIGINT>");
  const int64_t rows = 50005;
  std::string lines;
  for (int64_t i = 0; i < rows; ++i) {
    std::string list = i % 7 == 0 ? "null" : i % 5 == 0 ? "[]" : fmt::format("[{}, {}]", i, -i);
    lines += fmt::format("{{\"s\":\"value {:030d}\",\"l\":{}}}\n", i * 7919, list);
  }
  Batch b = FromJson(schema, lines);
  ASSERT_EQ(b.num_rows(), rows);
  auto io = MakeMemoryFileIO();
  WriterOptions o;
  o.data_page_v2 = true;  // (its headers count rows)
  o.page_bytes = 300000;  // about 7,000 of the strings
  ASSERT_OK_AND_ASSIGN(Written w, WriteFile(io.get(), "l.parquet", *schema, {&b}, o));
  FileMetaData md;
  ASSERT_OK_AND_ASSIGN(auto got, ReadBack(io.get(), "l.parquet", &md));
  EXPECT_EQ(got, Rows(b));
  ASSERT_EQ(md.row_groups.size(), 1u);
  EXPECT_EQ(DataPageValues(w.bytes, Chunk(md, 0, 1), /*rows=*/true),
            (std::vector<int64_t>{20000, 20000, 10005}));
  const std::vector<int64_t> strings = DataPageValues(w.bytes, Chunk(md, 0, 0), /*rows=*/true);
  EXPECT_GT(strings.size(), 3u) << "the strings' pages did not close by their bytes";
  int64_t total = 0;
  for (int64_t n : strings) {
    EXPECT_LE(n, 20000);
    total += n;
  }
  EXPECT_EQ(total, rows);
}

// Values that encode to a few bits each (a dictionary of three) would fill a
// 1 MiB page with millions of rows: the row limit cuts pages at 20,000 rows,
// also where a batch's slices straddle the limit, in every column, with
// each page version; a limit of 0 leaves pages to their bytes.
TEST(ParquetWriter, ADataPageHoldsAtMostItsRowLimit) {
  auto schema = MakeSchema("k STRING NOT NULL, n BIGINT");
  const int64_t rows = 50005;
  Batch first = Batch::Make(schema), rest = Batch::Make(schema);
  for (int64_t i = 0; i < rows; ++i) {
    Batch& b = i < 7001 ? first : rest;  // (slices of 4,096 rows do not meet 20,000)
    b.columns[0].AppendBytes(fmt::format("kind{}", i % 3));
    if (i % 5 == 0) {
      b.columns[1].AppendNull();
    } else {
      b.columns[1].Append<int64_t>(i % 7);
    }
  }
  auto io = MakeMemoryFileIO();
  for (bool v2 : {false, true}) {
    SCOPED_TRACE(v2 ? "v2" : "v1");
    WriterOptions o;
    o.data_page_v2 = v2;
    ASSERT_EQ(o.page_rows, 20000);
    ASSERT_OK_AND_ASSIGN(Written w, WriteFile(io.get(), "p.parquet", *schema, {&first, &rest}, o));
    FileMetaData md;
    ASSERT_OK_AND_ASSIGN(auto got, ReadBack(io.get(), "p.parquet", &md));
    std::vector<std::string> want = Rows(first), tail = Rows(rest);
    want.insert(want.end(), tail.begin(), tail.end());
    EXPECT_EQ(got, want);
    ASSERT_EQ(md.row_groups.size(), 1u);
    for (int c = 0; c < 2; ++c) {
      EXPECT_EQ(DataPageValues(w.bytes, Chunk(md, 0, c)),
                (std::vector<int64_t>{20000, 20000, 10005}))
          << "column " << c;
    }
    o.page_rows = 0;
    ASSERT_OK_AND_ASSIGN(w, WriteFile(io.get(), "q.parquet", *schema, {&first, &rest}, o));
    ASSERT_OK_AND_ASSIGN(got, ReadBack(io.get(), "q.parquet", &md));
    EXPECT_EQ(got, want);
    for (int c = 0; c < 2; ++c) {
      EXPECT_EQ(DataPageValues(w.bytes, Chunk(md, 0, c)), (std::vector<int64_t>{rows}));
    }
  }
  WriterOptions bad;
  bad.page_rows = -1;
  ASSERT_OK_AND_ASSIGN(auto out, io->OpenOutput("r.parquet", true));
  ASSERT_ERROR(ParquetWriter::Open(std::move(out), *schema, bad), StatusCode::kInvalidArgument,
               "page_rows (-1)");
}

// A row group that closes before a page reaches its row limit closes the
// page with it: each chunk is one page of the group's rows, and the next
// group's pages count their rows anew (two groups together pass the limit).
TEST(ParquetWriter, ARowGroupSmallerThanThePageRowLimitIsOnePagePerColumn) {
  auto schema = MakeSchema("k STRING NOT NULL, n BIGINT");
  Batch b = Batch::Make(schema);
  for (int64_t i = 0; i < 35005; ++i) {
    b.columns[0].AppendBytes(fmt::format("kind{}", i % 3));
    b.columns[1].Append<int64_t>(i);
  }
  auto io = MakeMemoryFileIO();
  WriterOptions o;
  o.row_group_rows = 15000;
  ASSERT_EQ(o.page_rows, 20000);
  ASSERT_OK_AND_ASSIGN(Written w, WriteFile(io.get(), "g.parquet", *schema, {&b}, o));
  FileMetaData md;
  ASSERT_OK_AND_ASSIGN(auto got, ReadBack(io.get(), "g.parquet", &md));
  EXPECT_EQ(got, Rows(b));
  ASSERT_EQ(md.row_groups.size(), 3u);
  const std::vector<int64_t> group_rows = {15000, 15000, 5005};
  for (int g = 0; g < 3; ++g) {
    EXPECT_EQ(md.row_groups[g].num_rows, group_rows[g]) << "row group " << g;
    for (int c = 0; c < 2; ++c) {
      EXPECT_EQ(DataPageValues(w.bytes, Chunk(md, g, c)), (std::vector<int64_t>{group_rows[g]}))
          << "row group " << g << ", column " << c;
    }
  }
}

bool HasEncoding(const ColumnMetaData& c, Encoding e) {
  return std::find(c.encodings.begin(), c.encodings.end(), e) != c.encodings.end();
}

TEST(ParquetWriter, DictionaryFallsBackToPlainPastItsLimit) {
  auto schema = MakeSchema("s STRING NOT NULL, k STRING NOT NULL, u BIGINT NOT NULL");
  Batch batch = Batch::Make(schema);
  for (int i = 0; i < 20000; ++i) {
    // s: few values at first, then all distinct; k: 3 values; u: all distinct.
    batch.columns[0].AppendBytes(i < 5000 ? fmt::format("v{}", i % 10) : fmt::format("x{}", i));
    batch.columns[1].AppendBytes(fmt::format("kind{}", i % 3));
    batch.columns[2].Append<int64_t>(i * 7919);
  }
  auto io = MakeMemoryFileIO();
  WriterOptions o;
  o.page_bytes = 2048;
  o.dictionary_page_bytes = 4096;
  ASSERT_OK_AND_ASSIGN(Written w, WriteFile(io.get(), "d.parquet", *schema, {&batch}, o));
  FileMetaData md;
  ASSERT_OK_AND_ASSIGN(auto got, ReadBack(io.get(), "d.parquet", &md));
  EXPECT_EQ(got, Rows(batch));
  const ColumnMetaData& s = Chunk(md, 0, 0);
  EXPECT_TRUE(HasEncoding(s, Encoding::kRleDictionary));
  EXPECT_TRUE(HasEncoding(s, Encoding::kPlain));
  EXPECT_TRUE(s.dictionary_page_offset.has_value());
  const ColumnMetaData& k = Chunk(md, 0, 1);
  EXPECT_TRUE(HasEncoding(k, Encoding::kRleDictionary));
  EXPECT_TRUE(k.dictionary_page_offset.has_value());
  // Mostly distinct values: no dictionary at all.
  const ColumnMetaData& u = Chunk(md, 0, 2);
  EXPECT_FALSE(HasEncoding(u, Encoding::kRleDictionary));
  EXPECT_FALSE(u.dictionary_page_offset.has_value());
  // Without dictionaries nothing is dictionary-encoded.
  o.dictionary = false;
  ASSERT_OK_AND_ASSIGN(w, WriteFile(io.get(), "n.parquet", *schema, {&batch}, o));
  ASSERT_OK_AND_ASSIGN(got, ReadBack(io.get(), "n.parquet", &md));
  EXPECT_EQ(got, Rows(batch));
  for (int c = 0; c < 3; ++c) EXPECT_FALSE(Chunk(md, 0, c).dictionary_page_offset.has_value());
}

std::string LE64(int64_t v) { return std::string(reinterpret_cast<const char*>(&v), 8); }
std::string LE64D(double v) { return std::string(reinterpret_cast<const char*>(&v), 8); }

TEST(ParquetWriter, ChunkStatisticsAndIcebergMetricsMatchTheData) {
  auto schema = MakeSchema(
      "id BIGINT NOT NULL, d DOUBLE, s STRING, dec DECIMAL(38,2), tags ARRAY<STRING>, "
      "st STRUCT<x INT>");
  std::string lines;
  std::mt19937_64 rng(5);
  int64_t min_id = INT64_MAX, max_id = INT64_MIN;
  for (int i = 0; i < 3000; ++i) {
    int64_t id = static_cast<int64_t>(rng() % 1000000) - 500000;
    min_id = std::min(min_id, id);
    max_id = std::max(max_id, id);
    const char* d = i % 10 == 0 ? "null" : i % 7 == 0 ? "\"NaN\"" : i == 5 ? "-0.0" : "1.5";
    lines += fmt::format(R"({{"id":{},"d":{},"s":{},"dec":"{}","tags":{},"st":{{"x":{}}}}})"
                         "\n",
                         id, d, i % 4 == 0 ? "null" : "\"prefix-that-is-longer-than-sixteen\"",
                         i == 7 ? "-12345678901234567890.25" : "3.10",
                         i % 3 == 0 ? R"(["a",null])" : "[]", i);
  }
  Batch batch = FromJson(schema, lines);
  auto io = MakeMemoryFileIO();
  ASSERT_OK_AND_ASSIGN(Written w, WriteFile(io.get(), "m.parquet", *schema, {&batch}, {}));
  FileMetaData md;
  ASSERT_OK_AND_ASSIGN(auto got, ReadBack(io.get(), "m.parquet", &md));
  ASSERT_EQ(got.size(), 3000u);
  const FileMetrics& m = w.metrics;
  EXPECT_EQ(m.record_count, 3000);
  // Field ids: id 1, d 2, s 3, dec 4, tags 5 (element 7), st 6 (x 8).
  ASSERT_EQ(m.fields.size(), 6u);
  const FieldMetrics& id = m.fields.at(1);
  EXPECT_EQ(id.value_count, 3000);
  EXPECT_EQ(id.null_count, 0);
  EXPECT_EQ(id.lower_bound, LE64(min_id));
  EXPECT_EQ(id.upper_bound, LE64(max_id));
  EXPECT_FALSE(id.nan_count.has_value());
  const FieldMetrics& d = m.fields.at(2);
  EXPECT_EQ(d.null_count, 300);
  int nans = 0;
  for (int i = 0; i < 3000; ++i) nans += (i % 10 != 0 && i % 7 == 0);
  EXPECT_EQ(d.nan_count, std::optional<int64_t>(nans));
  EXPECT_EQ(d.lower_bound, LE64D(-0.0));  // -0.0 as min
  EXPECT_EQ(d.upper_bound, LE64D(1.5));
  const FieldMetrics& s = m.fields.at(3);
  EXPECT_EQ(s.null_count, 750);
  EXPECT_EQ(s.lower_bound, std::optional<std::string>("prefix-that-is-l"));
  EXPECT_EQ(s.upper_bound, std::optional<std::string>("prefix-that-is-m"));
  const FieldMetrics& dec = m.fields.at(4);
  // -1234567890123456789025 as minimal big-endian two's complement (Python's
  // int.to_bytes(9, 'big', signed=True)).
  EXPECT_EQ(dec.lower_bound, std::optional<std::string>("\xbd\x12\xed\xc4\xf4\x27\xdf\xc5\xdf"));
  EXPECT_EQ(dec.upper_bound, std::optional<std::string>("\x01\x36"));  // 310
  const FieldMetrics& tag = m.fields.at(7);
  EXPECT_EQ(tag.value_count, 1000 * 2 + 2000);  // two levels per [a, null], one per []
  EXPECT_EQ(tag.null_count, 1000 + 2000);
  EXPECT_FALSE(tag.lower_bound.has_value());  // inside a list: no bounds
  const FieldMetrics& x = m.fields.at(8);
  EXPECT_EQ(x.lower_bound, std::string("\x00\x00\x00\x00", 4));
  int64_t sum = 0;
  for (const auto& [fid, f] : m.fields) sum += f.column_size;
  int64_t chunks = 0;
  for (const ColumnChunk& cc : md.row_groups[0].columns) {
    chunks += cc.meta_data->total_compressed_size;
  }
  EXPECT_EQ(sum, chunks);
  // Chunk statistics in the footer.
  const ColumnMetaData& idc = Chunk(md, 0, 0);
  ASSERT_TRUE(idc.statistics.has_value());
  EXPECT_EQ(idc.statistics->min_value, LE64(min_id));
  EXPECT_EQ(idc.statistics->min, LE64(min_id));
  EXPECT_EQ(idc.statistics->null_count, std::optional<int64_t>(0));
  const ColumnMetaData& sc = Chunk(md, 0, 2);
  EXPECT_EQ(sc.statistics->max_value, std::optional<std::string>("prefix-that-is-m"));
  EXPECT_EQ(sc.statistics->is_max_value_exact, std::optional<bool>(false));
  EXPECT_FALSE(sc.statistics->max.has_value());
}

TEST(ParquetWriter, RequiredNullFailsAndLeavesNoFile) {
  auto schema = MakeSchema("id BIGINT NOT NULL");
  Batch batch = Batch::Make(schema);
  batch.columns[0].Append<int64_t>(1);
  batch.columns[0].AppendNull();
  auto io = MakeMemoryFileIO();
  {
    ASSERT_OK_AND_ASSIGN(auto out, io->OpenOutput("bad.parquet"));
    ASSERT_OK_AND_ASSIGN(auto w, ParquetWriter::Open(std::move(out), *schema));
    ASSERT_ERROR(w->Write(batch), StatusCode::kInvalidArgument, "column id: null in required");
    ASSERT_ERROR(w->Close(), StatusCode::kInvalidArgument, "null in required");
  }
  ASSERT_OK_AND_ASSIGN(bool exists, io->Exists("bad.parquet"));
  EXPECT_FALSE(exists);
  {
    // An unclosed writer leaves nothing either.
    ASSERT_OK_AND_ASSIGN(auto out, io->OpenOutput("open.parquet"));
    ASSERT_OK_AND_ASSIGN(auto w, ParquetWriter::Open(std::move(out), *schema));
  }
  ASSERT_OK_AND_ASSIGN(exists, io->Exists("open.parquet"));
  EXPECT_FALSE(exists);
}

TEST(ParquetWriter, RejectsBatchOfAnotherSchema) {
  auto schema = MakeSchema("id BIGINT NOT NULL");
  auto other = MakeSchema("id INT NOT NULL");
  auto io = MakeMemoryFileIO();
  ASSERT_OK_AND_ASSIGN(auto out, io->OpenOutput("x.parquet"));
  ASSERT_OK_AND_ASSIGN(auto w, ParquetWriter::Open(std::move(out), *schema));
  Batch b = Batch::Make(other);
  b.columns[0].Append<int32_t>(1);
  ASSERT_ERROR(w->Write(b), StatusCode::kInvalidArgument, "column id is int, schema says long");
}

TEST(ParquetWriter, EmptyFileHasNoRowGroups) {
  auto schema = MakeSchema("id BIGINT NOT NULL, s STRING");
  auto io = MakeMemoryFileIO();
  ASSERT_OK_AND_ASSIGN(Written w, WriteFile(io.get(), "e.parquet", *schema, {}, {}));
  FileMetaData md;
  ASSERT_OK_AND_ASSIGN(auto got, ReadBack(io.get(), "e.parquet", &md));
  EXPECT_TRUE(got.empty());
  EXPECT_TRUE(md.row_groups.empty());
  EXPECT_EQ(w.metrics.record_count, 0);
  EXPECT_FALSE(w.metrics.fields.at(1).lower_bound.has_value());
}

}  // namespace
}  // namespace sluice::parquet
