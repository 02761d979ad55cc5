// Row filters: parsed from SQL-like text, bound to a schema, evaluated on
// batches, and projected for pruning (partition values, manifest partition
// summaries, column bounds of data files).
//
//   ts >= '2024-01-01' AND kind = 'click'
//   id IN (1, 2, 3) OR (note IS NULL AND NOT amount < 10.5)
//
// Grammar: OR < AND < NOT < predicate; predicates are `col op literal`
// (=, !=, <>, <, <=, >, >=; literal on either side), `col [NOT] IN (...)`,
// `col IS [NOT] NULL`. Columns are names or dotted struct paths, optionally
// "quoted". Literals: 'strings' (converted to the column's type: dates,
// timestamps, decimals, uuids, hex for binary), numbers, TRUE/FALSE.
// Comparisons with NULL (or NaN) are false, as in SQL.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "columnar/column.h"
#include "common/status.h"
#include "iceberg/manifest.h"
#include "iceberg/table_metadata.h"

namespace sluice::iceberg {

struct Expr;
using ExprPtr = std::shared_ptr<const Expr>;

struct Expr {
  enum class Kind { kTrue, kFalse, kAnd, kOr, kNot, kCompare, kIn, kNotIn, kIsNull, kNotNull };
  enum class Op { kEq, kNe, kLt, kLe, kGt, kGe };
  Kind kind = Kind::kTrue;
  Op op = Op::kEq;
  std::vector<ExprPtr> children;  // and/or/not

  // Predicates. Unbound: `column` and literal texts; bound: field id, type and
  // the literals as single-value bytes (columnar/single_value.h).
  std::string column;
  std::vector<std::string> literal_texts;
  std::vector<bool> literal_is_string;
  int32_t field_id = 0;
  TypePtr type;
  std::vector<std::string> values;

  std::string ToString() const;
};

Result<ExprPtr> ParseFilter(std::string_view text);

// Resolves columns against `schema` (case-sensitive) and converts literals.
// Errors name the column or literal.
Result<ExprPtr> Bind(const ExprPtr& expr, const Schema& schema);

// Field ids a bound expression reads.
void ReferencedFieldIds(const Expr& bound, std::vector<int32_t>* ids);

// keep[i] for each row of `batch` (whose schema holds the referenced fields,
// top level or in structs).
Result<std::vector<bool>> EvaluateRows(const Expr& bound, const Batch& batch);

// Whether a data file might hold matching rows, by its column bounds and
// null/value counts (false only when it certainly holds none).
bool FileMightMatch(const Expr& bound, const DataFile& file);

// Whether rows of a partition might match: the filter projected through the
// spec's transforms, evaluated on the file's partition values.
bool PartitionMightMatch(const Expr& bound, const PartitionSpec& spec, const Schema& schema,
                         const PartitionValues& values);

// The same on a manifest's partition summaries (ranges per partition field).
bool ManifestMightMatch(const Expr& bound, const PartitionSpec& spec, const Schema& schema,
                        const std::vector<FieldSummary>& summaries);

}  // namespace sluice::iceberg
