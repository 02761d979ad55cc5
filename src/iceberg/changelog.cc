#include "iceberg/changelog.h"

#include <algorithm>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>

#include "columnar/column_ops.h"
#include "columnar/json_writer.h"
#include "iceberg/deletion_vector.h"
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

Result<SnapshotFiles> FilesOfSnapshot(FileIO& io, const TableMetadata& md, const Snapshot& s) {
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
        case FileContent::kEqualityDeletes: out.equality_deletes |= added; break;
      }
    }
  }
  return out;
}

namespace {

// Rows `take` of `b` (the current schema's columns) appended to `out` with
// kind `kind`.
void Append(const Batch& b, const std::vector<uint32_t>& take, ChangeKind kind,
            SnapshotChanges* out) {
  for (uint32_t r : take) {
    for (size_t c = 0; c < b.columns.size(); ++c) {
      AppendRowFrom(b.columns[c], r, &out->rows.columns[c]);
    }
  }
  out->kinds.insert(out->kinds.end(), take.size(), kind);
}

std::string RowText(const Batch& b, int64_t row) {
  std::string out;
  AppendJsonRow(b, row, &out);
  return out;
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
    out.rows = Batch::Make(schema_);
    if (out.operation == "replace") return out;
    ASSIGN_OR_RETURN(SnapshotFiles files, FilesOfSnapshot(io_, *md_, s));
    if (files.equality_deletes) {
      return Status::NotImplemented(
          "snapshot {} adds equality deletes: the rows they delete are not derived", s.snapshot_id);
    }
    Batch deleted = Batch::Make(schema_), inserted = Batch::Make(schema_);
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
  // Rows of `files` as of `snapshot` (with their deletes) in the table's
  // current schema (columns matched by field id: an older snapshot's schema
  // may lack some, null then, or have them narrower); only positions in
  // `keep` (per file) when given, every row of a file not in it.
  Result<Batch> Read(int64_t snapshot, const std::set<std::string>& files,
                     const std::map<std::string, std::vector<int64_t>>* keep) {
    ScanOptions o;
    o.snapshot_id = snapshot;
    o.only_files = files;
    o.with_pos = true;
    ASSIGN_OR_RETURN(auto scan, TableScan::Make(io_, md_, o));
    Batch all = Batch::Make(schema_);
    Batch b;
    while (true) {
      ASSIGN_OR_RETURN(bool more, scan->Next(&b));
      if (!more) break;
      const std::vector<int64_t>* positions = nullptr;
      if (keep != nullptr) {
        auto it = keep->find(scan->current_file());
        if (it != keep->end()) positions = &it->second;
      }
      const Column* pos = FindColumnById(b, kPosFieldId);
      std::vector<uint32_t> take;
      for (int64_t r = 0; r < b.num_rows(); ++r) {
        if (positions != nullptr &&
            !std::binary_search(positions->begin(), positions->end(), pos->Value<int64_t>(r))) {
          continue;
        }
        take.push_back(static_cast<uint32_t>(r));
      }
      if (take.empty()) continue;
      for (size_t c = 0; c < schema_->fields.size(); ++c) {
        const Field& f = schema_->fields[c];
        const Column* have = FindColumnById(b, f.id);
        if (have == nullptr) {
          for (size_t i = 0; i < take.size(); ++i) all.columns[c].AppendNull();
          continue;
        }
        std::optional<Column> converted;
        if (!have->type()->Equals(*f.type)) {
          auto cast = CastColumn(*have, f.type);
          if (!cast.ok()) {
            return cast.status().WithContextF("column {} as of snapshot {}", f.name, snapshot);
          }
          converted = std::move(*cast);
          have = &*converted;
        }
        for (uint32_t r : take) AppendRowFrom(*have, r, &all.columns[c]);
      }
    }
    return all;
  }

  // The rows S deleted, read as of its parent.
  Result<Batch> Deleted(const Snapshot& s, const SnapshotFiles& files) {
    // Files of the parent that S's new deletes cover, and the positions S
    // deletes in them: those its new position delete files name (older ones
    // are applied as of the parent already), or the whole of its new DV.
    // Deletes of rows S itself added (an upsert's superseded versions) are
    // not changes.
    std::map<std::string, std::vector<int64_t>> positions;
    if (!files.added_deletes.empty()) {
      ScanOptions o;
      o.snapshot_id = s.snapshot_id;
      ASSIGN_OR_RETURN(auto scan, TableScan::Make(io_, md_, o));
      RETURN_IF_ERROR(scan->Plan());
      std::map<std::string, std::unordered_map<std::string, std::vector<int64_t>>> read;
      for (const FileScanTask& t : scan->tasks()) {
        const std::string& path = t.file.file_path;
        if (files.added_data.count(path)) continue;
        if (t.deletion_vector) {
          if (!files.added_deletes.count(t.deletion_vector->file_path)) continue;
          ASSIGN_OR_RETURN(
              auto dv, ReadDeletionVector(io_, t.deletion_vector->file_path, *t.deletion_vector));
          positions[path].assign(dv.begin(), dv.end());
          continue;
        }
        for (const DataFile& d : t.position_deletes) {
          if (!files.added_deletes.count(d.file_path)) continue;
          auto it = read.find(d.file_path);
          if (it == read.end()) {
            ASSIGN_OR_RETURN(auto by_file, ReadPositionDeletes(io_, d.file_path));
            it = read.emplace(d.file_path, std::move(by_file)).first;
          }
          auto mine = it->second.find(path);
          if (mine == it->second.end()) continue;
          std::vector<int64_t>& p = positions[path];
          p.insert(p.end(), mine->second.begin(), mine->second.end());
        }
        if (auto p = positions.find(path); p != positions.end()) {
          std::sort(p->second.begin(), p->second.end());
        }
      }
    }
    std::set<std::string> read = files.removed_data;
    for (const auto& [path, p] : positions) read.insert(path);
    if (read.empty()) return Batch::Make(schema_);
    if (!s.parent_snapshot_id || md_->snapshot_by_id(*s.parent_snapshot_id) == nullptr) {
      return Status::OutOfRange(
          "snapshot {} deletes rows, but its parent {} has expired: the deleted rows cannot be "
          "read (--from-snapshot {} starts after it)",
          s.snapshot_id, s.parent_snapshot_id.value_or(0), s.snapshot_id);
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

  // Pairs deleted and inserted rows: by key (an update) in a keyed table; a
  // row deleted and inserted unchanged (a copy-on-write rewrite by another
  // engine, a change applied again) is no change.
  void Classify(const Batch& deleted, const Batch& inserted, SnapshotChanges* out) const {
    const bool keyed = !key_columns_.empty();
    auto match_key = [&](const Batch& b, uint32_t r) { return keyed ? Key(b, r) : RowText(b, r); };
    std::unordered_map<std::string, std::deque<uint32_t>> inserted_by;
    for (uint32_t i = 0; i < inserted.num_rows(); ++i) {
      inserted_by[match_key(inserted, i)].push_back(i);
    }
    std::vector<uint8_t> used(inserted.num_rows(), 0);
    for (uint32_t d = 0; d < deleted.num_rows(); ++d) {
      auto it = inserted_by.find(match_key(deleted, d));
      if (it == inserted_by.end() || it->second.empty()) {
        Append(deleted, {d}, ChangeKind::kDelete, out);
        continue;
      }
      uint32_t i = it->second.front();
      it->second.pop_front();
      used[i] = 1;
      if (!keyed || RowText(deleted, d) == RowText(inserted, i)) continue;  // unchanged
      Append(deleted, {d}, ChangeKind::kUpdateBefore, out);
      Append(inserted, {i}, ChangeKind::kUpdateAfter, out);
    }
    std::vector<uint32_t> rest;
    for (uint32_t i = 0; i < used.size(); ++i) {
      if (!used[i]) rest.push_back(i);
    }
    Append(inserted, rest, ChangeKind::kInsert, out);
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
