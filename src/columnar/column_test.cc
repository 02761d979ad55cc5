#include "columnar/column.h"

#include "columnar/json_writer.h"
#include "columnar/sql_schema.h"
#include "common/testing.h"

namespace sluice {
namespace {

TEST(ColumnTest, FixedWidthWithNulls) {
  Column c(DataType::Long());
  c.Append<int64_t>(5);
  c.AppendNull();
  c.Append<int64_t>(-7);
  ASSERT_EQ(c.size(), 3);
  EXPECT_EQ(c.null_count(), 1);
  EXPECT_TRUE(c.IsValid(0));
  EXPECT_TRUE(c.IsNull(1));
  EXPECT_EQ(c.Value<int64_t>(2), -7);
  for (int i = 0; i < 100; ++i) c.Append<int64_t>(i);  // validity grows past its first block
  EXPECT_TRUE(c.IsValid(102));
  EXPECT_EQ(c.null_count(), 1);
}

TEST(ColumnTest, NestedToJson) {
  ASSERT_OK_AND_ASSIGN(Schema schema,
                       ParseColumnList("id INT, tags ARRAY<STRING>, m MAP<INT, STRING>, "
                                       "s STRUCT<a: INT, b STRING>"));
  Batch b = Batch::Make(std::make_shared<Schema>(schema));
  b.columns[0].Append<int32_t>(1);
  Column& tags = b.columns[1];
  tags.mutable_child(0)->AppendBytes("x\"y");
  tags.mutable_child(0)->AppendNull();
  tags.FinishNested();
  Column& m = b.columns[2];
  m.mutable_child(0)->Append<int32_t>(3);
  m.mutable_child(1)->AppendBytes("three");
  m.FinishNested();
  Column& s = b.columns[3];
  s.mutable_child(0)->Append<int32_t>(9);
  s.mutable_child(1)->AppendNull();
  s.FinishNested();
  // Second row: all null.
  for (auto& c : b.columns) c.AppendNull();

  std::string out;
  AppendJsonRow(b, 0, &out);
  EXPECT_EQ(out, R"({"id":1,"tags":["x\"y",null],"m":[{"key":3,"value":"three"}],)"
                 R"("s":{"a":9,"b":null}})");
  out.clear();
  AppendJsonRow(b, 1, &out);
  EXPECT_EQ(out, R"({"id":null,"tags":null,"m":null,"s":null})");
  EXPECT_EQ(s.child(0).size(), 2);  // null struct keeps children aligned
}

}  // namespace
}  // namespace sluice
