// Position delete files (format v2): Parquet files of (file_path, pos) rows
// with the reserved field ids 2147483546 and 2147483545, sorted by path then
// position, one file per partition of the data files they refer to.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "iceberg/manifest.h"
#include "iceberg/positions.h"
#include "iceberg/table_metadata.h"
#include "io/file_io.h"

namespace sluice::iceberg {

constexpr int32_t kDeleteFilePathFieldId = 2147483546;
constexpr int32_t kDeletePosFieldId = 2147483545;

constexpr size_t kOwnFileRows = 1024;

// The schema of a position delete file.
Schema PositionDeleteSchema();

// Writes delete files for `positions` (data file → deleted row positions);
// `data_files` gives each data file's spec and partition. A data file with
// at least kOwnFileRows deleted rows gets a delete file of its own (its
// referenced_data_file set: a reader reads only its positions, not a copy
// of the path per row); the other data files of a partition share one
// (few delete files when deletes are spread thin). Files go under
// <table>/data/. On error, nothing written is left behind. `before_create`,
// when set, is called with each file's path before the file is created (a
// pipeline records it in its journal); its error stops the write.
Result<std::vector<DataFile>> WritePositionDeletes(
    FileIO& io, const TableMetadata& table, const std::map<std::string, PositionSet>& positions,
    const std::map<std::string, DataFile>& data_files,
    const std::function<Status(const std::string& path)>& before_create = nullptr);

}  // namespace sluice::iceberg
