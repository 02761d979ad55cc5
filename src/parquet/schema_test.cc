#include "parquet/schema.h"

#include <gtest/gtest.h>

#include "columnar/sql_schema.h"
#include "common/testing.h"

namespace sluice::parquet {
namespace {

TEST(SchemaTest, FieldsAreWrittenUnderTheNamesARenameGives) {
  ASSERT_OK_AND_ASSIGN(Schema s, ParseColumnList("`Breed Name` STRING, `s t` STRUCT<`x y`: INT>, "
                                                 "tags ARRAY<STRING>"));
  std::vector<SchemaElement> elements;
  std::vector<ColumnDescriptor> leaves;
  auto rename = [](std::string_view n) {
    std::string out(n);
    for (char& c : out) c = c == ' ' ? '_' : c;
    return out;
  };
  ASSERT_OK(ToParquetSchema(s, &elements, &leaves, rename));
  std::vector<std::string> names;
  for (const auto& e : elements) names.push_back(e.name);
  EXPECT_EQ(names, (std::vector<std::string>{"table", "Breed_Name", "s_t", "x_y", "tags", "list",
                                             "element"}))
      << "fields renamed; the list's own levels keep their names";
  EXPECT_EQ(leaves[1].path, (std::vector<std::string>{"s_t", "x_y"}));
  ASSERT_OK(ToParquetSchema(s, &elements, &leaves));
  EXPECT_EQ(elements[1].name, "Breed Name") << "by default, names as they are";
}

TEST(SchemaTest, AllIcebergTypesRoundTrip) {
  ASSERT_OK_AND_ASSIGN(
      Schema s,
      ParseColumnList("a BOOLEAN NOT NULL, b INT, c BIGINT, d FLOAT, e DOUBLE, f DATE, g TIME, "
                      "h TIMESTAMP, i TIMESTAMPTZ, j TIMESTAMP_NS, k TIMESTAMPTZ_NS, l STRING, "
                      "m BINARY, n FIXED(5), o UUID, p DECIMAL(9,2), q DECIMAL(18,3), "
                      "r DECIMAL(38,10), s DECIMAL(19,0), "
                      "t ARRAY<STRING>, u MAP<STRING, ARRAY<INT>>, "
                      "v STRUCT<x: INT NOT NULL, y: STRUCT<z: DOUBLE>>"));
  std::vector<SchemaElement> elements;
  std::vector<ColumnDescriptor> leaves;
  ASSERT_OK(ToParquetSchema(s, &elements, &leaves));
  ASSERT_EQ(elements[0].num_children, 22);
  auto elem = [&](const std::string& name) -> const SchemaElement& {
    for (const auto& e : elements) {
      if (e.name == name) return e;
    }
    ADD_FAILURE() << name;
    return elements[0];
  };
  EXPECT_EQ(elem("a").repetition_type, Repetition::kRequired);
  EXPECT_EQ(elem("b").repetition_type, Repetition::kOptional);
  EXPECT_EQ(elem("p").type, PhysicalType::kInt32);
  EXPECT_EQ(elem("q").type, PhysicalType::kInt64);
  EXPECT_EQ(elem("r").type, PhysicalType::kFixedLenByteArray);
  EXPECT_EQ(elem("r").type_length, 16);  // 38 digits need 16 bytes
  EXPECT_EQ(elem("s").type_length, 9);   // 19 digits need 9 bytes (8 hold only 18)
  EXPECT_EQ(elem("i").logical_type->is_adjusted_to_utc, true);
  EXPECT_EQ(elem("h").logical_type->is_adjusted_to_utc, false);
  EXPECT_EQ(elem("j").logical_type->unit, TimeUnit::kNanos);
  EXPECT_FALSE(elem("j").converted_type.has_value());
  EXPECT_EQ(elem("o").type_length, 16);
  EXPECT_EQ(elem("l").converted_type, ConvertedType::kUtf8);
  EXPECT_EQ(elem("t").converted_type, ConvertedType::kList);
  EXPECT_EQ(elem("u").converted_type, ConvertedType::kMap);
  EXPECT_EQ(elem("list").repetition_type, Repetition::kRepeated);
  EXPECT_EQ(elem("key").repetition_type, Repetition::kRequired);
  // Leaves: 19 primitives + t.element + u.key + u.value.element + v.x + v.y.z.
  ASSERT_EQ(leaves.size(), 24u);
  const ColumnDescriptor& te = leaves[19];
  EXPECT_EQ(te.path, std::vector<std::string>({"t", "list", "element"}));
  EXPECT_EQ(te.max_definition_level, 3);
  EXPECT_EQ(te.max_repetition_level, 1);
  EXPECT_EQ(te.field_id, s.FindById(te.field_id)->id);
  const ColumnDescriptor& uv = leaves[21];
  EXPECT_EQ(uv.path, std::vector<std::string>({"u", "key_value", "value", "list", "element"}));
  EXPECT_EQ(uv.max_definition_level, 5);
  EXPECT_EQ(uv.max_repetition_level, 2);
  EXPECT_EQ(leaves[22].max_definition_level, 1);  // v.x: optional v, required x
  EXPECT_EQ(leaves[23].max_definition_level, 3);
  EXPECT_EQ(leaves[0].max_definition_level, 0);

  Schema back;
  std::vector<ColumnDescriptor> back_leaves;
  ASSERT_OK(FromParquetSchema(elements, &back, &back_leaves));
  EXPECT_TRUE(back.AsStruct()->Equals(*s.AsStruct())) << back.ToString() << "\n" << s.ToString();
  ASSERT_EQ(back_leaves.size(), leaves.size());
  for (size_t i = 0; i < leaves.size(); ++i) {
    EXPECT_EQ(back_leaves[i].path, leaves[i].path);
    EXPECT_EQ(back_leaves[i].max_definition_level, leaves[i].max_definition_level) << i;
    EXPECT_EQ(back_leaves[i].max_repetition_level, leaves[i].max_repetition_level) << i;
    EXPECT_EQ(back_leaves[i].field_id, leaves[i].field_id);
    EXPECT_EQ(back_leaves[i].schema_index, leaves[i].schema_index);
  }
}

SchemaElement Prim(const std::string& name, PhysicalType t, Repetition r) {
  SchemaElement e;
  e.name = name;
  e.type = t;
  e.repetition_type = r;
  return e;
}
SchemaElement Group(const std::string& name, int n, Repetition r) {
  SchemaElement e;
  e.name = name;
  e.num_children = n;
  e.repetition_type = r;
  return e;
}

TEST(SchemaTest, LegacyLayoutsWithoutFieldIds) {
  std::vector<SchemaElement> el;
  el.push_back(Group("spark_schema", 6, Repetition::kRequired));
  el.push_back(Prim("ts", PhysicalType::kInt96, Repetition::kOptional));
  // 2-level list: optional group l (LIST) { repeated int32 l_elem; }
  SchemaElement l = Group("l", 1, Repetition::kOptional);
  l.converted_type = ConvertedType::kList;
  el.push_back(l);
  el.push_back(Prim("l_elem", PhysicalType::kInt32, Repetition::kRepeated));
  // bare repeated primitive
  el.push_back(Prim("r", PhysicalType::kByteArray, Repetition::kRepeated));
  el.back().converted_type = ConvertedType::kUtf8;
  // ConvertedType-only annotations
  el.push_back(Prim("u32", PhysicalType::kInt32, Repetition::kRequired));
  el.back().converted_type = ConvertedType::kUint32;
  el.push_back(Prim("tsm", PhysicalType::kInt64, Repetition::kOptional));
  el.back().converted_type = ConvertedType::kTimestampMillis;
  // legacy list of structs: optional group s (LIST) { repeated group array { a; b } }
  SchemaElement s = Group("s", 1, Repetition::kOptional);
  s.converted_type = ConvertedType::kList;
  el.push_back(s);
  el.push_back(Group("array", 2, Repetition::kRepeated));
  el.push_back(Prim("a", PhysicalType::kInt64, Repetition::kOptional));
  el.push_back(Prim("b", PhysicalType::kDouble, Repetition::kRequired));
  Schema schema;
  std::vector<ColumnDescriptor> leaves;
  ASSERT_OK(FromParquetSchema(el, &schema, &leaves));
  ASSERT_EQ(schema.fields.size(), 6u);
  EXPECT_EQ(schema.fields[0].type->id(), TypeId::kTimestampTz);
  EXPECT_EQ(schema.fields[1].type->ToString(), "list<int>");
  EXPECT_TRUE(schema.fields[1].type->fields()[0].required);
  EXPECT_EQ(schema.fields[2].type->ToString(), "list<string>");
  EXPECT_TRUE(schema.fields[2].required);
  EXPECT_EQ(schema.fields[3].type->id(), TypeId::kLong);
  EXPECT_EQ(schema.fields[4].type->id(), TypeId::kTimestampTz);
  EXPECT_EQ(schema.fields[5].type->fields()[0].type->id(), TypeId::kStruct);
  // Ids assigned as Iceberg does: top level 1..6 first.
  EXPECT_EQ(schema.fields[5].id, 6);
  EXPECT_EQ(schema.HighestFieldId(), 6 + 1 + 1 + 1 + 2);
  ASSERT_EQ(leaves.size(), 7u);
  EXPECT_EQ(leaves[1].path, std::vector<std::string>({"l", "l_elem"}));
  EXPECT_EQ(leaves[1].max_definition_level, 2);
  EXPECT_EQ(leaves[1].max_repetition_level, 1);
  EXPECT_EQ(leaves[2].max_definition_level, 1);  // required list, repeated node
  EXPECT_EQ(leaves[2].max_repetition_level, 1);
  EXPECT_EQ(leaves[5].path, std::vector<std::string>({"s", "array", "a"}));
  EXPECT_EQ(leaves[5].max_definition_level, 3);
  EXPECT_EQ(leaves[6].max_definition_level, 2);
  EXPECT_EQ(leaves[6].field_id, schema.fields[5].type->fields()[0].type->fields()[1].id);
}

TEST(SchemaTest, RejectsMalformedTrees) {
  std::vector<SchemaElement> el;
  el.push_back(Group("root", 3, Repetition::kRequired));
  el.push_back(Prim("a", PhysicalType::kInt32, Repetition::kOptional));
  Schema schema;
  std::vector<ColumnDescriptor> leaves;
  ASSERT_ERROR(FromParquetSchema(el, &schema, &leaves), StatusCode::kCorruption, "children");
  el[0].num_children = 1;
  el.push_back(Group("g", 5, Repetition::kOptional));
  ASSERT_ERROR(FromParquetSchema(el, &schema, &leaves), StatusCode::kCorruption, "reachable");
  el[0].num_children = 2;
  ASSERT_ERROR(FromParquetSchema(el, &schema, &leaves), StatusCode::kCorruption, "claims");
  el.pop_back();
  el.push_back(Prim("f", PhysicalType::kFixedLenByteArray, Repetition::kOptional));
  ASSERT_ERROR(FromParquetSchema(el, &schema, &leaves), StatusCode::kCorruption, "length");
}

}  // namespace
}  // namespace sluice::parquet
