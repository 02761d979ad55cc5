// Taking a checkpoint: the lanes' files closed, one catalog transaction that
// adds them with the source's offsets, the operators' state files and the
// dead letters, then the journal and the retired state files cleared
// (docs/pipelines.md, "Exactly once").
#include <chrono>

#include "catalog/table_readers.h"
#include "common/clock.h"
#include "common/kill_point.h"
#include "common/serial_queue.h"
#include "common/task_pool.h"
#include "iceberg/data_writer.h"
#include "iceberg/table_builder.h"
#include "operators/primary_key_index.h"
#include "pipeline/pipeline.h"

namespace sluice::pipeline {
using catalog::Table;

Status Pipeline::Checkpoint() {
  RETURN_IF_ERROR(BeginCheckpoint(/*background=*/false));
  return TakeCommitted(/*wait=*/true);
}

Status Pipeline::BeginCheckpoint(bool background) {
  RETURN_IF_ERROR(TakeCommitted(/*wait=*/true));  // one commits at a time, in order
  last_checkpoint_ms_ = iceberg::NowMillis();
  if (!dirty_) {
    RenewReaderHold();
    return Status::OK();
  }
  auto c = std::make_unique<Committing>();
  c->checkpoint = next_checkpoint_;
  c->started_us = MonotonicMicros();
  RETURN_IF_ERROR(FlushRows());
  RETURN_IF_ERROR(FinishLanes());
  // The groups changed since the last checkpoint, before its state is saved.
  if (window_ && options_.aggregate->updating()) RETURN_IF_ERROR(EmitUpdatedGroups());
  RETURN_IF_ERROR(WriteDeadLetters(dead_rows_));  // the windows' last ones
  c->positions = source_->CurrentPositions();
  ASSIGN_OR_RETURN(c->updates, CheckpointUpdates(c->positions));
  for (Lane& lane : lanes_) {
    if (lane.writer) c->writers.push_back(std::move(lane.writer));
  }
  c->dead_letter_writer = std::move(dlq_writer_);
  c->rows = std::exchange(rows_pending_, 0);
  c->dead_letters = std::exchange(dead_pending_, 0);
  c->newest_ingest_ms = newest_ingest_ms_;
  dirty_ = false;
  // The lanes have no writers now and the checkpoint's rows are its own: a
  // failure from here on ends the run for good.
  Status st = CommitOrHandOver(std::move(c), background);
  if (!st.ok() && checkpoint_failed_.ok()) checkpoint_failed_ = st;
  return st;
}

Status Pipeline::CommitOrHandOver(std::unique_ptr<Committing> c, bool background) {
  // An upsert's commit plans its deletes on the key index (and plans again
  // when another writer committed first), and names its files by the
  // checkpoint: it commits in line, before the next checkpoint begins.
  if (!background || keys_ || committer_ == nullptr) {
    CloseAndCommit(*c, *pool_);  // (its outcome is taken below)
    committing_ = std::move(c);
    RETURN_IF_ERROR(TakeCommitted(/*wait=*/true));
    ++next_checkpoint_;
    return StartWriters();
  }
  // The next checkpoint's files open while this one's close and commit.
  ++next_checkpoint_;
  RETURN_IF_ERROR(StartWriters());
  committing_ = std::move(c);
  committer_->Push([this, c = committing_.get()] { CloseAndCommit(*c, *close_pool_); });
  return Status::OK();
}

void Pipeline::CloseAndCommit(Committing& c, TaskPool& close_pool) {
  auto run = [&]() -> Status {
    ASSIGN_OR_RETURN(ClosedFiles closed, CloseFiles(c, close_pool));
    KillPoint("pipeline.after_data_files");
    AddFiles(std::move(closed), &c.updates);
    int64_t commit_started = MonotonicMicros();
    ASSIGN_OR_RETURN(std::vector<int64_t> snapshots, CommitCheckpoint(c.updates));
    c.commit_micros = MonotonicMicros() - commit_started;
    c.snapshot_id = snapshots[0];
    KillPoint("pipeline.after_commit");
    return Status::OK();
  };
  c.status = run();
  c.finished_us = MonotonicMicros();
  // The last touch: once done, the pipeline's thread may take and free `c`.
  c.done.store(true, std::memory_order_release);
}

Status Pipeline::TakeCommitted(bool wait) {
  RETURN_IF_ERROR(checkpoint_failed_);
  if (committing_ == nullptr) return Status::OK();
  if (!committing_->done.load(std::memory_order_acquire)) {
    if (!wait) return Status::OK();
    committer_->Drain();
  }
  std::unique_ptr<Committing> c = std::move(committing_);
  if (!c->status.ok()) {
    stats_.commit_failures.fetch_add(1);
    // The staged files stay in the journal: a restart's recovery commits
    // nothing twice and deletes them unless the table shows this checkpoint.
    checkpoint_failed_ =
        c->status.WithContextF("pipeline {}: checkpoint {}", options_.name, c->checkpoint);
    return checkpoint_failed_;
  }
  if (Status st = AfterCommit(*c); !st.ok()) {
    // (Committed, but its journal entries may stay: recovery sorts them out.)
    checkpoint_failed_ =
        st.WithContextF("pipeline {}: after checkpoint {} committed", options_.name, c->checkpoint);
    return checkpoint_failed_;
  }
  CheckpointReport report = CountCommit(*c);
  stats_.last_checkpoint_micros = c->finished_us - c->started_us;
  report.checkpoint_seconds = static_cast<double>(stats_.last_checkpoint_micros) / 1e6;
  if (options_.on_checkpoint) options_.on_checkpoint(report);
  return Status::OK();
}

// The writers' files close at once (their last row groups are encoded here):
// on the lanes' pool in line, on the committer's own in the background (the
// lanes' pool is busy with the next batches meanwhile).
Result<Pipeline::ClosedFiles> Pipeline::CloseFiles(Committing& c, TaskPool& pool) {
  const int n = static_cast<int>(c.writers.size());
  std::vector<Result<std::vector<iceberg::DataFile>>> closed(n, std::vector<iceberg::DataFile>{});
  pool.Run(n, [&](int i) { closed[i] = c.writers[i]->Close(); });
  ClosedFiles files;
  for (auto& f : closed) {
    RETURN_IF_ERROR(f.status());
    for (auto& file : *f) files.data.push_back(std::move(file));
  }
  ASSIGN_OR_RETURN(files.dead_letters, c.dead_letter_writer->Close());
  return files;
}

Result<std::vector<catalog::TableUpdate>> Pipeline::CheckpointUpdates(const Positions& positions) {
  std::map<std::string, std::string> summary = {
      {kSummaryPipeline, options_.name},
      {kSummaryEpoch, std::to_string(epoch_)},
      {kSummaryCheckpoint, std::to_string(next_checkpoint_)},
      {kSummaryOffsets, EncodeOffsets({{options_.source_name, positions}})},
  };
  if (!change_positions_.empty()) {
    summary[kSummaryChangePositions] = EncodeChangePositions(change_positions_);
  }
  std::vector<catalog::TableUpdate> updates(1);
  catalog::SnapshotUpdate& target = updates[0].update;
  updates[0].table = table_.get();
  target.summary = summary;
  target.set_properties[CheckpointProperty(options_.name)] = EncodeCheckpointProperty(
      epoch_, next_checkpoint_, {{options_.source_name, positions}}, change_positions_);
  if (auto hold = source_->Hold()) {
    // Where this pipeline reads its source table: that table's snapshot
    // expiry keeps the snapshot (maintenance/expire.h, "readers").
    int64_t now = iceberg::NowMillis();
    target.set_properties[catalog::ReaderProperty(options_.name)] =
        catalog::EncodeReaderProperty(hold->table, hold->snapshot_id, now);
    hold_renewed_ms_ = now;  // (were the commit to fail, the next one renews it)
  }
  if (window_) RETURN_IF_ERROR(SaveState(&updates[0]));
  return updates;
}

// The target table always gets the snapshot (it holds the offsets that
// recovery reads); the dead-letter table only when there are dead letters.
void Pipeline::AddFiles(ClosedFiles files, std::vector<catalog::TableUpdate>* updates) {
  catalog::TableUpdate& target = (*updates)[0];
  target.update.add_data = std::move(files.data);
  if (files.dead_letters.empty()) return;
  catalog::TableUpdate u;
  u.table = dlq_table_.get();
  u.update.add_data = std::move(files.dead_letters);
  u.update.summary = target.update.summary;
  updates->push_back(std::move(u));
}

Result<std::vector<int64_t>> Pipeline::CommitCheckpoint(
    std::vector<catalog::TableUpdate>& updates) {
  auto check = [this] { return CheckEpoch(); };
  if (!keys_) return Table::CommitAll(catalog_, updates, options_.commit, check);
  // An upsert plans its deletes on the table's current snapshot, and commits
  // only onto that snapshot: a commit of another writer in between (new keys,
  // files rewritten, deletes) makes it plan again on the new one.
  catalog::SnapshotUpdate& u = updates[0].update;
  Status last;
  for (int attempt = 0; attempt < options_.commit.max_attempts; ++attempt) {
    if (attempt > 0) options_.commit.BackOff(attempt);
    Status planned = PlanUpsertDeletes(u.add_data, &u);
    if (planned.ok()) planned = SaveKeyIndex(&updates[0]);
    if (planned.ok()) {
      auto committed = Table::CommitAll(catalog_, updates, options_.commit, [this, check] {
        RETURN_IF_ERROR(check());
        if (table_->metadata().current_snapshot_id != indexed_snapshot_) {
          return Status::Conflict("table {} changed while the upserts were planned",
                                  options_.target.ToString());
        }
        return Status::OK();
      });
      if (committed.ok() || committed.status().code() != StatusCode::kConflict) return committed;
      planned = committed.status();
    }
    if (planned.code() != StatusCode::kConflict) return planned;
    last = planned;
    DiscardUpsertDeletes(&u);
    DropStagedKeyIndex();
  }
  return last.WithContextF("re-planned the upserts {} times", options_.commit.max_attempts);
}

// The staged files are the table's now; the state files the commit retired
// are referred to by no checkpoint (a crash before they are deleted leaves
// them for orphan cleanup).
Status Pipeline::AfterCommit(const Committing& c) {
  {
    // (The next checkpoint's files, recorded meanwhile, stay.)
    std::lock_guard<std::mutex> lock(journal_mu_);
    RETURN_IF_ERROR(journal_->ClearThrough(c.checkpoint));
  }
  if (window_) {
    for (const std::string& f : window_state_.Commit()) (void)io_.Delete(f);
  }
  if (keys_) {
    if (Status st = keys_->CommitPending(/*state_saved=*/true); !st.ok()) {
      // (The commit stands; the index, a cache of the table, is loaded again
      // before the next plan.)
      fmt::print(stderr, "sluice: pipeline {}: key index: {}; loading it from {}\n", options_.name,
                 st.ToString(), options_.target.ToString());
      keys_->DiscardPending();
      key_index_stale_ = true;
    }
    key_state_staged_.clear();
    for (const std::string& f : key_state_.Commit()) (void)io_.Delete(f);
    indexed_snapshot_ = c.snapshot_id;
    stats_.upsert_deletes += pending_upsert_deletes_;
    stats_.change_deletes += pending_change_deletes_;
    stats_.changes_replayed += pending_changes_replayed_;
    CountKeyIndex();
    pending_upsert_deletes_ = pending_change_deletes_ = pending_changes_replayed_ = 0;
  }
  return Status::OK();
}

CheckpointReport Pipeline::CountCommit(Committing& c) {
  int64_t files_added = 0;
  for (const auto& u : c.updates) files_added += static_cast<int64_t>(u.update.add_data.size());
  stats_.files_committed += files_added;
  stats_.records_committed += c.rows;
  stats_.dead_letters_committed += c.dead_letters;
  stats_.commits += 1;
  stats_.last_commit_micros = c.commit_micros;
  stats_.commit_micros_total += c.commit_micros;
  stats_.checkpoint = c.checkpoint;
  stats_.newest_committed_ingest_ms = c.newest_ingest_ms;
  int64_t sum = 0;
  for (const auto& [p, o] : c.positions) sum += o;
  stats_.committed_offset_sum = sum;
  committed_ = std::move(c.positions);
  return CheckpointReport{c.checkpoint,          c.rows, c.dead_letters, files_added,
                          c.commit_micros / 1e6, 0};
}

Status Pipeline::CheckEpoch() {
  ASSIGN_OR_RETURN(int64_t current, CurrentEpoch(table_->metadata(), options_.name));
  if (current != epoch_) {
    return Status::Fenced(
        "pipeline {}: epoch {} has taken over table {} (this run is epoch {}); stopping without "
        "committing",
        options_.name, current, options_.target.ToString(), epoch_);
  }
  return Status::OK();
}

}  // namespace sluice::pipeline
