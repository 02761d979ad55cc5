// Table::Commit: the optimistic commit loop (see table.h).
#include <algorithm>
#include <functional>
#include <set>

#include "catalog/table.h"
#include "catalog/table_changes.h"
#include "catalog/table_manifests.h"
#include "catalog/table_removals.h"
#include "common/kill_point.h"
#include "common/uuid.h"
#include "iceberg/table_builder.h"

namespace sluice::catalog {

using iceberg::DataFile;
using iceberg::EntryStatus;
using iceberg::FileContent;
using iceberg::ManifestContent;
using iceberg::ManifestEntry;
using iceberg::ManifestFile;
using iceberg::Snapshot;
using iceberg::TableMetadata;
using internal::RemovalTargets;
using internal::SnapshotChange;
using internal::StagedManifests;
using internal::StageInput;
using internal::Tally;
using internal::WriteManifest;
using internal::WrittenFiles;

namespace {

int64_t SummaryValue(const Snapshot* s, const std::string& key) {
  if (s == nullptr) return 0;
  auto it = s->summary.find(key);
  if (it == s->summary.end()) return 0;
  return std::strtoll(it->second.c_str(), nullptr, 10);
}

}  // namespace

// A snapshot on its way into one table: the manifests of its added files
// (written once, reused by every attempt) and, per attempt, the rewritten
// manifests, manifest list and metadata file staged against the table's
// current metadata.
struct PendingCommit {
  Table* table = nullptr;
  const SnapshotUpdate* update = nullptr;
  const SnapshotChange* change = nullptr;  // the update's kind
  std::string where;
  int64_t snapshot_id = 0;
  std::string commit_uuid;
  WrittenFiles manifests_written;
  std::vector<ManifestFile> new_manifests;
  Tally added;
  RemovalTargets removals;
  // The current attempt.
  WrittenFiles attempt_files;
  TableMetadata next;
  std::string path;
  // Metadata files the attempt's metadata log no longer lists
  // (write.metadata.previous-versions-max).
  std::vector<std::string> dropped_metadata;

  void Abandon() {  // this attempt lost: its files are unreferenced
    attempt_files.DeleteAll();
  }
  void AbandonAll() {
    attempt_files.DeleteAll();
    manifests_written.DeleteAll();
  }
};

namespace {

// What every kind requires of the files an update adds.
Status CheckAddedFiles(const SnapshotUpdate& u, const TableMetadata& md) {
  for (const DataFile& f : u.add_data) {
    if (f.content != FileContent::kData) {
      return Status::Invalid("{} is not a data file", f.file_path);
    }
  }
  if (u.data_sequence_number &&
      (*u.data_sequence_number < 0 || *u.data_sequence_number > md.last_sequence_number)) {
    return Status::Invalid("data sequence number {} is not one the table has had (last {})",
                           *u.data_sequence_number, md.last_sequence_number);
  }
  for (const DataFile& f : u.add_deletes) {
    if (f.content == FileContent::kData) {
      return Status::Invalid("{} is not a delete file", f.file_path);
    }
    if (md.format_version >= 3 && f.content == FileContent::kPositionDeletes && !f.content_offset) {
      return Status::Invalid("format v3 tables take deletion vectors, not position delete files");
    }
  }
  return Status::OK();
}

// The manifests of the files `u` adds, one per (spec, content), for every
// attempt; their paths are added to `written`.
Result<std::vector<ManifestFile>> WriteAddedManifests(FileIO& io, const TableMetadata& md,
                                                      const SnapshotUpdate& u, int64_t snapshot_id,
                                                      Tally* added, WrittenFiles* written) {
  std::map<std::pair<int32_t, ManifestContent>, std::vector<ManifestEntry>> groups;
  for (const auto* list : {&u.add_data, &u.add_deletes}) {
    for (const DataFile& f : *list) {
      ManifestEntry e;
      e.status = EntryStatus::kAdded;
      e.file = f;
      const bool data = f.content == FileContent::kData;
      if (data) e.sequence_number = u.data_sequence_number;
      groups[{f.spec_id, data ? ManifestContent::kData : ManifestContent::kDeletes}].push_back(
          std::move(e));
      added->Add(f);
    }
  }
  std::vector<ManifestFile> out;
  for (const auto& [key, entries] : groups) {
    ASSIGN_OR_RETURN(ManifestFile mf,
                     WriteManifest(io, md, key.first, key.second, snapshot_id, entries, written));
    out.push_back(std::move(mf));
  }
  return out;
}

}  // namespace

Result<std::unique_ptr<PendingCommit>> Table::Prepare(const SnapshotUpdate& u) {
  if (catalog_ == nullptr) return Status::Invalid("table {} is read-only", ident_.ToString());
  auto p = std::make_unique<PendingCommit>();
  p->table = this;
  p->update = &u;
  p->change = &SnapshotChange::Of(u.kind);
  p->where = fmt::format("table {}", ident_.ToString());
  p->manifests_written.io = io_;
  p->attempt_files.io = io_;
  RETURN_IF_ERROR(p->change->Validate(u).WithContext(p->where));
  RETURN_IF_ERROR(CheckAddedFiles(u, *metadata_).WithContext(p->where));
  p->snapshot_id = NewSnapshotId();
  p->commit_uuid = NewUuid();
  // New manifests are written once and reused by every attempt.
  auto added =
      WriteAddedManifests(*io_, *metadata_, u, p->snapshot_id, &p->added, &p->manifests_written);
  if (!added.ok()) {
    p->manifests_written.DeleteAll();
    return added.status().WithContext(p->where);
  }
  p->new_manifests = std::move(*added);
  p->removals = RemovalTargets::Of(u);
  return p;
}

namespace {

// The snapshot summary: the update's own keys, its operation, what it added
// and removed, and the totals after it.
std::map<std::string, std::string> Summary(const SnapshotUpdate& u, const Tally& added,
                                           const Tally& removed, const Snapshot* parent) {
  std::map<std::string, std::string> sm = u.summary;
  sm["operation"] = u.Operation();
  auto put = [&](const char* key, int64_t v) {
    if (v != 0) sm[key] = std::to_string(v);
  };
  put("added-data-files", added.data_files);
  put("added-records", added.records);
  put("added-files-size", added.size);
  put("added-delete-files", added.delete_files);
  put("added-position-delete-files", added.pos_delete_files);
  put("added-equality-delete-files", added.eq_delete_files);
  put("added-position-deletes", added.pos_deletes);
  put("added-equality-deletes", added.eq_deletes);
  put("deleted-data-files", removed.data_files);
  put("deleted-records", removed.records);
  put("removed-files-size", removed.size);
  put("removed-delete-files", removed.delete_files);
  put("removed-position-deletes", removed.pos_deletes);
  put("removed-equality-deletes", removed.eq_deletes);
  auto total = [&](const char* key, int64_t plus, int64_t minus) {
    sm[key] = std::to_string(SummaryValue(parent, key) + plus - minus);
  };
  total("total-data-files", added.data_files, removed.data_files);
  total("total-records", added.records, removed.records);
  total("total-files-size", added.size, removed.size);
  total("total-delete-files", added.delete_files, removed.delete_files);
  total("total-position-deletes", added.pos_deletes, removed.pos_deletes);
  total("total-equality-deletes", added.eq_deletes, removed.eq_deletes);
  return sm;
}

// The metadata once `snap` is current: the update's properties set, the
// logs extended, the metadata log cut to write.metadata.previous-versions-max
// (the files cut off are added to `dropped`).
Result<TableMetadata> NextMetadata(const TableMetadata& base, const std::string& base_location,
                                   const Snapshot& snap, const SnapshotUpdate& u,
                                   std::vector<std::string>* dropped) {
  TableMetadata next = base;
  for (const auto& [k, v] : u.set_properties) next.properties[k] = v;
  next.last_sequence_number = snap.sequence_number;
  next.last_updated_ms = snap.timestamp_ms;
  next.current_snapshot_id = snap.snapshot_id;
  next.refs["main"] = iceberg::SnapshotRef{snap.snapshot_id, true, {}, {}, {}};
  next.snapshot_log.push_back({snap.snapshot_id, snap.timestamp_ms});
  RETURN_IF_ERROR(ExtendMetadataLog(&next, base_location, base.last_updated_ms, dropped));
  if (snap.added_rows) next.next_row_id = base.next_row_id.value_or(0) + *snap.added_rows;
  next.snapshots.push_back(snap);
  return next;
}

}  // namespace

namespace {

// The snapshot of `staged` on `base`, its manifest list written (its path
// added to `written`).
Result<Snapshot> WriteSnapshot(FileIO& io, const TableMetadata& base, const PendingCommit& pc,
                               int attempt, const StagedManifests& staged, WrittenFiles* written) {
  const Snapshot* parent = base.current_snapshot();
  Snapshot snap;
  snap.snapshot_id = pc.snapshot_id;
  if (parent) snap.parent_snapshot_id = parent->snapshot_id;
  snap.sequence_number = base.last_sequence_number + 1;
  snap.timestamp_ms = std::max(iceberg::NowMillis(), base.last_updated_ms);
  snap.schema_id = base.current_schema_id;
  snap.manifest_list = fmt::format("{}/metadata/snap-{}-{}-{}.avro", base.location, pc.snapshot_id,
                                   attempt, pc.commit_uuid);
  iceberg::ManifestListOptions lo;
  lo.format_version = base.format_version;
  lo.snapshot_id = pc.snapshot_id;
  lo.parent_snapshot_id = snap.parent_snapshot_id;
  lo.sequence_number = snap.sequence_number;
  if (base.format_version >= 3) lo.first_row_id = base.next_row_id.value_or(0);
  written->paths.push_back(snap.manifest_list);
  ASSIGN_OR_RETURN(int64_t added_rows,
                   iceberg::WriteManifestList(io, snap.manifest_list, staged.manifests, lo));
  snap.summary = Summary(*pc.update, pc.added, staged.removed, parent);
  for (const auto& [k, v] : staged.summary) snap.summary[k] = v;
  if (base.format_version >= 3) {
    snap.first_row_id = lo.first_row_id;
    snap.added_rows = added_rows;
  }
  return snap;
}

}  // namespace

Status Table::Stage(PendingCommit& pc, int attempt, const CommitOptions& options) {
  auto fail = [&](const Status& st) {
    pc.attempt_files.DeleteAll();
    return st.WithContextF("{}: commit", pc.where);
  };
  const TableMetadata& base = *metadata_;

  // 1. The base's manifests.
  std::vector<ManifestFile> base_manifests;
  if (const Snapshot* parent = base.current_snapshot()) {
    auto list = iceberg::ReadManifestList(*io_, parent->manifest_list, base.format_version);
    if (!list.ok()) return fail(list.status());
    base_manifests = std::move(*list);
  }

  // 2. The new snapshot's manifests, as the update's kind stages them.
  StageInput in;
  in.io = io_;
  in.base = &base;
  in.update = pc.update;
  in.removals = &pc.removals;
  in.snapshot_id = pc.snapshot_id;
  in.where = &pc.where;
  in.options = &options;
  in.written = &pc.attempt_files;
  auto staged = pc.change->Stage(in, pc.new_manifests, std::move(base_manifests));
  if (!staged.ok()) return fail(staged.status());

  // 3. The snapshot and its manifest list.
  auto snap = WriteSnapshot(*io_, base, pc, attempt, *staged, &pc.attempt_files);
  if (!snap.ok()) return fail(snap.status());

  // 4. The metadata file.
  pc.dropped_metadata.clear();
  auto next = NextMetadata(base, metadata_location_, *snap, *pc.update, &pc.dropped_metadata);
  if (!next.ok()) return fail(next.status());
  pc.path = NewMetadataPath(base);
  pc.attempt_files.paths.push_back(pc.path);
  Status st = io_->WriteFile(pc.path, iceberg::TableMetadataToJson(*next));
  if (!st.ok()) return fail(st);
  pc.next = std::move(*next);
  return Status::OK();
}

Result<std::vector<int64_t>> Table::CommitAll(Catalog& catalog,
                                              const std::vector<TableUpdate>& updates,
                                              const CommitOptions& options,
                                              const std::function<Status()>& check) {
  std::vector<std::unique_ptr<PendingCommit>> pending;
  auto abandon_all = [&] {
    for (auto& p : pending) p->AbandonAll();
  };
  for (const TableUpdate& tu : updates) {
    if (tu.table->catalog_ != &catalog) {
      abandon_all();
      return Status::Invalid("table {} belongs to another catalog", tu.table->ident_.ToString());
    }
    auto p = tu.table->Prepare(tu.update);
    if (!p.ok()) {
      abandon_all();
      return p.status();
    }
    pending.push_back(std::move(*p));
  }
  std::string what = pending.size() == 1 ? pending[0]->where : "transaction";
  Status last;
  // The tables' turns (table.h), always taken in one order.
  std::vector<std::mutex*> turns;
  for (auto& p : pending) turns.push_back(&p->table->CommitTurn());
  std::sort(turns.begin(), turns.end(), std::less<>());
  turns.erase(std::unique(turns.begin(), turns.end()), turns.end());
  for (int attempt = 0; attempt < options.max_attempts; ++attempt) {
    if (attempt > 0) options.BackOff(attempt);
    std::vector<std::unique_lock<std::mutex>> held;
    for (std::mutex* m : turns) held.emplace_back(*m);
    Status refreshed;
    for (auto& p : pending) {
      refreshed = p->table->Refresh();
      if (!refreshed.ok()) break;
    }
    if (!refreshed.ok()) {
      if (refreshed.retryable()) {  // a flaky catalog read: like a lost swap, try again
        last = refreshed;
        continue;
      }
      abandon_all();
      return refreshed;
    }
    if (check) {
      Status st = check();
      if (!st.ok()) {
        abandon_all();
        return st;
      }
    }
    std::vector<TableCommit> commits;
    for (auto& p : pending) {
      Status st = p->table->Stage(*p, attempt, options);
      if (!st.ok()) {
        abandon_all();
        return st;
      }
      KillPoint("catalog.after_metadata");
      commits.push_back({p->table->ident_, p->table->metadata_location_, p->path});
    }
    KillPoint("catalog.before_swap");
    Status st = catalog.CommitTables(commits);
    if (st.ok()) KillPoint("catalog.after_swap");
    if (st.ok()) {
      std::vector<int64_t> ids;
      for (auto& p : pending) {
        Table& t = *p->table;
        t.metadata_ = std::make_shared<const TableMetadata>(std::move(p->next));
        t.metadata_location_ = p->path;
        ids.push_back(p->snapshot_id);
        DeleteDroppedMetadata(*t.io_, *t.metadata_, p->dropped_metadata);
        if (!catalog.SwapsMetadataFiles()) t.AdoptCommitted();
      }
      return ids;
    }
    if (st.code() == StatusCode::kCommitStateUnknown) {
      // The swap may have happened: keep every file it could reference.
      return st.WithContextF("{}: commit of snapshot {}", what, pending[0]->snapshot_id);
    }
    if (st.code() != StatusCode::kConflict && !st.retryable()) {
      abandon_all();
      return st.WithContextF("{}: commit", what);
    }
    for (auto& p : pending) p->Abandon();  // this attempt lost; its files are unreferenced
    last = st;
  }
  abandon_all();
  return last.WithContextF("{}: gave up after {} attempts", what, options.max_attempts);
}

Result<int64_t> Table::Commit(const SnapshotUpdate& u, const CommitOptions& options,
                              const std::function<Status()>& check) {
  if (catalog_ == nullptr) return Status::Invalid("table {} is read-only", ident_.ToString());
  ASSIGN_OR_RETURN(auto ids, CommitAll(*catalog_, {TableUpdate{this, u}}, options, check));
  return ids[0];
}

}  // namespace sluice::catalog
