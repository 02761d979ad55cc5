// The binder: turns a pipeline's INSERT ... SELECT into a projection plan from
// the source's schema to the target table's schema, and applies the plan to
// batches.
//
// Select items and WHERE may be any expression over the source's columns
// (sql/binder_expr.cc, docs/sql.md "Expressions"); an expression whose type
// is not the target column's is converted when no value can be lost but
// range (INT → BIGINT, integers and decimals → a DECIMAL of at least their
// scale: a value beyond the precision fails its row).
//
// Target columns are fed by position: the i-th select item (after * expands to
// every source column) feeds the i-th target column, or the i-th column of the
// explicit INSERT column list; target columns left out of that list get NULL
// and must be optional. Names resolve case-insensitively when written bare and
// exactly when "quoted"; a column may be qualified by the source's name
// (events_in.id).
//
// Type rules (a value of type S may feed a target column of type T):
//   - S and T are the same type (nested types: the same shape, names and
//     nullability; field ids may differ);
//   - or S widens to T: INT → BIGINT, FLOAT → DOUBLE, DECIMAL(p,s) → DECIMAL(p',s)
//     with p' >= p.
//   TIMESTAMP and TIMESTAMPTZ (and their _NS forms) need an explicit CAST.
//   CAST(x AS T) allows the same conversions plus TIMESTAMP <-> TIMESTAMPTZ
//   (same unit; the stored instant is kept); other casts are kNotImplemented.
//   Literals are converted when binding: 'strings' to any primitive type from
//   its text form ('2024-01-31', '2024-01-31T10:00:00+01:00', '12.50', a uuid),
//   numbers to numeric types (range and scale checked), TRUE/FALSE to BOOLEAN,
//   NULL to any optional column.
// Errors are kInvalidArgument "line L, column C: ..." naming the select item,
// the columns and the types ("column kind is STRING, target column user_id is
// BIGINT"). BindInsert and ApplyPlan are pure functions; a plan is immutable
// and may be shared between threads.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "columnar/column.h"
#include "common/status.h"
#include "expr/expr.h"
#include "operators/window_aggregate.h"
#include "sql/ast.h"

namespace sluice::sql {

// How one target column gets its values.
struct ProjectionColumn {
  enum class Kind { kSource, kLiteral, kNull, kExpr };
  Kind kind = Kind::kNull;
  int source_index = -1;  // kSource: top-level field index in the source schema
  expr::NodePtr expr;     // kExpr: computed from the source row, of the target column's type
  // kLiteral: the value in Iceberg's single-value binary form
  // (columnar/single_value.h), already of the target column's type.
  std::string literal;
  SourcePos pos;  // of the select item; unset for columns left out of the INSERT list
};

struct ProjectionPlan {
  std::shared_ptr<const Schema> source_schema;
  std::shared_ptr<const Schema> target_schema;
  std::vector<ProjectionColumn> columns;  // one per target field, in target order
  expr::NodePtr filter;                   // WHERE (BOOLEAN), or null
};

// A source row that ApplyPlan could not project: an expression failed on it
// (overflow, division by zero, a CAST), or it gave NULL for a NOT NULL
// target column. The pipeline sends it to the dead-letter table.
struct RejectedRow {
  int64_t row = 0;      // in the source batch
  std::string error;    // "line 3, column 17: integer overflow in a + b"
  std::string payload;  // the source row as a JSON object (columnar/json_writer.h)
};

// Binds `insert` (its source and target names are not looked up here: the
// caller passes their schemas).
Result<ProjectionPlan> BindInsert(const InsertSelect& insert, const Schema& source,
                                  const Schema& target);

// Projects a batch of the plan's source schema onto the target schema: rows
// failing the filter are dropped, expressions are evaluated, columns that
// keep their type are moved, not copied (pass the batch with std::move),
// widened and re-zoned columns are converted. Rows that cannot be projected
// are left out of the result and described in `rejected`; without
// `rejected`, the first of them is a kInvalidArgument error. `kept`, when
// given, receives for each output row the source row it came from.
Result<Batch> ApplyPlan(const ProjectionPlan& plan, Batch source,
                        std::vector<RejectedRow>* rejected = nullptr,
                        std::vector<int64_t>* kept = nullptr);
// The same, leaving `source` as it is (its columns are copied, not moved).
Result<Batch> ApplyPlanKeepingSource(const ProjectionPlan& plan, const Batch& source,
                                     std::vector<RejectedRow>* rejected,
                                     std::vector<int64_t>* kept = nullptr);

// The top-level source columns the plan reads (read[i] for column i of its
// source schema): those its select list and WHERE name. A pipeline decodes
// only these (pipeline/decoded_columns.h).
std::vector<bool> ColumnsRead(const ProjectionPlan& plan);

// A windowed aggregation: INSERT INTO t SELECT window_start, k, count(*), ...
// FROM TUMBLE(src, ts, INTERVAL '1' MINUTE) [WHERE ...] GROUP BY window_start,
// window_end, k [HAVING ...] (docs/sql.md "Windows and aggregates"). Three
// stages run it:
//   pre    over source rows plus a last BIGINT column `$row` (each row's index
//          in its batch): WHERE, then the operator's input columns
//          ($row, the event time, the keys, one per aggregate argument);
//   window the operator (operators/window_aggregate.h), its input without $row;
//   post   over the window rows (window_start, window_end, keys, $agg0...):
//          HAVING, then the target table's columns.
struct AggregatePlan {
  ProjectionPlan pre;
  operators::WindowAggregateOptions window;
  ProjectionPlan post;
  int time_column = -1;  // in the source: the watermark's column, the event time (-1: none)
  // GROUP BY without a window (WindowSpec::kGlobal): each group is one row
  // of the target, whose primary key is the grouped columns; every
  // checkpoint replaces the rows of the groups it changed.
  bool updating() const { return window.window.kind == operators::WindowSpec::Kind::kGlobal; }
  // updating(): the target's primary key columns (in key order) of window
  // rows, without HAVING: the keys of the groups HAVING drops (their rows
  // leave the table).
  ProjectionPlan key_plan;
};

// Whether `insert` aggregates (a window in FROM, GROUP BY, HAVING).
bool IsAggregation(const InsertSelect& insert);

// Binds an aggregation over `source` (whose WATERMARK is on `watermark_column`;
// empty when it has none, which is an error naming it). Errors name the line
// and column: a non-grouped column outside an aggregate, GROUP BY without the
// window's bounds, a window column other than the watermark's, ...
// `over_changelog`: the source is a table read as its changelog (its -U and
// -D rows retract): only GROUP BY without a window, no approx_count_distinct;
// the plan's operator retracts (WindowAggregateOptions::retracting, with a
// count(*) added when the query has none) and `pre` ends with a BOOLEAN
// column `$retract` for the pipeline to fill.
Result<AggregatePlan> BindAggregateInsert(const InsertSelect& insert, const Schema& source,
                                          const Schema& target, const std::string& watermark_column,
                                          int64_t allowed_lateness_us, bool over_changelog = false);

// A source's WATERMARK FOR col AS col [- INTERVAL ...]: the column (as the
// source's schema spells it) and the delay in µs; kInvalidArgument (line,
// column) for any other form or an unknown column.
struct WatermarkSpec {
  std::string column;
  int64_t delay_us = 0;
};
Result<WatermarkSpec> SourceWatermark(const CreateSource& source);

}  // namespace sluice::sql
