#include "catalog/row_delete.h"

#include <map>
#include <set>

#include "columnar/column_ops.h"
#include "iceberg/delete_writer.h"
#include "iceberg/scan.h"

namespace sluice::catalog {

namespace {

Result<DeleteResult> DeleteOnce(Table& table, const std::string& filter,
                                const CommitOptions& options) {
  const auto& md = table.metadata();
  if (md.format_version >= 3) {
    return Status::NotImplemented(
        "table {}: row-level deletes on format v3 need deletion vectors, not supported yet",
        table.ident().ToString());
  }
  DeleteResult result;
  if (!md.current_snapshot_id) return result;
  iceberg::ScanOptions o;
  o.filter = filter;
  o.with_positions = true;
  o.columns = {md.current_schema()->fields[0].name};
  auto shared = std::make_shared<const iceberg::TableMetadata>(md);
  ASSIGN_OR_RETURN(auto scan, iceberg::TableScan::Make(table.io(), shared, o));
  ASSIGN_OR_RETURN(auto tasks, scan->PlanFiles());
  std::map<std::string, iceberg::DataFile> files;
  std::map<std::string, int64_t> already_deleted;  // rows deleted before, per file
  for (const auto& t : tasks) {
    files[t.file.file_path] = t.file;
    if (!t.position_deletes.empty() || !t.equality_deletes.empty()) {
      already_deleted[t.file.file_path] = -1;  // unknown: never remove such a file whole
    }
  }
  std::map<std::string, std::set<int64_t>> positions;
  Batch b;
  while (true) {
    ASSIGN_OR_RETURN(bool more, scan->Next(&b));
    if (!more) break;
    const Column* path = FindColumnById(b, iceberg::kFilePathFieldId);
    const Column* pos = FindColumnById(b, iceberg::kPosFieldId);
    for (int64_t i = 0; i < b.num_rows(); ++i) {
      positions[std::string(path->GetBytes(i))].insert(pos->Value<int64_t>(i));
    }
  }
  if (positions.empty()) return result;

  SnapshotUpdate u;
  u.operation = "delete";
  std::map<std::string, std::set<int64_t>> partial;
  for (auto& [path, pos] : positions) {
    result.rows_deleted += static_cast<int64_t>(pos.size());
    const auto& f = files.at(path);
    if (static_cast<int64_t>(pos.size()) == f.record_count && !already_deleted.count(path)) {
      u.remove_paths.push_back(path);
    } else {
      partial[path] = std::move(pos);
      u.require_paths.push_back(path);
    }
  }
  ASSIGN_OR_RETURN(u.add_deletes, iceberg::WritePositionDeletes(table.io(), md, partial, files));
  result.files_removed = static_cast<int64_t>(u.remove_paths.size());
  result.delete_files_added = static_cast<int64_t>(u.add_deletes.size());
  auto snap = table.Commit(u, options);
  if (!snap.ok()) {
    if (snap.status().code() != StatusCode::kCommitStateUnknown) {
      for (const auto& d : u.add_deletes) (void)table.io().Delete(d.file_path);
    }
    return snap.status();
  }
  result.snapshot_id = *snap;
  return result;
}

}  // namespace

Result<DeleteResult> DeleteWhere(Table& table, const std::string& filter,
                                 const CommitOptions& options) {
  if (filter.empty()) return Status::Invalid("a delete needs a filter (--where)");
  Status last;
  for (int attempt = 0; attempt < 5; ++attempt) {
    auto r = DeleteOnce(table, filter, options);
    if (r.ok() || r.status().code() != StatusCode::kConflict) return r;
    last = r.status();
    RETURN_IF_ERROR(table.Refresh());  // plan again against the new snapshot
  }
  return last;
}

}  // namespace sluice::catalog
