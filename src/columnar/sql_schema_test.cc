#include "columnar/sql_schema.h"

#include "common/testing.h"

namespace sluice {
namespace {

TEST(SqlSchemaTest, IssueExample) {
  ASSERT_OK_AND_ASSIGN(Schema s,
                       ParseColumnList("id BIGINT NOT NULL, name STRING, amount DECIMAL(10,2), "
                                       "ts TIMESTAMPTZ, tags ARRAY<STRING>"));
  ASSERT_EQ(s.fields.size(), 5u);
  EXPECT_EQ(s.fields[0].id, 1);
  EXPECT_TRUE(s.fields[0].required);
  EXPECT_EQ(s.fields[0].type->id(), TypeId::kLong);
  EXPECT_EQ(s.fields[2].type->ToString(), "decimal(10,2)");
  EXPECT_EQ(s.fields[3].type->id(), TypeId::kTimestampTz);
  EXPECT_EQ(s.fields[4].id, 5);
  EXPECT_EQ(s.fields[4].type->fields()[0].id, 6);  // nested ids after the top level
  EXPECT_FALSE(s.fields[4].type->fields()[0].required);
}

TEST(SqlSchemaTest, NestedIdsFollowIceberg) {
  ASSERT_OK_AND_ASSIGN(Schema s, ParseColumnList("a STRUCT<x: INT NOT NULL, y ARRAY<INT>>, "
                                                 "m MAP<STRING, STRUCT<z BIGINT>>, b UUID"));
  // a=1 m=2 b=3; a.x=4 a.y=5; a.y.element=6; m.key=7 m.value=8; m.value.z=9
  EXPECT_EQ(s.FindById(4)->name, "x");
  EXPECT_EQ(s.FindById(6)->name, "element");
  EXPECT_EQ(s.FindById(7)->name, "key");
  EXPECT_EQ(s.FindById(9)->name, "z");
  EXPECT_EQ(s.HighestFieldId(), 9);
  EXPECT_EQ(ToSqlType(*s.fields[0].type), "STRUCT<x: INT NOT NULL, y: ARRAY<INT>>");
}

TEST(SqlSchemaTest, ErrorsNamePosition) {
  ASSERT_ERROR(ParseColumnList("id BIGINT, x FOO"), StatusCode::kInvalidArgument, "character 14");
  ASSERT_ERROR(ParseColumnList("id BIGINT, x FOO"), StatusCode::kInvalidArgument, "'foo'");
  ASSERT_ERROR(ParseColumnList("a INT, A INT"), StatusCode::kInvalidArgument, "duplicate");
  ASSERT_ERROR(ParseColumnList("d DECIMAL(40,2)"), StatusCode::kInvalidArgument, "precision");
  ASSERT_ERROR(ParseColumnList(""), StatusCode::kInvalidArgument, "empty");
  ASSERT_ERROR(ParseColumnList("a INT b INT"), StatusCode::kInvalidArgument, "expected ','");
}

// Nesting is bounded with an error, not by the stack (50,000 levels used to crash).
TEST(SqlSchemaTest, DeepNestingIsAnErrorNotAStackOverflow) {
  auto nested = [](const std::string& open, const std::string& leaf, const std::string& close,
                   int depth) {
    std::string s;
    for (int i = 0; i < depth; ++i) s += open;
    s += leaf;
    for (int i = 0; i < depth; ++i) s += close;
    return s;
  };
  ASSERT_ERROR(ParseSqlType(nested("ARRAY<", "INT", ">", 20000)), StatusCode::kInvalidArgument,
               "nested more than 100 deep");
  ASSERT_ERROR(ParseColumnList("a " + nested("STRUCT<x ", "INT", ">", 50000)),
               StatusCode::kInvalidArgument, "nested more than 100 deep");
  ASSERT_ERROR(ParseSqlType(nested("MAP<INT, ", "INT", ">", 200)), StatusCode::kInvalidArgument,
               "nested more than 100 deep");
  // The limit leaves room for any real schema.
  ASSERT_OK_AND_ASSIGN(auto deep, ParseSqlType(nested("ARRAY<", "INT", ">", 100)));
  EXPECT_EQ(ToSqlType(*deep), nested("ARRAY<", "INT", ">", 100));
}

// Duplicate names are found by hashing: 100,000 columns parse (they took minutes
// when each column was compared with every earlier one).
TEST(SqlSchemaTest, WideColumnListsParse) {
  std::string list;
  for (int i = 0; i < 100000; ++i) list += fmt::format("{}c{} INT", i ? ", " : "", i);
  ASSERT_OK_AND_ASSIGN(Schema schema, ParseColumnList(list));
  EXPECT_EQ(schema.fields.size(), 100000u);
  EXPECT_EQ(schema.fields.back().id, 100000);
  ASSERT_ERROR(ParseColumnList(list + ", C77 BIGINT"), StatusCode::kInvalidArgument,
               "duplicate column name 'C77'");
}

TEST(SqlSchemaTest, AllPrimitiveNames) {
  ASSERT_OK_AND_ASSIGN(Schema s,
                       ParseColumnList("a BOOLEAN, b INT, c BIGINT, d FLOAT, e DOUBLE, f DATE, "
                                       "g TIME, h TIMESTAMP, i TIMESTAMP_NS, j TIMESTAMPTZ_NS, "
                                       "k VARCHAR(20), l BINARY, m FIXED(16), \"n m\" UUID"));
  EXPECT_EQ(s.fields[12].type->width(), 16);
  EXPECT_EQ(s.fields[13].name, "n m");
  for (const Field& f : s.fields) {
    ASSERT_OK_AND_ASSIGN(TypePtr t, ParseSqlType(ToSqlType(*f.type)));
    EXPECT_TRUE(t->Equals(*f.type)) << f.name;
  }
}

}  // namespace
}  // namespace sluice
