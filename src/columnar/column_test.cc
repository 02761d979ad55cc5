#include "columnar/column.h"

#include <cstring>
#include <string>

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

TEST(ColumnTest, BulkAppendsTakeTheBuffersOfAnEmptyColumnAndCopyIntoAFilledOne) {
  std::vector<int64_t> ints = {1, -2, 3};
  auto as_bytes = [&] {
    std::vector<uint8_t> b(ints.size() * sizeof(int64_t));
    std::memcpy(b.data(), ints.data(), b.size());
    return b;
  };
  Column empty(DataType::Long());
  std::vector<uint8_t> taken = as_bytes();
  const uint8_t* buffer = taken.data();
  empty.AppendRaw(std::move(taken), 3);
  ASSERT_EQ(empty.size(), 3);
  EXPECT_EQ(empty.data<uint8_t>(), buffer);  // moved, not copied
  EXPECT_EQ(empty.Value<int64_t>(1), -2);
  EXPECT_EQ(empty.null_count(), 0);

  Column filled(DataType::Long());
  filled.AppendNull();
  filled.AppendRaw(as_bytes(), 3);
  ASSERT_EQ(filled.size(), 4);
  EXPECT_TRUE(filled.IsNull(0));
  EXPECT_TRUE(filled.IsValid(3));
  EXPECT_EQ(filled.Value<int64_t>(3), 3);

  Column strings(DataType::String());
  std::string heap = "abcdef";
  std::vector<uint32_t> offsets = {0, 2, 2, 6};
  strings.AppendBytesBulk(std::move(heap), std::move(offsets), 3);
  ASSERT_EQ(strings.size(), 3);
  EXPECT_EQ(strings.GetBytes(0), "ab");
  EXPECT_EQ(strings.GetBytes(1), "");
  EXPECT_EQ(strings.GetBytes(2), "cdef");
  strings.AppendBytesBulk(std::string("xyz"), std::vector<uint32_t>{0, 1, 3}, 2);
  ASSERT_EQ(strings.size(), 5);
  EXPECT_EQ(strings.GetBytes(2), "cdef");
  EXPECT_EQ(strings.GetBytes(4), "yz");
  // Offsets that do not cover the heap exactly are copied through the checked path.
  Column partial(DataType::String());
  partial.AppendBytesBulk(std::string("abcd"), std::vector<uint32_t>{0, 2}, 1);
  ASSERT_EQ(partial.size(), 1);
  EXPECT_EQ(partial.GetBytes(0), "ab");
  EXPECT_EQ(partial.heap(), "ab");
}

// AppendNulls(n) leaves a column as n AppendNull calls do, whatever the
// rows before it (valid, null, none) and however n falls on the bitmap's bytes.
TEST(ColumnTest, AppendNullsIsNAppendNullsAtOnce) {
  for (const TypePtr& type : {DataType::Long(), DataType::String(), DataType::Boolean(),
                              DataType::Int(), DataType::Binary()}) {
    for (int before : {0, 1, 5, 8, 13}) {
      for (int n : {0, 1, 3, 7, 8, 9, 16, 61}) {
        Column bulk(type), one_by_one(type);
        for (int i = 0; i < before; ++i) {
          for (Column* c : {&bulk, &one_by_one}) {
            if (i % 3 == 1) {
              c->AppendNull();
            } else if (type->id() == TypeId::kLong) {
              c->Append<int64_t>(i);
            } else if (type->id() == TypeId::kInt) {
              c->Append<int32_t>(i);
            } else if (type->id() == TypeId::kBoolean) {
              c->AppendBool(i % 2 == 0);
            } else {
              c->AppendBytes("v" + std::to_string(i));
            }
          }
        }
        bulk.AppendNulls(n);
        for (int i = 0; i < n; ++i) one_by_one.AppendNull();
        // A value after them lands in the right place.
        for (Column* c : {&bulk, &one_by_one}) {
          if (type->is_binary_like()) {
            c->AppendBytes("last");
          } else {
            c->AppendNull();
          }
        }
        const std::string what =
            type->ToString() + " before " + std::to_string(before) + " n " + std::to_string(n);
        ASSERT_EQ(bulk.size(), one_by_one.size()) << what;
        EXPECT_EQ(bulk.null_count(), one_by_one.null_count()) << what;
        for (int64_t r = 0; r < bulk.size(); ++r) {
          ASSERT_EQ(bulk.IsValid(r), one_by_one.IsValid(r)) << what << " row " << r;
          if (bulk.IsValid(r) && type->is_binary_like()) {
            EXPECT_EQ(bulk.GetBytes(r), one_by_one.GetBytes(r)) << what << " row " << r;
          }
        }
        if (type->id() == TypeId::kLong) {
          for (int64_t r = 0; r < bulk.size(); ++r) {
            EXPECT_EQ(bulk.Value<int64_t>(r), one_by_one.Value<int64_t>(r)) << what;
          }
        }
      }
    }
  }
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
