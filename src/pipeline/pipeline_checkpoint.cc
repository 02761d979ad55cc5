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
  last_checkpoint_ms_ = iceberg::NowMillis();
  if (!dirty_) {
    RenewReaderHold();
    return Status::OK();
  }
  int64_t started = MonotonicMicros();
  RETURN_IF_ERROR(FlushRows());
  RETURN_IF_ERROR(FinishLanes());
  // The groups changed since the last checkpoint, before its state is saved.
  if (window_ && options_.aggregate->updating()) RETURN_IF_ERROR(EmitUpdatedGroups());
  RETURN_IF_ERROR(WriteDeadLetters(dead_rows_));  // the windows' last ones
  ASSIGN_OR_RETURN(ClosedFiles closed, CloseFiles());
  KillPoint("pipeline.after_data_files");

  Positions positions = source_->CurrentPositions();
  ASSIGN_OR_RETURN(std::vector<catalog::TableUpdate> updates,
                   CheckpointUpdates(std::move(closed), positions));
  int64_t commit_started = MonotonicMicros();
  auto committed = CommitCheckpoint(updates);
  if (!committed.ok()) {
    stats_.commit_failures.fetch_add(1);
    // The staged files stay in the journal: a restart's recovery commits
    // nothing twice and deletes them unless the table shows this checkpoint.
    return committed.status().WithContextF("pipeline {}: checkpoint {}", options_.name,
                                           next_checkpoint_);
  }
  int64_t commit_micros = MonotonicMicros() - commit_started;
  KillPoint("pipeline.after_commit");
  RETURN_IF_ERROR(AfterCommit((*committed)[0]));
  CheckpointReport report = CountCommit(updates, std::move(positions), commit_micros);
  ++next_checkpoint_;
  RETURN_IF_ERROR(StartWriters());
  stats_.last_checkpoint_micros = MonotonicMicros() - started;
  report.checkpoint_seconds = static_cast<double>(stats_.last_checkpoint_micros) / 1e6;
  if (options_.on_checkpoint) options_.on_checkpoint(report);
  return Status::OK();
}

// The lanes' files close at once (their last row groups are encoded here).
Result<Pipeline::ClosedFiles> Pipeline::CloseFiles() {
  int lanes = static_cast<int>(lanes_.size());
  std::vector<Result<std::vector<iceberg::DataFile>>> closed(lanes,
                                                             std::vector<iceberg::DataFile>{});
  pool_->Run(lanes, [&](int i) {
    if (lanes_[i].writer) closed[i] = lanes_[i].writer->Close();
  });
  ClosedFiles files;
  for (auto& c : closed) {
    RETURN_IF_ERROR(c.status());
    for (auto& f : *c) files.data.push_back(std::move(f));
  }
  ASSIGN_OR_RETURN(files.dead_letters, dlq_writer_->Close());
  return files;
}

// The target table always gets the snapshot (it holds the offsets that
// recovery reads); the dead-letter table only when there are dead letters.
Result<std::vector<catalog::TableUpdate>> Pipeline::CheckpointUpdates(ClosedFiles files,
                                                                      const Positions& positions) {
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
  target.add_data = std::move(files.data);
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
  if (!files.dead_letters.empty()) {
    catalog::TableUpdate u;
    u.table = dlq_table_.get();
    u.update.add_data = std::move(files.dead_letters);
    u.update.summary = summary;
    updates.push_back(std::move(u));
  }
  return updates;
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
Status Pipeline::AfterCommit(int64_t snapshot_id) {
  RETURN_IF_ERROR(journal_->Clear());
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
    indexed_snapshot_ = snapshot_id;
    stats_.upsert_deletes += pending_upsert_deletes_;
    stats_.change_deletes += pending_change_deletes_;
    stats_.changes_replayed += pending_changes_replayed_;
    CountKeyIndex();
    pending_upsert_deletes_ = pending_change_deletes_ = pending_changes_replayed_ = 0;
  }
  return Status::OK();
}

CheckpointReport Pipeline::CountCommit(const std::vector<catalog::TableUpdate>& updates,
                                       Positions positions, int64_t commit_micros) {
  int64_t files_added = 0;
  for (const auto& u : updates) files_added += static_cast<int64_t>(u.update.add_data.size());
  stats_.files_committed += files_added;
  stats_.records_committed += rows_pending_;
  stats_.dead_letters_committed += dead_pending_;
  stats_.commits += 1;
  stats_.last_commit_micros = commit_micros;
  stats_.commit_micros_total += commit_micros;
  stats_.checkpoint = next_checkpoint_;
  stats_.newest_committed_ingest_ms = newest_ingest_ms_;
  int64_t sum = 0;
  for (const auto& [p, o] : positions) sum += o;
  stats_.committed_offset_sum = sum;
  committed_ = std::move(positions);
  CheckpointReport report{next_checkpoint_, rows_pending_,       dead_pending_,
                          files_added,      commit_micros / 1e6, 0};
  rows_pending_ = dead_pending_ = 0;
  dirty_ = false;
  return report;
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
