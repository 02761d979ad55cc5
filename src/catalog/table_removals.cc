// What a commit removes: see table_removals.h.
#include "catalog/table_removals.h"

#include <algorithm>
#include <map>
#include <optional>

namespace sluice::catalog::internal {

using iceberg::DataFile;
using iceberg::EntryStatus;
using iceberg::FileContent;
using iceberg::ManifestContent;
using iceberg::ManifestEntry;
using iceberg::ManifestFile;
using iceberg::Snapshot;
using iceberg::TableMetadata;

namespace {

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

}  // namespace

RemovalTargets RemovalTargets::Of(const SnapshotUpdate& u) {
  RemovalTargets t;
  t.paths.insert(u.remove_paths.begin(), u.remove_paths.end());
  for (const auto& [puffin, data] : u.remove_dvs) t.dvs.insert(puffin + "\n" + data);
  for (const DataFile& d : u.add_deletes) t.adds_dvs |= d.content_offset.has_value();
  return t;
}

Status ApplyRemovals(FileIO& io, const TableMetadata& base, const SnapshotUpdate& u,
                     const RemovalTargets& targets, int64_t snapshot_id, const std::string& where,
                     WrittenFiles* written, Removal* r) {
  const std::set<std::string>& to_remove = targets.paths;
  const std::set<std::string>& dvs_to_remove = targets.dvs;
  const bool drop_dangling = u.remove_dangling_deletes;
  std::set<std::string> found, found_dvs;
  LiveDataSequences live;
  if (const auto& seq = u.data_sequence_number) {
    for (const DataFile& f : u.add_data) {
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
          e.snapshot_id = snapshot_id;
        } else {
          e.status = EntryStatus::kExisting;
        }
        rewritten.push_back(std::move(e));
      }
      ASSIGN_OR_RETURN(ManifestFile mf, WriteManifest(io, base, m.partition_spec_id, m.content,
                                                      snapshot_id, rewritten, written));
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
  for (const DataFile& d : u.add_deletes) {
    if (!d.content_offset) continue;
    for (const auto& e : r->live_deletes) {
      if (e.file.content_offset && e.file.referenced_data_file == d.referenced_data_file) {
        return Status::Conflict("data file {} got a deletion vector concurrently",
                                d.referenced_data_file.value_or("?"));
      }
    }
  }
  RETURN_IF_ERROR(CheckReadSequence(u, r->removed_data, where));
  RETURN_IF_ERROR(CheckNoNewDeletes(base, u, r->all_deletes, r->removed_data));
  r->kept.clear();
  for (auto& m : next) r->kept.push_back(std::move(*m));
  return Status::OK();
}

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

}  // namespace sluice::catalog::internal
