// Evaluating bound expressions (expr/expr.h) over a batch, a column at a time.
//
// Row errors: a value that cannot be computed (integer overflow, division by
// zero, a CAST that does not convert, a decimal beyond its precision) fails
// that row only. The evaluator records the first error of each row in
// RowErrors ("line 3, column 17: integer overflow in a + b") and gives the
// row a NULL there; the caller drops failed rows from the output and sends
// them to the dead-letter table. Rows are evaluated only where `active` is
// set (CASE branches, AND/OR right sides, COALESCE fallbacks): inactive rows
// get NULL and never record an error.
//
// A non-OK Status from Evaluate is a bug or an unsupported combination that
// the binder should have refused (kInternal / kNotImplemented), never a
// property of the data.
//
// Thread-safety: Evaluate is a pure function of its arguments; one RowErrors
// per thread.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "columnar/column.h"
#include "common/status.h"
#include "expr/expr.h"

namespace sluice::expr {

// The first error message of each failed row.
class RowErrors {
 public:
  explicit RowErrors(int64_t rows = 0) : rows_(rows) {}
  void Reset(int64_t rows);
  bool Failed(int64_t row) const { return !failed_.empty() && failed_[row] != 0; }
  int64_t count() const { return count_; }
  const std::string& message(int64_t row) const;
  // Records `message` for `row` unless the row already failed.
  void Fail(int64_t row, std::string message);
  // Merges the failures of `other` (same row count).
  void Merge(const RowErrors& other);

 private:
  int64_t rows_ = 0;
  int64_t count_ = 0;
  std::vector<uint8_t> failed_;  // empty until the first failure
  std::vector<std::string> messages_;
};

// A set of rows to evaluate: empty = every row, else one byte per row.
using Active = std::vector<uint8_t>;

// Evaluates `node` on every row of `batch` (or the `active` ones), returning a
// column of node.type with batch.num_rows() rows.
Result<Column> Evaluate(const Node& node, const Batch& batch, RowErrors* errors,
                        const Active& active = {});

// Evaluates a BOOLEAN predicate: the rows where it is TRUE (NULL and FALSE
// drop the row), as a selection vector of row indexes in order. Failed rows
// are not selected (they are in `errors`).
Result<std::vector<int32_t>> Select(const Node& predicate, const Batch& batch, RowErrors* errors);

}  // namespace sluice::expr
