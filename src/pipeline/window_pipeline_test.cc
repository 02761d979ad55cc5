// Windowed pipelines on any number of lanes: while the lanes decode a batch,
// the window stage feeds the batches before into the windows. The same
// events must give the same window rows, late rows and watermark on one lane
// and on several, for every window kind, across a restart from the state; a
// write that fails on the window stage fails the checkpoint, a stage that
// failed fails every later one of its run, and the restart catches up to the
// same rows.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <optional>

#include "columnar/sql_schema.h"
#include "common/kill_point.h"
#include "common/testing.h"
#include "iceberg/table_builder.h"
#include "pipeline/bind.h"
#include "pipeline/test_util.h"
#include "sql/parser.h"

namespace sluice::pipeline {
namespace {

struct WindowCase {
  const char* name;
  const char* select;  // the pipeline's SELECT, over source ev
};

class WindowLanesTest : public testing::PipelineFixture,
                        public ::testing::WithParamInterface<WindowCase> {
 protected:
  struct Outcome {
    std::vector<std::string> rows;
    std::vector<std::string> dead;  // "offset error"
    std::string watermark;          // the committed state's
    int64_t groups = 0;
  };

  // A stage of a two-lane run fails at the `hit`-th pass of fail point `point`.
  void ExpectAFailedStageFailsItsRun(const char* point, int hit) {
    Outcome want = Run(1, /*restart=*/false);
    std::optional<PipelineOptions> o = Prepare(2);
    ASSERT_TRUE(o);
    // Only the Checkpoint() calls below commit. A checkpoint of the 1 s interval
    // before the failing batch would rightly commit the windows of the batches
    // before it, and a slow machine (TSan) reaches one: the test failed there.
    o->commit_interval_ms = 3'600'000;
    ProduceEvents(0, 30'000);
    auto p = Open(*o);
    ASSERT_OK(p.status());
    ArmFailPoint(point, hit);
    Status st = TryConsume(**p);
    if (st.ok()) st = (*p)->Checkpoint();
    ArmFailPoint("");
    ASSERT_FALSE(st.ok()) << "the stage's failure was lost";
    EXPECT_NE(st.message().find(point), std::string::npos) << st.ToString();
    Status again = (*p)->Checkpoint();
    EXPECT_FALSE(again.ok()) << "a run whose window stage failed checkpointed again";
    EXPECT_TRUE(Rows(windows_).empty()) << "the failed run committed windows";
    p->reset();
    ExpectRestartCatchesUp(*o, want);
  }

  // Events [from, to) of 30,000 into the log: 13 keys and a hot one, 10 ms apart with up to
  // 3 s of jitter (inside the 5 s delay), every 211th a minute old (late),
  // every 503rd without an event time, every 1009th malformed.
  void ProduceEvents(int64_t from, int64_t to) {
    std::vector<std::string> recs;
    for (int64_t i = from; i < to; ++i) {
      if (i % 1009 == 11) {
        ++broken_;
      } else if (i % 503 == 5) {
        ++no_time_;
      }
      recs.push_back(EventText(i));
    }
    ASSERT_OK(log_->Append(recs).status());
  }
  // Event i as ProduceEvents writes it (at log offset i).
  static std::string EventText(int64_t i) {
    int64_t ms = 1'700'000'000'000 + i * 10 - (i * 7919 % 3000);
    if (i % 211 == 7) ms -= 60'000;
    std::string k = i % 3 == 0 ? "hot" : fmt::format("k{}", i % 13);
    if (i % 1009 == 11) return fmt::format(R"({{"id":{},"k":broken)", i);
    if (i % 503 == 5) return fmt::format(R"({{"id":{},"k":"{}","v":{}}})", i, k, i % 100);
    return fmt::format(R"({{"id":{},"k":"{}","v":{},"ts":{}}})", i, k, i % 100, ms * 1000);
  }

  // Fresh tables and the pipeline's options (`parallelism` lanes).
  std::optional<PipelineOptions> Prepare(int parallelism) {
    Reset();
    auto schema =
        ParseColumnList("ws TIMESTAMPTZ, we TIMESTAMPTZ, k STRING, n BIGINT, total BIGINT");
    EXPECT_OK(schema.status());
    if (!schema.ok()) return std::nullopt;
    auto md = iceberg::NewTableMetadata(*schema, iceberg::PartitionSpec{}, iceberg::SortOrder{},
                                        catalog::DefaultTableLocation(warehouse_, windows_),
                                        iceberg::NewTableOptions{});
    EXPECT_OK(md.status());
    if (!md.ok()) return std::nullopt;
    EXPECT_OK(catalog::Table::Create(*catalog_, *io_, windows_, *md).status());
    EXPECT_OK(EnsureDeadLetterTable(*catalog_, *io_, warehouse_, windows_));
    no_time_ = broken_ = 0;
    std::string sql = fmt::format(
        "CREATE SOURCE ev (id BIGINT, k STRING, v BIGINT, ts TIMESTAMPTZ, "
        "WATERMARK FOR ts AS ts - INTERVAL '5' SECOND) WITH (connector = 'http') FORMAT JSON;\n"
        "CREATE PIPELINE windows AS INSERT INTO lake.windows {};",
        GetParam().select);
    auto script = sql::ParseScript(sql);
    EXPECT_OK(script.status());
    if (!script.ok()) return std::nullopt;
    auto sources = SourcesOf(*script);
    auto statement = FindPipeline(*script, "windows");
    EXPECT_OK(statement.status());
    if (!sources.ok() || !statement.ok()) return std::nullopt;
    auto o = BindPipeline(*catalog_, *io_, **statement, *sources);
    EXPECT_OK(o.status());
    if (!o.ok()) return std::nullopt;
    o->state_dir = (dir_ / "state" / "windows").string();
    // Many batches, each of several lanes: a poll takes 64 KiB (about 1,000
    // events), a batch is 4,096 events.
    o->batch_rows = 4096;
    o->poll_bytes = 64 << 10;
    o->parallelism = parallelism;
    return *o;
  }

  // The tables' rows and dead letters, and what `p` holds.
  Outcome Collect(Pipeline& p) {
    Outcome out;
    out.groups = p.stats().state_groups.load();
    out.rows = Rows(windows_);
    for (const std::string& r : Rows(DeadLetterTable(windows_))) {
      auto j = nlohmann::json::parse(r);
      const int64_t offset = j["offset"].get<int64_t>();
      out.dead.push_back(fmt::format("{} {}", offset, j["error"].get<std::string>()));
      // Late, untimed or malformed: the record as it came, columns not read included.
      EXPECT_EQ(j["payload"].get<std::string>(), EventText(offset)) << j["error"];
    }
    std::sort(out.dead.begin(), out.dead.end());
    auto t = catalog::Table::Load(*catalog_, *io_, windows_);
    EXPECT_OK(t.status());
    if (!t.ok()) return out;
    auto state = nlohmann::json::parse((*t)->metadata().properties.at("sluice.state.windows"));
    out.watermark = state["watermark"].get<std::string>();
    return out;
  }

  // `parallelism` 1 to 3; `restart` false: one run over all the events.
  Outcome Run(int parallelism, bool restart = true) {
    std::optional<PipelineOptions> o = Prepare(parallelism);
    if (!o) return {};
    // Half the events, a checkpoint, and a restart from its state (on 4 -
    // `parallelism` lanes) for the rest.
    ProduceEvents(0, restart ? 14'000 : 30'000);
    if (restart) {
      auto first = Open(*o);
      EXPECT_OK(first.status());
      if (!first.ok()) return {};
      Consume(**first);
      EXPECT_OK((*first)->Checkpoint());
      ProduceEvents(14'000, 30'000);
      o->parallelism = 4 - parallelism;  // the state moves to another shard count
    }
    auto p = Open(*o);
    EXPECT_OK(p.status());
    if (!p.ok()) return {};
    Consume(**p);
    EXPECT_OK((*p)->Checkpoint());
    return Collect(**p);
  }

  // A new run of `o` over the events in the log ends with `want`'s rows,
  // dead letters and watermark.
  void ExpectRestartCatchesUp(const PipelineOptions& o, const Outcome& want) {
    auto p = Open(o);
    ASSERT_OK(p.status());
    Consume(**p);
    ASSERT_OK((*p)->Checkpoint());
    Outcome got = Collect(**p);
    EXPECT_EQ(got.rows, want.rows);
    EXPECT_EQ(got.dead, want.dead);
    EXPECT_EQ(got.watermark, want.watermark);
  }

  catalog::TableIdent windows_{{"lake"}, "windows"};
  int no_time_ = 0, broken_ = 0;  // events of each kind produced
};

TEST_P(WindowLanesTest, OneLaneAndSeveralGiveTheSameWindowsLateRowsAndWatermark) {
  Outcome one = Run(1);
  Outcome straight = Run(1, /*restart=*/false);
  EXPECT_EQ(straight.rows, one.rows) << "the restart restored the windows";
  EXPECT_EQ(straight.dead, one.dead);
  EXPECT_EQ(straight.groups, one.groups);
  ASSERT_GT(one.rows.size(), 50u) << "the events close windows as they go";
  // Late rows, rows without an event time, malformed records.
  int late = 0, no_time = 0, broken = 0;
  for (const std::string& d : one.dead) {
    late += d.find("late") != std::string::npos;
    no_time += d.find("event time is NULL") != std::string::npos;
    broken += d.find("late") == std::string::npos && d.find("NULL") == std::string::npos;
  }
  EXPECT_GT(late, 100);
  EXPECT_EQ(no_time, no_time_);
  EXPECT_EQ(broken, broken_);
  for (int parallelism : {2, 3}) {
    SCOPED_TRACE(fmt::format("parallelism {}", parallelism));
    Outcome many = Run(parallelism);
    EXPECT_EQ(many.rows, one.rows);
    EXPECT_EQ(many.dead, one.dead);
    EXPECT_EQ(many.watermark, one.watermark);
    EXPECT_EQ(many.groups, one.groups) << "the open windows";
  }
}

// The window stage writes the windows' files and the dead letters beside the
// lanes: the n-th file it creates, or the n-th append, fails there. The error
// must come out of the next checkpoint (naming the fault) with nothing of it
// committed, and a restart must catch up to the rows of a run without faults.
TEST_P(WindowLanesTest, AWriteThatFailsOnTheWindowStageFailsTheCheckpointAndTheRestartCatchesUp) {
  Outcome want = Run(1, /*restart=*/false);
  ASSERT_GT(want.rows.size(), 50u);
  int failed = 0;
  for (FileOp op : {FileOp::kOpenOutput, FileOp::kAppend}) {
    for (int64_t nth : {1, 5}) {  // the first call, and one of a later file
      SCOPED_TRACE(fmt::format("call {} of {} fails", nth, FileOpName(op)));
      std::optional<PipelineOptions> o = Prepare(2);
      ASSERT_TRUE(o);
      ProduceEvents(0, 30'000);
      auto p = Open(*o);
      ASSERT_OK(p.status());
      faults_.ResetCounts();
      faults_.FailNth(op, nth);
      Status st = TryConsume(**p);
      if (st.ok()) st = (*p)->Checkpoint();
      faults_.Heal();
      if (!st.ok()) {
        ++failed;
        EXPECT_NE(st.message().find("(injected)"), std::string::npos) << st.ToString();
      }
      p->reset();  // the process ends with the fault
      ExpectRestartCatchesUp(*o, want);
    }
  }
  EXPECT_GT(failed, 0) << "no fault hit a write the run needed";
}

// A window stage that fails once stays failed: the batches after it were
// skipped, so the run must fail its next batch or checkpoint and every later
// checkpoint, committing nothing of the run; a restart catches up.
TEST_P(WindowLanesTest, AWindowStageThatFailsFailsEveryLaterCheckpointOfItsRun) {
  ExpectAFailedStageFailsItsRun("window_stage.batch", 3);  // the third batch the stage takes
}

// Likewise its write stage (the window rows' writes, on a thread of their own).
TEST_P(WindowLanesTest, AWriteStageThatFailsFailsEveryLaterCheckpointOfItsRun) {
  ExpectAFailedStageFailsItsRun("write_stage.batch", 2);  // the second batch of window rows
}

INSTANTIATE_TEST_SUITE_P(
    Kinds, WindowLanesTest,
    ::testing::Values(
        WindowCase{"tumble",
                   "SELECT window_start, window_end, k, count(*), sum(v) "
                   "FROM TUMBLE(ev, ts, INTERVAL '1' SECOND) "
                   "GROUP BY window_start, window_end, k"},
        WindowCase{"hop",
                   "SELECT window_start, window_end, k, count(*), sum(v) "
                   "FROM HOP(ev, ts, INTERVAL '500' MILLISECOND, INTERVAL '2' SECOND) "
                   "GROUP BY window_start, window_end, k"},
        // WHERE drops rows before the window: a late row's dead letter is found
        // through the rows WHERE kept (Collect checks its payload). Rows without an
        // event time pass, to be counted.
        WindowCase{"hop_where",
                   "SELECT window_start, window_end, k, count(*), sum(v) "
                   "FROM HOP(ev, ts, INTERVAL '500' MILLISECOND, INTERVAL '2' SECOND) "
                   "WHERE ts IS NULL OR id % 7 <> 3 "
                   "GROUP BY window_start, window_end, k"},
        WindowCase{"session",
                   "SELECT window_start, window_end, k, count(*), sum(v) "
                   "FROM SESSION(ev, ts, INTERVAL '40' MILLISECOND) "
                   "GROUP BY window_start, window_end, k"},
        WindowCase{"tumble_without_keys",
                   "SELECT window_start, window_end, 'all', count(*), sum(v) "
                   "FROM TUMBLE(ev, ts, INTERVAL '1' SECOND) "
                   "GROUP BY window_start, window_end"}),
    [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace sluice::pipeline
