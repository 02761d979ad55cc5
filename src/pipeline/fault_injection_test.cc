// Storage faults everywhere a pipeline touches table files: for each kind of call
// (open, read, create, write, close = fsync + rename, exists, delete, list) and a
// spread of its occurrences, the n-th call fails (EIO or ENOSPC) during a
// checkpoint, a recovery, a row delete or a dead-letter replay. Each case must end
// in a clean error naming the injected fault (or succeed, when the call was not
// needed), leave every committed snapshot readable, and, once the storage works
// again, recover to exactly-once: every record of the log in the table once.
#include <algorithm>
#include <filesystem>
#include <functional>
#include <set>
#include <thread>

#include "catalog/row_delete.h"
#include "common/kill_point.h"
#include "common/testing.h"
#include "iceberg/scan.h"
#include "pipeline/dead_letter_replay.h"
#include "pipeline/test_util.h"
#include "runtime/runtime.h"
#include "sql/parser.h"

namespace sluice::pipeline {
namespace {

namespace fs = std::filesystem;

constexpr FileOp kOps[] = {FileOp::kOpenInput, FileOp::kRead,  FileOp::kOpenOutput,
                           FileOp::kAppend,    FileOp::kClose, FileOp::kExists,
                           FileOp::kDelete,    FileOp::kList};

// Which occurrences of a call to fail: all of the first few, then a spread.
std::vector<int64_t> Occurrences(int64_t calls) {
  std::vector<int64_t> out;
  for (int64_t n = 1; n <= calls && n <= 6; ++n) out.push_back(n);
  for (int64_t step = 1; step <= 6 && calls > 6; ++step) {
    int64_t n = 6 + (calls - 6) * step / 6;
    if (out.back() != n) out.push_back(n);
  }
  return out;
}

class PipelineFaultTest : public testing::PipelineFixture {
 protected:
  struct Scenario {
    std::function<void()> prepare;  // without faults
    std::function<Status()> step;   // the part that runs with one fault
    std::function<void()> recover;  // after the fault, storage healed: must succeed
    std::function<void()> verify;   // the end state
  };

  // Counts the calls of `step`, then runs it once per (kind, occurrence) with that
  // call failing, alternating EIO and ENOSPC.
  void Sweep(const std::string& name, const Scenario& s) {
    Reset();
    s.prepare();
    faults_.ResetCounts();
    ASSERT_OK(s.step());
    std::array<int64_t, kFileOpCount> calls{};
    for (FileOp op : kOps) calls[static_cast<int>(op)] = faults_.calls(op);
    s.recover();
    s.verify();
    int cases = 0, failed_cleanly = 0;
    for (FileOp op : kOps) {
      for (int64_t n : Occurrences(calls[static_cast<int>(op)])) {
        SCOPED_TRACE(fmt::format("{}: call {} of {} fails", name, n, FileOpName(op)));
        Reset();
        s.prepare();
        if (HasFatalFailure()) return;
        faults_.ResetCounts();
        auto kind =
            cases % 2 ? FaultInjectingFileIO::Kind::kNoSpace : FaultInjectingFileIO::Kind::kEio;
        faults_.FailNth(op, n, kind);
        Status st = s.step();
        if (!st.ok()) {
          ++failed_cleanly;
          EXPECT_NE(st.message().find("(injected)"), std::string::npos)
              << "the error does not name its cause: " << st.ToString();
        }
        faults_.Heal();
        ExpectEverySnapshotReadable();
        s.recover();
        s.verify();
        ++cases;
        if (HasFatalFailure()) return;
      }
    }
    std::printf("%s: %d fault cases, %d ended in a clean error, all recovered\n", name.c_str(),
                cases, failed_cleanly);
    EXPECT_GT(failed_cleanly, 0);
  }

  // Every snapshot of the target table scans (time travel to each).
  void ExpectEverySnapshotReadable() {
    auto t = catalog::Table::Load(*catalog_, *io_, target_);
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    auto md = std::make_shared<const iceberg::TableMetadata>((*t)->metadata());
    for (const auto& snap : md->snapshots) {
      iceberg::ScanOptions o;
      o.snapshot_id = snap.snapshot_id;
      auto scan = iceberg::TableScan::Make(*io_, md, o);
      ASSERT_TRUE(scan.ok()) << "snapshot " << snap.snapshot_id << ": " << scan.status().ToString();
      Batch b;
      for (;;) {
        auto more = (*scan)->Next(&b);
        ASSERT_TRUE(more.ok()) << "snapshot " << snap.snapshot_id << ": "
                               << more.status().ToString();
        if (!*more) break;
      }
    }
  }

  // No data file under the table's folder that the current snapshot does not
  // reference (a fault must not leave garbage behind once recovery ran).
  void ExpectNoUnreferencedDataFiles() {
    auto t = catalog::Table::Load(*catalog_, *io_, target_);
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    auto strip = [](std::string p) { return p.starts_with("file://") ? p.substr(7) : p; };
    std::set<std::string> live;  // the data files of any snapshot
    auto md = std::make_shared<const iceberg::TableMetadata>((*t)->metadata());
    for (const auto& snap : md->snapshots) {
      iceberg::ScanOptions o;
      o.snapshot_id = snap.snapshot_id;
      auto scan = iceberg::TableScan::Make(*io_, md, o);
      ASSERT_TRUE(scan.ok()) << scan.status().ToString();
      ASSERT_OK((*scan)->Plan());
      for (const auto& task : (*scan)->tasks()) live.insert(strip(task.file.file_path));
    }
    auto listed = local_->List(strip(md->location + "/data"));
    ASSERT_TRUE(listed.ok()) << listed.status().ToString();
    for (const auto& path : *listed) {
      if (!path.ends_with(".parquet")) continue;
      EXPECT_TRUE(live.count(strip(path))) << "unreferenced data file " << path;
    }
  }

  // A run of the pipeline: open (recovering), read everything, checkpoint.
  Status OpenConsumeCheckpoint() {
    ASSIGN_OR_RETURN(pipeline_, Open(Options()));
    RETURN_IF_ERROR(TryConsume(*pipeline_));
    return pipeline_->Checkpoint();
  }
  // The process restarts after the fault and catches up.
  void RestartAndCatchUp() {
    pipeline_.reset();
    ASSERT_OK(OpenConsumeCheckpoint());
    pipeline_.reset();
  }

  std::unique_ptr<Pipeline> pipeline_;
};

TEST_F(PipelineFaultTest, CheckpointFaultsEndCleanAndRecoverExactlyOnce) {
  Sweep("checkpoint", {.prepare = [&] { Produce(0, 100); },
                       .step = [&] { return OpenConsumeCheckpoint(); },
                       .recover = [&] { RestartAndCatchUp(); },
                       .verify =
                           [&] {
                             EXPECT_EQ(Ids(), Range(0, 100));
                             EXPECT_TRUE(Rows(DeadLetterTable(target_)).empty());
                             ExpectNoUnreferencedDataFiles();
                           }});
}

TEST_F(PipelineFaultTest, RecoveryFaultsEndCleanAndRecoverExactlyOnce) {
  Sweep("recovery",
        {.prepare =
             [&] {
               Produce(0, 60);
               ASSERT_OK_AND_ASSIGN(auto p, Open(Options()));
               Consume(*p);
               ASSERT_OK(p->Checkpoint());
               Produce(60, 120);
               Consume(*p);  // files staged, then the process dies before its checkpoint
             },
         .step = [&] { return OpenConsumeCheckpoint(); },  // recovers first
         .recover = [&] { RestartAndCatchUp(); },
         .verify =
             [&] {
               EXPECT_EQ(Ids(), Range(0, 120));
               ExpectNoUnreferencedDataFiles();
             }});
}

// A row delete is one commit: after a fault the table has all the rows or none of
// the deleted ones, never a part, and a retry deletes them.
TEST_F(PipelineFaultTest, RowDeleteFaultsAreAllOrNothing) {
  Sweep("row delete",
        {.prepare =
             [&] {
               Produce(0, 100);
               ASSERT_OK_AND_ASSIGN(auto p, Open(Options()));
               Consume(*p);
               ASSERT_OK(p->Checkpoint());
             },
         .step = [&]() -> Status {
           ASSIGN_OR_RETURN(auto t, catalog::Table::Load(*catalog_, *io_, target_));
           return catalog::DeleteWhere(*t, "id >= 50").status();
         },
         .recover =
             [&] {
               auto ids = Ids();
               EXPECT_TRUE(ids == Range(0, 100) || ids == Range(0, 50)) << ids.size() << " rows";
               ASSERT_OK_AND_ASSIGN(auto t, catalog::Table::Load(*catalog_, *io_, target_));
               ASSERT_OK(catalog::DeleteWhere(*t, "id >= 50").status());
             },
         .verify = [&] { EXPECT_EQ(Ids(), Range(0, 50)); }});
}

// Dead-letter replay deletes and rewrites dead letters in one commit: after a
// fault every dead letter is still there exactly once, and the table is unchanged.
TEST_F(PipelineFaultTest, DeadLetterReplayFaultsLoseNoDeadLetter) {
  auto dead_offsets = [&] {
    std::multiset<std::string> offsets;
    for (const auto& row : Rows(DeadLetterTable(target_))) {
      size_t at = row.find("\"offset\":");
      offsets.insert(row.substr(at, row.find(',', at) - at));
    }
    return offsets;
  };
  std::multiset<std::string> want;
  Sweep("dead-letter replay",
        {.prepare =
             [&] {
               ASSERT_OK(log_->Append({Event(0), R"({"user_id":5})", Event(1), "not json",
                                       R"({"id":"x"})", Event(2)})
                             .status());
               ASSERT_OK_AND_ASSIGN(auto p, Open(Options()));
               Consume(*p);
               ASSERT_OK(p->Checkpoint());
               want = dead_offsets();
               ASSERT_EQ(want.size(), 3u);
             },
         .step = [&]() -> Status {
           return ReplayDeadLetters(*catalog_, *io_, Options(), "", false).status();
         },
         .recover =
             [&] {
               EXPECT_EQ(dead_offsets(), want);
               EXPECT_EQ(Ids(), Range(0, 3));
               ASSERT_OK_AND_ASSIGN(auto r,
                                    ReplayDeadLetters(*catalog_, *io_, Options(), "", false));
               EXPECT_EQ(r.still_failing, 3);
             },
         .verify =
             [&] {
               EXPECT_EQ(dead_offsets(), want);
               EXPECT_EQ(Ids(), Range(0, 3));
             }});
}

// A lane that fails drops its batch, whose records lie before the source's
// positions by then: the run must fail that step or checkpoint and every later
// one, committing nothing past the dropped records, even when nothing else (a
// writer, the key index) remembers the error; a restart reads them anew,
// exactly once. One lane on the pipeline's thread, or lanes on a pool.
TEST_F(PipelineFaultTest, ALaneThatFailsFailsEveryLaterCheckpointOfItsRun) {
  for (int parallelism : {1, 2}) {
    SCOPED_TRACE(fmt::format("parallelism {}", parallelism));
    Reset();
    Produce(0, 5'000);
    PipelineOptions o = Options();
    o.parallelism = parallelism;
    ASSERT_OK_AND_ASSIGN(pipeline_, Open(o));
    ArmFailPoint("pipeline.lane");  // the first run of records a lane takes
    Status st = TryConsume(*pipeline_);
    // (The lanes of a pool report at the next batch, or at the checkpoint.)
    if (st.ok()) st = pipeline_->Checkpoint();
    ArmFailPoint("");
    ASSERT_FALSE(st.ok()) << "the lane's failure was lost";
    EXPECT_NE(st.message().find("pipeline.lane"), std::string::npos) << st.ToString();
    Status again = pipeline_->Checkpoint();
    EXPECT_FALSE(again.ok()) << "a run whose lane dropped a batch checkpointed past it";
    EXPECT_TRUE(Ids().empty()) << "the failed run committed rows";
    RestartAndCatchUp();
    EXPECT_EQ(Ids(), Range(0, 5'000));
    ExpectEverySnapshotReadable();
  }
}

// `sluice run` on a disk that fills up: the pipeline's commits fail, it is
// restarted in place with a backoff (no process exit, no crash loop), /healthz
// says so, ingest keeps being acknowledged into the log, and once the disk has
// room again every acknowledged record is in the table exactly once.
TEST_F(PipelineFaultTest, RuntimeRestartsAFailingPipelineInPlaceUntilStorageHeals) {
  auto script = sql::ParseScript(
      "CREATE TABLE lake.events (id BIGINT NOT NULL, user_id BIGINT, kind STRING, ts TIMESTAMPTZ)"
      "  PARTITIONED BY (day(ts));"
      "CREATE SOURCE events_in (id BIGINT, user_id BIGINT, kind STRING, ts TIMESTAMPTZ)"
      "  WITH (connector = 'http') FORMAT JSON;"
      "CREATE PIPELINE load_events WITH (commit_interval = '100ms') AS"
      "  INSERT INTO lake.events SELECT * FROM events_in;");
  ASSERT_OK(script.status());
  runtime::RuntimeOptions o;
  o.warehouse = warehouse_;
  o.state_dir = (dir_ / "state").string();
  o.retry_initial_ms = 20;
  o.retry_max_ms = 200;
  ASSERT_OK_AND_ASSIGN(auto rt, runtime::Runtime::Make(*catalog_, *io_, o, *script));
  ASSERT_OK(rt->Start());
  log::StreamLog* stream = rt->FindStream("events_in");
  ASSERT_NE(stream, nullptr);
  auto append = [&](int64_t from, int64_t to) {
    std::vector<std::string> recs;
    for (int64_t i = from; i < to; ++i) recs.push_back(Event(i));
    ASSERT_OK(stream->Append(recs).status());
  };
  auto eventually = [&](const std::function<bool()>& done) {
    for (int i = 0; i < 500 && !done(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return done();
  };
  append(0, 50);
  ASSERT_TRUE(eventually([&] { return Ids() == Range(0, 50); }));
  EXPECT_FALSE(rt->Unhealthy());

  faults_.FailAll(FileOp::kClose, FaultInjectingFileIO::Kind::kNoSpace);  // the disk is full
  append(50, 100);  // still acknowledged: the log is elsewhere
  ASSERT_TRUE(eventually([&] {
    auto problem = rt->Unhealthy();
    return problem && problem->find("restarting") != std::string::npos;
  })) << rt->StatusJson();
  std::this_thread::sleep_for(std::chrono::milliseconds(600));  // a few restarts
  EXPECT_FALSE(rt->stopping()) << "a storage failure stopped the runtime";
  EXPECT_TRUE(rt->Unhealthy()) << "healthy again while every commit still fails";
  std::string status = rt->StatusJson();
  EXPECT_NE(status.find("No space left on device (injected)"), std::string::npos) << status;
  EXPECT_NE(status.find("\"retrying\":true"), std::string::npos) << status;
  EXPECT_EQ(Ids(), Range(0, 50));

  faults_.Heal();
  ASSERT_TRUE(eventually([&] { return Ids() == Range(0, 100); })) << rt->StatusJson();
  ASSERT_TRUE(eventually([&] { return !rt->Unhealthy(); })) << *rt->Unhealthy();
  EXPECT_NE(rt->MetricsText().find("sluice_pipeline_restarts_total{pipeline=\"load_events\"} "),
            std::string::npos);
  rt->RequestStop();
  ASSERT_OK(rt->Wait());
  EXPECT_EQ(Ids(), Range(0, 100));
  ExpectNoUnreferencedDataFiles();
}

}  // namespace
}  // namespace sluice::pipeline
