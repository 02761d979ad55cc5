// GROUP BY without a window over a changelog (WindowSpec::Kind::kGlobal with
// `retracting`): rows taken back leave their group, and a group left without
// rows is gone, in one operator and sharded.
#include <gtest/gtest.h>

#include "columnar/json_writer.h"
#include "columnar/sql_schema.h"
#include "common/task_pool.h"
#include "common/testing.h"
#include "operators/sharded_window_aggregate.h"
#include "operators/test_util.h"
#include "operators/window_aggregate.h"

namespace sluice::operators {
namespace {

// GROUP BY k over a changelog of (k STRING, v BIGINT): count(*) and sum(v).
WindowAggregateOptions RetractingGlobal() {
  WindowAggregateOptions o;
  o.window.kind = WindowSpec::Kind::kGlobal;
  o.key_types = {DataType::String()};
  o.aggs = {{AggKind::kCountStar, nullptr, DataType::Long(), "count(*)", true},
            {AggKind::kSum, DataType::Long(), DataType::Long(), "sum(v)", true}};
  o.retracting = true;
  o.rows_agg = 0;
  o.output_schema = std::make_shared<Schema>(
      *ParseColumnList("window_start BIGINT, window_end BIGINT, k STRING, n BIGINT, s BIGINT"));
  return o;
}

// Its input rows: (k, v, taken back).
Batch Changes(const std::vector<std::tuple<std::string, int64_t, bool>>& changes) {
  static const auto input = std::make_shared<Schema>(
      *ParseColumnList("t TIMESTAMP, k STRING, v BIGINT, retract BOOLEAN"));
  Batch b = Batch::Make(input);
  for (const auto& [k, v, retract] : changes) {
    b.columns[0].AppendNull();  // (no event time: a global group ignores it)
    b.columns[1].AppendBytes(k);
    b.columns[2].Append<int64_t>(v);
    b.columns[3].AppendBool(retract);
  }
  return b;
}

// GROUP BY without a window over a changelog: rows taken back leave their
// group; a group left without rows is gone (given apart, forgotten, and gone
// after a restore too); a row taken back from a group that never counted it
// is left out with the reason.
TEST(WindowAggregateTest, ARetractingGlobalGroupLeftWithoutRowsIsGone) {
  WindowAggregateOptions o = RetractingGlobal();
  auto rows = Changes;
  auto keys = [](const Batch& b) {
    std::vector<std::string> out;
    for (int64_t r = 0; r < b.num_rows(); ++r) out.emplace_back(b.columns[2].GetBytes(r));
    std::sort(out.begin(), out.end());
    return out;
  };
  TaskPool pool(2);
  ASSERT_OK_AND_ASSIGN(auto sharded, ShardedWindowAggregate::Make(o, &pool, 2));
  ASSERT_OK_AND_ASSIGN(auto op, WindowAggregate::Make(o));
  std::vector<LateRow> late;
  Batch first = rows({{"a", 5, false}, {"a", 7, false}, {"b", 1, false}, {"c", 2, false}});
  ASSERT_OK(op->Add(first, std::vector<int64_t>(4, INT64_MIN), &late));
  ASSERT_OK(sharded->Add(first, std::vector<int64_t>(4, INT64_MIN), &late));
  std::vector<FailedGroup> failed;
  Batch gone = Batch::Make(o.output_schema);
  ASSERT_OK_AND_ASSIGN(Batch changed, op->EmitChanged(&failed, &gone));
  EXPECT_EQ(JsonRows(changed).size(), 3u);
  ASSERT_OK_AND_ASSIGN(std::string base, op->Snapshot());
  ASSERT_OK(sharded->Snapshot().status());

  Batch second = rows({{"b", 1, true}, {"a", 5, true}, {"c", 2, true}, {"z", 3, true}});
  ASSERT_OK(op->Add(second, std::vector<int64_t>(4, INT64_MIN), &late));
  ASSERT_EQ(late.size(), 1u);
  EXPECT_EQ(late[0].row, 3);
  EXPECT_NE(late[0].reason.find("never counted"), std::string::npos) << late[0].reason;
  std::vector<LateRow> sharded_late;
  ASSERT_OK(sharded->Add(second, std::vector<int64_t>(4, INT64_MIN), &sharded_late));
  EXPECT_EQ(sharded_late.size(), 1u);
  gone = Batch::Make(o.output_schema);
  ASSERT_OK_AND_ASSIGN(changed, op->EmitChanged(&failed, &gone));
  EXPECT_EQ(
      JsonRows(changed),
      (std::vector<std::string>{
          R"({"window_start":-9223372036854775808,"window_end":9223372036854775807,"k":"a","n":1,"s":7})"}));
  EXPECT_EQ(keys(gone), (std::vector<std::string>{"b", "c"}));
  EXPECT_EQ(op->groups(), 1);
  Batch sharded_gone = Batch::Make(o.output_schema);
  ASSERT_OK_AND_ASSIGN(Batch sharded_changed, sharded->EmitChanged(&failed, &sharded_gone));
  EXPECT_EQ(JsonRows(sharded_changed), JsonRows(changed));
  EXPECT_EQ(keys(sharded_gone), keys(gone));
  EXPECT_EQ(sharded->groups(), 1);
  EXPECT_TRUE(failed.empty());

  // The delta records the gone groups: a restore of base + delta has only a.
  ASSERT_OK_AND_ASSIGN(std::string delta, op->SnapshotChanged());
  ASSERT_OK_AND_ASSIGN(auto restored, WindowAggregate::Make(o));
  ASSERT_OK(restored->Restore(base));
  ASSERT_OK(restored->Restore(delta));
  EXPECT_EQ(restored->groups(), 1);
  ASSERT_OK(restored->Add(rows({{"a", 1, false}}), {INT64_MIN}, &late));
  gone = Batch::Make(o.output_schema);
  ASSERT_OK_AND_ASSIGN(changed, restored->EmitChanged(&failed, &gone));
  EXPECT_EQ(
      JsonRows(changed),
      (std::vector<std::string>{
          R"({"window_start":-9223372036854775808,"window_end":9223372036854775807,"k":"a","n":2,"s":8})"}));
  EXPECT_EQ(gone.num_rows(), 0);
}

// A group gone and a new one in the same checkpoint: the new group may take
// the gone one's place in memory, and is still given once, with its own
// values, and restored from the delta.
TEST(WindowAggregateTest, AGroupAddedWhereAGoneOneWasIsGivenOnce) {
  WindowAggregateOptions o = RetractingGlobal();
  ASSERT_OK_AND_ASSIGN(auto op, WindowAggregate::Make(o));
  std::vector<LateRow> late;
  std::vector<FailedGroup> failed;
  ASSERT_OK(op->Add(Changes({{"a", 4, false}}), {INT64_MIN}, &late));
  Batch gone = Batch::Make(o.output_schema);
  ASSERT_OK(op->EmitChanged(&failed, &gone).status());
  ASSERT_OK_AND_ASSIGN(std::string base, op->Snapshot());

  ASSERT_OK(op->Add(Changes({{"a", 4, true}}), {INT64_MIN}, &late));
  ASSERT_OK_AND_ASSIGN(Batch changed, op->EmitChanged(&failed, &gone));
  EXPECT_EQ(changed.num_rows(), 0);
  EXPECT_EQ(gone.num_rows(), 1);  // a, forgotten
  ASSERT_OK(op->Add(Changes({{"b", 2, false}, {"b", 3, false}, {"a", 1, false}}),
                    {INT64_MIN, INT64_MIN, INT64_MIN}, &late));
  gone = Batch::Make(o.output_schema);
  ASSERT_OK_AND_ASSIGN(changed, op->EmitChanged(&failed, &gone));
  const std::vector<std::string> want = {
      R"({"window_start":-9223372036854775808,"window_end":9223372036854775807,"k":"a","n":1,"s":1})",
      R"({"window_start":-9223372036854775808,"window_end":9223372036854775807,"k":"b","n":2,"s":5})"};
  EXPECT_EQ(JsonRows(changed), want);
  EXPECT_EQ(gone.num_rows(), 0);
  EXPECT_TRUE(late.empty());
  EXPECT_EQ(op->groups(), 2);

  ASSERT_OK_AND_ASSIGN(std::string delta, op->SnapshotChanged());
  ASSERT_OK_AND_ASSIGN(auto restored, WindowAggregate::Make(o));
  ASSERT_OK(restored->Restore(base));
  ASSERT_OK(restored->Restore(delta));
  EXPECT_EQ(restored->groups(), 2);
  ASSERT_OK(
      restored->Add(Changes({{"a", 1, true}, {"b", 3, true}}), {INT64_MIN, INT64_MIN}, &late));
  ASSERT_OK(op->Add(Changes({{"a", 1, true}, {"b", 3, true}}), {INT64_MIN, INT64_MIN}, &late));
  Batch gone_restored = Batch::Make(o.output_schema);
  ASSERT_OK_AND_ASSIGN(Batch from_restored, restored->EmitChanged(&failed, &gone_restored));
  ASSERT_OK_AND_ASSIGN(changed, op->EmitChanged(&failed, &gone));
  EXPECT_EQ(JsonRows(from_restored), JsonRows(changed));
  EXPECT_EQ(JsonRows(gone_restored), JsonRows(gone));
  EXPECT_EQ(changed.num_rows(), 1);  // b: 2
  EXPECT_EQ(gone.num_rows(), 1);     // a
  EXPECT_TRUE(failed.empty());
}

}  // namespace
}  // namespace sluice::operators
