// Row-level deletes: `DELETE FROM t WHERE filter` as an Iceberg snapshot.
//
// The matching rows are found by a scan of the current snapshot (with row
// positions); a data file whose rows all match is removed whole, the others
// get position delete files (format v2) or deletion vectors (v3: one Puffin
// file per delete, each DV merged with the file's earlier deletes, the old DV
// removed). The commit requires the data files
// to still be live, so a concurrent rewrite cannot lose the delete: on such a
// conflict the delete is planned again on the new snapshot. Planning again
// reads only the data files that are new since the last plan (a compaction's
// output, new appends) or whose deletes changed; the others' matching rows
// are those the last plan found. A delete that lost to a compaction is then
// planned again in the time it takes to read that compaction's output, not
// the table, so back-to-back compactions of a busy table do not starve it.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "catalog/table.h"
#include "iceberg/positions.h"
#include "iceberg/scan.h"

namespace sluice::catalog {

struct DeleteResult {
  int64_t rows_deleted = 0;
  int64_t files_removed = 0;
  int64_t delete_files_added = 0;
  std::optional<int64_t> snapshot_id;  // none when nothing matched
  int plans = 0;                       // 1, plus one per conflict that made it plan again
  int64_t files_read = 0;              // data files read by every plan
};

Result<DeleteResult> DeleteWhere(Table& table, const std::string& filter,
                                 const CommitOptions& options = {});

// A delete planned against the table's current snapshot but not committed:
// its delete files are written, `update` removes or masks the matching rows.
// Callers commit it (possibly with other changes, e.g. in Table::CommitAll) or
// discard it.
struct PlannedDelete {
  SnapshotUpdate update;
  DeleteResult counts;  // snapshot_id unset
};

// Plans the delete of the rows matching `filter` (empty: every row). The scan
// reads `columns` (default: the first column) plus _file/_pos, and hands each
// batch of matching rows to `on_rows` first, so a caller can act on exactly
// the rows it deletes.
Result<PlannedDelete> PlanDelete(Table& table, const std::string& filter,
                                 const std::vector<std::string>& columns = {},
                                 const std::function<Status(const Batch&)>& on_rows = nullptr);
// Stages the deletion of `positions` (data file -> row positions) into `u`,
// as DELETE and upserts commit it: a file whose rows are then all deleted is
// removed whole (its DV with it); the others become required files with
// position delete files (format v2) or deletion vectors (v3: merged with the
// file's earlier deletes, which they replace). The positions must be live
// rows of the snapshot `tasks` was planned on (as a scan or a current key
// index finds them), so that none repeats an earlier delete: a v2 file's
// earlier position deletes are read only when they and these may delete
// every row (their record counts say so), not at every delete: a streaming
// upsert table gains a delete file each checkpoint, and each would be read
// again by every later one. The table's files are found in `tasks` (planned
// with their deletes); the others must be in `added` (files the same commit
// adds). `before_create` sees each delete file's path before it is created.
Status StageRowDeletes(FileIO& io, const iceberg::TableMetadata& md,
                       std::map<std::string, iceberg::PositionSet> positions,
                       const std::map<std::string, const iceberg::FileScanTask*>& tasks,
                       const std::map<std::string, iceberg::DataFile>& added,
                       const std::function<Status(const std::string& path)>& before_create,
                       SnapshotUpdate* u);

// Deletes the delete files a plan wrote (when it is not committed).
void DiscardPlannedDelete(Table& table, const PlannedDelete& planned);

}  // namespace sluice::catalog
