// Table::Commit: the optimistic commit loop (see table.h).
#include <algorithm>
#include <functional>
#include <set>

#include "catalog/table.h"
#include "catalog/table_manifests.h"
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
using internal::ClusterManifests;
using internal::ManifestChange;
using internal::MergeManifests;
using internal::WriteManifest;
using internal::WrittenFiles;

namespace {

int64_t SummaryValue(const Snapshot* s, const std::string& key) {
  if (s == nullptr) return 0;
  auto it = s->summary.find(key);
  if (it == s->summary.end()) return 0;
  return std::strtoll(it->second.c_str(), nullptr, 10);
}

// Totals of a set of files, for the snapshot summary.
struct Tally {
  int64_t data_files = 0, records = 0, size = 0;
  int64_t delete_files = 0, pos_delete_files = 0, eq_delete_files = 0;
  int64_t pos_deletes = 0, eq_deletes = 0;
  void Add(const DataFile& f) {
    size += f.file_size_in_bytes;
    switch (f.content) {
      case FileContent::kData:
        ++data_files;
        records += f.record_count;
        break;
      case FileContent::kPositionDeletes:
        ++delete_files;
        ++pos_delete_files;
        pos_deletes += f.record_count;
        break;
      case FileContent::kEqualityDeletes:
        ++delete_files;
        ++eq_delete_files;
        eq_deletes += f.record_count;
        break;
    }
  }
};

// Identifies one DV entry: its Puffin file and the data file it covers.
std::string DvKey(const DataFile& f) {
  return f.file_path + "\n" + f.referenced_data_file.value_or("");
}

// As the scan applies deletes (iceberg/scan.cc): an equality delete of an
// unpartitioned spec (no fields, or only void ones) applies to every
// partition.
bool GlobalDelete(const TableMetadata& md, const DataFile& d) {
  if (d.content != iceberg::FileContent::kEqualityDeletes) return false;
  const iceberg::PartitionSpec* spec = md.spec_by_id(d.spec_id);
  return spec != nullptr && spec->unpartitioned();
}

// Whether `del` may apply to `data`, sequence numbers aside (as the scan).
bool DeleteApplies(const TableMetadata& md, const ManifestEntry& del, const DataFile& data) {
  const DataFile& d = del.file;
  if (d.referenced_data_file) return *d.referenced_data_file == data.file_path;
  if (GlobalDelete(md, d)) return true;
  return d.spec_id == data.spec_id && d.partition == data.partition;
}

}  // namespace

// A snapshot on its way into one table: the manifests of its added files
// (written once, reused by every attempt) and, per attempt, the rewritten
// manifests, manifest list and metadata file staged against the table's
// current metadata.
struct PendingCommit {
  Table* table = nullptr;
  const SnapshotUpdate* update = nullptr;
  std::string where;
  int64_t snapshot_id = 0;
  std::string commit_uuid;
  WrittenFiles manifests_written;
  std::vector<ManifestFile> new_manifests;
  Tally added;
  std::set<std::string> to_remove;
  std::set<std::string> dvs_to_remove;
  bool adds_dvs = false;
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

Result<std::unique_ptr<PendingCommit>> Table::Prepare(const SnapshotUpdate& u) {
  if (catalog_ == nullptr) return Status::Invalid("table {} is read-only", ident_.ToString());
  auto p = std::make_unique<PendingCommit>();
  p->table = this;
  p->update = &u;
  p->where = fmt::format("table {}", ident_.ToString());
  p->manifests_written.io = io_;
  p->attempt_files.io = io_;
  const std::string& where = p->where;
  for (const DataFile& f : u.add_data) {
    if (f.content != FileContent::kData) {
      return Status::Invalid("{}: {} is not a data file", where, f.file_path);
    }
  }
  if (u.data_sequence_number &&
      (*u.data_sequence_number < 0 || *u.data_sequence_number > metadata_->last_sequence_number)) {
    return Status::Invalid("{}: data sequence number {} is not one the table has had (last {})",
                           where, *u.data_sequence_number, metadata_->last_sequence_number);
  }
  for (const DataFile& f : u.add_deletes) {
    if (f.content == FileContent::kData) {
      return Status::Invalid("{}: {} is not a delete file", where, f.file_path);
    }
    if (metadata_->format_version >= 3 && f.content == FileContent::kPositionDeletes &&
        !f.content_offset) {
      return Status::Invalid(
          "{}: format v3 tables take deletion vectors, not position delete "
          "files",
          where);
    }
  }
  p->snapshot_id = NewSnapshotId();
  p->commit_uuid = NewUuid();
  const int64_t snapshot_id = p->snapshot_id;

  // New manifests are written once and reused by every attempt.
  std::map<std::pair<int32_t, int>, std::vector<ManifestEntry>> groups;
  for (const auto* list : {&u.add_data, &u.add_deletes}) {
    for (const DataFile& f : *list) {
      ManifestEntry e;
      e.status = EntryStatus::kAdded;
      e.file = f;
      int content = f.content == FileContent::kData ? 0 : 1;
      if (content == 0) e.sequence_number = u.data_sequence_number;
      groups[{f.spec_id, content}].push_back(std::move(e));
      p->added.Add(f);
    }
  }
  for (const auto& [key, entries] : groups) {
    auto mf = WriteManifest(*io_, *metadata_, key.first, static_cast<ManifestContent>(key.second),
                            snapshot_id, entries, &p->manifests_written);
    if (!mf.ok()) {
      p->manifests_written.DeleteAll();
      return mf.status().WithContext(where);
    }
    p->new_manifests.push_back(*mf);
  }
  p->to_remove.insert(u.remove_paths.begin(), u.remove_paths.end());
  for (const auto& [puffin, data] : u.remove_dvs) p->dvs_to_remove.insert(puffin + "\n" + data);
  for (const DataFile& d : u.add_deletes) p->adds_dvs |= d.content_offset.has_value();
  return p;
}

namespace {

// What an attempt's removals found in the base's manifests.
struct Removal {
  std::vector<ManifestFile> kept;  // the base's manifests, rewritten where files went
  Tally removed;
  std::vector<DataFile> removed_data;
  std::vector<ManifestEntry> live_deletes;  // delete entries that stay live
  std::vector<ManifestEntry> all_deletes;   // every live delete entry of the base
};

// kConflict if a delete that `u`'s base snapshot did not have applies to one
// of `files` (a compaction or a dead-letter move must not lose it).
Status CheckNoNewDeletes(const TableMetadata& base, const SnapshotUpdate& u,
                         const std::vector<ManifestEntry>& deletes,
                         const std::vector<DataFile>& files) {
  if (!u.fail_on_new_deletes || !u.base_snapshot_id) return Status::OK();
  const Snapshot* start = base.snapshot_by_id(*u.base_snapshot_id);
  const int64_t start_seq = start ? start->sequence_number : 0;  // expired: every delete is new
  // An equality delete applies to a rewrite's files as to the files it
  // rewrote when their data sequence number is below the delete's.
  auto carried = [&](const ManifestEntry& d) {
    if (d.file.content != FileContent::kEqualityDeletes || !u.data_sequence_number ||
        *u.data_sequence_number >= d.sequence_number.value_or(0)) {
      return false;
    }
    for (const DataFile& f : u.add_data) {
      if (!DeleteApplies(base, d, f)) return false;
    }
    return true;
  };
  for (const ManifestEntry& d : deletes) {
    if (d.status == EntryStatus::kDeleted || d.sequence_number.value_or(0) <= start_seq) continue;
    if (carried(d)) continue;
    for (const DataFile& f : files) {
      if (DeleteApplies(base, d, f)) {
        return Status::Conflict("delete file {} was added for {} after snapshot {}",
                                d.file.file_path, f.file_path, *u.base_snapshot_id);
      }
    }
  }
  return Status::OK();
}

// With a data sequence number set, each added data file lies in the
// partition (spec and values) of a file the commit removes: rows that moved
// to another partition could meet equality deletes that never applied to
// them.
Status CheckReadSequence(const SnapshotUpdate& u, const std::vector<DataFile>& removed,
                         const std::string& where) {
  if (!u.data_sequence_number) return Status::OK();
  std::set<std::pair<int32_t, iceberg::PartitionValues>> partitions;
  for (const DataFile& f : removed) partitions.insert({f.spec_id, f.partition});
  for (const DataFile& f : u.add_data) {
    if (!partitions.count({f.spec_id, f.partition})) {
      // (A conflict: a rewrite meets it when another writer removed every
      // input of a partition meanwhile; it commits the partitions apart.)
      return Status::Conflict(
          "{}: {} keeps data sequence number {}, but the commit removes no file of its "
          "partition (spec {})",
          where, f.file_path, *u.data_sequence_number, f.spec_id);
    }
  }
  return Status::OK();
}

// The smallest data sequence number of the data files a commit leaves live
// (the base's, and the commit's own when it sets their data sequence number:
// otherwise they have the newest, above every delete's, so no delete can
// apply to them), per partition and over the whole table: a delete file is dangling once no
// data file it could apply to is left (Iceberg's rule: a position delete
// applies to data files of sequence numbers up to its own, an equality delete
// to those below its own; of its partition, or of every partition for an
// equality delete of an unpartitioned spec).
struct LiveDataSequences {
  std::map<std::pair<int32_t, iceberg::PartitionValues>, int64_t> by_partition;
  std::set<std::string> paths;
  std::optional<int64_t> table_min;

  void Add(const ManifestEntry& e) {
    const int64_t seq = e.sequence_number.value_or(0);
    auto [it, fresh] = by_partition.try_emplace({e.file.spec_id, e.file.partition}, seq);
    if (!fresh) it->second = std::min(it->second, seq);
    table_min = std::min(table_min.value_or(seq), seq);
    paths.insert(e.file.file_path);
  }
  bool Dangling(const TableMetadata& md, const ManifestEntry& d) const {
    const DataFile& f = d.file;
    if (f.content_offset) return false;  // a DV goes with its data file (removes())
    if (f.referenced_data_file) return paths.count(*f.referenced_data_file) == 0;
    const int64_t seq = d.sequence_number.value_or(0);
    if (f.content == FileContent::kPositionDeletes) {
      auto it = by_partition.find({f.spec_id, f.partition});
      return it == by_partition.end() || it->second > seq;
    }
    if (GlobalDelete(md, f)) return !table_min || *table_min >= seq;
    auto it = by_partition.find({f.spec_id, f.partition});
    return it == by_partition.end() || it->second >= seq;
  }
};

// Rewrites the base's manifests that hold removed files, their entries
// DELETED (a DV goes with its data file; DVs named in remove_dvs go alone;
// with remove_dangling_deletes, delete files nothing live is left for go
// too), and checks that every file to remove was still there. Data manifests
// go first: the delete manifests are judged by what they leave live.
Status ApplyRemovals(FileIO& io, const TableMetadata& base, const PendingCommit& pc,
                     WrittenFiles* written, Removal* r) {
  const std::set<std::string>& to_remove = pc.to_remove;
  const std::set<std::string>& dvs_to_remove = pc.dvs_to_remove;
  const bool drop_dangling = pc.update->remove_dangling_deletes;
  std::set<std::string> found, found_dvs;
  LiveDataSequences live;
  if (const auto& seq = pc.update->data_sequence_number) {
    for (const DataFile& f : pc.update->add_data) {
      ManifestEntry e;
      e.file = f;
      e.sequence_number = *seq;
      live.Add(e);
    }
  }
  std::vector<std::optional<ManifestFile>> next(r->kept.size());
  auto named = [&](const DataFile& f) {
    if (f.content_offset) {
      return dvs_to_remove.count(DvKey(f)) > 0 ||
             (f.referenced_data_file && to_remove.count(*f.referenced_data_file) > 0);
    }
    return to_remove.count(f.file_path) > 0;
  };
  for (const ManifestContent content : {ManifestContent::kData, ManifestContent::kDeletes}) {
    for (size_t i = 0; i < r->kept.size(); ++i) {
      const ManifestFile& m = r->kept[i];
      if (m.content != content) continue;
      ASSIGN_OR_RETURN(auto entries, iceberg::ReadManifest(io, m, base.format_version));
      const bool deletes = content == ManifestContent::kDeletes;
      auto removes = [&](const ManifestEntry& e) {
        return named(e.file) || (deletes && drop_dangling && live.Dangling(base, e));
      };
      bool touched = false;
      for (const auto& e : entries) {
        if (e.status == EntryStatus::kDeleted) continue;
        if (deletes) r->all_deletes.push_back(e);
        if (removes(e)) {
          touched = true;
        } else if (deletes) {
          r->live_deletes.push_back(e);
        } else {
          live.Add(e);
        }
      }
      if (!touched) {
        next[i] = m;
        continue;
      }
      std::vector<ManifestEntry> rewritten;
      for (auto e : entries) {
        if (e.status == EntryStatus::kDeleted) continue;
        if (removes(e)) {
          if (named(e.file)) {
            (e.file.content_offset ? found_dvs : found)
                .insert(e.file.content_offset ? DvKey(e.file) : e.file.file_path);
          }
          r->removed.Add(e.file);
          if (e.file.content == FileContent::kData) r->removed_data.push_back(e.file);
          e.status = EntryStatus::kDeleted;
          e.snapshot_id = pc.snapshot_id;
        } else {
          e.status = EntryStatus::kExisting;
        }
        rewritten.push_back(std::move(e));
      }
      ASSIGN_OR_RETURN(ManifestFile mf, WriteManifest(io, base, m.partition_spec_id, m.content,
                                                      pc.snapshot_id, rewritten, written));
      next[i] = std::move(mf);
    }
  }
  for (const auto& p : to_remove) {
    if (!found.count(p)) {
      return Status::Conflict("{} is no longer in the table (removed concurrently)", p);
    }
  }
  for (const auto& k : dvs_to_remove) {
    if (!found_dvs.count(k)) {
      return Status::Conflict("the deletion vector {} was replaced concurrently", k);
    }
  }
  // At most one DV per data file: another writer's DV for a file we add one
  // for means our merge missed its deletes.
  for (const DataFile& d : pc.update->add_deletes) {
    if (!d.content_offset) continue;
    for (const auto& e : r->live_deletes) {
      if (e.file.content_offset && e.file.referenced_data_file == d.referenced_data_file) {
        return Status::Conflict("data file {} got a deletion vector concurrently",
                                d.referenced_data_file.value_or("?"));
      }
    }
  }
  RETURN_IF_ERROR(CheckReadSequence(*pc.update, r->removed_data, pc.where));
  RETURN_IF_ERROR(CheckNoNewDeletes(base, *pc.update, r->all_deletes, r->removed_data));
  r->kept.clear();
  for (auto& m : next) r->kept.push_back(std::move(*m));
  return Status::OK();
}

// The files `u` requires must still be live in `kept`, and, with
// fail_on_new_deletes, without a newer delete (two deletes of the same dead
// letters must not both move them).
Status CheckRequired(FileIO& io, const TableMetadata& base, const SnapshotUpdate& u,
                     const std::vector<ManifestFile>& kept) {
  std::set<std::string> missing(u.require_paths.begin(), u.require_paths.end());
  std::vector<DataFile> required;
  std::vector<ManifestEntry> deletes;
  for (const ManifestFile& m : kept) {
    const bool data = m.content == ManifestContent::kData;
    if (!data && !u.fail_on_new_deletes) continue;
    ASSIGN_OR_RETURN(auto entries, iceberg::ReadManifest(io, m, base.format_version));
    for (auto& e : entries) {
      if (e.status == EntryStatus::kDeleted) continue;
      if (!data) {
        deletes.push_back(std::move(e));
      } else if (missing.erase(e.file.file_path) > 0) {
        required.push_back(e.file);
      }
    }
  }
  if (!missing.empty()) {
    return Status::Conflict("{} is no longer in the table (rewritten or removed concurrently)",
                            *missing.begin());
  }
  return CheckNoNewDeletes(base, u, deletes, required);
}

// The snapshot summary: the update's own keys, its operation, what it added
// and removed, and the totals after it.
std::map<std::string, std::string> Summary(const SnapshotUpdate& u, const Tally& added,
                                           const Tally& removed, const Snapshot* parent) {
  std::map<std::string, std::string> sm = u.summary;
  sm["operation"] = u.operation;
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

Status Table::Stage(PendingCommit& pc, int attempt, const CommitOptions& options) {
  const SnapshotUpdate& u = *pc.update;
  WrittenFiles& attempt_files = pc.attempt_files;
  auto fail = [&](const Status& st) {
    attempt_files.DeleteAll();
    return st.WithContextF("{}: commit", pc.where);
  };
  const TableMetadata& base = *metadata_;
  const Snapshot* parent = base.current_snapshot();

  // 1. The base's manifests, with the removals applied and validated.
  Removal r;
  if (parent != nullptr) {
    auto prev = iceberg::ReadManifestList(*io_, parent->manifest_list, base.format_version);
    if (!prev.ok()) return fail(prev.status());
    r.kept = std::move(*prev);
  }
  if (!pc.to_remove.empty() || !pc.dvs_to_remove.empty() || pc.adds_dvs ||
      u.remove_dangling_deletes) {
    if (Status st = ApplyRemovals(*io_, base, pc, &attempt_files, &r); !st.ok()) return fail(st);
  }
  if (!u.require_paths.empty()) {
    if (Status st = CheckRequired(*io_, base, u, r.kept); !st.ok()) return fail(st);
  }

  // 2. The manifest list: the new manifests and the kept ones, merged.
  std::vector<ManifestFile> manifests = pc.new_manifests;
  manifests.insert(manifests.end(), r.kept.begin(), r.kept.end());
  ManifestChange change;
  auto merged = u.rewrite_manifests
                    ? ClusterManifests(*io_, base, std::move(manifests), pc.snapshot_id, options,
                                       &attempt_files, &change)
                    : MergeManifests(*io_, base, std::move(manifests), pc.snapshot_id, options,
                                     &attempt_files);
  if (!merged.ok()) return fail(merged.status());
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
  attempt_files.paths.push_back(snap.manifest_list);
  auto added_rows = iceberg::WriteManifestList(*io_, snap.manifest_list, *merged, lo);
  if (!added_rows.ok()) return fail(added_rows.status());
  snap.summary = Summary(u, pc.added, r.removed, parent);
  if (u.rewrite_manifests) {  // the keys of Iceberg's RewriteManifests
    snap.summary["manifests-created"] = std::to_string(change.created);
    snap.summary["manifests-replaced"] = std::to_string(change.replaced);
    snap.summary["manifests-kept"] = std::to_string(change.kept);
    snap.summary["entries-processed"] = std::to_string(change.entries);
  }
  if (base.format_version >= 3) {
    snap.first_row_id = lo.first_row_id;
    snap.added_rows = *added_rows;
  }

  // 3. The metadata file.
  pc.dropped_metadata.clear();
  auto next = NextMetadata(base, metadata_location_, snap, u, &pc.dropped_metadata);
  if (!next.ok()) return fail(next.status());
  pc.path = NewMetadataPath(base);
  attempt_files.paths.push_back(pc.path);
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
