// Building new table metadata from user-facing text:
//   partition specs  "day(ts), bucket(16, id), truncate(4, name), kind"
//   sort orders      "id, ts DESC NULLS LAST"
// and the first metadata of a new table. Field names of partitions follow Java
// Iceberg: identity → the column name, bucket → <col>_bucket, truncate →
// <col>_trunc, year/month/day/hour → <col>_<unit>, void → <col>_null.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "iceberg/table_metadata.h"

namespace sluice::iceberg {

// Columns are top-level or dotted struct paths ("loc.lat"). Field ids start at
// `first_field_id` (1000 for a table's first spec).
Result<PartitionSpec> ParsePartitionSpec(std::string_view text, const Schema& schema,
                                         int32_t spec_id = 0, int32_t first_field_id = 1000);
Result<SortOrder> ParseSortOrder(std::string_view text, const Schema& schema, int32_t order_id = 1);

struct NewTableOptions {
  int format_version = 2;
  std::map<std::string, std::string> properties;
};

// Options from table properties as users write them ('format-version' = '2'
// or '3' picks the format version; every property is kept).
Result<NewTableOptions> NewTableOptionsFromProperties(
    std::map<std::string, std::string> properties);

// Identifier fields (the primary key) must be required primitives, not
// float or double.
Status ValidateIdentifierFields(const Schema& schema);

// Metadata for a new, empty table at `location` (no snapshots yet). The schema's
// field ids are kept as given (they are already assigned by ParseColumnList).
Result<TableMetadata> NewTableMetadata(const Schema& schema, const PartitionSpec& spec,
                                       const SortOrder& order, const std::string& location,
                                       const NewTableOptions& options);

// Milliseconds since the epoch (wall clock).
int64_t NowMillis();

}  // namespace sluice::iceberg
