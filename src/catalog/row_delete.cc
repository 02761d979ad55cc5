#include "catalog/row_delete.h"

#include <functional>
#include <map>
#include <set>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "columnar/column_ops.h"
#include "common/hash.h"
#include "common/uuid.h"
#include "iceberg/delete_writer.h"
#include "iceberg/deletion_vector.h"
#include "iceberg/scan.h"

namespace sluice::catalog {

namespace {

// A digest of the deletes that apply to a task's file: two independent
// 64-bit hashes of each (its kind, path and blob offset), each summed over
// the deletes, so that the order the planner lists them in does not count.
struct DeletesDigest {
  uint64_t a = 0, b = 0;
  bool operator==(const DeletesDigest&) const = default;
};

DeletesDigest DeletesOf(const iceberg::FileScanTask& task) {
  DeletesDigest d;
  auto add = [&d](uint64_t kind, const std::string& path, int64_t offset) {
    const uint64_t salt = kind * 0x9e3779b97f4a7c15ull + static_cast<uint64_t>(offset);
    d.a += SplitMix64(std::hash<std::string_view>{}(path) ^ SplitMix64(salt));
    uint64_t fnv = 0xcbf29ce484222325ull;  // FNV-1a: independent of std::hash
    for (unsigned char c : path) fnv = (fnv ^ c) * 0x100000001b3ull;
    d.b += SplitMix64(fnv + salt);
  };
  if (task.deletion_vector) {
    add(1, task.deletion_vector->file_path, task.deletion_vector->content_offset.value_or(-1));
  }
  for (const auto& f : task.position_deletes) add(2, f.file_path, -1);
  for (const auto& f : task.equality_deletes) add(3, f.file_path, -1);
  return d;
}

// What a delete's last plan found in each data file it planned: the deletes
// that applied to the file then, and the positions of its matching rows. A
// plan after a conflict reads again only the files it does not know with the
// same deletes, under the same schema and name mapping (which bind the
// filter's columns).
struct ScanMemo {
  struct File {
    DeletesDigest deletes;
    std::vector<int64_t> positions;  // matching rows, in order
  };
  int32_t schema_id = -1;
  std::string name_mapping;
  std::unordered_map<std::string, File> files;
};

std::string NameMappingOf(const iceberg::TableMetadata& md) {
  auto it = md.properties.find("schema.name-mapping.default");
  return it == md.properties.end() ? "" : it->second;
}

// PlanDelete, knowing (with `memo`) what the last plan found: files it read
// with the same deletes keep its matches and are not read again (`on_rows`
// sees only the rows of the files read); `memo` then holds this plan's.
Result<PlannedDelete> PlanDeleteWith(Table& table, const std::string& filter,
                                     const std::vector<std::string>& columns,
                                     const std::function<Status(const Batch&)>& on_rows,
                                     ScanMemo* memo, int64_t* files_read) {
  const auto& md = table.metadata();
  PlannedDelete planned;
  planned.update.kind = ChangeKind::kRowDelta;
  DeleteResult& result = planned.counts;
  if (!md.current_snapshot_id) return planned;
  if (memo &&
      (memo->schema_id != md.current_schema_id || memo->name_mapping != NameMappingOf(md))) {
    *memo = ScanMemo{md.current_schema_id, NameMappingOf(md), {}};
  }
  // Each planned task's digest and whether the memo knows it (by index).
  std::vector<DeletesDigest> digests;
  std::vector<const ScanMemo::File*> known;
  const iceberg::FileScanTask* first_task = nullptr;
  iceberg::ScanOptions o;
  o.filter = filter;
  o.with_positions = true;
  o.columns =
      columns.empty() ? std::vector<std::string>{md.current_schema()->fields[0].name} : columns;
  o.read_task = [&](const iceberg::FileScanTask& t) {
    if (known[static_cast<size_t>(&t - first_task)] != nullptr) return false;
    if (files_read) ++*files_read;
    return true;
  };
  auto shared = std::make_shared<const iceberg::TableMetadata>(md);
  ASSIGN_OR_RETURN(auto scan, iceberg::TableScan::Make(table.io(), shared, o));
  RETURN_IF_ERROR(scan->Plan());
  const std::vector<iceberg::FileScanTask>& tasks = scan->tasks();
  first_task = tasks.data();
  known.assign(tasks.size(), nullptr);
  if (memo) digests.reserve(tasks.size());
  std::map<std::string, const iceberg::FileScanTask*> task_of;
  std::map<std::string, std::vector<int64_t>> matched;  // (a file's rows come in order)
  for (size_t i = 0; i < tasks.size(); ++i) {
    const iceberg::FileScanTask& t = tasks[i];
    task_of[t.file.file_path] = &t;
    if (!memo) continue;
    digests.push_back(DeletesOf(t));
    auto it = memo->files.find(t.file.file_path);
    if (it == memo->files.end() || !(it->second.deletes == digests[i])) continue;
    known[i] = &it->second;
    if (!it->second.positions.empty()) matched[t.file.file_path] = it->second.positions;
  }
  Batch b;
  while (true) {
    ASSIGN_OR_RETURN(bool more, scan->Next(&b));
    if (!more) break;
    const Column* path = FindColumnById(b, iceberg::kFilePathFieldId);
    const Column* pos = FindColumnById(b, iceberg::kPosFieldId);
    std::vector<int64_t>* file = nullptr;
    for (int64_t i = 0; i < b.num_rows(); ++i) {
      if (i == 0 || path->GetBytes(i) != path->GetBytes(i - 1)) {
        file = &matched[std::string(path->GetBytes(i))];
      }
      file->push_back(pos->Value<int64_t>(i));
    }
    if (on_rows) RETURN_IF_ERROR(on_rows(b));
  }
  if (memo) {
    std::unordered_map<std::string, ScanMemo::File> files;
    for (size_t i = 0; i < tasks.size(); ++i) {
      auto it = matched.find(tasks[i].file.file_path);
      files[tasks[i].file.file_path] = {digests[i],
                                        it == matched.end() ? std::vector<int64_t>{} : it->second};
    }
    memo->files = std::move(files);
  }
  if (matched.empty()) return planned;
  std::map<std::string, iceberg::PositionSet> positions;
  for (auto& [path, pos] : matched) positions[path] = iceberg::PositionSet(std::move(pos));

  SnapshotUpdate& u = planned.update;
  u.base_snapshot_id = md.current_snapshot_id;
  for (const auto& [path, pos] : positions) result.rows_deleted += static_cast<int64_t>(pos.size());
  RETURN_IF_ERROR(StageRowDeletes(table.io(), md, std::move(positions), task_of, {}, nullptr, &u));
  result.files_removed = static_cast<int64_t>(u.remove_paths.size());
  result.delete_files_added = static_cast<int64_t>(u.add_deletes.size());
  return planned;
}

// One plan and commit of a delete (kConflict: the table changed under it).
Result<DeleteResult> DeleteOnce(Table& table, const std::string& filter,
                                const CommitOptions& options, ScanMemo* memo, int64_t* files_read) {
  ASSIGN_OR_RETURN(PlannedDelete planned,
                   PlanDeleteWith(table, filter, {}, nullptr, memo, files_read));
  DeleteResult result = planned.counts;
  if (result.rows_deleted == 0) return result;
  auto snap = table.Commit(planned.update, options);
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
  return PlanDeleteWith(table, filter, columns, on_rows, nullptr, nullptr);
}

namespace {

// Whether `fresh` more deleted positions may leave no row of the task's file:
// an upper bound of its earlier deletes is the rows its position delete files
// hold (each may hold other files' rows too).
bool MayDeleteEveryRow(const iceberg::FileScanTask& task, size_t fresh) {
  if (!task.equality_deletes.empty()) return false;  // (never dropped whole then)
  int64_t bound = static_cast<int64_t>(fresh);
  for (const iceberg::DataFile& d : task.position_deletes) bound += d.record_count;
  return bound >= task.file.record_count;
}

}  // namespace

Status StageRowDeletes(FileIO& io, const iceberg::TableMetadata& md,
                       std::map<std::string, iceberg::PositionSet> positions,
                       const std::map<std::string, const iceberg::FileScanTask*>& tasks,
                       const std::map<std::string, iceberg::DataFile>& added,
                       const std::function<Status(const std::string& path)>& before_create,
                       SnapshotUpdate* u) {
  const bool use_dvs = md.format_version >= 3;
  std::map<std::string, iceberg::DataFile> files = added;
  std::map<std::string, iceberg::PositionSet> partial;
  std::vector<std::pair<iceberg::DataFile, iceberg::PositionSet>> vectors;
  iceberg::PositionDeleteCache delete_files(/*keep_all=*/true);
  for (auto& [path, pos] : positions) {
    auto t = tasks.find(path);
    if (t == tasks.end()) {  // a file the same commit adds: no earlier deletes
      auto f = added.find(path);
      if (f == added.end()) return Status::Internal("deleting rows of unknown file {}", path);
      if (use_dvs) {
        vectors.emplace_back(f->second, std::move(pos));
      } else {
        partial[path] = std::move(pos);
      }
      continue;
    }
    const iceberg::FileScanTask& task = *t->second;
    files[path] = task.file;
    if (!use_dvs && !MayDeleteEveryRow(task, pos.size())) {
      u->require_paths.push_back(path);
      partial[path] = std::move(pos);
      continue;
    }
    // Rows deleted before (DV or position deletes): a DV must hold them all.
    ASSIGN_OR_RETURN(iceberg::PositionSet before,
                     iceberg::ReadDeletedPositions(io, task, {}, &delete_files));
    const size_t fresh = pos.size();
    pos.Add(before);
    if (task.equality_deletes.empty() &&
        static_cast<int64_t>(pos.size()) == task.file.record_count) {
      u->remove_paths.push_back(path);  // every row is gone: drop the file (and its DV)
      continue;
    }
    u->require_paths.push_back(path);
    if (use_dvs) {
      if (task.deletion_vector) u->remove_dvs.emplace_back(task.deletion_vector->file_path, path);
      vectors.emplace_back(task.file, std::move(pos));
    } else if (fresh > 0) {
      pos.Remove(before);  // position deletes add to the earlier ones
      if (!pos.empty()) partial[path] = std::move(pos);
    }
  }
  if (use_dvs) {
    if (vectors.empty()) return Status::OK();
    std::string puffin = fmt::format("{}/data/{}-dv.puffin", md.location, NewUuid());
    if (before_create) RETURN_IF_ERROR(before_create(puffin));
    ASSIGN_OR_RETURN(auto written, iceberg::WriteDeletionVectors(io, puffin, vectors));
    u->add_deletes.insert(u->add_deletes.end(), written.begin(), written.end());
  } else if (!partial.empty()) {
    ASSIGN_OR_RETURN(auto written,
                     iceberg::WritePositionDeletes(io, md, partial, files, before_create));
    u->add_deletes.insert(u->add_deletes.end(), written.begin(), written.end());
  }
  return Status::OK();
}

Result<DeleteResult> DeleteWhere(Table& table, const std::string& filter,
                                 const CommitOptions& options) {
  if (filter.empty()) return Status::Invalid("a delete needs a filter (--where)");
  // A compaction that replaced the planned files makes the commit fail with
  // kConflict; plan again on the new snapshot (reading only what changed),
  // with the same budget and jittered backoff as a commit.
  ScanMemo memo;
  int64_t files_read = 0;
  Status last;
  for (int attempt = 0; attempt < options.max_attempts; ++attempt) {
    if (attempt > 0) {
      options.BackOff(attempt);
      RETURN_IF_ERROR(table.Refresh());  // plan again against the new snapshot
    }
    auto r = DeleteOnce(table, filter, options, &memo, &files_read);
    if (r.ok()) {
      r->plans = attempt + 1;
      r->files_read = files_read;
    }
    if (r.ok() || r.status().code() != StatusCode::kConflict) return r;
    last = r.status();
  }
  return last.WithContextF("delete from {}: planned {} times", table.ident().ToString(),
                           options.max_attempts);
}

}  // namespace sluice::catalog
