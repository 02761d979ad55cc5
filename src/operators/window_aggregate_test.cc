#include "operators/window_aggregate.h"

#include <gtest/gtest.h>

#include "columnar/json_writer.h"
#include "columnar/sql_schema.h"
#include "common/testing.h"
#include "operators/sharded_window_aggregate.h"
#include "operators/test_util.h"
#include "operators/watermark.h"

namespace sluice::operators {
namespace {

constexpr int64_t kSec = 1000000;

// Input: t TIMESTAMP, k STRING, v BIGINT; aggregates count(*), sum(v),
// count(DISTINCT v), max(k)... over (k).
struct Fixture {
  WindowAggregateOptions options;
  std::shared_ptr<const Schema> input;
  Fixture(WindowSpec window, int64_t lateness_us = 0) {
    options.window = window;
    options.allowed_lateness_us = lateness_us;
    options.key_types = {DataType::String()};
    options.aggs = {
        {AggKind::kCountStar, nullptr, DataType::Long(), "count(*)"},
        {AggKind::kSum, DataType::Long(), DataType::Long(), "sum(v)"},
        {AggKind::kCountDistinct, DataType::Long(), DataType::Long(), "count(DISTINCT v)"},
        {AggKind::kMin, DataType::Long(), DataType::Long(), "min(v)"}};
    options.output_schema = std::make_shared<Schema>(
        *ParseColumnList("window_start TIMESTAMP, window_end TIMESTAMP, k STRING, n BIGINT, "
                         "s BIGINT, d BIGINT, lo BIGINT"));
    input =
        std::make_shared<Schema>(*ParseColumnList("t TIMESTAMP, k STRING, v BIGINT, "
                                                  "v2 BIGINT, v3 BIGINT"));
  }
  // Rows (seconds, key, value); the aggregate arguments are all v.
  Batch Rows(const std::vector<std::tuple<int64_t, std::string, int64_t>>& rows) const {
    Batch b = Batch::Make(input);
    for (const auto& [t, k, v] : rows) {
      b.columns[0].Append<int64_t>(t * kSec);
      b.columns[1].AppendBytes(k);
      for (int c = 2; c < 5; ++c) b.columns[c].Append<int64_t>(v);
    }
    return b;
  }
};

TEST(WindowAggregateTest, TumblingWindowsEmitOnceTheWatermarkPassesTheirEnd) {
  Fixture f({WindowSpec::Kind::kTumble, 60 * kSec, 0, 0});
  ASSERT_OK_AND_ASSIGN(auto op, WindowAggregate::Make(f.options));
  std::vector<LateRow> late;
  ASSERT_OK(op->Add(f.Rows({{1, "a", 5}, {59, "a", 5}, {61, "a", 7}, {2, "b", 1}}),
                    std::vector<int64_t>(4, INT64_MIN), &late));
  EXPECT_TRUE(late.empty());
  EXPECT_EQ(op->groups(), 3);
  std::vector<FailedGroup> failed;
  ASSERT_OK_AND_ASSIGN(Batch none, op->Emit(59 * kSec, &failed));
  EXPECT_EQ(none.num_rows(), 0);
  ASSERT_OK_AND_ASSIGN(Batch first, op->Emit(60 * kSec, &failed));
  EXPECT_EQ(
      JsonRows(first),
      (std::vector<std::string>{
          R"({"window_start":"1970-01-01T00:00:00.000000","window_end":"1970-01-01T00:01:00.000000","k":"a","n":2,"s":10,"d":1,"lo":5})",
          R"({"window_start":"1970-01-01T00:00:00.000000","window_end":"1970-01-01T00:01:00.000000","k":"b","n":1,"s":1,"d":1,"lo":1})"}));
  // Emitted once: a second Emit at the same watermark gives nothing.
  ASSERT_OK_AND_ASSIGN(Batch again, op->Emit(60 * kSec, &failed));
  EXPECT_EQ(again.num_rows(), 0);
  EXPECT_EQ(op->groups(), 1);
}

TEST(WindowAggregateTest, ARowWhoseWindowsAreAllClosedIsLate) {
  Fixture f({WindowSpec::Kind::kTumble, 60 * kSec, 0, 0}, /*lateness=*/10 * kSec);
  ASSERT_OK_AND_ASSIGN(auto op, WindowAggregate::Make(f.options));
  std::vector<LateRow> late;
  // Watermark 65 s: [0, 60) is still open (lateness 10 s); at 70 s it is closed.
  ASSERT_OK(op->Add(f.Rows({{5, "a", 1}, {6, "a", 1}}), {65 * kSec, 70 * kSec}, &late));
  ASSERT_EQ(late.size(), 1u);
  EXPECT_EQ(late[0].row, 1);
  EXPECT_NE(late[0].reason.find("late"), std::string::npos);
}

TEST(WindowAggregateTest, HopCountsARowInEveryWindowHoldingIt) {
  Fixture f({WindowSpec::Kind::kHop, 60 * kSec, 20 * kSec, 0});
  ASSERT_OK_AND_ASSIGN(auto op, WindowAggregate::Make(f.options));
  std::vector<LateRow> late;
  ASSERT_OK(op->Add(f.Rows({{50, "a", 1}}), {INT64_MIN}, &late));
  EXPECT_EQ(op->groups(), 1);  // one pane [40,60), in the windows [0,60) [20,80) [40,100)
  std::vector<FailedGroup> failed;
  ASSERT_OK_AND_ASSIGN(Batch all, op->Emit(INT64_MAX, &failed));
  ASSERT_EQ(all.num_rows(), 3);
  EXPECT_EQ(all.columns[0].Value<int64_t>(0), 0);
  EXPECT_EQ(all.columns[0].Value<int64_t>(2), 40 * kSec);
}

TEST(WindowAggregateTest, AHopWindowTakesItsPanesWhenItClosesNotLater) {
  // slide 10 s, size 20 s. At the watermark 20 s, [0, 20) closes; a row at
  // 15 s arriving then counts in [10, 30) only, though its pane is in both.
  Fixture f({WindowSpec::Kind::kHop, 20 * kSec, 10 * kSec, 0});
  ASSERT_OK_AND_ASSIGN(auto op, WindowAggregate::Make(f.options));
  std::vector<LateRow> late;
  ASSERT_OK(op->Add(f.Rows({{5, "a", 1}, {12, "a", 2}, {15, "a", 4}}),
                    {INT64_MIN, INT64_MIN, 20 * kSec}, &late));
  EXPECT_TRUE(late.empty());
  std::vector<FailedGroup> failed;
  ASSERT_OK_AND_ASSIGN(Batch all, op->Emit(INT64_MAX, &failed));
  std::vector<std::string> rows = JsonRows(all);  // [-10,10) [0,20) [10,30)
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_NE(rows[1].find(R"("window_end":"1970-01-01T00:00:20.000000","k":"a","n":2,"s":3)"),
            std::string::npos)
      << rows[1];
  EXPECT_NE(rows[2].find(R"("window_end":"1970-01-01T00:00:30.000000","k":"a","n":2,"s":6)"),
            std::string::npos)
      << rows[2];
  // Windows closed while no pane existed stay closed: at the watermark 30 s
  // with nothing open, a row at 25 s counts in [20, 40) and later, not [10, 30).
  ASSERT_OK_AND_ASSIGN(auto op3, WindowAggregate::Make(f.options));
  ASSERT_OK(op3->Add(f.Rows({{25, "b", 1}}), {30 * kSec}, &late));
  ASSERT_OK_AND_ASSIGN(Batch b, op3->Emit(INT64_MAX, &failed));
  ASSERT_EQ(b.num_rows(), 1);
  EXPECT_EQ(b.columns[0].Value<int64_t>(0), 20 * kSec);
  // A row whose every window closed is late: at the watermark 30 s, t = 15 s.
  ASSERT_OK_AND_ASSIGN(auto op2, WindowAggregate::Make(f.options));
  ASSERT_OK(op2->Add(f.Rows({{15, "a", 1}}), {30 * kSec}, &late));
  EXPECT_EQ(late.size(), 1u);
}

TEST(WindowAggregateTest, AStateWrittenBeforeTheClosedHopWindowsAreEmittedIsRefused) {
  // slide 10 s, size 20 s: the row at 25 s, at the watermark 20 s, closes the
  // windows holding the row at 5 s, which wait to be emitted; a state written
  // then would say they were, and a restore would never give them.
  Fixture f({WindowSpec::Kind::kHop, 20 * kSec, 10 * kSec, 0});
  ASSERT_OK_AND_ASSIGN(auto op, WindowAggregate::Make(f.options));
  std::vector<LateRow> late;
  ASSERT_OK(op->Add(f.Rows({{5, "a", 1}, {25, "b", 1}}), {INT64_MIN, 20 * kSec}, &late));
  auto early = op->Snapshot();
  ASSERT_FALSE(early.ok()) << "a state that loses the windows [-10, 10) and [0, 20) of a";
  EXPECT_NE(early.status().message().find("not emitted"), std::string::npos)
      << early.status().ToString();
  std::vector<FailedGroup> failed;
  ASSERT_OK_AND_ASSIGN(Batch closed, op->Emit(20 * kSec, &failed));
  EXPECT_EQ(closed.num_rows(), 2);
  ASSERT_OK_AND_ASSIGN(std::string state, op->Snapshot());
  ASSERT_OK_AND_ASSIGN(auto restored, WindowAggregate::Make(f.options));
  ASSERT_OK(restored->Restore(state));
  ASSERT_OK_AND_ASSIGN(Batch rest, restored->Emit(INT64_MAX, &failed));
  ASSERT_OK_AND_ASSIGN(Batch live, op->Emit(INT64_MAX, &failed));
  EXPECT_EQ(JsonRows(rest), JsonRows(live));
  EXPECT_EQ(rest.num_rows(), 2);  // [20, 40) and [30, 50) of b
}

TEST(WindowAggregateTest, SessionsExtendAndMergeWhenAnEventBridgesThem) {
  Fixture f({WindowSpec::Kind::kSession, 0, 0, 10 * kSec});
  ASSERT_OK_AND_ASSIGN(auto op, WindowAggregate::Make(f.options));
  std::vector<LateRow> late;
  ASSERT_OK(op->Add(f.Rows({{0, "a", 1}, {24, "a", 2}, {5, "a", 3}, {100, "b", 4}}),
                    std::vector<int64_t>(4, INT64_MIN), &late));
  EXPECT_EQ(op->groups(), 3);  // a:[0,15) a:[24,34) b:[100,110)
  ASSERT_OK(
      op->Add(f.Rows({{14, "a", 4}}), {INT64_MIN}, &late));  // [14,24) bridges both sessions of a
  EXPECT_EQ(op->groups(), 2);
  std::vector<FailedGroup> failed;
  ASSERT_OK_AND_ASSIGN(Batch all, op->Emit(INT64_MAX, &failed));
  EXPECT_EQ(
      JsonRows(all)[0],
      R"({"window_start":"1970-01-01T00:00:00.000000","window_end":"1970-01-01T00:00:34.000000","k":"a","n":4,"s":10,"d":4,"lo":1})");
}

TEST(WindowAggregateTest, AClosedSessionNeverChangesEvenBeforeItIsEmitted) {
  // Gap 3 s, lateness 2 s: at the watermark 5 s, [0, 3) is closed; an event at
  // 2.9 s starts a session of its own instead of joining it.
  Fixture f({WindowSpec::Kind::kSession, 0, 0, 3 * kSec}, 2 * kSec);
  ASSERT_OK_AND_ASSIGN(auto op, WindowAggregate::Make(f.options));
  std::vector<LateRow> late;
  ASSERT_OK(op->Add(f.Rows({{0, "a", 1}, {10, "a", 2}}), {INT64_MIN, INT64_MIN}, &late));
  Batch one = f.Rows({{0, "a", 3}});
  one.columns[0].mutable_data<int64_t>()[0] = 2'900'000;
  ASSERT_OK(op->Add(one, {5 * kSec}, &late));
  EXPECT_TRUE(late.empty());
  std::vector<FailedGroup> failed;
  ASSERT_OK_AND_ASSIGN(Batch all, op->Emit(INT64_MAX, &failed));
  ASSERT_EQ(all.num_rows(), 3);
  EXPECT_EQ(all.columns[1].Value<int64_t>(0), 3 * kSec);
  EXPECT_EQ(all.columns[0].Value<int64_t>(1), 2'900'000);
  EXPECT_EQ(all.columns[1].Value<int64_t>(1), 5'900'000);
}

// A session that starts where a closed, not yet emitted one starts (an event
// joins an open session back to that start) is not forgotten when the closed
// one is emitted, and a restore keeps it too: a later event still joins it.
TEST(WindowAggregateTest, ASessionSharingItsStartWithAClosedOneOutlivesThatOnesEmit) {
  Fixture f({WindowSpec::Kind::kSession, 0, 0, 10 * kSec});
  for (bool restore : {false, true}) {
    SCOPED_TRACE(restore ? "restored before the emit" : "one operator");
    ASSERT_OK_AND_ASSIGN(auto op, WindowAggregate::Make(f.options));
    std::vector<LateRow> late;
    ASSERT_OK(op->Add(f.Rows({{0, "a", 1}}), {INT64_MIN}, &late));  // [0, 10)
    // At the watermark 12 s, [0, 10) is closed: 5 s starts [5, 15), and 0 s
    // joins that one, making [0, 15).
    ASSERT_OK(op->Add(f.Rows({{5, "a", 2}, {0, "a", 3}}), {12 * kSec, 12 * kSec}, &late));
    EXPECT_TRUE(late.empty());
    if (restore) {
      ASSERT_OK_AND_ASSIGN(std::string state, op->Snapshot());
      ASSERT_OK_AND_ASSIGN(op, WindowAggregate::Make(f.options));
      ASSERT_OK(op->Restore(state));
    }
    std::vector<FailedGroup> failed;
    ASSERT_OK_AND_ASSIGN(Batch closed, op->Emit(12 * kSec, &failed));
    ASSERT_EQ(JsonRows(closed).size(), 1u);
    EXPECT_NE(
        JsonRows(closed)[0].find(R"("window_end":"1970-01-01T00:00:10.000000","k":"a","n":1)"),
        std::string::npos)
        << JsonRows(closed)[0];
    ASSERT_OK(op->Add(f.Rows({{12, "a", 4}}), {12 * kSec}, &late));  // joins [0, 15)
    ASSERT_OK_AND_ASSIGN(Batch rest, op->Emit(INT64_MAX, &failed));
    EXPECT_EQ(
        JsonRows(rest),
        (std::vector<std::string>{
            R"({"window_start":"1970-01-01T00:00:00.000000","window_end":"1970-01-01T00:00:22.000000","k":"a","n":3,"s":9,"d":3,"lo":2})"}));
  }
}

TEST(WindowAggregateTest, ASumBeyondBigintFailsItsWindowRowOnly) {
  Fixture f({WindowSpec::Kind::kTumble, 60 * kSec, 0, 0});
  ASSERT_OK_AND_ASSIGN(auto op, WindowAggregate::Make(f.options));
  std::vector<LateRow> late;
  ASSERT_OK(op->Add(f.Rows({{1, "a", INT64_MAX}, {2, "a", 1}, {3, "b", 2}}),
                    std::vector<int64_t>(3, INT64_MIN), &late));
  std::vector<FailedGroup> failed;
  ASSERT_OK_AND_ASSIGN(Batch out, op->Emit(INT64_MAX, &failed));
  ASSERT_EQ(out.num_rows(), 1);
  ASSERT_EQ(failed.size(), 1u);
  EXPECT_EQ(failed[0].reason, "integer overflow in sum(v)");
  EXPECT_NE(failed[0].payload.find(R"("k":"a")"), std::string::npos);
}

// A state file of the earlier layout ("SLS2": every accumulator field, always),
// written here byte by byte as docs/state.md describes it, still restores; the
// state written after it is the compact one ("SLS3") and restores the same.
TEST(WindowAggregateTest, AStateFileWithAccumulatorsInTheFixedLayoutStillRestores) {
  Fixture f({WindowSpec::Kind::kTumble, 60 * kSec, 0, 0});
  auto put = [](std::string* out, auto v) {
    out->append(reinterpret_cast<const char*>(&v), sizeof(v));
  };
  auto put_bytes = [&](std::string* out, std::string_view b) {
    put(out, static_cast<uint32_t>(b.size()));
    out->append(b);
  };
  // count, exact sum, double sum, overflow, best, distinct set, hashes, registers.
  auto put_acc = [&](std::string* out, int64_t count, int64_t exact, std::string_view best) {
    put(out, count);
    put(out, static_cast<__int128>(exact));
    put(out, 0.0);
    put(out, uint8_t{0});
    put_bytes(out, best);
    for (int i = 0; i < 3; ++i) put(out, uint32_t{0});
  };
  Column k(DataType::String());
  k.AppendBytes("a");
  std::string key;
  AppendValueKey(k, 0, &key);
  std::string body;
  put(&body, int64_t{60 * kSec});  // window end, start, key
  put(&body, int64_t{0});
  put_bytes(&body, key);
  put_acc(&body, 2, 0, "");   // count(*) = 2
  put_acc(&body, 2, 10, "");  // sum(v) = 10
  put_acc(&body, 0, 0, "");   // count(DISTINCT v): an empty set
  const int64_t five = 5;     // min(v) = 5, its 8 bytes
  put_acc(&body, 2, 0, std::string_view(reinterpret_cast<const char*>(&five), 8));
  std::string file;
  put(&file, uint32_t{0x32534C53});  // "SLS2"
  put(&file, uint8_t{0});            // a base
  put(&file, int64_t{INT64_MIN});    // emitted below
  put(&file, uint8_t{2});            // a group's record
  put(&file, static_cast<uint32_t>(body.size()));
  file += body;
  put(&file, uint8_t{0});  // the end

  const std::vector<std::string> expected = {
      R"({"window_start":"1970-01-01T00:00:00.000000","window_end":"1970-01-01T00:01:00.000000","k":"a","n":2,"s":10,"d":0,"lo":5})"};
  ASSERT_OK_AND_ASSIGN(auto op, WindowAggregate::Make(f.options));
  ASSERT_OK(op->Restore(file));
  ASSERT_OK_AND_ASSIGN(std::string compact, op->Snapshot());
  EXPECT_EQ(compact.substr(0, 4), "SLS3");
  EXPECT_LT(compact.size(), file.size());
  std::vector<FailedGroup> failed;
  ASSERT_OK_AND_ASSIGN(Batch rows, op->Emit(INT64_MAX, &failed));
  EXPECT_EQ(JsonRows(rows), expected);
  ASSERT_OK_AND_ASSIGN(auto again, WindowAggregate::Make(f.options));
  ASSERT_OK(again->Restore(compact));
  ASSERT_OK_AND_ASSIGN(Batch rows_again, again->Emit(INT64_MAX, &failed));
  EXPECT_EQ(JsonRows(rows_again), expected);
  EXPECT_TRUE(failed.empty());
  // A truncated record of the old layout is corrupt, not guessed at.
  std::string cut = file;
  cut.erase(cut.size() - 1 - 4, 4);  // the min's registers count, from inside the record
  cut[4 + 1 + 8 + 1] = static_cast<char>(body.size() - 4);
  ASSERT_OK_AND_ASSIGN(auto broken, WindowAggregate::Make(f.options));
  EXPECT_EQ(broken->Restore(cut).code(), StatusCode::kCorruption);
}

TEST(WindowAggregateTest, IncrementalSnapshotsRestoreTheSameState) {
  for (WindowSpec spec : {WindowSpec{WindowSpec::Kind::kHop, 60 * kSec, 30 * kSec, 0},
                          WindowSpec{WindowSpec::Kind::kSession, 0, 0, 10 * kSec}}) {
    Fixture f(spec);
    ASSERT_OK_AND_ASSIGN(auto live, WindowAggregate::Make(f.options));
    std::vector<LateRow> late;
    std::vector<FailedGroup> failed;
    std::vector<std::string> snapshots;
    ASSERT_OK(live->Add(f.Rows({{1, "a", 1}, {2, "b", 2}}), {INT64_MIN, INT64_MIN}, &late));
    {
      ASSERT_OK_AND_ASSIGN(std::string s, live->Snapshot());
      snapshots.push_back(s);
    }
    ASSERT_OK(live->Add(f.Rows({{8, "a", 3}, {95, "c", 4}}), {INT64_MIN, INT64_MIN}, &late));
    ASSERT_OK(live->Emit(40 * kSec, &failed).status());
    {
      ASSERT_OK_AND_ASSIGN(std::string s, live->SnapshotChanged());
      snapshots.push_back(s);
    }
    ASSERT_OK(live->Add(f.Rows({{14, "b", 5}, {100, "c", 6}, {99, "c", 6}}),
                        {40 * kSec, 40 * kSec, 40 * kSec}, &late));
    {
      ASSERT_OK_AND_ASSIGN(std::string s, live->SnapshotChanged());
      snapshots.push_back(s);
    }

    ASSERT_OK_AND_ASSIGN(auto restored, WindowAggregate::Make(f.options));
    for (const std::string& s : snapshots) ASSERT_OK(restored->Restore(s));
    EXPECT_EQ(restored->groups(), live->groups());
    ASSERT_OK_AND_ASSIGN(Batch a, live->Emit(INT64_MAX, &failed));
    ASSERT_OK_AND_ASSIGN(Batch b, restored->Emit(INT64_MAX, &failed));
    EXPECT_EQ(JsonRows(a), JsonRows(b));
    EXPECT_GT(a.num_rows(), 0);
  }
}

TEST(WindowAggregateTest, AFullStateRestoredIntoAUsedOperatorReplacesWhatItEmittedSince) {
  // TUMBLE: [0, 60) emitted after the state was taken comes again.
  {
    Fixture f({WindowSpec::Kind::kTumble, 60 * kSec, 0, 0});
    ASSERT_OK_AND_ASSIGN(auto op, WindowAggregate::Make(f.options));
    std::vector<LateRow> late;
    std::vector<FailedGroup> failed;
    ASSERT_OK(op->Add(f.Rows({{1, "a", 1}, {61, "a", 2}}), {INT64_MIN, INT64_MIN}, &late));
    ASSERT_OK_AND_ASSIGN(std::string state, op->Snapshot());
    ASSERT_OK_AND_ASSIGN(Batch first, op->Emit(60 * kSec, &failed));
    ASSERT_EQ(first.num_rows(), 1);
    ASSERT_OK(op->Restore(state));
    EXPECT_EQ(op->emitted_below(), INT64_MIN);
    ASSERT_OK_AND_ASSIGN(Batch again, op->Emit(60 * kSec, &failed));
    EXPECT_EQ(JsonRows(again), JsonRows(first));
  }
  // HOP: windows taken (by a later row's watermark) but not emitted when the
  // state is restored are not emitted; the state's own are.
  {
    Fixture f({WindowSpec::Kind::kHop, 20 * kSec, 10 * kSec, 0});
    ASSERT_OK_AND_ASSIGN(auto op, WindowAggregate::Make(f.options));
    std::vector<LateRow> late;
    std::vector<FailedGroup> failed;
    ASSERT_OK(op->Add(f.Rows({{5, "a", 1}}), {INT64_MIN}, &late));
    ASSERT_OK_AND_ASSIGN(std::string state, op->Snapshot());
    ASSERT_OK(op->Add(f.Rows({{6, "a", 1}, {25, "a", 1}}), {INT64_MIN, 20 * kSec}, &late));
    ASSERT_OK(op->Restore(state));
    ASSERT_OK_AND_ASSIGN(Batch rows, op->Emit(20 * kSec, &failed));
    ASSERT_EQ(rows.num_rows(), 2);  // [-10, 10) and [0, 20), of the row at 5 s alone
    EXPECT_EQ(rows.columns[3].Value<int64_t>(0), 1);
    EXPECT_EQ(rows.columns[3].Value<int64_t>(1), 1);
    EXPECT_TRUE(late.empty());
  }
}

TEST(WindowAggregateTest, AnEventTimeWhoseWindowWouldLeaveTheTimestampRangeIsGivenBack) {
  // At the ends of int64 microseconds (about 292,000 years from 1970) a
  // window's start or end does not fit: such a row is not taken (no wrapped
  // arithmetic), and the others are.
  for (WindowSpec spec : {WindowSpec{WindowSpec::Kind::kTumble, 60 * kSec, 0, 0},
                          WindowSpec{WindowSpec::Kind::kHop, 60 * kSec, 20 * kSec, 0},
                          WindowSpec{WindowSpec::Kind::kSession, 0, 0, 30 * kSec}}) {
    Fixture f(spec);
    ASSERT_OK_AND_ASSIGN(auto op, WindowAggregate::Make(f.options));
    Batch rows = Batch::Make(f.input);
    bool hop = spec.kind == WindowSpec::Kind::kHop;
    // (HOP: the pane of INT64_MIN + 30 s fits, its first window does not.)
    std::vector<int64_t> times = {INT64_MAX, INT64_MIN, 5 * kSec};
    if (hop) times.push_back(INT64_MIN + 30 * kSec);
    for (int64_t t : times) {
      rows.columns[0].Append<int64_t>(t);
      rows.columns[1].AppendBytes("a");
      for (int c = 2; c < 5; ++c) rows.columns[c].Append<int64_t>(1);
    }
    std::vector<LateRow> late;
    ASSERT_OK(op->Add(rows, std::vector<int64_t>(times.size(), INT64_MIN), &late));
    bool session = spec.kind == WindowSpec::Kind::kSession;
    // A session starts at its first event: only its end can leave the range.
    ASSERT_EQ(late.size(), session ? 1u : hop ? 3u : 2u);
    EXPECT_EQ(late[0].row, 0);
    if (!session) {
      EXPECT_EQ(late[1].row, 1);
    }
    if (hop) {
      EXPECT_EQ(late[2].row, 3);
    }
    EXPECT_NE(late[0].reason.find("timestamp range"), std::string::npos) << late[0].reason;
    std::vector<FailedGroup> failed;
    ASSERT_OK_AND_ASSIGN(Batch out, op->Emit(INT64_MAX, &failed));
    EXPECT_EQ(out.num_rows(), hop ? 3 : session ? 2 : 1);
    for (int64_t i = 0; i < out.num_rows(); ++i) {
      EXPECT_LT(out.columns[0].Value<int64_t>(i), out.columns[1].Value<int64_t>(i));
    }
  }
}

TEST(WindowAggregateTest, ARowNearTheEndOfTheTimestampRangeIsEmittedOrGivenBackNeverKept) {
  // INT64_MAX - 70 s: TUMBLE's window [..., ...800 s) ends 54.8 s before the
  // range does; HOP's pane [...780, ...800) is in windows up to ...840 (its
  // end plus the size is past the range: the pane must still be let go).
  const int64_t t = INT64_MAX - 70 * kSec;
  for (WindowSpec spec : {WindowSpec{WindowSpec::Kind::kTumble, 60 * kSec, 0, 0},
                          WindowSpec{WindowSpec::Kind::kHop, 60 * kSec, 20 * kSec, 0}}) {
    for (int64_t lateness : {int64_t{0}, 60 * kSec}) {
      SCOPED_TRACE(fmt::format("kind {} lateness {}", static_cast<int>(spec.kind), lateness));
      Fixture f(spec, lateness);
      ASSERT_OK_AND_ASSIGN(auto op, WindowAggregate::Make(f.options));
      Batch rows = Batch::Make(f.input);
      rows.columns[0].Append<int64_t>(t);
      rows.columns[1].AppendBytes("a");
      for (int c = 2; c < 5; ++c) rows.columns[c].Append<int64_t>(1);
      std::vector<LateRow> late;
      ASSERT_OK(op->Add(rows, {INT64_MIN}, &late));
      std::vector<FailedGroup> failed;
      ASSERT_OK_AND_ASSIGN(Batch out, op->Emit(INT64_MAX, &failed));
      if (lateness > 0) {
        // Its window's deadline (end + 60 s) is past the range: it could
        // never close, so it is given back.
        ASSERT_EQ(late.size(), 1u);
        EXPECT_EQ(out.num_rows(), 0);
      } else {
        EXPECT_TRUE(late.empty());
        EXPECT_EQ(out.num_rows(), spec.kind == WindowSpec::Kind::kHop ? 3 : 1);
      }
      EXPECT_EQ(op->groups(), 0) << "a group outlived the end of the input";
    }
  }
}

TEST(WindowAggregateTest, ACorruptSnapshotIsRefused) {
  Fixture f({WindowSpec::Kind::kTumble, 60 * kSec, 0, 0});
  ASSERT_OK_AND_ASSIGN(auto op, WindowAggregate::Make(f.options));
  std::vector<LateRow> late;
  ASSERT_OK(op->Add(f.Rows({{1, "a", 1}}), {INT64_MIN}, &late));
  ASSERT_OK_AND_ASSIGN(std::string s, op->Snapshot());
  ASSERT_OK_AND_ASSIGN(auto other, WindowAggregate::Make(f.options));
  EXPECT_EQ(other->Restore(s.substr(0, s.size() - 3)).code(), StatusCode::kCorruption);
  EXPECT_EQ(other->Restore("garbage").code(), StatusCode::kCorruption);
}

TEST(WatermarkTest, TheSlowestActivePartitionHoldsTheWatermarkUntilItIsIdle) {
  WatermarkTracker w(5 * kSec, /*idle_timeout_ms=*/1000);
  EXPECT_EQ(w.current(), INT64_MIN);
  w.Observe("0", 100 * kSec, 0);
  EXPECT_EQ(w.current(), 95 * kSec);
  w.Observe("1", 50 * kSec, 0);
  EXPECT_EQ(w.current(), 95 * kSec);  // never goes back
  w.Observe("0", 200 * kSec, 10);
  EXPECT_EQ(w.current(), 95 * kSec);  // partition 1 holds it (at 45 s)
  w.Observe("1", 150 * kSec, 20);
  EXPECT_EQ(w.current(), 145 * kSec);
  w.Observe("0", 300 * kSec, 1500);
  w.CheckIdle(1500);  // partition 1 quiet since 20 ms
  EXPECT_EQ(w.current(), 295 * kSec);
  WatermarkTracker copy(5 * kSec, 0);
  ASSERT_OK(copy.Decode(w.Encode()));
  EXPECT_EQ(copy.current(), 295 * kSec);
}

TEST(WatermarkTest, AnEventAtTheEndOfTheRangeDoesNotMeanTheEndOfTheInput) {
  WatermarkTracker w(0, /*idle_timeout_ms=*/0);
  w.Observe("0", INT64_MAX, 0);
  EXPECT_EQ(w.current(), INT64_MAX - 1);
}

}  // namespace
}  // namespace sluice::operators
