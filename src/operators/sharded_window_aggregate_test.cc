// ShardedWindowAggregate against one WindowAggregate over the same rows: the
// same late rows and window rows for every window kind, and states that
// restore across shard counts.
#include "operators/sharded_window_aggregate.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <tuple>

#include "columnar/column_ops.h"
#include "columnar/json_writer.h"
#include "common/testing.h"
#include "operators/test_util.h"
#include "operators/value_key.h"

namespace sluice::operators {
namespace {

std::vector<std::string> Sorted(const Batch& b) {
  std::vector<std::string> out;
  for (int64_t i = 0; i < b.num_rows(); ++i) {
    std::string row;
    AppendJsonRow(b, i, &row);
    out.push_back(row);
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The (start, end) of each row, in the order emitted.
std::vector<std::pair<int64_t, int64_t>> Windows(const Batch& b) {
  std::vector<std::pair<int64_t, int64_t>> out;
  for (int64_t i = 0; i < b.num_rows(); ++i) {
    out.emplace_back(b.columns[0].Value<int64_t>(i), b.columns[1].Value<int64_t>(i));
  }
  return out;
}

std::vector<std::pair<int64_t, std::string>> Late(const std::vector<LateRow>& late) {
  std::vector<std::pair<int64_t, std::string>> out;
  for (const LateRow& l : late) out.emplace_back(l.row, l.reason);
  return out;
}

// Rows [cuts[i], cuts[i + 1]) as run i of one AddParts call; their late
// rows named by their row in `rows`.
void AddInRuns(ShardedWindowAggregate& op, const Batch& rows, const std::vector<int64_t>& marks,
               const std::vector<uint32_t>& cuts, std::vector<LateRow>* late) {
  const size_t runs = cuts.size() - 1;
  std::vector<Batch> batches(runs);
  std::vector<std::vector<int64_t>> run_marks(runs);
  std::vector<ShardedWindowAggregate::ShardIds> shards(runs);
  std::vector<ShardedWindowAggregate::Part> parts(runs);
  for (size_t i = 0; i < runs; ++i) {
    std::vector<uint32_t> take;
    for (uint32_t r = cuts[i]; r < cuts[i + 1]; ++r) take.push_back(r);
    batches[i] = TakeRows(rows, take);
    run_marks[i].assign(marks.begin() + cuts[i], marks.begin() + cuts[i + 1]);
    shards[i].resize(take.size());
    op.AssignShards(batches[i], 0, batches[i].num_rows(), &shards[i]);
    parts[i] = {&batches[i], &run_marks[i], &shards[i]};
  }
  std::vector<std::vector<LateRow>> lates;
  ASSERT_OK(op.AddParts(parts, &lates));
  ASSERT_EQ(lates.size(), runs);
  for (size_t i = 0; i < runs; ++i) {
    for (LateRow& l : lates[i]) late->push_back({l.row + cuts[i], std::move(l.reason)});
  }
}

class ShardedWindowAggregateTest : public ::testing::TestWithParam<WindowSpec> {};

TEST_P(ShardedWindowAggregateTest,
       ShardsGiveWhatOneOperatorGivesAndTheirStateMovesBetweenShardCounts) {
  WindowAggregateOptions o = Options(GetParam());
  ASSERT_OK_AND_ASSIGN(auto one, WindowAggregate::Make(o));
  TaskPool three_threads(2), two_threads(1);
  ASSERT_OK_AND_ASSIGN(auto sharded, ShardedWindowAggregate::Make(o, &three_threads, 3));
  EXPECT_EQ(sharded->shards(), 3);
  Stream stream;
  int64_t emitted = 0;
  for (int round = 0; round < 40; ++round) {
    auto [rows, marks] = stream.Next(200);
    std::vector<LateRow> late_one, late_sharded;
    ASSERT_OK(one->Add(rows, marks, &late_one));
    if (round % 3 == 0) {
      ASSERT_OK(sharded->Add(rows, marks, &late_sharded));
    } else if (round % 3 == 1) {  // the shards assigned beforehand, in two parts
      ShardedWindowAggregate::ShardIds shard(rows.num_rows());
      sharded->AssignShards(rows, 0, 70, &shard);
      sharded->AssignShards(rows, 70, rows.num_rows(), &shard);
      ASSERT_OK(sharded->Add(rows, marks, &late_sharded, &shard));
    } else {  // as runs of rows, one after another, as a pipeline's lanes decode them
      ASSERT_NO_FATAL_FAILURE(
          AddInRuns(*sharded, rows, marks, {0, 1, 1, 70, 130, 200}, &late_sharded));
    }
    ASSERT_EQ(Late(late_one), Late(late_sharded)) << round;
    std::vector<FailedGroup> failed;
    ASSERT_OK_AND_ASSIGN(Batch a, one->Emit(marks.back(), &failed));
    ASSERT_OK_AND_ASSIGN(Batch b, sharded->Emit(marks.back(), &failed));
    ASSERT_EQ(Sorted(a), Sorted(b)) << round;
    ASSERT_EQ(Windows(a), Windows(b)) << "windows in the order they close";
    emitted += a.num_rows();
    EXPECT_EQ(one->groups(), sharded->groups());
    EXPECT_EQ(one->emitted_below(), sharded->emitted_below());

    if (round == 15 || round == 30) {
      // A full state (round 15) and deltas after it restore into two shards.
      ASSERT_OK_AND_ASSIGN(std::string base, sharded->Snapshot());
      ASSERT_OK_AND_ASSIGN(std::string plain, one->Snapshot());
      ASSERT_OK_AND_ASSIGN(auto moved, ShardedWindowAggregate::Make(o, &two_threads, 2));
      ASSERT_OK(moved->Restore(base));
      EXPECT_EQ(moved->groups(), one->groups());
      // A plain WindowAggregate's state restores too.
      ASSERT_OK_AND_ASSIGN(auto from_plain, ShardedWindowAggregate::Make(o, &two_threads, 2));
      ASSERT_OK(from_plain->Restore(plain));
      EXPECT_EQ(from_plain->groups(), one->groups());
      sharded = std::move(moved);
    } else if (round % 4 == 0) {
      // Deltas restore on top of a base, into as many shards as one.
      ASSERT_OK_AND_ASSIGN(std::string base, sharded->Snapshot());
      auto [more, more_marks] = stream.Next(100);
      std::vector<LateRow> l1, l2;
      ASSERT_OK(one->Add(more, more_marks, &l1));
      ASSERT_OK(sharded->Add(more, more_marks, &l2));
      ASSERT_EQ(Late(l1), Late(l2));
      // (Windows those rows closed are emitted before the state is written,
      // as a pipeline does.)
      std::vector<FailedGroup> closed_failed;
      ASSERT_OK_AND_ASSIGN(Batch c1, one->Emit(more_marks.back(), &closed_failed));
      ASSERT_OK_AND_ASSIGN(Batch c2, sharded->Emit(more_marks.back(), &closed_failed));
      ASSERT_EQ(Sorted(c1), Sorted(c2)) << round;
      emitted += c1.num_rows();
      ASSERT_OK_AND_ASSIGN(std::string delta, sharded->SnapshotChanged());
      TaskPool single(0);
      ASSERT_OK_AND_ASSIGN(auto restored, ShardedWindowAggregate::Make(o, &single, 1));
      ASSERT_OK(restored->Restore(base));
      ASSERT_OK(restored->Restore(delta));
      EXPECT_EQ(restored->groups(), one->groups());
      std::vector<FailedGroup> f1, f2;
      ASSERT_OK_AND_ASSIGN(Batch r, restored->Emit(INT64_MAX, &f1));
      // What the restored copy emits at the end is what the original holds.
      ASSERT_OK_AND_ASSIGN(std::string copy, sharded->Snapshot());
      ASSERT_OK_AND_ASSIGN(auto twin, ShardedWindowAggregate::Make(o, &three_threads, 3));
      ASSERT_OK(twin->Restore(copy));
      ASSERT_OK_AND_ASSIGN(Batch t, twin->Emit(INT64_MAX, &f2));
      EXPECT_EQ(Sorted(r), Sorted(t));
    }
  }
  // A copy emits the rest in chunks of 7 rows (the shards' chunks merged
  // a run at a time, across calls): the same rows in the same order.
  ASSERT_OK_AND_ASSIGN(std::string copy, sharded->Snapshot());
  ASSERT_OK_AND_ASSIGN(auto chunked, ShardedWindowAggregate::Make(o, &three_threads, 3));
  ASSERT_OK(chunked->Restore(copy));
  Batch c = Batch::Make(o.output_schema);
  for (bool done = false; !done;) {
    std::vector<FailedGroup> failed;
    ASSERT_OK_AND_ASSIGN(Batch chunk, chunked->Emit(INT64_MAX, &failed, 7, &done));
    ASSERT_LE(chunk.num_rows(), 7);
    AppendBatch(chunk, &c);
  }
  std::vector<FailedGroup> failed;
  ASSERT_OK_AND_ASSIGN(Batch a, one->Emit(INT64_MAX, &failed));
  ASSERT_OK_AND_ASSIGN(Batch b, sharded->Emit(INT64_MAX, &failed));
  EXPECT_EQ(Sorted(a), Sorted(b));
  EXPECT_EQ(Windows(a), Windows(b));
  EXPECT_EQ(Sorted(a), Sorted(c));
  EXPECT_EQ(Windows(a), Windows(c));
  EXPECT_GT(emitted + a.num_rows(), 100) << "the stream closes windows as it goes";
  EXPECT_EQ(one->emitted_below(), sharded->emitted_below());
}

TEST(ShardedWindowAggregateShardTest, ARowsShardIsItsKeysForKeysOfEveryWidth) {
  std::mt19937_64 rng(11);
  for (const char* type : {"INT", "BIGINT", "DOUBLE", "STRING", "BOOLEAN"}) {
    WindowAggregateOptions o = Options(WindowSpec{WindowSpec::Kind::kTumble, 10 * kSec, 0, 0});
    auto schema = std::make_shared<Schema>(
        *ParseColumnList(fmt::format("t TIMESTAMP, k {}, v BIGINT, v2 BIGINT", type)));
    o.key_types = {schema->fields[1].type};
    TaskPool pool(2);
    ASSERT_OK_AND_ASSIGN(auto op, ShardedWindowAggregate::Make(o, &pool, 3));
    Batch rows = Batch::Make(schema);
    Column& k = rows.columns[1];
    for (int r = 0; r < 500; ++r) {
      rows.columns[0].Append<int64_t>(r);
      uint64_t v = rng();
      if (v % 10 == 0) {
        k.AppendNull();
      } else if (k.type()->is_binary_like()) {
        k.AppendBytes(fmt::format("key{}", v % 97));
      } else if (k.type()->id() == TypeId::kBoolean) {
        k.AppendBool(v % 2 == 0);
      } else if (k.type()->value_width() == 4) {
        k.Append<int32_t>(static_cast<int32_t>(v));
      } else {
        k.Append<int64_t>(static_cast<int64_t>(v));
      }
      rows.columns[2].Append<int64_t>(1);
      rows.columns[3].Append<int64_t>(1);
    }
    ShardedWindowAggregate::ShardIds shard(rows.num_rows());
    op->AssignShards(rows, 0, rows.num_rows(), &shard);
    std::vector<int> seen(3, 0);
    for (int64_t r = 0; r < rows.num_rows(); ++r) {
      std::string key;
      AppendValueKey(k, r, &key);
      ASSERT_EQ(shard[r], op->ShardOf(key)) << type << " row " << r;
      ++seen[shard[r]];
    }
    if (std::string_view(type) != "BOOLEAN") {
      EXPECT_GT(*std::min_element(seen.begin(), seen.end()), 50) << type << ": keys spread";
    }
  }
}

TEST(ShardedWindowAggregateEmitTest, AShardsChunkOfOneWindowComesAloneInTheOrderOfAMergedEmit) {
  WindowAggregateOptions o = Options(WindowSpec{WindowSpec::Kind::kHop, 10 * kSec, 2 * kSec, 0});
  TaskPool pool(2);
  ASSERT_OK_AND_ASSIGN(auto whole, ShardedWindowAggregate::Make(o, &pool, 3));
  ASSERT_OK_AND_ASSIGN(auto merged, ShardedWindowAggregate::Make(o, &pool, 3));
  ASSERT_OK_AND_ASSIGN(auto one, WindowAggregate::Make(o));
  auto rows_of = [](const Batch& b, std::vector<std::string>* out) {
    for (int64_t i = 0; i < b.num_rows(); ++i) AppendJsonRow(b, i, &out->emplace_back());
  };
  // One operator's rows in the order the shards give them: by window end,
  // then start, then the key's shard (a shard's keys as one operator orders
  // them).
  auto in_shard_order = [&](const Batch& b) {
    std::vector<int64_t> order(static_cast<size_t>(b.num_rows()));
    std::iota(order.begin(), order.end(), 0);
    auto shard_of = [&](int64_t r) {
      std::string key;
      AppendValueKey(b.columns[2], r, &key);
      return whole->ShardOf(key);
    };
    std::stable_sort(order.begin(), order.end(), [&](int64_t x, int64_t y) {
      return std::tuple(b.columns[1].Value<int64_t>(x), b.columns[0].Value<int64_t>(x),
                        shard_of(x)) < std::tuple(b.columns[1].Value<int64_t>(y),
                                                  b.columns[0].Value<int64_t>(y), shard_of(y));
    });
    std::vector<std::string> out;
    for (int64_t r : order) AppendJsonRow(b, r, &out.emplace_back());
    return out;
  };
  Stream stream;
  int alone = 0;
  for (int round = 0; round < 200; ++round) {
    auto [rows, marks] = stream.Next(12);  // (about 1.8 s: a window closes a round or so)
    std::vector<LateRow> late;
    ASSERT_OK(whole->Add(rows, marks, &late));
    ASSERT_OK(merged->Add(rows, marks, &late));
    ASSERT_OK(one->Add(rows, marks, &late));
    // Unbounded batches (the shards' chunks given whole where each is one
    // run) against batches of 7 rows (runs merged into them): the same
    // rows in the same order.
    std::vector<std::string> a, b;
    std::vector<Batch> batches;
    for (bool done = false; !done;) {
      std::vector<FailedGroup> failed;
      ASSERT_OK_AND_ASSIGN(Batch batch, whole->Emit(marks.back(), &failed, INT64_MAX, &done));
      rows_of(batch, &a);
      if (batch.num_rows() > 0) batches.push_back(std::move(batch));
    }
    for (bool done = false; !done;) {
      std::vector<FailedGroup> failed;
      ASSERT_OK_AND_ASSIGN(Batch batch, merged->Emit(marks.back(), &failed, 7, &done));
      ASSERT_LE(batch.num_rows(), 7);
      rows_of(batch, &b);
    }
    ASSERT_EQ(a, b) << round;
    std::vector<FailedGroup> failed;
    ASSERT_OK_AND_ASSIGN(Batch all, one->Emit(marks.back(), &failed));
    ASSERT_EQ(a, in_shard_order(all)) << round;
    // A batch of one window that holds only some of its rows: one shard's.
    for (const Batch& batch : batches) {
      std::vector<std::pair<int64_t, int64_t>> w = Windows(batch);
      if (std::count(w.begin(), w.end(), w[0]) != static_cast<int64_t>(w.size())) continue;
      int64_t of_window = 0;
      for (const Batch& other : batches) {
        std::vector<std::pair<int64_t, int64_t>> v = Windows(other);
        of_window += std::count(v.begin(), v.end(), w[0]);
      }
      if (of_window > batch.num_rows()) ++alone;
    }
  }
  EXPECT_GT(alone, 10) << "windows closing one at a time come a shard's chunk at a time";
}

INSTANTIATE_TEST_SUITE_P(Windows, ShardedWindowAggregateTest,
                         ::testing::Values(WindowSpec{WindowSpec::Kind::kTumble, 10 * kSec, 0, 0},
                                           WindowSpec{WindowSpec::Kind::kHop, 10 * kSec, 2 * kSec,
                                                      0},
                                           WindowSpec{WindowSpec::Kind::kSession, 0, 0, 3 * kSec}));

TEST(ShardedWindowAggregateStateTest, ATruncatedOrLongerStateFileIsCorruption) {
  WindowAggregateOptions o = Options({WindowSpec::Kind::kTumble, 10 * kSec, 0, 0});
  TaskPool pool(1);
  ASSERT_OK_AND_ASSIGN(auto op, ShardedWindowAggregate::Make(o, &pool, 2));
  Stream stream;
  auto [rows, marks] = stream.Next(200);
  std::vector<LateRow> late;
  ASSERT_OK(op->Add(rows, marks, &late));
  ASSERT_OK_AND_ASSIGN(std::string bytes, op->Snapshot());
  ASSERT_OK_AND_ASSIGN(auto other, ShardedWindowAggregate::Make(o, &pool, 2));
  ASSERT_OK(other->Restore(bytes));
  ASSERT_ERROR(other->Restore(bytes.substr(0, bytes.size() - 3)), StatusCode::kCorruption,
               "window state: record");
  ASSERT_ERROR(other->Restore(bytes + "x"), StatusCode::kCorruption, "after the end");
  ASSERT_ERROR(other->Restore("ab"), StatusCode::kCorruption, "header");
}

}  // namespace
}  // namespace sluice::operators
