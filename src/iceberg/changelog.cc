#include "iceberg/changelog.h"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

#include "columnar/column_ops.h"
#include "columnar/json_writer.h"
#include "iceberg/manifest.h"
#include "iceberg/scan.h"

namespace sluice::iceberg {

const char* ChangeKindText(ChangeKind kind) {
  switch (kind) {
    case ChangeKind::kInsert: return "+I";
    case ChangeKind::kUpdateBefore: return "-U";
    case ChangeKind::kUpdateAfter: return "+U";
    case ChangeKind::kDelete: return "-D";
  }
  return "?";
}

namespace {

// What a snapshot's own manifest entries say it did.
struct SnapshotFiles {
  std::set<std::string> added_data, removed_data;
  std::set<std::string> added_deletes;  // position delete files and DVs (by path)
};

Result<SnapshotFiles> FilesOf(FileIO& io, const TableMetadata& md, const Snapshot& s) {
  SnapshotFiles out;
  ASSIGN_OR_RETURN(auto manifests, ReadManifestList(io, s.manifest_list, md.format_version));
  std::vector<ManifestFile> own;
  for (const ManifestFile& m : manifests) {
    if (m.added_snapshot_id == s.snapshot_id) own.push_back(m);
  }
  ManifestReadOptions read;
  read.column_stats = false;
  ASSIGN_OR_RETURN(auto entries, ReadManifests(io, own, md.format_version, read));
  for (const auto& list : entries) {
    for (const ManifestEntry& e : list) {
      if (e.snapshot_id != s.snapshot_id || e.status == EntryStatus::kExisting) continue;
      bool added = e.status == EntryStatus::kAdded;
      switch (e.file.content) {
        case FileContent::kData:
          (added ? out.added_data : out.removed_data).insert(e.file.file_path);
          break;
        case FileContent::kPositionDeletes:
          if (added) out.added_deletes.insert(e.file.file_path);
          break;
        case FileContent::kEqualityDeletes:
          if (added) {
            return Status::NotImplemented(
                "snapshot {} adds equality deletes ({}): the rows they delete are not derived",
                s.snapshot_id, e.file.file_path);
          }
          break;
      }
    }
  }
  return out;
}

// The table's columns of rows `take` of `b` (which ends with _pos), appended
// to `out` with kind `kind`.
void Append(const Batch& b, const std::vector<uint32_t>& take, size_t columns, ChangeKind kind,
            SnapshotChanges* out) {
  if (take.empty()) return;
  for (uint32_t r : take) {
    for (size_t c = 0; c < columns; ++c) AppendRowFrom(b.columns[c], r, &out->rows.columns[c]);
  }
  out->kinds.insert(out->kinds.end(), take.size(), kind);
}

class Reader {
 public:
  Reader(FileIO& io, std::shared_ptr<const TableMetadata> md) : io_(io), md_(std::move(md)) {
    const Schema& schema = *md_->current_schema();
    schema_ = std::make_shared<const Schema>(schema);
    for (int32_t id : schema.identifier_field_ids) {
      for (size_t i = 0; i < schema.fields.size(); ++i) {
        if (schema.fields[i].id == id) key_columns_.push_back(static_cast<int>(i));
      }
    }
  }

  Result<SnapshotChanges> Changes(const Snapshot& s) {
    SnapshotChanges out;
    out.snapshot_id = s.snapshot_id;
    out.operation = s.operation();
    if (out.operation == "replace") return out;
    ASSIGN_OR_RETURN(SnapshotFiles files, FilesOf(io_, *md_, s));
    Batch deleted, inserted;
    if (!files.removed_data.empty() || !files.added_deletes.empty()) {
      ASSIGN_OR_RETURN(deleted, Deleted(s, files));
    }
    if (!files.added_data.empty()) {
      ASSIGN_OR_RETURN(inserted, Read(s.snapshot_id, files.added_data, nullptr));
    }
    Classify(deleted, inserted, &out);
    return out;
  }

 private:
  // Rows of `files` as of `snapshot` (with their deletes), the table's
  // columns then _pos; only positions in `keep` (per file) when given.
  Result<Batch> Read(int64_t snapshot, const std::set<std::string>& files,
                     const std::map<std::string, std::set<int64_t>>* keep) {
    ScanOptions o;
    o.snapshot_id = snapshot;
    o.only_files = files;
    o.with_pos = true;
    ASSIGN_OR_RETURN(auto scan, TableScan::Make(io_, md_, o));
    Batch all = Batch::Make(scan->schema());
    Batch b;
    while (true) {
      ASSIGN_OR_RETURN(bool more, scan->Next(&b));
      if (!more) break;
      // Every row of a file not in `keep` (a removed file).
      const std::set<int64_t>* positions = nullptr;
      if (keep != nullptr) {
        auto it = keep->find(scan->current_file());
        if (it != keep->end()) positions = &it->second;
      }
      const Column& pos = b.columns.back();
      for (int64_t r = 0; r < b.num_rows(); ++r) {
        if (positions != nullptr && !positions->count(pos.Value<int64_t>(r))) continue;
        for (size_t c = 0; c < b.columns.size(); ++c) {
          AppendRowFrom(b.columns[c], r, &all.columns[c]);
        }
      }
    }
    return all;
  }

  // The rows S deleted, read as of its parent.
  Result<Batch> Deleted(const Snapshot& s, const SnapshotFiles& files) {
    // Files of the parent that S's new deletes cover: the positions those
    // deletes hold now (rows deleted before S are absent as of the parent).
    // Deletes of rows S itself added (an upsert's superseded versions) are
    // not changes.
    std::map<std::string, std::set<int64_t>> positions;
    if (!files.added_deletes.empty()) {
      ScanOptions o;
      o.snapshot_id = s.snapshot_id;
      ASSIGN_OR_RETURN(auto scan, TableScan::Make(io_, md_, o));
      ASSIGN_OR_RETURN(auto tasks, scan->PlanFiles());
      for (const FileScanTask& t : tasks) {
        if (files.added_data.count(t.file.file_path)) continue;
        bool touched = t.deletion_vector && files.added_deletes.count(t.deletion_vector->file_path);
        for (const DataFile& d : t.position_deletes) {
          touched = touched || files.added_deletes.count(d.file_path) > 0;
        }
        if (!touched) continue;
        ASSIGN_OR_RETURN(positions[t.file.file_path], ReadDeletedPositions(io_, t));
      }
    }
    std::set<std::string> read = files.removed_data;
    for (const auto& [path, p] : positions) read.insert(path);
    if (read.empty()) return Batch::Make(schema_);
    if (!s.parent_snapshot_id || md_->snapshot_by_id(*s.parent_snapshot_id) == nullptr) {
      return Status::OutOfRange(
          "snapshot {} deletes rows, but its parent {} has expired: the deleted rows cannot be "
          "read",
          s.snapshot_id, s.parent_snapshot_id.value_or(0));
    }
    return Read(*s.parent_snapshot_id, read, &positions);
  }

  std::string Key(const Batch& b, int64_t row) const {
    std::string key;
    for (int c : key_columns_) {
      AppendJsonValue(b.columns[c], row, &key);
      key.push_back('\x1f');
    }
    return key;
  }

  void Classify(const Batch& deleted, const Batch& inserted, SnapshotChanges* out) const {
    const size_t columns = schema_->fields.size();
    out->rows = Batch::Make(schema_);
    std::vector<uint32_t> all_deleted(deleted.num_rows()), all_inserted(inserted.num_rows());
    for (uint32_t i = 0; i < all_deleted.size(); ++i) all_deleted[i] = i;
    for (uint32_t i = 0; i < all_inserted.size(); ++i) all_inserted[i] = i;
    if (key_columns_.empty()) {
      Append(deleted, all_deleted, columns, ChangeKind::kDelete, out);
      Append(inserted, all_inserted, columns, ChangeKind::kInsert, out);
      return;
    }
    std::unordered_map<std::string, uint32_t> inserted_by_key;
    for (uint32_t i = 0; i < all_inserted.size(); ++i) inserted_by_key[Key(inserted, i)] = i;
    std::vector<uint8_t> paired(all_inserted.size(), 0);
    for (uint32_t d = 0; d < all_deleted.size(); ++d) {
      auto it = inserted_by_key.find(Key(deleted, d));
      if (it == inserted_by_key.end()) {
        Append(deleted, {d}, columns, ChangeKind::kDelete, out);
        continue;
      }
      Append(deleted, {d}, columns, ChangeKind::kUpdateBefore, out);
      Append(inserted, {it->second}, columns, ChangeKind::kUpdateAfter, out);
      paired[it->second] = 1;
    }
    std::vector<uint32_t> rest;
    for (uint32_t i = 0; i < all_inserted.size(); ++i) {
      if (!paired[i]) rest.push_back(i);
    }
    Append(inserted, rest, columns, ChangeKind::kInsert, out);
  }

  FileIO& io_;
  std::shared_ptr<const TableMetadata> md_;
  std::shared_ptr<const Schema> schema_;
  std::vector<int> key_columns_;
};

}  // namespace

Status ReadChangelog(FileIO& io, std::shared_ptr<const TableMetadata> table,
                     const ChangelogOptions& options,
                     const std::function<Status(SnapshotChanges&&)>& sink) {
  std::optional<int64_t> to =
      options.to_snapshot ? options.to_snapshot : table->current_snapshot_id;
  if (!to) return Status::OK();  // no snapshot: no change
  if (table->snapshot_by_id(*to) == nullptr) {
    return Status::NotFound("snapshot {} is not in the table", *to);
  }
  std::vector<const Snapshot*> range;
  bool found_from = !options.from_snapshot;
  for (const Snapshot* s : table->Ancestry(*to)) {
    if (options.from_snapshot && s->snapshot_id == *options.from_snapshot) {
      found_from = true;
      break;
    }
    range.push_back(s);
  }
  if (!found_from) {
    return Status::NotFound("snapshot {} is not an ancestor of snapshot {} (or has expired)",
                            *options.from_snapshot, *to);
  }
  std::reverse(range.begin(), range.end());
  Reader reader(io, table);
  for (const Snapshot* s : range) {
    auto changes = reader.Changes(*s);
    if (!changes.ok())
      return changes.status().WithContextF("changes of snapshot {}", s->snapshot_id);
    RETURN_IF_ERROR(sink(std::move(*changes)));
  }
  return Status::OK();
}

}  // namespace sluice::iceberg
