// Row-level operations on Columns and Batches: copying selected rows (the
// partitioned writer routes rows by partition, the scan drops deleted rows),
// and widening casts for Iceberg's type promotions.
#pragma once

#include <cstdint>
#include <type_traits>
#include <vector>

#include "columnar/column.h"
#include "common/status.h"

namespace sluice {

// The column of field `id` in `batch`, at the top level or inside structs
// (not inside lists or maps), or null.
const Column* FindColumnById(const Batch& batch, int32_t id);
Column* FindColumnById(Batch& batch, int32_t id);

// Appends row `row` of `src` to `dst` (same type), nested values included.
void AppendRowFrom(const Column& src, int64_t row, Column* dst);

// Appends rows [begin, begin + n) of `src` to `dst` (same type): a
// fixed-width (not boolean) or byte column without nulls as one copy of its
// buffers, any other row by row.
void AppendRowsFrom(const Column& src, int64_t begin, int64_t n, Column* dst);
// Appends every row of `src` to `dst` (same schema), column by column.
void AppendBatch(const Batch& src, Batch* dst);

// The rows of `src` at `rows` (in that order), as a new Column / Batch.
Column TakeRows(const Column& src, const std::vector<uint32_t>& rows);
Batch TakeRows(const Batch& src, const std::vector<uint32_t>& rows);

// Keeps only rows `rows` (strictly ascending) of `c`: in place
// (Column::KeepRowsInPlace) when at least half its rows stay, so that the
// buffers it keeps hold at most twice what is left; else, and for lists and
// maps, by TakeRows (a copy of what is left).
void KeepRows(Column* c, const std::vector<uint32_t>& rows);

// Rows where keep[i] is true.
Batch FilterRows(const Batch& src, const std::vector<bool>& keep);

// Calls f(T{}) with the physical value type of a fixed-width type (int32_t,
// int64_t, float, double, int128_t, uint8_t for BOOLEAN).
template <typename F>
decltype(auto) VisitFixed(TypeId id, F&& f) {
  switch (id) {
    case TypeId::kBoolean: return f(uint8_t{});
    case TypeId::kInt:
    case TypeId::kDate: return f(int32_t{});
    case TypeId::kFloat: return f(float{});
    case TypeId::kDouble: return f(double{});
    case TypeId::kDecimal: return f(int128_t{});
    default: return f(int64_t{});  // long, time, timestamps
  }
}

// Three-way comparison of two values; a floating NaN is above every number
// and equal to itself.
template <typename T>
int ThreeWay(T x, T y) {
  if constexpr (std::is_floating_point_v<T>) {
    bool xn = x != x, yn = y != y;
    if (xn || yn) return xn == yn ? 0 : (xn ? 1 : -1);
  }
  return x < y ? -1 : (y < x ? 1 : 0);
}

// Three-way comparison of row i of `a` and row j of `b`, both valid, of one
// type: numbers by value (ThreeWay), strings and binary as unsigned bytes,
// decimals by unscaled value (one scale). Nested values compare equal.
int CompareRows(const Column& a, int64_t i, const Column& b, int64_t j);

// One key of a sort: a column, its direction and where its nulls go.
struct SortKey {
  const Column* column = nullptr;
  bool descending = false;
  bool nulls_first = true;
};

// The rows 0..rows-1 ordered by `keys` (each of `rows` values), the first key
// first; stable (ties keep their order).
std::vector<uint32_t> SortedRows(const std::vector<SortKey>& keys, int64_t rows);

// Converts a column to `target` along an Iceberg type promotion: int→long,
// float→double, decimal(P,S)→decimal(P',S), date→timestamp(_ns) (v3); the
// same type is a copy. Anything else is kInvalidArgument.
Result<Column> CastColumn(const Column& src, const TypePtr& target);

}  // namespace sluice
