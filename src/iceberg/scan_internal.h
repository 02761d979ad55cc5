// How a data file's columns become the table schema's when a scan reads them
// (schema evolution on read: missing columns, promoted types, struct members
// added since the file was written, initial defaults), and reading position
// delete files (scan_deletes.cc). Private to the scan's files.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
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

// The positions the position delete file `d` (read at `location`) deletes,
// by data file path, each list sorted. When `d` names the one data file all
// its rows reference (referenced_data_file), only its positions are read:
// not a copy of the path per deleted row.
using PositionsByFile = std::unordered_map<std::string, std::vector<int64_t>>;
Result<PositionsByFile> ReadPositionDeleteFile(FileIO& io, const std::string& location,
                                               const DataFile& d);

}  // namespace internal

}  // namespace sluice::iceberg
