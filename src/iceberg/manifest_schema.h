// Internal: the Iceberg schemas of manifest entries and manifest-list entries
// (field ids and order as Java Iceberg writes them) and field-id lookups in
// decoded batches.
#pragma once

#include "columnar/column.h"
#include "iceberg/table_metadata.h"

namespace sluice::iceberg::internal {

Schema ManifestEntrySchema(const TypePtr& partition_type, int format_version);
Schema ManifestFileSchema(int format_version);

// The child of struct column `parent` (or top-level column of `batch`) with
// field id `id`, or null when the file does not have that field.
const Column* ChildById(const Column& parent, int32_t id);
const Column* ColumnById(const Batch& batch, int32_t id);

}  // namespace sluice::iceberg::internal
