#include "parquet/metadata.h"

#include <gtest/gtest.h>

#include "common/endian.h"
#include "common/testing.h"
#include "io/file_io.h"
#include "parquet/thrift_compact.h"

namespace sluice::parquet {
namespace {

using thrift::CompactReader;
using thrift::CompactWriter;
using thrift::CType;

TEST(ThriftCompactTest, FieldHeadersUseDeltasAndLongForm) {
  std::string buf;
  CompactWriter w(&buf);
  w.StructBegin();
  w.FieldI32(1, -3);     // delta 1
  w.FieldI64(17, 1000);  // delta 16: long form
  w.FieldBool(18, true);
  w.FieldBinary(5, "ab");  // negative delta: long form
  w.StructEnd();
  // 0x15 = delta 1, i32; zigzag(-3) = 5.
  ASSERT_GE(buf.size(), 2u);
  EXPECT_EQ(static_cast<uint8_t>(buf[0]), 0x15);
  EXPECT_EQ(static_cast<uint8_t>(buf[1]), 5);
  EXPECT_EQ(static_cast<uint8_t>(buf[2]), 0x06);  // long-form i64 header
  EXPECT_EQ(static_cast<uint8_t>(buf[3]), 34);    // zigzag(17)

  CompactReader r(buf);
  ASSERT_OK(r.StructBegin());
  CType t;
  int16_t id;
  int32_t i32;
  int64_t i64;
  bool b;
  std::string s;
  ASSERT_OK(r.ReadFieldHeader(&t, &id));
  EXPECT_EQ(id, 1);
  ASSERT_OK(r.ReadI32(t, &i32));
  EXPECT_EQ(i32, -3);
  ASSERT_OK(r.ReadFieldHeader(&t, &id));
  EXPECT_EQ(id, 17);
  ASSERT_OK(r.ReadI64(t, &i64));
  EXPECT_EQ(i64, 1000);
  ASSERT_OK(r.ReadFieldHeader(&t, &id));
  EXPECT_EQ(id, 18);
  ASSERT_OK(r.ReadBool(t, &b));
  EXPECT_TRUE(b);
  ASSERT_OK(r.ReadFieldHeader(&t, &id));
  EXPECT_EQ(id, 5);
  ASSERT_OK(r.ReadBinary(t, &s));
  EXPECT_EQ(s, "ab");
  ASSERT_OK(r.ReadFieldHeader(&t, &id));
  EXPECT_EQ(t, CType::kStop);
  r.StructEnd();
  EXPECT_EQ(r.position(), buf.size());
}

TEST(ThriftCompactTest, SkipsEveryType) {
  std::string buf;
  CompactWriter w(&buf);
  w.StructBegin();
  w.FieldBool(1, false);
  w.FieldI8(2, -1);
  w.FieldI16(3, 300);
  w.FieldDouble(4, 1.5);
  w.FieldBinary(5, "xyz");
  w.FieldListBegin(6, CType::kI64, 20);  // long list header
  for (int i = 0; i < 20; ++i) w.ElemI64(i);
  w.FieldListBegin(7, CType::kBoolTrue, 2);
  w.ElemBool(true);
  w.ElemBool(false);
  w.FieldStructBegin(8);
  w.FieldI32(1, 7);
  w.StructEnd();
  // A map<i32, binary> with one entry, written by hand.
  buf.push_back(static_cast<char>((1 << 4) | 11));
  buf.push_back(1);
  buf.push_back(static_cast<char>((5 << 4) | 8));
  buf.push_back(2);  // zigzag(1)
  buf.push_back(1);
  buf.push_back('q');
  w.StructEnd();
  CompactReader r(buf);
  ASSERT_OK(r.Skip(CType::kStruct));
  EXPECT_EQ(r.position(), buf.size());
}

TEST(ThriftCompactTest, RejectsTruncationAndDeepNesting) {
  std::string buf;
  CompactWriter w(&buf);
  w.StructBegin();
  w.FieldBinary(1, "hello");
  w.StructEnd();
  for (size_t n = 0; n < buf.size(); ++n) {
    CompactReader r(std::string_view(buf).substr(0, n));
    ASSERT_ERROR(r.Skip(CType::kStruct), StatusCode::kCorruption, "truncated");
  }
  std::string deep;
  for (int i = 0; i < 100; ++i) deep.push_back(static_cast<char>(0x1c));  // field 1: struct
  CompactReader r(deep);
  ASSERT_ERROR(r.Skip(CType::kStruct), StatusCode::kCorruption, "deeper");
  // A list claiming more elements than bytes remain.
  std::string lying = {static_cast<char>(0x19), static_cast<char>(0xf5), static_cast<char>(0x7f)};
  CompactReader r2(lying);
  ASSERT_ERROR(r2.Skip(CType::kStruct), StatusCode::kCorruption, "exceeds");
}

FileMetaData MakeMetadata() {
  FileMetaData md;
  md.version = 2;
  SchemaElement root;
  root.name = "schema";
  root.num_children = 2;
  md.schema.push_back(root);
  SchemaElement a;
  a.name = "a";
  a.type = PhysicalType::kInt64;
  a.repetition_type = Repetition::kRequired;
  a.field_id = 1;
  a.converted_type = ConvertedType::kTimestampMicros;
  a.logical_type = LogicalType{};
  a.logical_type->kind = LogicalType::Kind::kTimestamp;
  a.logical_type->unit = TimeUnit::kNanos;
  a.logical_type->is_adjusted_to_utc = true;
  md.schema.push_back(a);
  SchemaElement b;
  b.name = "b";
  b.type = PhysicalType::kFixedLenByteArray;
  b.type_length = 9;
  b.repetition_type = Repetition::kOptional;
  b.field_id = 2;
  b.precision = 20;
  b.scale = 3;
  b.logical_type = LogicalType{};
  b.logical_type->kind = LogicalType::Kind::kDecimal;
  b.logical_type->precision = 20;
  b.logical_type->scale = 3;
  md.schema.push_back(b);
  md.num_rows = 1234567890123;
  RowGroup rg;
  rg.num_rows = 1234567890123;
  rg.total_byte_size = 99;
  rg.file_offset = 4;
  rg.total_compressed_size = 77;
  rg.ordinal = 0;
  rg.sorting_columns.push_back({1, true, false});
  ColumnChunk cc;
  cc.file_offset = 4;
  ColumnMetaData cm;
  cm.type = PhysicalType::kInt64;
  cm.encodings = {Encoding::kPlain, Encoding::kRleDictionary, Encoding::kRle};
  cm.path_in_schema = {"a"};
  cm.codec = CompressionCodec::kZstd;
  cm.num_values = 5;
  cm.total_uncompressed_size = 100;
  cm.total_compressed_size = 50;
  cm.data_page_offset = 40;
  cm.dictionary_page_offset = 4;
  cm.key_value_metadata.push_back({"k", std::nullopt});
  Statistics st;
  st.min_value = std::string("\x01\0\0\0\0\0\0\0", 8);
  st.max_value = std::string("\x09\0\0\0\0\0\0\0", 8);
  st.null_count = 0;
  st.is_max_value_exact = true;
  cm.statistics = st;
  cc.meta_data = cm;
  rg.columns.push_back(cc);
  md.row_groups.push_back(rg);
  md.key_value_metadata.push_back({"iceberg.schema", std::string("{}")});
  md.created_by = "sluice test";
  md.column_orders = {true, true};
  return md;
}

TEST(MetadataTest, FileMetaDataRoundTrips) {
  FileMetaData md = MakeMetadata();
  std::string bytes;
  SerializeFileMetaData(md, &bytes);
  ASSERT_OK_AND_ASSIGN(FileMetaData back, DeserializeFileMetaData(bytes));
  EXPECT_EQ(back.version, 2);
  ASSERT_EQ(back.schema.size(), 3u);
  EXPECT_EQ(back.schema[0].num_children, 2);
  EXPECT_FALSE(back.schema[0].type.has_value());
  EXPECT_EQ(back.schema[1].converted_type, ConvertedType::kTimestampMicros);
  ASSERT_TRUE(back.schema[1].logical_type.has_value());
  EXPECT_EQ(back.schema[1].logical_type->kind, LogicalType::Kind::kTimestamp);
  EXPECT_EQ(back.schema[1].logical_type->unit, TimeUnit::kNanos);
  EXPECT_TRUE(back.schema[1].logical_type->is_adjusted_to_utc);
  EXPECT_EQ(back.schema[2].type_length, 9);
  EXPECT_EQ(back.schema[2].logical_type->precision, 20);
  EXPECT_EQ(back.schema[2].logical_type->scale, 3);
  EXPECT_EQ(back.schema[2].field_id, 2);
  EXPECT_EQ(back.num_rows, 1234567890123);
  ASSERT_EQ(back.row_groups.size(), 1u);
  const RowGroup& rg = back.row_groups[0];
  EXPECT_EQ(rg.ordinal, 0);
  ASSERT_EQ(rg.sorting_columns.size(), 1u);
  EXPECT_TRUE(rg.sorting_columns[0].descending);
  const ColumnMetaData& cm = *rg.columns[0].meta_data;
  EXPECT_EQ(cm.encodings.size(), 3u);
  EXPECT_EQ(cm.encodings[1], Encoding::kRleDictionary);
  EXPECT_EQ(cm.codec, CompressionCodec::kZstd);
  EXPECT_EQ(cm.dictionary_page_offset, 4);
  EXPECT_EQ(cm.statistics->max_value->size(), 8u);
  EXPECT_EQ(cm.statistics->is_max_value_exact, true);
  EXPECT_FALSE(cm.statistics->is_min_value_exact.has_value());
  EXPECT_FALSE(cm.key_value_metadata[0].value.has_value());
  EXPECT_EQ(back.key_value_metadata[0].value, "{}");
  EXPECT_EQ(back.created_by, "sluice test");
  EXPECT_EQ(back.column_orders, std::vector<bool>({true, true}));
  // Re-serializing gives the same bytes.
  std::string again;
  SerializeFileMetaData(back, &again);
  EXPECT_EQ(again, bytes);
}

TEST(MetadataTest, TruncatedMetadataIsCorruption) {
  std::string bytes;
  SerializeFileMetaData(MakeMetadata(), &bytes);
  for (size_t n = 0; n < bytes.size(); n += 7) {
    auto r = DeserializeFileMetaData(std::string_view(bytes).substr(0, n));
    ASSERT_FALSE(r.ok()) << n;
    EXPECT_EQ(r.status().code(), StatusCode::kCorruption);
  }
}

TEST(MetadataTest, MissingRequiredFieldIsNamed) {
  std::string bytes;
  CompactWriter w(&bytes);
  w.StructBegin();
  w.FieldI32(1, 1);
  w.StructEnd();
  ASSERT_ERROR(DeserializeFileMetaData(bytes), StatusCode::kCorruption,
               "FileMetaData lacks required field 2");
}

TEST(MetadataTest, PageHeaderRoundTrips) {
  PageHeader h;
  h.type = PageType::kDataPageV2;
  h.uncompressed_page_size = 100;
  h.compressed_page_size = 60;
  h.crc = -5;
  DataPageHeaderV2 v2;
  v2.num_values = 10;
  v2.num_nulls = 2;
  v2.num_rows = 8;
  v2.encoding = Encoding::kDeltaBinaryPacked;
  v2.definition_levels_byte_length = 3;
  v2.repetition_levels_byte_length = 4;
  v2.is_compressed = false;
  h.data_page_header_v2 = v2;
  std::string bytes;
  SerializePageHeader(h, &bytes);
  bytes += "trailing page data";
  size_t consumed = 0;
  ASSERT_OK_AND_ASSIGN(PageHeader back, DeserializePageHeader(bytes, &consumed));
  EXPECT_EQ(bytes.substr(consumed), "trailing page data");
  EXPECT_EQ(back.type, PageType::kDataPageV2);
  EXPECT_EQ(back.crc, -5);
  ASSERT_TRUE(back.data_page_header_v2.has_value());
  EXPECT_EQ(back.data_page_header_v2->num_rows, 8);
  EXPECT_EQ(back.data_page_header_v2->repetition_levels_byte_length, 4);
  EXPECT_FALSE(back.data_page_header_v2->is_compressed);
  EXPECT_EQ(back.data_page_header_v2->encoding, Encoding::kDeltaBinaryPacked);
}

// A footer written by Spark/parquet-mr (the "bunnies" table of icebird's fixtures).
TEST(MetadataTest, DecodesRealFooter) {
  auto io = MakeLocalFileIO();
  const std::string path =
      "../shared/fixtures/iceberg/icebird/java/bunnies/data/bunnies-initial.parquet";
  ASSERT_OK_AND_ASSIGN(std::string file, io->ReadFile(path));
  ASSERT_GT(file.size(), 12u);
  ASSERT_EQ(file.substr(file.size() - 4), "PAR1");
  uint32_t len = LoadLE<uint32_t>(file.data() + file.size() - 8);
  ASSERT_LE(len + 8u, file.size());
  ASSERT_OK_AND_ASSIGN(FileMetaData md, DeserializeFileMetaData(std::string_view(file).substr(
                                            file.size() - 8 - len, len)));
  EXPECT_GT(md.num_rows, 0);
  ASSERT_FALSE(md.schema.empty());
  EXPECT_GT(md.schema[0].num_children.value_or(0), 0);
  int64_t rows = 0;
  for (const RowGroup& rg : md.row_groups) {
    rows += rg.num_rows;
    EXPECT_FALSE(rg.columns.empty());
    for (const ColumnChunk& c : rg.columns) {
      ASSERT_TRUE(c.meta_data.has_value());
      EXPECT_FALSE(c.meta_data->path_in_schema.empty());
      EXPECT_LT(c.meta_data->data_page_offset, static_cast<int64_t>(file.size()));
    }
  }
  EXPECT_EQ(rows, md.num_rows);
  // Every leaf of the schema carries an Iceberg field id.
  for (size_t i = 1; i < md.schema.size(); ++i) {
    if (md.schema[i].type.has_value()) {
      EXPECT_TRUE(md.schema[i].field_id.has_value());
    }
  }
}

}  // namespace
}  // namespace sluice::parquet
