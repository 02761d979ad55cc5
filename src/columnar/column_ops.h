// Row-level operations on Columns and Batches: copying selected rows (the
// partitioned writer routes rows by partition, the scan drops deleted rows),
// and widening casts for Iceberg's type promotions.
#pragma once

#include <cstdint>
#include <vector>

#include "columnar/column.h"
#include "common/status.h"

namespace sluice {

// The column of field `id` in `batch`, at the top level or inside structs
// (not inside lists or maps), or null.
const Column* FindColumnById(const Batch& batch, int32_t id);

// Appends row `row` of `src` to `dst` (same type), nested values included.
void AppendRowFrom(const Column& src, int64_t row, Column* dst);

// The rows of `src` at `rows` (in that order), as a new Column / Batch.
Column TakeRows(const Column& src, const std::vector<uint32_t>& rows);
Batch TakeRows(const Batch& src, const std::vector<uint32_t>& rows);

// Rows where keep[i] is true.
Batch FilterRows(const Batch& src, const std::vector<bool>& keep);

// Converts a column to `target` along an Iceberg type promotion: int→long,
// float→double, decimal(P,S)→decimal(P',S), date→timestamp(_ns) (v3); the
// same type is a copy. Anything else is kInvalidArgument.
Result<Column> CastColumn(const Column& src, const TypePtr& target);

}  // namespace sluice
