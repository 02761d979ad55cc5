// Opening a pipeline: the epoch that fences older runs, the checkpoint to
// resume from, the staged files of checkpoints that never committed, and the
// lanes and operators started from the committed state (docs/pipelines.md,
// "Exactly once").
#include <algorithm>

#include "catalog/table_readers.h"
#include "columnar/json_reader.h"
#include "common/kill_point.h"
#include "common/serial_queue.h"
#include "common/task_pool.h"
#include "common/thread_name.h"
#include "iceberg/table_builder.h"
#include "pipeline/pipeline.h"

namespace sluice::pipeline {

using catalog::Table;

Status Pipeline::Recover() {
  ASSIGN_OR_RETURN(table_, Table::Load(catalog_, io_, options_.target));
  ASSIGN_OR_RETURN(dlq_table_, Table::Load(catalog_, io_, DeadLetterTable(options_.target)));
  // Checked before the epoch changes, so that a run that cannot start does
  // not fence a healthy one, and again after it (the fenced run may have
  // committed meanwhile).
  RETURN_IF_ERROR(FindResumePoint(table_->metadata()).status());
  RETURN_IF_ERROR(TakeEpoch());
  ASSIGN_OR_RETURN(ResumePoint resume, FindResumePoint(table_->metadata()));
  int64_t last = resume.committed ? resume.committed->checkpoint : 0;
  next_checkpoint_ = last + 1;
  stats_.checkpoint = last;
  RETURN_IF_ERROR(DropUncommittedFiles(resume.committed, last));
  return StartFrom(resume);
}

Result<Pipeline::ResumePoint> Pipeline::FindResumePoint(const iceberg::TableMetadata& md) const {
  ResumePoint point;
  ASSIGN_OR_RETURN(point.committed, FindCheckpoint(md, options_.name));
  if (!point.committed) return point;
  const auto& offsets = point.committed->offsets;
  auto it = offsets.find(options_.source_name);
  if (it == offsets.end()) {
    // Offsets of another source: starting this one from its beginning could
    // load the same events twice (a renamed source). Refuse.
    std::string sources;
    for (const auto& [s, o] : offsets) sources += (sources.empty() ? "" : ", ") + s;
    return Status::Invalid(
        "table {} holds this pipeline's offsets for source(s) {}, not for {}; a renamed source "
        "would be read again from its start (give the pipeline a new name to start a new one)",
        options_.target.ToString(), sources, options_.source_name);
  }
  point.positions = it->second;
  return point;
}

// A new epoch fences every older run of this pipeline: their commits check
// the property and find a newer value.
Status Pipeline::TakeEpoch() {
  const std::string& name = options_.name;
  int64_t epoch = 0;
  if (catalog_.SwapsMetadataFiles()) {
    RETURN_IF_ERROR(table_->UpdateMetadata(
        [&](const iceberg::TableMetadata& base) -> Result<iceberg::TableMetadata> {
          ASSIGN_OR_RETURN(int64_t current, CurrentEpoch(base, name));
          epoch = current + 1;
          iceberg::TableMetadata next = base;
          next.properties[EpochProperty(name)] = std::to_string(epoch);
          return next;
        },
        options_.commit));
  } else {
    ASSIGN_OR_RETURN(epoch, BumpEpochOnMain());
  }
  epoch_ = epoch;
  stats_.epoch = epoch;
  return Status::OK();
}

// Through a REST catalog a property change does not conflict with a commit in
// flight (the spec's requirements name refs and ids, not properties), so the
// new epoch moves main: an empty `replace` snapshot (no data changes; changelog
// and table-source readers skip it) carries it. An older run's commit, which
// asserts where main was, then fails and re-checks the epoch.
Result<int64_t> Pipeline::BumpEpochOnMain() {
  const std::string& name = options_.name;
  Status last;
  for (int round = 0; round < 20; ++round) {
    RETURN_IF_ERROR(table_->Refresh());
    ASSIGN_OR_RETURN(int64_t current, CurrentEpoch(table_->metadata(), name));
    catalog::SnapshotUpdate bump;
    bump.kind = catalog::ChangeKind::kRewriteFiles;  // nothing rewritten: properties only
    bump.set_properties[EpochProperty(name)] = std::to_string(current + 1);
    bump.summary["sluice.epoch-of"] = name;
    auto committed = table_->Commit(bump, options_.commit, [&]() -> Status {
      ASSIGN_OR_RETURN(int64_t now, CurrentEpoch(table_->metadata(), name));
      if (now == current) return Status::OK();
      return Status::Conflict("pipeline {}: epoch {} taken meanwhile", name, now);
    });
    if (committed.ok()) return current + 1;
    if (committed.status().code() != StatusCode::kConflict) return committed.status();
    last = committed.status();
  }
  return last.WithContextF("pipeline {}: no new epoch after 20 rounds", name);
}

// Staged files of checkpoints that never committed are deleted; those of
// committed checkpoints are referenced by the table and stay. A file being
// written when the process died exists only under its temporary name
// (<path>.tmp-...): those go too.
Status Pipeline::DropUncommittedFiles(const std::optional<CommittedCheckpoint>& committed,
                                      int64_t last) {
  ASSIGN_OR_RETURN(journal_, StagedJournal::Open(options_.state_dir + "/staged.journal"));
  int deleted = 0;
  for (const auto& e : journal_->entries()) {
    // Committed: the last checkpoint, written by the epoch that committed it
    // (a fenced run elsewhere may have staged files under the same number),
    // or an older one (kept: never delete what might be referenced).
    bool committed_file = e.checkpoint < last || (committed && e.checkpoint == last &&
                                                  (e.epoch == 0 || e.epoch == committed->epoch));
    if (committed_file) continue;
    auto listed = io_.List(e.path);
    if (!listed.ok() && listed.status().code() != StatusCode::kNotFound) {
      return listed.status().WithContextF("listing staged file {}", e.path);
    }
    for (const std::string& f : listed.ValueOr({})) {
      if (f != e.path && f.rfind(e.path + ".tmp-", 0) != 0) continue;
      Status st = io_.Delete(f);
      if (!st.ok() && st.code() != StatusCode::kNotFound) {
        return st.WithContextF("deleting staged file {} of checkpoint {}", f, e.checkpoint);
      }
      if (++deleted == 1) KillPoint("pipeline.mid_recovery");
    }
  }
  return journal_->Clear();
}

// The source resumes where the checkpoint left it, and the lanes and
// operators start from its state.
Status Pipeline::StartFrom(const ResumePoint& resume) {
  RETURN_IF_ERROR(source_->Seek(resume.positions));
  committed_ = source_->CurrentPositions();
  int64_t sum = 0;
  for (const auto& [p, o] : committed_) sum += o;
  stats_.committed_offset_sum = sum;

  source_description_ = source_->Describe();
  int threads = options_.parallelism > 0 ? options_.parallelism : AvailableCores();
  threads = std::clamp(threads, 1, kMaxParallelism);
  // One lane runs on the pipeline's thread; more run on workers, while the
  // pipeline's thread polls on.
  pool_ = std::make_unique<TaskPool>(threads > 1 ? threads : 0, "lane", options_.name);
  lanes_.resize(threads);
  // Checkpoints commit beside the lanes (see pipeline.h) when there are lanes
  // to keep busy meanwhile: one thread means one thread.
  if (threads > 1) {
    committer_ = std::make_unique<SerialQueue>(1, ThreadName("commit", 0, options_.name));
    close_pool_ = std::make_unique<TaskPool>(threads - 1, "close", options_.name);
  }
  decoded_ = DecodedColumns(options_.source_schema, options_.read_columns);
  RETURN_IF_ERROR(StartUpserts(resume.committed));
  if (options_.aggregate) RETURN_IF_ERROR(StartAggregate(resume.committed));
  for (Lane& lane : lanes_) {
    ASSIGN_OR_RETURN(lane.decoder, JsonDecoder::Make(decoded_.decoded()));
    RETURN_IF_ERROR(lane.decoder->ReserveRecords(kLaneRecordBytes));  // (json_reader.h)
  }
  RETURN_IF_ERROR(StartChanges(resume.committed));
  last_checkpoint_ms_ = iceberg::NowMillis();
  return StartWriters();
}

// A reader whose source table brings nothing new commits nothing, so its
// recorded position (sluice.reader.<pipeline>) would age past the source's
// reader-max-age-ms while it runs: renewed twice a day. Best effort: a failed
// renewal is tried again at the next idle checkpoint.
void Pipeline::RenewReaderHold() {
  constexpr int64_t kRenewMs = 12LL * 3600 * 1000;
  auto hold = source_->Hold();
  int64_t now = iceberg::NowMillis();
  if (!hold || now - hold_renewed_ms_ < kRenewMs) return;
  Status st = table_->UpdateMetadata(
      [&](const iceberg::TableMetadata& base) -> Result<iceberg::TableMetadata> {
        iceberg::TableMetadata next = base;
        next.properties[catalog::ReaderProperty(options_.name)] =
            catalog::EncodeReaderProperty(hold->table, hold->snapshot_id, now);
        return next;
      },
      options_.commit);
  if (st.ok()) hold_renewed_ms_ = now;
}

}  // namespace sluice::pipeline
