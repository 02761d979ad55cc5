#include "catalog/rewrite.h"

#include <set>

#include "iceberg/scan.h"

namespace sluice::catalog {

Result<RewriteResult> RewriteDataFiles(Table& table, const CommitOptions& options) {
  RewriteResult result;
  const auto& md = table.metadata();
  if (!md.current_snapshot_id) return result;
  auto shared = std::make_shared<const iceberg::TableMetadata>(md);
  ASSIGN_OR_RETURN(auto scan, iceberg::TableScan::Make(table.io(), shared, {}));
  ASSIGN_OR_RETURN(auto tasks, scan->PlanFiles());
  if (tasks.empty()) return result;
  ASSIGN_OR_RETURN(auto wo, iceberg::DataWriterOptionsFromProperties(md.properties));
  ASSIGN_OR_RETURN(auto writer, iceberg::DataWriter::Make(table.io(), md, wo));
  Batch b;
  while (true) {
    auto more = scan->Next(&b);
    if (!more.ok()) {
      writer->Abort();
      return more.status();
    }
    if (!*more) break;
    result.rows += b.num_rows();
    Status st = writer->Write(b);
    if (!st.ok()) {
      writer->Abort();
      return st;
    }
  }
  auto added = writer->Close();
  if (!added.ok()) {
    writer->Abort();
    return added.status();
  }
  SnapshotUpdate u;
  u.operation = "replace";
  u.add_data = *added;
  // Every delete file seen while planning applies only to the files replaced
  // (the new files have newer sequence numbers and other paths): drop them too.
  std::set<std::string> deletes;
  for (const auto& t : tasks) {
    u.remove_paths.push_back(t.file.file_path);
    for (const auto* list : {&t.position_deletes, &t.equality_deletes}) {
      for (const auto& d : *list) deletes.insert(d.file_path);
    }
    // A deletion vector is removed with its data file; it is not named here.
  }
  u.remove_paths.insert(u.remove_paths.end(), deletes.begin(), deletes.end());
  u.fail_on_new_deletes = true;
  u.base_snapshot_id = md.current_snapshot_id;
  auto snap = table.Commit(u, options);
  if (!snap.ok()) {
    if (snap.status().code() != StatusCode::kCommitStateUnknown) writer->Abort();
    return snap.status();
  }
  result.files_removed = static_cast<int64_t>(tasks.size());
  result.files_added = static_cast<int64_t>(added->size());
  result.snapshot_id = *snap;
  return result;
}

}  // namespace sluice::catalog
