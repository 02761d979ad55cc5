#include "avro/schema.h"

#include "avro/iceberg_schema.h"
#include "columnar/sql_schema.h"
#include "common/testing.h"

namespace sluice::avro {
namespace {

TEST(AvroSchemaTest, ParsesPrimitivesAndAttributes) {
  ASSERT_OK_AND_ASSIGN(AvroNodePtr n, ParseAvroSchema(R"({"type":"record","name":"ns.rec",
    "doc":"top","fields":[
      {"name":"a","type":"long","field-id":7,"doc":"the a","order":"descending"},
      {"name":"ts","type":{"type":"long","logicalType":"timestamp-micros","adjust-to-utc":true},
       "field-id":8},
      {"name":"d","type":{"type":"fixed","name":"decimal_9_2","size":4,"logicalType":"decimal",
       "precision":9,"scale":2},"field-id":9},
      {"name":"opt","type":["null","string"],"default":null,"field-id":10}]})"));
  EXPECT_EQ(n->type, AvroType::kRecord);
  EXPECT_EQ(n->name, "rec");
  EXPECT_EQ(n->name_space, "ns");
  EXPECT_EQ(n->doc, "top");
  ASSERT_EQ(n->fields.size(), 4u);
  EXPECT_EQ(*n->fields[0].field_id, 7);
  EXPECT_EQ(n->fields[0].doc, "the a");
  EXPECT_EQ(n->fields[0].props["order"], "descending");
  EXPECT_EQ(n->fields[1].type->logical_type, "timestamp-micros");
  EXPECT_TRUE(*n->fields[1].type->adjust_to_utc);
  const AvroNode& d = *n->fields[2].type;
  EXPECT_EQ(d.type, AvroType::kFixed);
  EXPECT_EQ(d.size, 4);
  EXPECT_EQ(d.precision, 9);
  EXPECT_EQ(d.scale, 2);
  EXPECT_EQ(d.full_name(), "ns.decimal_9_2");
  EXPECT_EQ(n->fields[3].type->NullBranch(), 0);
  EXPECT_TRUE(n->fields[3].default_value->is_null());
}

TEST(AvroSchemaTest, JsonRoundTripKeepsEverything) {
  const char* text = R"({"type":"record","name":"r","fields":[
    {"name":"u1","type":{"type":"fixed","name":"uuid_fixed","size":16,"logicalType":"uuid"},
     "field-id":1},
    {"name":"u2","type":["null","uuid_fixed"],"default":null,"field-id":2},
    {"name":"e","type":{"type":"enum","name":"color","symbols":["RED","GREEN"]},"field-id":3},
    {"name":"m","type":{"type":"map","values":"int","key-id":5,"value-id":6},"field-id":4},
    {"name":"l","type":{"type":"array","items":"color","element-id":8,"x-custom":[1,2]},
     "field-id":7}]})";
  ASSERT_OK_AND_ASSIGN(AvroNodePtr a, ParseAvroSchema(text));
  std::string once = AvroSchemaToString(*a);
  ASSERT_OK_AND_ASSIGN(AvroNodePtr b, ParseAvroSchema(once));
  EXPECT_EQ(AvroSchemaToString(*b), once);
  // The named fixed is written once, then referenced by name.
  EXPECT_EQ(once.find("\"size\""), once.rfind("\"size\""));
  EXPECT_NE(once.find("[\"null\",\"uuid_fixed\"]"), std::string::npos);
  EXPECT_EQ(b->fields[1].type->branches[1].get(), b->fields[0].type.get());
  EXPECT_EQ(*b->fields[3].type->key_id, 5);
  EXPECT_EQ(*b->fields[4].type->element_id, 8);
  EXPECT_EQ(b->fields[4].type->props["x-custom"], Json::parse("[1,2]"));
}

TEST(AvroSchemaTest, RejectsBadSchemas) {
  ASSERT_ERROR(ParseAvroSchema("{"), StatusCode::kInvalidArgument, "not valid JSON");
  ASSERT_ERROR(ParseAvroSchema(R"({"type":"record","name":"r","fields":[{"name":"a",
    "type":"nosuch"}]})"),
               StatusCode::kInvalidArgument, "unknown type 'nosuch'");
  ASSERT_ERROR(ParseAvroSchema(R"({"type":"record","name":"node","fields":[{"name":"next",
    "type":["null","node"]}]})"),
               StatusCode::kNotImplemented, "recursive");
  ASSERT_ERROR(ParseAvroSchema(R"(["null",["int"]])"), StatusCode::kInvalidArgument,
               "union may not contain a union");
  ASSERT_ERROR(ParseAvroSchema(R"({"type":"record","name":"r","fields":[
    {"name":"a","type":"int","field-id":"x"}]})"),
               StatusCode::kInvalidArgument, "r.a");
  ASSERT_ERROR(ParseAvroSchema(R"({"type":"record","name":"r","fields":[
    {"name":"a","type":{"type":"fixed","name":"f","size":2}},
    {"name":"b","type":{"type":"fixed","name":"f","size":3}}]})"),
               StatusCode::kInvalidArgument, "defined twice");
  std::string deep = "\"int\"";
  for (int i = 0; i < 500; ++i) deep = "{\"type\":\"array\",\"items\":" + deep + "}";
  ASSERT_ERROR(ParseAvroSchema(deep), StatusCode::kNotImplemented, "nested deeper");
  std::string brackets = std::string(100000, '[') + std::string(100000, ']');
  EXPECT_FALSE(ParseAvroSchema(brackets).ok());  // no stack overflow
}

TEST(AvroSchemaTest, IcebergToAvroFollowsTheSpecMapping) {
  ASSERT_OK_AND_ASSIGN(
      Schema schema,
      ParseColumnList("id BIGINT NOT NULL, u UUID, amount DECIMAL(9,2) NOT NULL, "
                      "d DATE, t TIME, ts TIMESTAMP, tz TIMESTAMPTZ, tzns TIMESTAMPTZ_NS, "
                      "tags ARRAY<STRING>, attrs MAP<STRING, INT>, sizes MAP<INT, BIGINT>, "
                      "loc STRUCT<lat: DOUBLE NOT NULL, lon DOUBLE>"));
  ASSERT_OK_AND_ASSIGN(AvroNodePtr avro, IcebergToAvroSchema(schema, "row"));
  Json j = AvroSchemaToJson(*avro);
  EXPECT_EQ(j["name"], "row");
  const Json& f = j["fields"];
  EXPECT_EQ(f[0], Json::parse(R"({"name":"id","type":"long","field-id":1})"));
  EXPECT_EQ(f[1], Json::parse(R"({"name":"u","type":["null",{"type":"fixed","name":"uuid_fixed",
    "size":16,"logicalType":"uuid"}],"default":null,"field-id":2})"));
  EXPECT_EQ(f[2]["type"], Json::parse(R"({"type":"fixed","name":"decimal_9_2","size":4,
    "logicalType":"decimal","precision":9,"scale":2})"));
  EXPECT_EQ(f[3]["type"][1], Json::parse(R"({"type":"int","logicalType":"date"})"));
  EXPECT_EQ(f[4]["type"][1], Json::parse(R"({"type":"long","logicalType":"time-micros"})"));
  EXPECT_EQ(f[5]["type"][1], Json::parse(R"({"type":"long","logicalType":"timestamp-micros",
    "adjust-to-utc":false})"));
  EXPECT_EQ(f[6]["type"][1]["adjust-to-utc"], true);
  EXPECT_EQ(f[7]["type"][1]["logicalType"], "timestamp-nanos");
  // ids: top level 1..12, then nested in field order.
  EXPECT_EQ(f[8]["type"][1], Json::parse(R"({"type":"array","items":["null","string"],
    "element-id":13})"));
  EXPECT_EQ(f[9]["type"][1], Json::parse(R"({"type":"map","values":["null","int"],
    "key-id":14,"value-id":15})"));
  EXPECT_EQ(f[10]["type"][1], Json::parse(R"({"type":"array","items":{"type":"record",
    "name":"k16_v17","fields":[{"name":"key","type":"int","field-id":16},
    {"name":"value","type":["null","long"],"default":null,"field-id":17}]},
    "logicalType":"map"})"));
  EXPECT_EQ(f[11]["type"][1]["name"], "r12");
  EXPECT_EQ(f[11]["type"][1]["fields"][0]["field-id"], 18);

  // And back: the same Iceberg schema, ids included.
  ASSERT_OK_AND_ASSIGN(AvroNodePtr reparsed, ParseAvroSchema(j.dump()));
  ASSERT_OK_AND_ASSIGN(Schema back, AvroToIcebergSchema(*reparsed));
  EXPECT_TRUE(back.AsStruct()->Equals(*schema.AsStruct())) << back.ToString();
}

TEST(AvroSchemaTest, DecimalFixedSizes) {
  // Smallest n with 2^(8n-1) > 10^p - 1 (spec table: 9 digits fit 4 bytes, 38 fit 16).
  const int want[39] = {0, 1, 1,  2,  2,  3,  3,  4,  4,  4,  5,  5,  6,  6,  6,  7,  7,  8,  8, 9,
                        9, 9, 10, 10, 11, 11, 11, 12, 12, 13, 13, 13, 14, 14, 15, 15, 16, 16, 16};
  for (int p = 1; p <= 38; ++p) EXPECT_EQ(DecimalFixedSize(p), want[p]) << p;
}

TEST(AvroSchemaTest, AvroToIcebergIsLenient) {
  ASSERT_OK_AND_ASSIGN(AvroNodePtr n, ParseAvroSchema(R"({"type":"record","name":"r","fields":[
    {"name":"e","type":{"type":"enum","name":"E","symbols":["A"]},"field-id":4},
    {"name":"ms","type":{"type":"long","logicalType":"timestamp-millis"}},
    {"name":"su","type":{"type":"string","logicalType":"uuid"}},
    {"name":"bd","type":{"type":"bytes","logicalType":"decimal","precision":5,"scale":1}},
    {"name":"l","type":{"type":"array","items":"int"}}]})"));
  ASSERT_OK_AND_ASSIGN(Schema s, AvroToIcebergSchema(*n));
  EXPECT_EQ(s.ToString(),
            "struct<4: e: required string, 5: ms: required timestamp, 6: su: required uuid, "
            "7: bd: required decimal(5,1), 8: l: required list<int>>");
  EXPECT_EQ(s.fields[4].type->fields()[0].id, 9);  // fresh ids above the highest

  ASSERT_OK_AND_ASSIGN(AvroNodePtr u, ParseAvroSchema(R"({"type":"record","name":"r","fields":[
    {"name":"x","type":["null","int","string"],"field-id":1}]})"));
  ASSERT_ERROR(AvroToIcebergSchema(*u), StatusCode::kNotImplemented, "2 non-null branches");
  ASSERT_OK_AND_ASSIGN(AvroNodePtr top, ParseAvroSchema("\"long\""));
  ASSERT_ERROR(AvroToIcebergSchema(*top), StatusCode::kNotImplemented, "only records");
}

}  // namespace
}  // namespace sluice::avro

namespace sluice::avro {
namespace {

TEST(AvroSchemaTest, InvalidAvroNamesAreSanitizedAndRestored) {
  EXPECT_EQ(SanitizeAvroName("ok_name1"), "ok_name1");
  EXPECT_EQ(SanitizeAvroName("event-time"), "event_x2Dtime");
  EXPECT_EQ(SanitizeAvroName("1st"), "_1st");
  EXPECT_EQ(SanitizeAvroName("a b.c"), "a_x20b_x2Ec");
  EXPECT_EQ(SanitizeAvroName("prix_€"), "prix__x20AC");
  Schema schema;
  schema.fields.push_back({1, "event-time", DataType::Long(), true, ""});
  schema.fields.push_back({2, "2nd", DataType::String(), false, ""});
  ASSERT_OK_AND_ASSIGN(AvroNodePtr avro, IcebergToAvroSchema(schema, "row"));
  EXPECT_EQ(avro->fields[0].name, "event_x2Dtime");
  EXPECT_EQ(avro->fields[0].props["iceberg-field-name"], "event-time");
  ASSERT_OK_AND_ASSIGN(AvroNodePtr reparsed, ParseAvroSchema(AvroSchemaToString(*avro)));
  ASSERT_OK_AND_ASSIGN(Schema back, AvroToIcebergSchema(*reparsed));
  EXPECT_EQ(back.fields[0].name, "event-time");
  EXPECT_EQ(back.fields[1].name, "2nd");
}

}  // namespace
}  // namespace sluice::avro
