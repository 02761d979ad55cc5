#include <gtest/gtest.h>

#include "columnar/sql_schema.h"
#include "common/testing.h"
#include "sql/binder.h"
#include "sql/parser.h"

namespace sluice::sql {
namespace {

struct Bound {
  Schema source, target;
  ProjectionPlan plan;
};

Result<Bound> BindAndPlan(std::string_view insert, std::string_view source,
                          std::string_view target) {
  Bound b;
  ASSIGN_OR_RETURN(Script script, ParseScript(fmt::format("CREATE PIPELINE p AS {}", insert)));
  ASSIGN_OR_RETURN(b.source, ParseColumnList(source));
  ASSIGN_OR_RETURN(b.target, ParseColumnList(target));
  ASSIGN_OR_RETURN(b.plan, BindInsert(std::get<CreatePipeline>(script.statements[0].body).insert,
                                      b.source, b.target));
  return b;
}

// id BIGINT, user_id INT, kind STRING, ts TIMESTAMP:
//   (1, 10, "a", 1000), (2, NULL, "b", NULL), (3, 30, NULL, 3000)
Batch SourceBatch(const Schema& schema) {
  Batch b = Batch::Make(std::make_shared<Schema>(schema));
  b.columns[0].Append<int64_t>(1);
  b.columns[0].Append<int64_t>(2);
  b.columns[0].Append<int64_t>(3);
  b.columns[1].Append<int32_t>(10);
  b.columns[1].AppendNull();
  b.columns[1].Append<int32_t>(30);
  b.columns[2].AppendBytes("a");
  b.columns[2].AppendBytes("b");
  b.columns[2].AppendNull();
  b.columns[3].Append<int64_t>(1000);
  b.columns[3].AppendNull();
  b.columns[3].Append<int64_t>(3000);
  return b;
}

constexpr std::string_view kEventColumns = "id BIGINT, user_id INT, kind STRING, ts TIMESTAMP";

TEST(ApplyPlanTest, ColumnsReadAreThoseTheSelectListAndWhereName) {
  ASSERT_OK_AND_ASSIGN(
      Bound b, BindAndPlan("INSERT INTO t SELECT id, CASE WHEN abs(user_id) > 3 THEN 'x' END "
                           "FROM s WHERE ts IS NOT NULL",
                           "id BIGINT, user_id INT, kind STRING, ts TIMESTAMP, extra STRING",
                           "id BIGINT, note STRING"));
  EXPECT_EQ(ColumnsRead(b.plan), (std::vector<bool>{true, true, false, true, false}));
  ASSERT_OK_AND_ASSIGN(b, BindAndPlan("INSERT INTO t SELECT 7, 'x' FROM s",
                                      "id BIGINT, user_id INT", "id BIGINT, note STRING"));
  EXPECT_EQ(ColumnsRead(b.plan), (std::vector<bool>{false, false}));
}

TEST(ApplyPlanTest, MovesWidensAndRezones) {
  ASSERT_OK_AND_ASSIGN(Bound b, BindAndPlan("INSERT INTO t SELECT id, user_id, kind, CAST(ts AS "
                                            "TIMESTAMPTZ) FROM s",
                                            kEventColumns,
                                            "id BIGINT NOT NULL, user_id BIGINT, kind STRING, ts "
                                            "TIMESTAMPTZ"));
  Batch in = SourceBatch(b.source);
  const int64_t* id_data = in.columns[0].data<int64_t>();
  const uint32_t* kind_offsets = in.columns[2].offsets().data();
  ASSERT_OK_AND_ASSIGN(Batch out, ApplyPlan(b.plan, std::move(in)));
  EXPECT_EQ(out.schema, b.plan.target_schema);
  ASSERT_EQ(out.columns.size(), 4u);
  ASSERT_EQ(out.num_rows(), 3);
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_TRUE(out.columns[i].type()->Equals(*b.target.fields[i].type)) << i;
  }
  // Same-typed columns are moved, not copied.
  EXPECT_EQ(out.columns[0].data<int64_t>(), id_data);
  EXPECT_EQ(out.columns[2].offsets().data(), kind_offsets);
  EXPECT_EQ(out.columns[0].Value<int64_t>(2), 3);
  EXPECT_EQ(out.columns[1].Value<int64_t>(0), 10);
  EXPECT_TRUE(out.columns[1].IsNull(1));
  EXPECT_EQ(out.columns[1].Value<int64_t>(2), 30);
  EXPECT_EQ(out.columns[2].GetBytes(1), "b");
  EXPECT_TRUE(out.columns[2].IsNull(2));
  EXPECT_EQ(out.columns[3].Value<int64_t>(0), 1000);
  EXPECT_TRUE(out.columns[3].IsNull(1));
  EXPECT_EQ(out.columns[3].Value<int64_t>(2), 3000);
}

TEST(ApplyPlanTest, LiteralsNullsAndRepeatedColumns) {
  ASSERT_OK_AND_ASSIGN(
      Bound b, BindAndPlan("INSERT INTO t (a, b, d, e) SELECT id, 'x', id, 2.5 FROM s",
                           kEventColumns, "a BIGINT, b STRING, c DOUBLE, d BIGINT, e DOUBLE"));
  Batch in = SourceBatch(b.source);
  const int64_t* id_data = in.columns[0].data<int64_t>();
  ASSERT_OK_AND_ASSIGN(Batch out, ApplyPlan(b.plan, std::move(in)));
  ASSERT_EQ(out.num_rows(), 3);
  for (int64_t r = 0; r < 3; ++r) {
    EXPECT_EQ(out.columns[0].Value<int64_t>(r), r + 1);
    EXPECT_EQ(out.columns[1].GetBytes(r), "x");
    EXPECT_TRUE(out.columns[2].IsNull(r));
    EXPECT_EQ(out.columns[3].Value<int64_t>(r), r + 1);
    EXPECT_EQ(out.columns[4].Value<double>(r), 2.5);
  }
  // The first use is a copy, the last one takes the buffer.
  EXPECT_NE(out.columns[0].data<int64_t>(), id_data);
  EXPECT_EQ(out.columns[3].data<int64_t>(), id_data);
}

TEST(ApplyPlanTest, NestedColumnsTakeTheTargetFieldIds) {
  ASSERT_OK_AND_ASSIGN(Bound b, BindAndPlan("INSERT INTO t (l) SELECT l FROM s", "l ARRAY<INT>",
                                            "z INT, l ARRAY<INT>"));
  ASSERT_FALSE(b.source.fields[0].type->Equals(*b.target.fields[1].type));  // ids differ
  Batch in = Batch::Make(std::make_shared<Schema>(b.source));
  Column& list = in.columns[0];
  list.mutable_child(0)->Append<int32_t>(5);
  list.mutable_child(0)->Append<int32_t>(6);
  list.FinishNested();
  list.AppendNull();
  ASSERT_OK_AND_ASSIGN(Batch out, ApplyPlan(b.plan, std::move(in)));
  const Column& l = out.columns[1];
  EXPECT_TRUE(l.type()->Equals(*b.target.fields[1].type));
  ASSERT_EQ(l.size(), 2);
  EXPECT_EQ(l.ListEnd(0) - l.ListBegin(0), 2u);
  EXPECT_EQ(l.child(0).Value<int32_t>(1), 6);
  EXPECT_TRUE(l.IsNull(1));
  EXPECT_TRUE(out.columns[0].IsNull(0));
}

TEST(ApplyPlanTest, Errors) {
  ASSERT_OK_AND_ASSIGN(Bound b, BindAndPlan("INSERT INTO t SELECT id, ts FROM s", kEventColumns,
                                            "a BIGINT, b TIMESTAMP NOT NULL"));
  ASSERT_ERROR(ApplyPlan(b.plan, SourceBatch(b.source)), StatusCode::kInvalidArgument,
               "target column b is NOT NULL, source column ts is null");
  // With a place for them, such rows are left out and described.
  std::vector<RejectedRow> rejected;
  ASSERT_OK_AND_ASSIGN(Batch kept, ApplyPlan(b.plan, SourceBatch(b.source), &rejected));
  EXPECT_EQ(kept.num_rows(), SourceBatch(b.source).num_rows() - 1);
  ASSERT_EQ(rejected.size(), 1u);
  EXPECT_EQ(rejected[0].row, 1);
  EXPECT_NE(rejected[0].payload.find("\"ts\":null"), std::string::npos) << rejected[0].payload;

  Batch short_batch = SourceBatch(b.source);
  short_batch.columns.pop_back();
  ASSERT_ERROR(ApplyPlan(b.plan, std::move(short_batch)), StatusCode::kInvalidArgument,
               "batch has 3 columns, the plan's source has 4");

  ASSERT_OK_AND_ASSIGN(Schema other, ParseColumnList("id STRING, user_id INT, kind STRING, ts "
                                                     "TIMESTAMP"));
  Batch wrong = Batch::Make(std::make_shared<Schema>(other));
  ASSERT_ERROR(ApplyPlan(b.plan, std::move(wrong)), StatusCode::kInvalidArgument,
               "batch column id is STRING, the plan's source has BIGINT");
}

}  // namespace
}  // namespace sluice::sql
