// Write -> read round trips through AvroWriter and AvroReader.
#include <random>

#include "avro/iceberg_schema.h"
#include "avro/reader.h"
#include "avro/test_util.h"
#include "avro/writer.h"
#include "columnar/json_writer.h"
#include "columnar/sql_schema.h"
#include "common/testing.h"

namespace sluice::avro {
namespace {

using testing::JsonRows;
using testing::RandomBatch;
using testing::RandomSchema;

struct ReadResult {
  std::shared_ptr<const Schema> schema;
  std::map<std::string, std::string> metadata;
  std::string json;
  int64_t rows = 0;
  int64_t blocks = 0;
};

Result<ReadResult> ReadBack(FileIO* io, const std::string& path, int64_t batch_rows = 0) {
  ASSIGN_OR_RETURN(auto file, io->OpenInput(path));
  ReaderOptions options;
  options.batch_rows = batch_rows;
  ASSIGN_OR_RETURN(auto reader, AvroReader::Open(std::move(file), options));
  ReadResult r;
  Batch batch;
  for (;;) {
    ASSIGN_OR_RETURN(bool more, reader->Next(&batch));
    if (!more) break;
    if (batch_rows > 0 && batch.num_rows() > batch_rows) {
      return Status::Internal("batch of {} rows exceeds {}", batch.num_rows(), batch_rows);
    }
    r.json += JsonRows(batch);
    r.rows += batch.num_rows();
  }
  r.schema = reader->schema();
  r.metadata = reader->metadata();
  r.blocks = reader->blocks_read();
  return r;
}

Result<int64_t> WriteFile(FileIO* io, const std::string& path, const Schema& schema,
                          const std::vector<const Batch*>& batches, WriterOptions options) {
  ASSIGN_OR_RETURN(auto out, io->OpenOutput(path, /*overwrite=*/true));
  ASSIGN_OR_RETURN(auto writer, AvroWriter::Open(std::move(out), schema, std::move(options)));
  for (const Batch* b : batches) RETURN_IF_ERROR(writer->Write(*b));
  return writer->Close();
}

TEST(AvroRoundTripTest, RandomSchemasAllCodecs) {
  auto io = MakeMemoryFileIO();
  for (uint64_t seed = 1; seed <= 150; ++seed) {
    std::mt19937_64 rng(seed);
    auto schema = std::make_shared<const Schema>(RandomSchema(&rng));
    SCOPED_TRACE(fmt::format("seed {}: {}", seed, schema->ToString()));
    int64_t rows = std::uniform_int_distribution<int64_t>(0, 300)(rng);
    Batch a = RandomBatch(schema, rows, &rng);
    Batch b = RandomBatch(schema, rows / 2, &rng);
    std::string want = JsonRows(a) + JsonRows(b);
    for (Codec codec : {Codec::kNull, Codec::kDeflate, Codec::kSnappy, Codec::kZstandard}) {
      SCOPED_TRACE(CodecName(codec));
      WriterOptions options;
      options.codec = codec;
      options.block_bytes = 1 + seed * 37;  // many small blocks
      options.metadata = {{"seed", std::to_string(seed)}};
      ASSERT_OK_AND_ASSIGN(int64_t size, WriteFile(io.get(), "t.avro", *schema, {&a, &b}, options));
      ASSERT_OK_AND_ASSIGN(auto file, io->OpenInput("t.avro"));
      EXPECT_EQ(size, file->size());
      ASSERT_OK_AND_ASSIGN(ReadResult got, ReadBack(io.get(), "t.avro", seed % 3 == 0 ? 7 : 0));
      EXPECT_TRUE(got.schema->AsStruct()->Equals(*schema->AsStruct())) << got.schema->ToString();
      EXPECT_EQ(got.rows, a.num_rows() + b.num_rows());
      ASSERT_EQ(got.json, want);
      EXPECT_EQ(got.metadata["seed"], std::to_string(seed));
      EXPECT_EQ(got.metadata["avro.codec"], CodecName(codec));
    }
  }
}

TEST(AvroRoundTripTest, SkippedFieldsReadAsNullAndTheRestAsWritten) {
  // Random schemas, a random half of their top-level fields skipped: those
  // read as nulls, every other field as written, in every codec.
  auto io = MakeMemoryFileIO();
  for (uint64_t seed = 1; seed <= 60; ++seed) {
    std::mt19937_64 rng(seed * 7919);
    auto schema = std::make_shared<const Schema>(RandomSchema(&rng));
    SCOPED_TRACE(fmt::format("seed {}: {}", seed, schema->ToString()));
    const int64_t rows = std::uniform_int_distribution<int64_t>(0, 200)(rng);
    Batch written = RandomBatch(schema, rows, &rng);
    ReaderOptions options;
    std::vector<bool> skipped(schema->fields.size());
    for (size_t i = 0; i < skipped.size(); ++i) {
      skipped[i] = rng() % 2 == 0;
      if (skipped[i]) options.skip_field_ids.push_back(schema->fields[i].id);
    }
    std::vector<std::string> got;
    for (Codec codec : {Codec::kNull, Codec::kZstandard}) {
      WriterOptions wo;
      wo.codec = codec;
      wo.block_bytes = 1 + seed * 53;
      ASSERT_OK(WriteFile(io.get(), "s.avro", *schema, {&written}, wo).status());
      ASSERT_OK_AND_ASSIGN(auto file, io->OpenInput("s.avro"));
      ASSERT_OK_AND_ASSIGN(auto reader, AvroReader::Open(std::move(file), options));
      got.emplace_back();
      Batch b;
      for (;;) {
        ASSERT_OK_AND_ASSIGN(bool more, reader->Next(&b));
        if (!more) break;
        got.back() += JsonRows(b);
      }
    }
    Batch want = std::move(written);
    for (size_t i = 0; i < skipped.size(); ++i) {
      if (!skipped[i]) continue;
      want.columns[i] = Column(schema->fields[i].type);
      for (int64_t r = 0; r < rows; ++r) want.columns[i].AppendNull();
    }
    for (const std::string& json : got) ASSERT_EQ(json, JsonRows(want));
  }
}

TEST(AvroRoundTripTest, AllTypesWithNullsAndEmptyValues) {
  ASSERT_OK_AND_ASSIGN(
      Schema schema,
      ParseColumnList("b BOOLEAN, i INT NOT NULL, l BIGINT, f FLOAT, d DOUBLE, "
                      "dec DECIMAL(38,10), dsmall DECIMAL(2,1), dt DATE, t TIME, ts TIMESTAMP, "
                      "tz TIMESTAMPTZ, ns TIMESTAMP_NS, tzns TIMESTAMPTZ_NS, s STRING, u UUID, "
                      "fx FIXED(3), bin BINARY, tags ARRAY<STRING>, m MAP<STRING, INT>, "
                      "im MAP<INT, STRING>, st STRUCT<a: INT, b: ARRAY<STRUCT<c: STRING>>>"));
  auto sp = std::make_shared<const Schema>(schema);
  Batch batch = Batch::Make(sp);
  // Row 0: all optional columns null, i = INT32_MIN.
  for (size_t c = 0; c < batch.columns.size(); ++c) {
    if (c == 1) {
      batch.columns[c].Append<int32_t>(INT32_MIN);
    } else {
      batch.columns[c].AppendNull();
    }
  }
  // Row 1: empty strings, empty lists and maps, zero values.
  std::mt19937_64 rng(7);
  Batch random = testing::RandomBatch(sp, 50, &rng);
  auto io = MakeMemoryFileIO();
  ASSERT_OK(WriteFile(io.get(), "all.avro", schema, {&batch, &random}, {}).status());
  ASSERT_OK_AND_ASSIGN(ReadResult got, ReadBack(io.get(), "all.avro"));
  EXPECT_EQ(got.json, JsonRows(batch) + JsonRows(random));
  EXPECT_EQ(got.json.substr(0, got.json.find('\n')),
            "{\"b\":null,\"i\":-2147483648,\"l\":null,\"f\":null,\"d\":null,\"dec\":null,"
            "\"dsmall\":null,\"dt\":null,\"t\":null,\"ts\":null,\"tz\":null,\"ns\":null,"
            "\"tzns\":null,\"s\":null,\"u\":null,\"fx\":null,\"bin\":null,\"tags\":null,"
            "\"m\":null,\"im\":null,\"st\":null}");
}

TEST(AvroRoundTripTest, ExplicitManifestListSchemaKeepsFieldIds) {
  // The manifest-list schema as Java Iceberg writes it (ids 500..).
  const std::string avro_schema = R"({"type":"record","name":"manifest_file","fields":[
    {"name":"manifest_path","type":"string","doc":"Location URI with FS scheme","field-id":500},
    {"name":"manifest_length","type":"long","field-id":501},
    {"name":"added_snapshot_id","type":["null","long"],"default":null,"field-id":503},
    {"name":"partitions","type":["null",{"type":"array","items":{"type":"record","name":"r508",
      "fields":[{"name":"contains_null","type":"boolean","field-id":509},
                {"name":"lower_bound","type":["null","bytes"],"default":null,"field-id":510}]},
      "element-id":508}],"default":null,"field-id":507},
    {"name":"key_metadata","type":["null","bytes"],"default":null,"field-id":519}]})";
  ASSERT_OK_AND_ASSIGN(AvroNodePtr node, ParseAvroSchema(avro_schema));
  ASSERT_OK_AND_ASSIGN(Schema schema, AvroToIcebergSchema(*node));
  // The Iceberg schema lacks key_metadata: the writer fills it with nulls.
  schema.fields.pop_back();
  auto sp = std::make_shared<const Schema>(schema);
  std::mt19937_64 rng(3);
  Batch batch = testing::RandomBatch(sp, 20, &rng);

  auto io = MakeMemoryFileIO();
  WriterOptions options;
  options.avro_schema_json = avro_schema;
  options.metadata = {{"format-version", "2"}, {"snapshot-id", "42"}};
  ASSERT_OK(WriteFile(io.get(), "snap.avro", schema, {&batch}, options).status());
  ASSERT_OK_AND_ASSIGN(ReadResult got, ReadBack(io.get(), "snap.avro"));
  ASSERT_OK_AND_ASSIGN(AvroNodePtr written, ParseAvroSchema(got.metadata["avro.schema"]));
  ASSERT_EQ(written->fields.size(), 5u);
  EXPECT_EQ(written->name, "manifest_file");
  EXPECT_EQ(*written->fields[0].field_id, 500);
  EXPECT_EQ(written->fields[0].doc, "Location URI with FS scheme");
  EXPECT_EQ(*written->fields[3].field_id, 507);
  EXPECT_EQ(*written->fields[3].type->NonNullBranch()->element_id, 508);
  EXPECT_EQ(*written->fields[3].type->NonNullBranch()->items->fields[1].field_id, 510);
  EXPECT_EQ(got.metadata["snapshot-id"], "42");
  ASSERT_EQ(got.schema->fields.size(), 5u);
  EXPECT_EQ(got.schema->fields[4].id, 519);
  // Every row: the written columns, then key_metadata null.
  std::string want;
  for (int64_t r = 0; r < batch.num_rows(); ++r) {
    std::string row;
    AppendJsonRow(batch, r, &row);
    row.pop_back();
    want += row + ",\"key_metadata\":null}\n";
  }
  EXPECT_EQ(got.json, want);
}

TEST(AvroRoundTripTest, SyncMarkerMakesOutputDeterministic) {
  ASSERT_OK_AND_ASSIGN(Schema schema, ParseColumnList("id BIGINT NOT NULL, name STRING"));
  auto sp = std::make_shared<const Schema>(schema);
  std::mt19937_64 rng(11);
  Batch batch = testing::RandomBatch(sp, 100, &rng);
  auto io = MakeMemoryFileIO();
  WriterOptions options;
  options.sync_marker = std::array<uint8_t, 16>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
  ASSERT_OK(WriteFile(io.get(), "a.avro", schema, {&batch}, options).status());
  ASSERT_OK(WriteFile(io.get(), "b.avro", schema, {&batch}, options).status());
  ASSERT_OK_AND_ASSIGN(std::string a, io->ReadFile("a.avro"));
  ASSERT_OK_AND_ASSIGN(std::string b, io->ReadFile("b.avro"));
  EXPECT_EQ(a, b);
  EXPECT_EQ(a.substr(a.size() - 16), std::string("\1\2\3\4\5\6\7\10\11\12\13\14\15\16\17\0", 16));
}

TEST(AvroRoundTripTest, WriteErrorsLeaveFileConsistent) {
  ASSERT_OK_AND_ASSIGN(Schema schema, ParseColumnList("id BIGINT NOT NULL, amount DECIMAL(4,2)"));
  auto sp = std::make_shared<const Schema>(schema);
  Schema lax = schema;
  lax.fields[0].required = false;
  auto lax_sp = std::make_shared<const Schema>(lax);
  auto io = MakeMemoryFileIO();
  ASSERT_OK_AND_ASSIGN(auto out, io->OpenOutput("e.avro"));
  ASSERT_OK_AND_ASSIGN(auto writer, AvroWriter::Open(std::move(out), schema));

  Batch good = Batch::Make(sp);
  good.columns[0].Append<int64_t>(1);
  good.columns[1].Append<int128_t>(9999);
  ASSERT_OK(writer->Write(good));

  Batch null_id = Batch::Make(lax_sp);  // same layout, but id is null in row 1
  null_id.columns[0].Append<int64_t>(2);
  null_id.columns[1].AppendNull();
  null_id.columns[0].AppendNull();
  null_id.columns[1].AppendNull();
  ASSERT_ERROR(writer->Write(null_id), StatusCode::kInvalidArgument, "row 1");

  Batch wide = Batch::Make(sp);
  wide.columns[0].Append<int64_t>(3);
  wide.columns[1].Append<int128_t>(int128_t{1} << 20);  // does not fit 2 bytes
  ASSERT_ERROR(writer->Write(wide), StatusCode::kOutOfRange, "amount");

  ASSERT_OK(writer->Close().status());
  ASSERT_OK_AND_ASSIGN(ReadResult got, ReadBack(io.get(), "e.avro"));
  EXPECT_EQ(got.json, "{\"id\":1,\"amount\":\"99.99\"}\n");
}

TEST(AvroRoundTripTest, LargeBatchIsSplitIntoBlocks) {
  ASSERT_OK_AND_ASSIGN(Schema schema, ParseColumnList("id BIGINT NOT NULL, name STRING"));
  auto sp = std::make_shared<const Schema>(schema);
  std::mt19937_64 rng(12);
  Batch batch = testing::RandomBatch(sp, 5000, &rng);
  auto io = MakeMemoryFileIO();
  WriterOptions options;
  options.block_bytes = 4096;
  ASSERT_OK(WriteFile(io.get(), "big.avro", schema, {&batch}, options).status());
  ASSERT_OK_AND_ASSIGN(ReadResult got, ReadBack(io.get(), "big.avro"));
  EXPECT_EQ(got.rows, 5000);
  EXPECT_GE(got.blocks, 10);
  EXPECT_EQ(got.json, JsonRows(batch));
}

TEST(AvroRoundTripTest, CompressionLevels) {
  ASSERT_OK_AND_ASSIGN(Schema schema, ParseColumnList("id BIGINT NOT NULL, name STRING"));
  auto sp = std::make_shared<const Schema>(schema);
  std::mt19937_64 rng(13);
  Batch batch = testing::RandomBatch(sp, 3000, &rng);
  auto io = MakeMemoryFileIO();
  int64_t sizes[2];
  for (int i = 0; i < 2; ++i) {
    WriterOptions options;
    options.compression_level = i == 0 ? 1 : 9;
    ASSERT_OK_AND_ASSIGN(sizes[i], WriteFile(io.get(), "c.avro", schema, {&batch}, options));
    ASSERT_OK_AND_ASSIGN(ReadResult got, ReadBack(io.get(), "c.avro"));
    EXPECT_EQ(got.json, JsonRows(batch));
  }
  EXPECT_LT(sizes[1], sizes[0]);
  WriterOptions bad;
  bad.compression_level = 10;
  ASSERT_ERROR(WriteFile(io.get(), "c.avro", schema, {&batch}, bad), StatusCode::kInvalidArgument,
               "deflate level 10");
}

TEST(AvroRoundTripTest, BatchOfAnotherLayoutIsRejected) {
  ASSERT_OK_AND_ASSIGN(Schema schema, ParseColumnList("id BIGINT NOT NULL"));
  ASSERT_OK_AND_ASSIGN(Schema other, ParseColumnList("id INT NOT NULL"));
  auto io = MakeMemoryFileIO();
  ASSERT_OK_AND_ASSIGN(auto out, io->OpenOutput("l.avro"));
  ASSERT_OK_AND_ASSIGN(auto writer, AvroWriter::Open(std::move(out), schema));
  Batch batch = Batch::Make(std::make_shared<const Schema>(other));
  batch.columns[0].Append<int32_t>(1);
  ASSERT_ERROR(writer->Write(batch), StatusCode::kInvalidArgument, "column 0 is int");
}

TEST(AvroRoundTripTest, ReservedMetadataAndMismatchedSchemaAreRejected) {
  ASSERT_OK_AND_ASSIGN(Schema schema, ParseColumnList("id BIGINT NOT NULL"));
  auto io = MakeMemoryFileIO();
  WriterOptions reserved;
  reserved.metadata = {{"avro.codec", "null"}};
  ASSERT_OK_AND_ASSIGN(auto out, io->OpenOutput("r.avro"));
  ASSERT_ERROR(AvroWriter::Open(std::move(out), schema, reserved), StatusCode::kInvalidArgument,
               "reserved");
  WriterOptions mismatch;
  mismatch.avro_schema_json =
      R"({"type":"record","name":"x","fields":[{"name":"id","type":"string","field-id":1}]})";
  ASSERT_OK_AND_ASSIGN(out, io->OpenOutput("r.avro"));
  ASSERT_ERROR(AvroWriter::Open(std::move(out), schema, mismatch), StatusCode::kInvalidArgument,
               "cannot hold Iceberg long");
}

}  // namespace
}  // namespace sluice::avro
