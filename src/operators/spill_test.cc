// State beyond memory: an operator whose front spills to the store under a
// tiny budget gives, emits and snapshots exactly what one in memory does.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <optional>
#include <set>

#include "columnar/json_writer.h"
#include "common/testing.h"
#include "operators/sharded_window_aggregate.h"
#include "operators/test_util.h"

namespace sluice::operators {
namespace {

// Every closed window, taken `chunk` rows at a time.
template <typename Op>
Result<std::vector<std::string>> EmitInChunks(Op* op, int64_t watermark, int64_t chunk) {
  std::vector<std::string> out;
  for (bool done = false; !done;) {
    std::vector<FailedGroup> failed;
    ASSIGN_OR_RETURN(Batch b, op->Emit(watermark, &failed, chunk, &done));
    if (b.num_rows() > chunk) return Status::Internal("a chunk of {} rows", b.num_rows());
    for (std::string& r : JsonRows(b)) out.push_back(std::move(r));
  }
  return out;
}

class SpillTest : public ::testing::TestWithParam<WindowSpec> {};

TEST_P(SpillTest, ASpilledStateGivesEmitsAndSnapshotsWhatOneInMemoryDoes) {
  WindowAggregateOptions o = Options(GetParam());
  WindowAggregateOptions small = o;
  small.memory_budget = 48 << 10;  // the front spills every few hundred groups
  small.spill_dir = testing::TempPath("spill-op");
  WindowAggregateOptions restored_opts = small;
  restored_opts.spill_dir = testing::TempPath("spill-restored");
  WindowAggregateOptions sharded_opts = small;
  sharded_opts.memory_budget *= 2;
  sharded_opts.spill_dir = testing::TempPath("spill-sharded");
  testing::RemovedAtExit sharded_dir(sharded_opts.spill_dir);
  ASSERT_OK_AND_ASSIGN(auto memory, WindowAggregate::Make(o));
  ASSERT_OK_AND_ASSIGN(auto spilled, WindowAggregate::Make(small));
  TaskPool pool(1);
  ASSERT_OK_AND_ASSIGN(auto sharded, ShardedWindowAggregate::Make(sharded_opts, &pool, 2));
  std::unique_ptr<WindowAggregate> restored;
  std::vector<std::string> files;  // the spilled operator's base and deltas
  std::vector<std::string> memory_files;
  Stream stream;
  stream.keys = 3000;
  int64_t emitted = 0;
  for (int round = 0; round < 24; ++round) {
    auto [rows, marks] = stream.Next(700);
    std::vector<LateRow> l1, l2, l3, l4;
    ASSERT_OK(memory->Add(rows, marks, &l1));
    ASSERT_OK(spilled->Add(rows, marks, &l2));
    ASSERT_OK(sharded->Add(rows, marks, &l3));
    ASSERT_EQ(l1.size(), l2.size());
    ASSERT_EQ(l1.size(), l3.size());
    if (restored) {
      ASSERT_OK(restored->Add(rows, marks, &l4));
      ASSERT_EQ(l1.size(), l4.size());
    }
    ASSERT_OK_AND_ASSIGN(auto want, EmitInChunks(memory.get(), marks.back(), INT64_MAX));
    ASSERT_OK_AND_ASSIGN(auto got, EmitInChunks(spilled.get(), marks.back(), 7));
    ASSERT_EQ(got, want) << "round " << round;
    ASSERT_OK_AND_ASSIGN(auto from_shards, EmitInChunks(sharded.get(), marks.back(), 5));
    ASSERT_EQ(from_shards.size(), want.size()) << "round " << round;
    if (restored) {
      ASSERT_OK_AND_ASSIGN(auto again, EmitInChunks(restored.get(), marks.back(), 11));
      ASSERT_EQ(again, want) << "round " << round;
    }
    emitted += static_cast<int64_t>(want.size());
    ASSERT_EQ(spilled->groups(), memory->groups()) << "round " << round;
    ASSERT_EQ(sharded->groups(), memory->groups()) << "round " << round;
    if (round % 3 == 2) {
      // The same state, whichever tier holds the groups: each chain of
      // files (a base, then deltas) restores to the same windows.
      bool full = round % 9 == 2;
      ASSERT_OK_AND_ASSIGN(std::string a, full ? memory->Snapshot() : memory->SnapshotChanged());
      ASSERT_OK_AND_ASSIGN(std::string b, full ? spilled->Snapshot() : spilled->SnapshotChanged());
      EXPECT_EQ(a.size(), b.size()) << "round " << round;
      if (full) files.clear(), memory_files.clear();
      files.push_back(b);
      memory_files.push_back(a);
      ASSERT_OK_AND_ASSIGN(auto x, WindowAggregate::Make(o));
      ASSERT_OK_AND_ASSIGN(auto y, WindowAggregate::Make(o));
      for (const std::string& f : memory_files) ASSERT_OK(x->Restore(f));
      for (const std::string& f : files) ASSERT_OK(y->Restore(f));
      ASSERT_EQ(x->groups(), memory->groups());
      ASSERT_EQ(y->groups(), memory->groups());
      ASSERT_OK_AND_ASSIGN(auto from_memory, EmitInChunks(x.get(), INT64_MAX, INT64_MAX));
      ASSERT_OK_AND_ASSIGN(auto from_spilled, EmitInChunks(y.get(), INT64_MAX, INT64_MAX));
      ASSERT_EQ(from_memory, from_spilled) << "round " << round;
    }
    if (round == 14) {
      // Restoring the files (a base and deltas) spills as it goes.
      ASSERT_OK_AND_ASSIGN(restored, WindowAggregate::Make(restored_opts));
      for (const std::string& f : files) ASSERT_OK(restored->Restore(f));
      ASSERT_EQ(restored->groups(), memory->groups());
      EXPECT_GT(restored->spills(), 0);
    }
  }
  EXPECT_GT(spilled->spills(), 3) << "the budget must make it spill";
  EXPECT_GT(sharded->spills(), 3);
  EXPECT_LE(spilled->MemoryUsage(), small.memory_budget / 2 + (small.memory_budget / 2));
  ASSERT_OK_AND_ASSIGN(auto want, EmitInChunks(memory.get(), INT64_MAX, INT64_MAX));
  ASSERT_OK_AND_ASSIGN(auto got, EmitInChunks(spilled.get(), INT64_MAX, 13));
  EXPECT_EQ(got, want);
  ASSERT_OK_AND_ASSIGN(auto again, EmitInChunks(restored.get(), INT64_MAX, 3));
  EXPECT_EQ(again, want);
  ASSERT_OK_AND_ASSIGN(auto from_shards, EmitInChunks(sharded.get(), INT64_MAX, 17));
  std::sort(from_shards.begin(), from_shards.end());
  std::sort(want.begin(), want.end());
  EXPECT_EQ(from_shards, want);
  EXPECT_GT(emitted + static_cast<int64_t>(want.size()), 1000);
  EXPECT_EQ(spilled->groups(), 0);
  EXPECT_EQ(spilled->emitted_below(), memory->emitted_below());
}

INSTANTIATE_TEST_SUITE_P(Windows, SpillTest,
                         ::testing::Values(WindowSpec{WindowSpec::Kind::kTumble, 10 * kSec, 0, 0},
                                           WindowSpec{WindowSpec::Kind::kHop, 10 * kSec, 2 * kSec,
                                                      0},
                                           WindowSpec{WindowSpec::Kind::kSession, 0, 0, 3 * kSec}));

TEST(SpillTest, WithoutASpillFolderAnOperatorOverBudgetFailsClearly) {
  WindowAggregateOptions o = Options({WindowSpec::Kind::kTumble, 10 * kSec, 0, 0});
  o.memory_budget = 1 << 10;
  ASSERT_OK_AND_ASSIGN(auto op, WindowAggregate::Make(o));
  Stream stream;
  auto [rows, marks] = stream.Next(500);
  std::vector<LateRow> late;
  ASSERT_ERROR(op->Add(rows, marks, &late), StatusCode::kInvalidArgument, "spill folder");
}

// GROUP BY without a window: at every checkpoint (EmitChanged, then a state
// file) each operator gives exactly the keys changed since the last one, with
// their running values; in memory, spilled, sharded and restored alike.
TEST(SpillTest, GlobalGroupsGiveTheirRunningValuesAtEveryCheckpointWhereverTheyLive) {
  WindowAggregateOptions o = Options({WindowSpec::Kind::kGlobal, 0, 0, 0});
  o.output_schema = std::make_shared<Schema>(*ParseColumnList(
      "window_start BIGINT, window_end BIGINT, k BIGINT, n BIGINT, s BIGINT, d BIGINT"));
  WindowAggregateOptions small = o;
  small.memory_budget = 48 << 10;
  small.spill_dir = testing::TempPath("spill-global");
  WindowAggregateOptions sharded_opts = small;
  sharded_opts.memory_budget *= 2;
  sharded_opts.spill_dir = testing::TempPath("spill-global-sharded");
  testing::RemovedAtExit sharded_dir(sharded_opts.spill_dir);
  WindowAggregateOptions restored_opts = small;
  restored_opts.spill_dir = testing::TempPath("spill-global-restored");
  ASSERT_OK_AND_ASSIGN(auto memory, WindowAggregate::Make(o));
  ASSERT_OK_AND_ASSIGN(auto spilled, WindowAggregate::Make(small));
  TaskPool pool(1);
  ASSERT_OK_AND_ASSIGN(auto sharded, ShardedWindowAggregate::Make(sharded_opts, &pool, 2));
  std::unique_ptr<WindowAggregate> restored;
  std::vector<std::string> files;  // the spilled operator's base and deltas
  // The model: each key's count, sum and distinct values (null keys included).
  struct Model {
    int64_t n = 0, s = 0;
    std::set<int64_t> d;
  };
  std::map<std::optional<int64_t>, Model> model;
  Stream stream;
  stream.keys = 3000;
  for (int round = 0; round < 24; ++round) {
    auto [rows, marks] = stream.Next(700);
    // The event time and the watermarks do not matter: none is ever late.
    std::vector<LateRow> late;
    ASSERT_OK(memory->Add(rows, marks, &late));
    ASSERT_OK(spilled->Add(rows, marks, &late));
    ASSERT_OK(sharded->Add(rows, marks, &late));
    if (restored) {
      ASSERT_OK(restored->Add(rows, marks, &late));
    }
    ASSERT_TRUE(late.empty());
    std::set<std::string> changed;
    for (int64_t i = 0; i < rows.num_rows(); ++i) {
      std::optional<int64_t> k;
      if (!rows.columns[1].IsNull(i)) k = rows.columns[1].Value<int64_t>(i);
      Model& m = model[k];
      int64_t v = rows.columns[2].Value<int64_t>(i);
      ++m.n;
      m.s += v;
      m.d.insert(v);
    }
    for (int64_t i = 0; i < rows.num_rows(); ++i) {
      std::optional<int64_t> k;
      if (!rows.columns[1].IsNull(i)) k = rows.columns[1].Value<int64_t>(i);
      const Model& m = model[k];
      changed.insert(
          fmt::format(R"({{"window_start":{},"window_end":{},"k":{},"n":{},"s":{},"d":{}}})",
                      INT64_MIN, INT64_MAX, k ? std::to_string(*k) : "null", m.n, m.s, m.d.size()));
    }
    std::vector<FailedGroup> failed;
    ASSERT_OK_AND_ASSIGN(Batch closed, memory->Emit(INT64_MAX, &failed));
    EXPECT_EQ(closed.num_rows(), 0) << "a global group never closes";
    auto emit = [&](auto* op) {
      std::vector<FailedGroup> f;
      auto b = op->EmitChanged(&f);
      EXPECT_TRUE(b.ok()) << b.status().ToString();
      EXPECT_TRUE(f.empty());
      auto rows = JsonRows(*b);
      return std::set<std::string>(rows.begin(), rows.end());
    };
    ASSERT_EQ(emit(memory.get()), changed) << "round " << round;
    ASSERT_EQ(emit(spilled.get()), changed) << "round " << round;
    ASSERT_EQ(emit(sharded.get()), changed) << "round " << round;
    if (restored) {
      ASSERT_EQ(emit(restored.get()), changed) << "round " << round;
    }
    // The checkpoint's state files; the next round starts with nothing changed.
    bool full = round % 9 == 0;
    ASSERT_OK_AND_ASSIGN(std::string a, full ? memory->Snapshot() : memory->SnapshotChanged());
    ASSERT_OK_AND_ASSIGN(std::string b, full ? spilled->Snapshot() : spilled->SnapshotChanged());
    ASSERT_OK_AND_ASSIGN(std::string c, full ? sharded->Snapshot() : sharded->SnapshotChanged());
    EXPECT_EQ(a.size(), b.size()) << "round " << round;
    if (restored) {
      ASSERT_OK(restored->SnapshotChanged().status());
    }
    if (full) files.clear();
    files.push_back(b);
    ASSERT_EQ(emit(memory.get()).size(), 0u);
    ASSERT_EQ(emit(spilled.get()).size(), 0u);
    ASSERT_EQ(emit(sharded.get()).size(), 0u);
    if (round == 14) {
      ASSERT_OK_AND_ASSIGN(restored, WindowAggregate::Make(restored_opts));
      for (const std::string& f : files) ASSERT_OK(restored->Restore(f));
      ASSERT_EQ(restored->groups(), memory->groups());
      ASSERT_EQ(emit(restored.get()).size(), 0u) << "a restored state has nothing changed";
    }
    ASSERT_EQ(memory->groups(), static_cast<int64_t>(model.size()));
    ASSERT_EQ(spilled->groups(), memory->groups());
    ASSERT_EQ(sharded->groups(), memory->groups());
  }
  EXPECT_GT(spilled->spills(), 3) << "the budget must make it spill";
  EXPECT_GT(sharded->spills(), 3);
  EXPECT_GT(restored->spills(), 0);
}

}  // namespace
}  // namespace sluice::operators
