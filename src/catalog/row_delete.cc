#include "catalog/row_delete.h"

#include <map>
#include <set>

#include "columnar/column_ops.h"
#include "common/uuid.h"
#include "iceberg/delete_writer.h"
#include "iceberg/deletion_vector.h"
#include "iceberg/scan.h"

namespace sluice::catalog {

namespace {

Result<DeleteResult> DeleteOnce(Table& table, const std::string& filter,
                                const CommitOptions& options) {
  ASSIGN_OR_RETURN(PlannedDelete planned, PlanDelete(table, filter));
  DeleteResult result = planned.counts;
  if (result.rows_deleted == 0) return result;
  SnapshotUpdate& u = planned.update;
  auto snap = table.Commit(u, options);
  if (!snap.ok()) {
    if (snap.status().code() != StatusCode::kCommitStateUnknown)
      DiscardPlannedDelete(table, planned);
    return snap.status();
  }
  result.snapshot_id = *snap;
  return result;
}

}  // namespace

void DiscardPlannedDelete(Table& table, const PlannedDelete& planned) {
  std::set<std::string> written;
  for (const auto& d : planned.update.add_deletes) written.insert(d.file_path);
  for (const auto& p : written) (void)table.io().Delete(p);
}

Result<PlannedDelete> PlanDelete(Table& table, const std::string& filter,
                                 const std::vector<std::string>& columns,
                                 const std::function<Status(const Batch&)>& on_rows) {
  const auto& md = table.metadata();
  const bool use_dvs = md.format_version >= 3;
  PlannedDelete planned;
  DeleteResult& result = planned.counts;
  if (!md.current_snapshot_id) return planned;
  iceberg::ScanOptions o;
  o.filter = filter;
  o.with_positions = true;
  o.columns =
      columns.empty() ? std::vector<std::string>{md.current_schema()->fields[0].name} : columns;
  auto shared = std::make_shared<const iceberg::TableMetadata>(md);
  ASSIGN_OR_RETURN(auto scan, iceberg::TableScan::Make(table.io(), shared, o));
  ASSIGN_OR_RETURN(auto tasks, scan->PlanFiles());
  std::map<std::string, iceberg::DataFile> files;
  std::map<std::string, const iceberg::FileScanTask*> task_of;
  for (const auto& t : tasks) {
    files[t.file.file_path] = t.file;
    task_of[t.file.file_path] = &t;
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
    if (on_rows) RETURN_IF_ERROR(on_rows(b));
  }
  if (positions.empty()) return planned;

  SnapshotUpdate& u = planned.update;
  u.operation = "delete";
  u.base_snapshot_id = md.current_snapshot_id;
  std::map<std::string, std::set<int64_t>> partial;
  std::vector<std::pair<iceberg::DataFile, std::set<int64_t>>> vectors;
  for (auto& [path, pos] : positions) {
    result.rows_deleted += static_cast<int64_t>(pos.size());
    const iceberg::FileScanTask& t = *task_of.at(path);
    // Rows deleted before (DV or position deletes): a DV must hold them all.
    ASSIGN_OR_RETURN(auto before, iceberg::ReadDeletedPositions(table.io(), t));
    bool unknown_deletes = !t.equality_deletes.empty();
    if (!unknown_deletes &&
        static_cast<int64_t>(pos.size() + before.size()) == t.file.record_count) {
      u.remove_paths.push_back(path);  // every row is gone: drop the file (and its DV)
      continue;
    }
    u.require_paths.push_back(path);
    if (use_dvs) {
      pos.insert(before.begin(), before.end());
      if (t.deletion_vector) u.remove_dvs.emplace_back(t.deletion_vector->file_path, path);
      vectors.emplace_back(t.file, std::move(pos));
    } else {
      partial[path] = std::move(pos);
    }
  }
  if (use_dvs) {
    if (!vectors.empty()) {
      std::string puffin = fmt::format("{}/data/{}-dv.puffin", md.location, NewUuid());
      ASSIGN_OR_RETURN(u.add_deletes, iceberg::WriteDeletionVectors(table.io(), puffin, vectors));
    }
  } else {
    ASSIGN_OR_RETURN(u.add_deletes, iceberg::WritePositionDeletes(table.io(), md, partial, files));
  }
  result.files_removed = static_cast<int64_t>(u.remove_paths.size());
  result.delete_files_added = static_cast<int64_t>(u.add_deletes.size());
  return planned;
}

Result<DeleteResult> DeleteWhere(Table& table, const std::string& filter,
                                 const CommitOptions& options) {
  if (filter.empty()) return Status::Invalid("a delete needs a filter (--where)");
  // A compaction that replaced the planned files makes the commit fail with
  // kConflict; plan again on the new snapshot, with the same budget and
  // jittered backoff as a commit, so a busy compactor cannot starve a delete.
  Status last;
  for (int attempt = 0; attempt < options.max_attempts; ++attempt) {
    if (attempt > 0) {
      options.BackOff(attempt);
      RETURN_IF_ERROR(table.Refresh());  // plan again against the new snapshot
    }
    auto r = DeleteOnce(table, filter, options);
    if (r.ok() || r.status().code() != StatusCode::kConflict) return r;
    last = r.status();
  }
  return last.WithContextF("delete from {}: re-planned {} times", table.ident().ToString(),
                           options.max_attempts);
}

}  // namespace sluice::catalog
