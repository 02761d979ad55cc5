#include "pipeline/pipeline.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>

#include "columnar/sql_schema.h"
#include "common/testing.h"
#include "iceberg/table_builder.h"
#include "log/stream_log.h"
#include "pipeline/bind.h"
#include "pipeline/test_util.h"
#include "sources/log_source.h"
#include "sql/parser.h"

namespace sluice::pipeline {
namespace {

namespace fs = std::filesystem;
using catalog::Table;
using catalog::TableIdent;

class PipelineTest : public testing::PipelineFixture {};

TEST_F(PipelineTest, CheckpointCarriesOffsetsAndRestartResumesExactlyOnce) {
  Produce(0, 60);
  {
    ASSERT_OK_AND_ASSIGN(auto p, Open(Options()));
    EXPECT_EQ(p->stats().epoch.load(), 1);
    Consume(*p);
    ASSERT_OK(p->Checkpoint());
    EXPECT_EQ(p->stats().records_committed.load(), 60);
    ASSERT_OK(p->Checkpoint());  // nothing new: no snapshot
  }
  EXPECT_EQ(Ids(), Range(0, 60));
  const iceberg::Snapshot* s = Current();
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->summary.at("sluice.pipeline"), "load_events");
  EXPECT_EQ(s->summary.at("sluice.epoch"), "1");
  EXPECT_EQ(s->summary.at("sluice.checkpoint"), "1");
  EXPECT_EQ(s->summary.at("sluice.offsets"), R"({"events_in":{"0":60}})");
  EXPECT_EQ(table_->metadata().snapshots.size(), 1u);

  Produce(60, 100);
  {
    ASSERT_OK_AND_ASSIGN(auto p, Open(Options()));
    EXPECT_EQ(p->stats().epoch.load(), 2);
    EXPECT_EQ(p->committed_positions().at("0"), 60);
    Consume(*p);
    ASSERT_OK(p->Checkpoint());
  }
  EXPECT_EQ(Ids(), Range(0, 100));
  EXPECT_EQ(Current()->summary.at("sluice.checkpoint"), "2");
  EXPECT_EQ(Current()->summary.at("sluice.offsets"), R"({"events_in":{"0":100}})");
}

// A run that died after staging files leaves them in its journal: recovery
// deletes those of checkpoints the table does not show as committed (with
// their temporary siblings: files still being written), keeps the committed
// ones, and the records are committed once. (Real kill -9 runs:
// tests/pipeline_crash_test.sh.)
TEST_F(PipelineTest, RecoveryDeletesStagedFilesOfUncommittedCheckpoints) {
  Produce(0, 50);
  {
    ASSERT_OK_AND_ASSIGN(auto p, Open(Options()));
    Consume(*p);
    ASSERT_OK(p->Checkpoint());  // checkpoint 1
  }
  std::string data = catalog::DefaultTableLocation(warehouse_, target_) + "/data";
  std::string committed;
  for (const auto& e : fs::recursive_directory_iterator(data.substr(7))) {
    if (e.is_regular_file()) committed = "file://" + e.path().string();
  }
  ASSERT_FALSE(committed.empty());
  std::string staged = data + "/ts_day=2024-01-02/00000-crashed.parquet";
  std::string partial = data + "/00001-crashed.parquet";
  std::string zombie = data + "/00000-zombie.parquet";
  {
    ASSERT_OK_AND_ASSIGN(auto j, StagedJournal::Open(Options().state_dir + "/staged.journal"));
    ASSERT_OK(j->Record(1, 1, committed));  // the crash came after the commit: keep
    ASSERT_OK(j->Record(1, 2, staged));
    ASSERT_OK(j->Record(1, 2, partial));
    // A fenced run (epoch 7) staged a file under the committed checkpoint's
    // number: it is not the committed one.
    ASSERT_OK(j->Record(7, 1, zombie));
    ASSERT_OK(io_->WriteFile(zombie, "staged by a fenced run"));
    ASSERT_OK(io_->WriteFile(staged, "staged but never committed"));
    ASSERT_OK(io_->WriteFile(partial + ".tmp-123-0", "half written"));
  }
  Produce(50, 120);
  {
    ASSERT_OK_AND_ASSIGN(auto p, Open(Options()));
    EXPECT_FALSE(io_->Exists(staged).ValueOr(true)) << "staged file survived recovery";
    EXPECT_FALSE(io_->Exists(partial + ".tmp-123-0").ValueOr(true));
    EXPECT_FALSE(io_->Exists(zombie).ValueOr(true)) << "a fenced run's file survived";
    EXPECT_TRUE(io_->Exists(committed).ValueOr(false)) << "recovery deleted a committed file";
    Consume(*p);
    ASSERT_OK(p->Checkpoint());
  }
  EXPECT_EQ(Ids(), Range(0, 120));
  ASSERT_OK_AND_ASSIGN(auto j, StagedJournal::Open(Options().state_dir + "/staged.journal"));
  EXPECT_TRUE(j->entries().empty());
}

TEST_F(PipelineTest, MalformedRecordsGoToTheDeadLetterTableInTheSameCheckpoint) {
  ASSERT_OK(log_->Append({Event(1), R"({"id":"x","kind":"a"})", "not json at all",
                          R"({"user_id":5})", Event(2), R"({"id":3,"ts":"yesterday"})"})
                .status());
  {
    ASSERT_OK_AND_ASSIGN(auto p, Open(Options()));
    Consume(*p);
    ASSERT_OK(p->Checkpoint());
    EXPECT_EQ(p->stats().dead_letters_committed.load(), 4);
    EXPECT_EQ(p->stats().records_committed.load(), 2);
  }
  EXPECT_EQ(Ids(), (std::multiset<int64_t>{1, 2}));
  auto dead = Rows(DeadLetterTable(target_));
  ASSERT_EQ(dead.size(), 4u);
  std::string all;
  for (const auto& d : dead) all += d + "\n";
  for (const char* want : {R"("offset":1)", R"("offset":2)", R"("offset":3)", R"("offset":5)",
                           R"(\"id\":\"x\")", "not json at all", R"("source":"log:events_in")",
                           R"("pipeline":"load_events")", "field id", "field ts"}) {
    EXPECT_NE(all.find(want), std::string::npos) << want << " not in\n" << all;
  }
  // Both tables' snapshots belong to the same checkpoint.
  ASSERT_OK_AND_ASSIGN(auto dlq, Table::Load(*catalog_, *io_, DeadLetterTable(target_)));
  EXPECT_EQ(dlq->metadata().current_snapshot()->summary.at("sluice.checkpoint"), "1");
  EXPECT_EQ(Current()->summary.at("sluice.checkpoint"), "1");
}

// An older run that is still alive (a zombie) can never commit once a newer
// run has started; the newer run commits everything exactly once.
TEST_F(PipelineTest, ZombieRunIsFenced) {
  Produce(0, 40);
  PipelineOptions zo = Options();
  zo.state_dir += "-zombie-host";  // the zombie runs elsewhere, with its own journal
  ASSERT_OK_AND_ASSIGN(auto zombie, Open(zo));
  Consume(*zombie);
  {
    ASSERT_OK_AND_ASSIGN(auto p, Open(Options()));
    Consume(*p);
    ASSERT_OK(p->Checkpoint());
  }
  ASSERT_ERROR(zombie->Checkpoint(), StatusCode::kFenced, "epoch 2 has taken over");
  EXPECT_EQ(zombie->stats().commit_failures.load(), 1);
  EXPECT_EQ(Ids(), Range(0, 40));
}

// With two lanes, a checkpoint the commit interval calls for closes its files
// and commits on the committer thread while the next records are read: the
// checkpoints still commit one at a time, in order, each record once.
TEST_F(PipelineTest, CheckpointsCommittedInTheBackgroundCommitEveryRecordOnceAndInOrder) {
  Produce(0, 300);
  PipelineOptions o = Options(1);
  o.parallelism = 2;
  o.poll_bytes = 500;  // a few records per Step, and a checkpoint begun after each
  {
    ASSERT_OK_AND_ASSIGN(auto p, Open(o));
    Consume(*p);
    ASSERT_OK(p->Checkpoint());  // waits for the one in the background, then commits the rest
    EXPECT_GT(p->stats().commits.load(), 5);
    EXPECT_EQ(p->stats().records_committed.load(), 300);
    EXPECT_EQ(p->stats().commit_failures.load(), 0);
  }
  EXPECT_EQ(Ids(), Range(0, 300));
  int64_t checkpoint = 0, offset = 0;
  ASSERT_NE(Current(), nullptr);  // (loads table_)
  for (const auto& s : table_->metadata().snapshots) {
    EXPECT_EQ(std::stoll(s.summary.at("sluice.checkpoint")), ++checkpoint);
    auto offsets = nlohmann::json::parse(s.summary.at("sluice.offsets"));
    int64_t at = offsets["events_in"]["0"].get<int64_t>();
    EXPECT_GT(at, offset) << "checkpoint " << checkpoint;
    offset = at;
  }
  EXPECT_EQ(offset, 300);
  ASSERT_OK_AND_ASSIGN(auto j, StagedJournal::Open(o.state_dir + "/staged.journal"));
  EXPECT_TRUE(j->entries().empty());
}

// A plain append's lanes claim records in runs: a lane stalled in its first
// run (its projection waits) leaves the rest of the batch to the other lane
// instead of the half it would have been given.
TEST_F(PipelineTest, APlainAppendsLanesClaimRecordsSoAStalledLaneHoldsUpOnlyItsRun) {
  std::vector<std::string> records;
  for (int i = 0; i < 5000; ++i) {
    records.push_back(
        fmt::format(R"({{"id":{},"user_id":1,"kind":"k","ts":"2024-01-01T10:00:00Z"}})", i));
  }
  for (int i = 0; i < 5; ++i) records.push_back("not json");  // in the last chunk
  ASSERT_OK(log_->Append(records).status());
  PipelineOptions o = Options();
  o.parallelism = 2;
  // The first run projected waits until every other row was (the other
  // lane's, in claims that shrink as the batch runs out), or 20 s: with
  // halves, the other lane would project its half and wait.
  struct Gate {
    std::mutex mu;
    std::condition_variable cv;
    int64_t rows = 0;
    int64_t stalled = 0;        // the rows of the run that waited
    std::vector<int64_t> runs;  // the rows of each run projected
  };
  auto gate = std::make_shared<Gate>();
  o.projection = [gate](Batch&& rows, std::vector<sql::RejectedRow>*) -> Result<Batch> {
    std::unique_lock<std::mutex> lock(gate->mu);
    gate->rows += rows.num_rows();
    gate->runs.push_back(rows.num_rows());
    if (gate->stalled == 0) {
      gate->stalled = rows.num_rows();
      gate->cv.wait_for(lock, std::chrono::seconds(20), [&] { return gate->rows >= 5000; });
    }
    gate->cv.notify_all();
    return std::move(rows);
  };
  {
    ASSERT_OK_AND_ASSIGN(auto p, Open(o));
    Consume(*p);
    ASSERT_OK(p->Checkpoint());
    EXPECT_EQ(p->stats().records_committed.load(), 5000);  // rows; the 5 others dead letters
  }
  EXPECT_EQ(Ids(), Range(0, 5000));
  EXPECT_EQ(Rows(DeadLetterTable(target_)).size(), 5u);
  // One file per lane (one partition): the stalled lane's holds its one
  // run's rows (the first or second claim: 1,024 or 995), the other's the rest.
  const iceberg::Snapshot* current = Current();  // (loads table_)
  ASSERT_NE(current, nullptr);
  ASSERT_OK_AND_ASSIGN(auto files, table_->LiveFiles(current->snapshot_id));
  std::vector<int64_t> counts;
  for (const auto& e : files) counts.push_back(e.file.record_count);
  std::sort(counts.begin(), counts.end());
  const int64_t stalled = gate->stalled;
  EXPECT_TRUE(stalled == 1024 || stalled == 995) << stalled;
  EXPECT_EQ(counts, (std::vector<int64_t>{stalled, 5000 - stalled}));
  // The runs shrink as the batch runs out (ClaimRun: a quarter of what is
  // left, down to 128); the last, of 143 records, holds the 5 dead letters.
  std::sort(gate->runs.begin(), gate->runs.end());
  EXPECT_EQ(gate->runs,
            (std::vector<int64_t>{128, 128, 133, 138, 177, 236, 315, 420, 560, 746, 995, 1024}));
}

// A checkpoint that fails in the background fails the call that takes its
// outcome and every call after it: the run must be reopened, and recovery
// finds what committed.
TEST_F(PipelineTest, ACheckpointThatFailsInTheBackgroundFailsTheRunForGood) {
  Produce(0, 40);
  PipelineOptions zo = Options(1);
  zo.parallelism = 2;
  zo.state_dir += "-zombie-host";
  ASSERT_OK_AND_ASSIGN(auto zombie, Open(zo));
  Consume(*zombie);
  ASSERT_OK(zombie->Checkpoint());
  {
    ASSERT_OK_AND_ASSIGN(auto p, Open(Options()));  // fences the zombie
    Produce(40, 60);
    Consume(*p);
    ASSERT_OK(p->Checkpoint());
  }
  Produce(60, 70);
  // Its Step reads the new records and begins a checkpoint, whose commit the
  // fence refuses in the background.
  ASSERT_OK(zombie->Step(0).status());
  ASSERT_ERROR(zombie->Checkpoint(), StatusCode::kFenced, "epoch 2 has taken over");
  ASSERT_ERROR(zombie->Step(0).status(), StatusCode::kFenced, "checkpoint 2");
  ASSERT_ERROR(zombie->Checkpoint(), StatusCode::kFenced, "epoch 2 has taken over");
  EXPECT_EQ(zombie->stats().commit_failures.load(), 1);
  EXPECT_EQ(zombie->stats().commits.load(), 1);
  zombie.reset();
  EXPECT_EQ(Ids(), Range(0, 60));
  {
    ASSERT_OK_AND_ASSIGN(auto p, Open(Options()));
    Consume(*p);
    ASSERT_OK(p->Checkpoint());
  }
  EXPECT_EQ(Ids(), Range(0, 70));
}

// A checkpoint that failed once it took the lanes' files (here in line, one
// thread: a data file's fsync fails) leaves the run unable to checkpoint
// again, since a retry would commit the offsets without the rows; the
// restart commits every record once.
TEST_F(PipelineTest, ACheckpointThatFailedInLineFailsEveryLaterCallAndTheRestartCommitsOnce) {
  Produce(0, 50);
  PipelineOptions o = Options();
  o.parallelism = 1;
  {
    ASSERT_OK_AND_ASSIGN(auto p, Open(o));
    Consume(*p);
    faults_.FailNth(FileOp::kClose, 1);
    ASSERT_ERROR(p->Checkpoint(), StatusCode::kIOError, "checkpoint 1");
    faults_.Heal();
    Produce(50, 60);
    ASSERT_ERROR(p->Step(0).status(), StatusCode::kIOError, "checkpoint 1");
    ASSERT_ERROR(p->Checkpoint(), StatusCode::kIOError, "checkpoint 1");
    EXPECT_EQ(p->stats().commits.load(), 0);
    EXPECT_EQ(p->stats().commit_failures.load(), 1);
  }
  EXPECT_EQ(Current(), nullptr);
  {
    ASSERT_OK_AND_ASSIGN(auto p, Open(o));
    Consume(*p);
    ASSERT_OK(p->Checkpoint());
  }
  EXPECT_EQ(Ids(), Range(0, 60));
}

// A micro-batch (one long interval, a checkpoint at shutdown) gives the same
// table content as a checkpoint every few records.
TEST_F(PipelineTest, MicroBatchEqualsContinuous) {
  Produce(0, 200);
  {
    PipelineOptions c = Options(1);
    c.poll_bytes = 500;  // a few records per poll, a checkpoint after each
    ASSERT_OK_AND_ASSIGN(auto p, Open(c));
    while (p->source().Lag().at("0") > 0) {
      ASSERT_OK(p->Step(0).status());
      ASSERT_OK(p->Checkpoint());
    }
    EXPECT_GT(p->stats().commits.load(), 10);
  }
  auto continuous = Rows(target_);
  // Same input through a second table as one micro-batch.
  TableIdent other{{"lake"}, "events_batch"};
  ASSERT_OK_AND_ASSIGN(
      auto md,
      iceberg::NewTableMetadata(
          *schema_, *iceberg::ParsePartitionSpec("day(ts)", *schema_), iceberg::SortOrder{},
          catalog::DefaultTableLocation(warehouse_, other), iceberg::NewTableOptions{}));
  ASSERT_OK(Table::Create(*catalog_, *io_, other, md).status());
  ASSERT_OK(EnsureDeadLetterTable(*catalog_, *io_, warehouse_, other));
  PipelineOptions o = Options(15 * 60 * 1000);
  o.name = "batch";
  o.target = other;
  o.state_dir = (dir_ / "state" / "batch").string();
  {
    ASSERT_OK_AND_ASSIGN(auto p, Open(o));
    p->RequestStop();
    Consume(*p);
    ASSERT_OK(p->Run());  // stop requested: the final checkpoint
    EXPECT_EQ(p->stats().commits.load(), 1);
  }
  EXPECT_EQ(Rows(other), continuous);
  EXPECT_EQ(continuous.size(), 200u);
}

// Offsets are kept per source name: a pipeline whose source was renamed would
// read it again from its start, so it is refused.
TEST_F(PipelineTest, RenamedSourceIsRefused) {
  Produce(0, 10);
  {
    ASSERT_OK_AND_ASSIGN(auto p, Open(Options()));
    Consume(*p);
    ASSERT_OK(p->Checkpoint());
  }
  PipelineOptions o = Options();
  o.source_name = "renamed_in";
  ASSERT_ERROR(Open(o), StatusCode::kInvalidArgument, "source(s) events_in, not for renamed_in");
  EXPECT_EQ(Ids(), Range(0, 10));
  // The refused run did not take an epoch: it fenced no healthy run.
  Current();
  EXPECT_EQ(CurrentEpoch(table_->metadata(), "load_events").ValueOr(-1), 1);
}

// Snapshot expiry (by any engine) may remove the pipeline's snapshots from the
// ancestry: the offsets survive in the table property written by the same
// commits, so a restart neither re-reads nor skips anything.
TEST_F(PipelineTest, ResumesFromThePropertyWhenItsSnapshotsExpired) {
  Produce(0, 30);
  {
    ASSERT_OK_AND_ASSIGN(auto p, Open(Options()));
    Consume(*p);
    ASSERT_OK(p->Checkpoint());
  }
  // Expire every snapshot (the data files stay, as after an expiry that kept
  // them for a newer snapshot; here the table just forgets them).
  ASSERT_OK_AND_ASSIGN(auto t, Table::Load(*catalog_, *io_, target_));
  ASSERT_OK(
      t->UpdateMetadata([](const iceberg::TableMetadata& base) -> Result<iceberg::TableMetadata> {
        iceberg::TableMetadata next = base;
        next.snapshots.clear();
        next.snapshot_log.clear();
        next.refs.clear();
        next.current_snapshot_id.reset();
        return next;
      }));
  ASSERT_OK_AND_ASSIGN(auto found, FindCheckpoint(t->metadata(), "load_events"));
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found.value().checkpoint, 1);
  EXPECT_EQ(found.value().snapshot_id, 0);  // from the property
  Produce(30, 45);
  {
    ASSERT_OK_AND_ASSIGN(auto p, Open(Options()));
    EXPECT_EQ(p->committed_positions().at("0"), 30);
    Consume(*p);
    ASSERT_OK(p->Checkpoint());
  }
  EXPECT_EQ(Ids(), Range(30, 45));  // only the new events: nothing read twice
  EXPECT_EQ(Current()->summary.at("sluice.checkpoint"), "2");
}

TEST_F(PipelineTest, BadConfigurationIsRefused) {
  PipelineOptions o = Options();
  o.commit_interval_ms = 0;
  ASSERT_ERROR(Open(o), StatusCode::kInvalidArgument, "commit_interval");
  o = Options();
  o.target = TableIdent{{"lake"}, "missing"};
  ASSERT_ERROR(Open(o), StatusCode::kNotFound, "missing");
}

// Projection pushdown: a column the pipeline does not read is not decoded, so
// a value of the wrong type there makes no dead letter; a row an expression
// rejects is dead-lettered as the record came, that column's text included.
TEST_F(PipelineTest, AColumnThePipelineDoesNotReadIsNeitherDecodedNorLostFromADeadLetter) {
  ASSERT_OK_AND_ASSIGN(sql::Script script, sql::ParseScript(R"(
    CREATE SOURCE events_in (id BIGINT, user_id BIGINT, kind STRING, ts TIMESTAMPTZ)
      WITH (connector = 'http') FORMAT JSON;
    CREATE PIPELINE load_events AS
      INSERT INTO lake.events SELECT id, 100 / (id - 5), 'fixed', ts FROM events_in;)"));
  ASSERT_OK_AND_ASSIGN(auto sources, SourcesOf(script));
  ASSERT_OK_AND_ASSIGN(const sql::CreatePipeline* def, FindPipeline(script, "load_events"));
  ASSERT_OK_AND_ASSIGN(PipelineOptions o, BindPipeline(*catalog_, *io_, *def, sources));
  EXPECT_EQ(o.read_columns, (std::vector<bool>{true, false, false, true}));
  o.state_dir = Options().state_dir;
  const std::string rejected = R"({"id":5,"user_id":1,"kind":{"not":"a string"},"ts":0})";
  ASSERT_OK(log_->Append({R"({"id":1,"user_id":"one","kind":7,"ts":"2024-01-01T10:00:00Z"})",
                          rejected, R"({"id":"x","ts":0})"})
                .status());
  {
    ASSERT_OK_AND_ASSIGN(auto p, Open(o));
    Consume(*p);
    ASSERT_OK(p->Checkpoint());
  }
  // Row 1 despite user_id and kind; id 5 divides by zero; "x" is no BIGINT id.
  EXPECT_EQ(Ids(), (std::multiset<int64_t>{1}));
  auto dead = Rows(DeadLetterTable(target_));
  ASSERT_EQ(dead.size(), 2u);
  std::map<int64_t, nlohmann::json> by_offset;
  for (const std::string& d : dead) {
    auto j = nlohmann::json::parse(d);
    by_offset[j["offset"].get<int64_t>()] = j;
  }
  EXPECT_EQ(by_offset[1]["payload"], rejected);
  EXPECT_NE(by_offset[1]["error"].get<std::string>().find("division by zero"), std::string::npos)
      << by_offset[1]["error"];
  EXPECT_NE(by_offset[2]["error"].get<std::string>().find("field id"), std::string::npos)
      << by_offset[2]["error"];
}

// Lanes (parallelism): the same events give the same rows, dead letters and
// offsets on one thread and on three; each lane writes its own files, and one
// checkpoint commits them all in one snapshot.
TEST_F(PipelineTest, LanesOfAnyParallelismCommitTheSameRowsAndDeadLettersOnce) {
  struct Outcome {
    std::vector<std::string> rows;
    std::vector<std::pair<int64_t, std::string>> dead;  // offset, payload
    std::string offsets;
    int64_t files = 0, snapshots = 0;
  };
  auto run = [&](int parallelism) {
    Reset();
    std::vector<std::string> recs;
    for (int64_t i = 0; i < 6000; ++i) {
      recs.push_back(i % 997 == 5 ? fmt::format(R"({{"id": broken {})", i) : Event(i));
    }
    EXPECT_OK(log_->Append(recs).status());
    PipelineOptions o = Options();
    o.parallelism = parallelism;
    o.batch_rows = 4096;  // batches of at least 4096 records: three lanes
    Outcome out;
    auto p = Open(o);
    EXPECT_OK(p.status());
    if (!p.ok()) return out;
    Consume(**p);
    EXPECT_OK((*p)->Checkpoint());
    out.rows = Rows(target_);
    for (const std::string& r : Rows(DeadLetterTable(target_))) {
      auto j = nlohmann::json::parse(r);
      out.dead.emplace_back(j["offset"].get<int64_t>(), j["payload"].get<std::string>());
    }
    std::sort(out.dead.begin(), out.dead.end());
    const iceberg::Snapshot* s = Current();
    EXPECT_NE(s, nullptr);
    if (s == nullptr) return out;
    out.offsets = s->summary.at("sluice.offsets");
    out.files = std::stoll(s->summary.at("added-data-files"));
    out.snapshots = static_cast<int64_t>(table_->metadata().snapshots.size());
    return out;
  };
  Outcome one = run(1);
  Outcome three = run(3);
  EXPECT_EQ(one.rows.size(), 6000u - 7);
  EXPECT_EQ(testing::LeadingIds(one.rows).count(5), 0u);
  EXPECT_EQ(one.rows, three.rows);
  ASSERT_EQ(one.dead.size(), 7u);
  EXPECT_EQ(one.dead, three.dead);
  EXPECT_EQ(one.dead[1], std::make_pair(int64_t{1002}, std::string(R"({"id": broken 1002)")));
  EXPECT_EQ(one.offsets, R"({"events_in":{"0":6000}})");
  EXPECT_EQ(three.offsets, one.offsets);
  EXPECT_EQ(one.snapshots, 1);
  EXPECT_EQ(three.snapshots, 1);
  EXPECT_EQ(one.files, 3) << "one file per day partition";
  EXPECT_EQ(three.files, 9) << "three lanes, each with a file per day partition";
}

}  // namespace
}  // namespace sluice::pipeline
