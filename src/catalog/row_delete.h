// Row-level deletes: `DELETE FROM t WHERE filter` as an Iceberg snapshot.
//
// The matching rows are found by a scan of the current snapshot (with row
// positions); a data file whose rows all match is removed whole, the others
// get position delete files (format v2) or deletion vectors (v3: one Puffin
// file per delete, each DV merged with the file's earlier deletes, the old DV
// removed). The commit requires the data files
// to still be live, so a concurrent rewrite cannot lose the delete: on such a
// conflict the delete is planned again on the new snapshot.
#pragma once

#include <string>

#include "catalog/table.h"

namespace sluice::catalog {

struct DeleteResult {
  int64_t rows_deleted = 0;
  int64_t files_removed = 0;
  int64_t delete_files_added = 0;
  std::optional<int64_t> snapshot_id;  // none when nothing matched
};

Result<DeleteResult> DeleteWhere(Table& table, const std::string& filter,
                                 const CommitOptions& options = {});

}  // namespace sluice::catalog
