// Rewrite (compaction): replaces a table's data files with new ones holding
// the same live rows (deletes applied), as a `replace` snapshot; the delete
// files that applied to them are removed too.
//
// The commit validates that every replaced file is still live and that no
// delete file arrived for them since the rewrite was planned; otherwise it
// fails with kConflict and the new files are removed — a rewrite never
// resurrects a row deleted concurrently.
#pragma once

#include "catalog/table.h"
#include "iceberg/data_writer.h"

namespace sluice::catalog {

struct RewriteResult {
  int64_t files_removed = 0, files_added = 0, rows = 0;
  std::optional<int64_t> snapshot_id;
};

Result<RewriteResult> RewriteDataFiles(Table& table, const CommitOptions& options = {});

}  // namespace sluice::catalog
