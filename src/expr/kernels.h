// The kernels behind Evaluate (evaluate.h), one file per family: arithmetic
// and math (arithmetic.cc), comparisons (compare.cc), casts (cast.cc),
// strings (strings.cc), time (time.cc). Private to src/expr.
//
// A kernel gets its arguments already evaluated (columns of the batch's row
// count), computes rows where `active` is set and every needed argument is
// valid, and appends NULL elsewhere. It reports a row's failure through
// RowError, which also leaves that row NULL.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "columnar/column_ops.h"
#include "common/status.h"
#include "expr/evaluate.h"

namespace sluice::expr::internal {

inline bool IsActive(const Active& active, int64_t row) { return active.empty() || active[row]; }

// "line 3, column 17: <what> in a + b"
void RowError(RowErrors* errors, const Node& node, int64_t row, std::string_view what);

// A column of `n` NULLs of `type`.
Column NullColumn(const TypePtr& type, int64_t n);
// The one row of `one` repeated `n` times.
Column Broadcast(const Column& one, int64_t n);
// Whether `row` is valid in every column.
inline bool AllValid(const std::vector<Column>& args, int64_t row) {
  for (const Column& c : args) {
    if (c.IsNull(row)) return false;
  }
  return true;
}

using ::sluice::VisitFixed;  // (columnar/column_ops.h)

// Powers of ten as int128 (0..38).
int128_t Pow10(int exponent);

Result<Column> EvalArithmetic(const Node& node, std::vector<Column>& args, RowErrors* errors,
                              const Active& active);
Result<Column> EvalMath(const Node& node, std::vector<Column>& args, RowErrors* errors,
                        const Active& active);
Result<Column> EvalCompare(const Node& node, std::vector<Column>& args, const Active& active);
Result<Column> EvalCast(const Node& node, Column& arg, RowErrors* errors, const Active& active);
Result<Column> EvalString(const Node& node, std::vector<Column>& args, RowErrors* errors,
                          const Active& active);
Result<Column> EvalTime(const Node& node, std::vector<Column>& args, RowErrors* errors,
                        const Active& active);

// `value` LIKE `pattern` (% and _; `escape` 0 for none), in strings.cc.
bool LikeMatch(std::string_view value, std::string_view pattern, char escape);

// Three-way comparison of row i of a and row j of b (same type, both valid).
// Doubles order NaN above every number and equal to itself.
int CompareValues(const Column& a, int64_t i, const Column& b, int64_t j);

}  // namespace sluice::expr::internal
