// Schema and partition-spec evolution (spec §Schema Evolution, §Partition
// Evolution) as pure functions on table metadata: each returns the new
// metadata or a clear error, and never changes an existing field id.
//
//   AddColumn       new optional top-level column (nested types too); fresh ids
//                   after last-column-id
//   RenameColumn    by name; the field id stays, so data files still match
//   WidenColumn     int→long, float→double, decimal(P,S)→decimal(P',S) with P'≥P
//   MakeOptional    required → optional
//   DropColumn      removes a top-level column (not one a partition or the
//                   identifier fields use)
//   SetPartitionSpec a new default spec; an existing identical spec is reused,
//                   partition field ids of equivalent fields are kept
#pragma once

#include <string>

#include "iceberg/table_metadata.h"

namespace sluice::iceberg {

Result<TableMetadata> AddColumn(const TableMetadata& base, const Field& column);
Result<TableMetadata> RenameColumn(const TableMetadata& base, const std::string& from,
                                   const std::string& to);
Result<TableMetadata> WidenColumn(const TableMetadata& base, const std::string& name,
                                  const TypePtr& type);
Result<TableMetadata> MakeOptional(const TableMetadata& base, const std::string& name);
Result<TableMetadata> DropColumn(const TableMetadata& base, const std::string& name);
// `text` as in ParsePartitionSpec ("day(ts), bucket(16, id)"; "" = unpartitioned).
Result<TableMetadata> SetPartitionSpec(const TableMetadata& base, const std::string& text);

}  // namespace sluice::iceberg
