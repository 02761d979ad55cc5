// Decoding of hand-built Avro containers (negative block counts, unions,
// enums, maps) and of corrupt ones: every failure is a clean error.
#include <random>

#include "avro/reader.h"
#include "avro/test_util.h"
#include "avro/writer.h"
#include "columnar/sql_schema.h"
#include "common/endian.h"
#include "common/testing.h"

namespace sluice::avro {
namespace {

const std::string kSync = "0123456789abcdef";

void Long(std::string* out, int64_t v) { AppendVarint(out, ZigZagEncode(v)); }
void Str(std::string* out, std::string_view s) {
  Long(out, static_cast<int64_t>(s.size()));
  out->append(s);
}

// An object container with the given schema and (count, bytes) blocks.
std::string Container(const std::string& schema,
                      const std::vector<std::pair<int64_t, std::string>>& blocks) {
  std::string f("Obj\x01", 4);
  Long(&f, 2);
  Str(&f, "avro.schema");
  Str(&f, schema);
  Str(&f, "avro.codec");
  Str(&f, "null");
  Long(&f, 0);
  f += kSync;
  for (const auto& [count, bytes] : blocks) {
    Long(&f, count);
    Long(&f, static_cast<int64_t>(bytes.size()));
    f += bytes;
    f += kSync;
  }
  return f;
}

// Reads all records as JSON lines (the fields of `skip`, by field id, read past).
Result<std::string> ReadJson(const std::string& data, std::vector<int32_t> skip = {}) {
  auto io = MakeMemoryFileIO();
  RETURN_IF_ERROR(io->WriteFile("in.avro", data, true));
  ASSIGN_OR_RETURN(auto file, io->OpenInput("in.avro"));
  ReaderOptions options;
  options.skip_field_ids = std::move(skip);
  ASSIGN_OR_RETURN(auto reader, AvroReader::Open(std::move(file), options));
  std::string out;
  Batch batch;
  for (;;) {
    ASSIGN_OR_RETURN(bool more, reader->Next(&batch));
    if (!more) break;
    out += testing::JsonRows(batch);
  }
  return out;
}

const char kArraySchema[] =
    R"({"type":"record","name":"r","fields":[{"name":"a","type":{"type":"array","items":"long"}}]})";

TEST(AvroDecodeTest, NegativeBlockCountsWithByteSizes) {
  std::string rec;
  Long(&rec, -2);  // two items, byte size follows
  Long(&rec, 2);
  Long(&rec, 1);
  Long(&rec, -1);
  Long(&rec, 1);  // then one more item in a positive block
  Long(&rec, 300);
  Long(&rec, 0);
  ASSERT_OK_AND_ASSIGN(std::string json, ReadJson(Container(kArraySchema, {{1, rec}})));
  EXPECT_EQ(json, "{\"a\":[1,-1,300]}\n");
}

TEST(AvroDecodeTest, UnionsEnumsMapsAndBranchOrder) {
  const char* schema = R"({"type":"record","name":"r","fields":[
    {"name":"x","type":["long","null"]},
    {"name":"e","type":{"type":"enum","name":"E","symbols":["RED","GREEN"]}},
    {"name":"m","type":{"type":"map","values":["null","string"]}},
    {"name":"one","type":["int"]}]})";
  std::string rec;
  Long(&rec, 1);  // x: null (branch 1)
  Long(&rec, 1);  // e: GREEN
  Long(&rec, -2);
  Long(&rec, 9);  // byte size (not checked beyond bounds)
  Str(&rec, "k");
  Long(&rec, 1);
  Str(&rec, "v");
  Str(&rec, "n");
  Long(&rec, 0);  // null value
  Long(&rec, 0);
  Long(&rec, 0);  // one: branch 0
  Long(&rec, -5);
  std::string rec2;
  Long(&rec2, 0);  // x: branch 0, long
  Long(&rec2, INT64_MIN);
  Long(&rec2, 0);
  Long(&rec2, 0);  // empty map
  Long(&rec2, 0);
  Long(&rec2, INT32_MAX);
  ASSERT_OK_AND_ASSIGN(std::string json, ReadJson(Container(schema, {{1, rec}, {1, rec2}})));
  EXPECT_EQ(json,
            "{\"x\":null,\"e\":\"GREEN\",\"m\":{\"k\":\"v\",\"n\":null},\"one\":-5}\n"
            "{\"x\":-9223372036854775808,\"e\":\"RED\",\"m\":{},\"one\":2147483647}\n");
}

TEST(AvroDecodeTest, SkippedFieldsAreReadPastAndLeftNull) {
  // Every kind of value skipped, the fields after each still decoded: an
  // array in a block that gives its byte size and one that does not, a map,
  // a union, a fixed, a nested record, and a field inside a record.
  const char* schema = R"({"type":"record","name":"r","fields":[
    {"name":"a","field-id":1,"type":{"type":"array","items":"long"}},
    {"name":"x","field-id":2,"type":"long"},
    {"name":"m","field-id":3,"type":{"type":"map","values":["null","string"]}},
    {"name":"u","field-id":4,"type":["null","double"]},
    {"name":"f","field-id":5,"type":{"type":"fixed","name":"F","size":3}},
    {"name":"s","field-id":6,"type":{"type":"record","name":"S","fields":[
      {"name":"b","field-id":7,"type":"bytes"},
      {"name":"c","field-id":8,"type":"boolean"}]}},
    {"name":"y","field-id":9,"type":"string"}]})";
  std::string rec;
  Long(&rec, -2);  // a: two items in 2 bytes,
  Long(&rec, 2);
  Long(&rec, 5);
  Long(&rec, 6);
  Long(&rec, 1);  // then one in a block without a size
  Long(&rec, 300);
  Long(&rec, 0);
  Long(&rec, 42);  // x
  Long(&rec, 1);   // m: one entry
  Str(&rec, "k");
  Long(&rec, 1);
  Str(&rec, "v");
  Long(&rec, 0);
  Long(&rec, 1);  // u: a double
  rec.append(8, '\x01');
  rec.append("abc");   // f
  Str(&rec, "bytes");  // s.b
  rec.push_back(1);    // s.c
  Str(&rec, "end");    // y
  const std::string data = Container(schema, {{1, rec}});
  ASSERT_OK_AND_ASSIGN(std::string all, ReadJson(data));
  EXPECT_NE(all.find("\"x\":42"), std::string::npos) << all;
  ASSERT_OK_AND_ASSIGN(std::string json, ReadJson(data, {1, 3, 4, 5, 6}));
  EXPECT_EQ(json,
            "{\"a\":null,\"x\":42,\"m\":null,\"u\":null,\"f\":null,\"s\":null,"
            "\"y\":\"end\"}\n");
  ASSERT_OK_AND_ASSIGN(json, ReadJson(data, {7}));  // inside a record
  EXPECT_NE(json.find("\"s\":{\"b\":null,\"c\":true}"), std::string::npos) << json;
  EXPECT_NE(json.find("\"y\":\"end\""), std::string::npos) << json;
  // A skipped value is still bounds-checked: cut inside it, the error names it.
  const std::string cut = Container(schema, {{1, rec.substr(0, rec.size() - 8)}});
  ASSERT_ERROR(ReadJson(cut, {6}).status(), StatusCode::kCorruption, "s:");
}

TEST(AvroDecodeTest, BadValuesAreCorruption) {
  const char* schema = R"({"type":"record","name":"r","fields":[
    {"name":"x","type":["null","int"]},
    {"name":"e","type":{"type":"enum","name":"E","symbols":["A"]}}]})";
  std::string bad_branch;
  Long(&bad_branch, 2);
  Long(&bad_branch, 0);
  ASSERT_ERROR(ReadJson(Container(schema, {{1, bad_branch}})), StatusCode::kCorruption,
               "union branch 2 out of range");
  std::string bad_enum;
  Long(&bad_enum, 0);
  Long(&bad_enum, 3);
  ASSERT_ERROR(ReadJson(Container(schema, {{1, bad_enum}})), StatusCode::kCorruption,
               "e: byte 2: enum index 3");
  std::string big_int;
  Long(&big_int, 1);
  Long(&big_int, int64_t{1} << 40);
  ASSERT_ERROR(ReadJson(Container(schema, {{1, big_int}})), StatusCode::kCorruption,
               "int out of range");
  std::string trailing;
  Long(&trailing, 0);
  Long(&trailing, 0);
  trailing += "zz";
  ASSERT_ERROR(ReadJson(Container(schema, {{1, trailing}})), StatusCode::kCorruption,
               "2 bytes left after its last record");
}

TEST(AvroDecodeTest, ErrorsNameTheRecordWithinItsBlock) {
  const char* schema = R"({"type":"record","name":"r","fields":[{"name":"x","type":"int"}]})";
  std::string block;
  for (int i = 0; i < 5; ++i) Long(&block, i);
  Long(&block, int64_t{1} << 40);  // record 5 does not fit an int
  auto io = MakeMemoryFileIO();
  ASSERT_OK(io->WriteFile("b.avro", Container(schema, {{6, block}})));
  ASSERT_OK_AND_ASSIGN(auto file, io->OpenInput("b.avro"));
  ReaderOptions options;
  options.batch_rows = 2;
  ASSERT_OK_AND_ASSIGN(auto reader, AvroReader::Open(std::move(file), options));
  Batch batch;
  for (int i = 0; i < 2; ++i) {
    ASSERT_OK_AND_ASSIGN(bool more, reader->Next(&batch));
    ASSERT_TRUE(more);
    EXPECT_EQ(batch.num_rows(), 2);
  }
  ASSERT_ERROR(reader->Next(&batch), StatusCode::kCorruption,
               "b.avro: offset 117: block 0 (data): record 5: x: byte 5: int out of range");
}

TEST(AvroDecodeTest, HugeCountsAndLengthsAreRejectedBeforeAllocating) {
  std::string huge_array;
  Long(&huge_array, int64_t{1} << 60);
  ASSERT_ERROR(ReadJson(Container(kArraySchema, {{1, huge_array}})), StatusCode::kCorruption,
               "exceeds the");
  std::string min_count;
  Long(&min_count, INT64_MIN);
  ASSERT_ERROR(ReadJson(Container(kArraySchema, {{1, min_count}})), StatusCode::kCorruption,
               "bad block count");
  // A block claiming 2^50 records in 1 byte.
  ASSERT_ERROR(ReadJson(Container(kArraySchema, {{int64_t{1} << 50, std::string(1, '\0')}})),
               StatusCode::kCorruption, "records cannot fit");
  const char* str_schema =
      R"({"type":"record","name":"r","fields":[{"name":"s","type":"string"}]})";
  std::string long_string;
  Long(&long_string, int64_t{1} << 40);
  ASSERT_ERROR(ReadJson(Container(str_schema, {{1, long_string}})), StatusCode::kCorruption,
               "s: byte 6: length 1099511627776 exceeds");
  // A block size beyond the file, and one beyond the limit.
  std::string f = Container(str_schema, {});
  Long(&f, 1);
  Long(&f, int64_t{1} << 40);
  ASSERT_ERROR(ReadJson(f), StatusCode::kCorruption, "exceeds the limit");
  f = Container(str_schema, {});
  Long(&f, 1);
  Long(&f, 100);
  ASSERT_ERROR(ReadJson(f), StatusCode::kCorruption, "past the end of the file");
  // Empty records: at most 2^20 per block.
  const char* empty_schema = R"({"type":"record","name":"r","fields":[]})";
  ASSERT_ERROR(ReadJson(Container(empty_schema, {{int64_t{1} << 40, ""}})), StatusCode::kCorruption,
               "cannot fit");
}

TEST(AvroDecodeTest, HeaderErrors) {
  std::string good = Container(kArraySchema, {});
  ASSERT_OK(ReadJson(good).status());
  std::string bad_magic = good;
  bad_magic[3] = 2;
  ASSERT_ERROR(ReadJson(bad_magic), StatusCode::kCorruption, "bad magic");
  ASSERT_ERROR(ReadJson("Ob"), StatusCode::kCorruption, "too short");
  std::string no_schema("Obj\x01", 4);
  Long(&no_schema, 0);
  no_schema += kSync;
  ASSERT_ERROR(ReadJson(no_schema), StatusCode::kCorruption, "no avro.schema");
  std::string huge_meta("Obj\x01", 4);
  Long(&huge_meta, int64_t{1} << 62);
  ASSERT_ERROR(ReadJson(huge_meta), StatusCode::kCorruption, "metadata block");
  std::string codec = good;
  size_t at = codec.find("null", codec.find("avro.codec"));
  codec.replace(at, 4, "lzma");
  ASSERT_ERROR(ReadJson(codec), StatusCode::kNotImplemented, "codec 'lzma'");
}

// A small real file: a few rows over several deflate blocks.
std::string SmallFile(Codec codec) {
  auto schema = std::make_shared<const Schema>(
      ParseColumnList("id BIGINT NOT NULL, name STRING, tags ARRAY<STRING>, "
                      "m MAP<INT, DOUBLE>, amount DECIMAL(10,2)")
          .value());
  std::mt19937_64 rng(5);
  Batch batch = testing::RandomBatch(schema, 12, &rng);
  auto io = MakeMemoryFileIO();
  WriterOptions options;
  options.codec = codec;
  options.block_bytes = 100;
  auto writer = AvroWriter::Open(io->OpenOutput("s.avro").value(), *schema, options).value();
  for (int64_t r = 0; r < batch.num_rows(); r += 4) {
    Batch part = testing::RandomBatch(schema, 4, &rng);
    EXPECT_OK(writer->Write(part));
  }
  EXPECT_OK(writer->Close().status());
  return io->ReadFile("s.avro").value();
}

TEST(AvroCorruptTest, EveryTruncationFailsCleanly) {
  for (Codec codec : {Codec::kNull, Codec::kDeflate}) {
    std::string file = SmallFile(codec);
    ASSERT_OK_AND_ASSIGN(std::string full, ReadJson(file));
    int errors = 0;
    for (size_t n = 0; n < file.size(); ++n) {
      auto got = ReadJson(file.substr(0, n));
      if (got.ok()) {
        // Only a cut exactly between blocks is a valid (shorter) file.
        EXPECT_LT(got->size(), full.size()) << n;
        EXPECT_EQ(full.compare(0, got->size(), *got), 0) << n;
      } else {
        ++errors;
        EXPECT_EQ(got.status().code(), StatusCode::kCorruption) << n << got.status().ToString();
        EXPECT_NE(got.status().message().find("in.avro"), std::string::npos);
      }
    }
    EXPECT_GT(errors, static_cast<int>(file.size()) - 10);
  }
}

TEST(AvroCorruptTest, FlippedBytesNeverCrash) {
  for (Codec codec : {Codec::kNull, Codec::kDeflate}) {
    std::string file = SmallFile(codec);
    int errors = 0;
    for (size_t i = 0; i < file.size(); ++i) {
      for (uint8_t mask : {0x01, 0x80, 0xff}) {
        std::string bad = file;
        bad[i] = static_cast<char>(bad[i] ^ mask);
        auto got = ReadJson(bad);
        if (!got.ok()) ++errors;
      }
    }
    EXPECT_GT(errors, 0);
  }
}

TEST(AvroCorruptTest, BadSyncMarker) {
  std::string file = SmallFile(Codec::kDeflate);
  file[file.size() - 3] ^= 0x10;
  ASSERT_ERROR(ReadJson(file), StatusCode::kCorruption, "sync marker does not match");
}

}  // namespace
}  // namespace sluice::avro
