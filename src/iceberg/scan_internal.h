// How a data file's columns become the table schema's when a scan reads them
// (schema evolution on read: missing columns, promoted types, struct members
// added since the file was written, initial defaults), and reading position
// delete files and matching them to data files (scan_deletes.cc). Private to
// the scan's files.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "columnar/column.h"
#include "common/status.h"
#include "iceberg/manifest.h"
#include "io/file_io.h"

namespace sluice::iceberg {

// Builds the table-schema column for `field` from the file's column (which
// may be missing, older-typed, or a struct lacking newer members). A missing
// column is `constant` (single-value bytes) in every row, or null. With
// `take`, a file column (or member) of the table's type is moved out, not
// copied, and `file_col` is left moved-from (its own validity and offsets
// stay usable); without, it is copied.
Result<Column> Reconcile(Column* file_col, const Field& field, int64_t rows,
                         const std::optional<std::string>& constant, bool take);

// A default in JSON single-value form (a field's initial-default) as
// single-value bytes, through the JSON decoder.
Result<std::string> DefaultValue(const Field& f, const std::string& json);

namespace internal {

// The delete files of a snapshot by what they can apply to, so that each
// data file is matched against its own candidates, not against every delete
// file of the table: position deletes and deletion vectors that name their
// data file by that path, other position deletes and partitioned equality
// deletes by partition (spec id and values), equality deletes of an
// unpartitioned spec to every file. The candidates of a file come in the
// order the entries were added (manifest order).
class DeleteFileIndex {
 public:
  // `global(e)`: whether an equality delete applies to every partition.
  DeleteFileIndex(std::vector<const ManifestEntry*> deletes,
                  const std::function<bool(const ManifestEntry&)>& global);
  // The entries that may apply to `file` (sequence numbers not yet checked).
  std::vector<const ManifestEntry*> CandidatesFor(const DataFile& file) const;

 private:
  std::vector<const ManifestEntry*> deletes_;
  std::unordered_map<std::string_view, std::vector<size_t>> by_file_;
  std::map<std::pair<int32_t, PartitionValues>, std::vector<size_t>> by_partition_;
  std::vector<size_t> global_;
};

// The positions the position delete file `d` (read at `location`) deletes,
// by data file path, each list sorted. When `d` names the one data file all
// its rows reference (referenced_data_file), only its positions are read:
// not a copy of the path per deleted row.
using PositionsByFile = std::unordered_map<std::string, std::vector<int64_t>>;
Result<PositionsByFile> ReadPositionDeleteFile(FileIO& io, const std::string& location,
                                               const DataFile& d);

}  // namespace internal

}  // namespace sluice::iceberg
