// Bound scalar expressions: typed trees over the columns of a batch, built by
// the SQL binder (sql/binder.h) and evaluated a batch at a time
// (expr/evaluate.h). Semantics: docs/sql.md "Expressions".
//
// A Node is a column reference, a literal or a call of an Op on argument
// nodes. Every node has its result type already decided by the binder, and
// the arguments of a call already have the types the op needs (the binder
// inserts the casts): arithmetic and comparisons see two arguments of one
// type, CASE branches and COALESCE arguments have the result's type. The
// evaluator therefore never converts types implicitly.
//
// Types an expression computes with: BOOLEAN, INT, BIGINT, DOUBLE (FLOAT and
// the _NS timestamps only as column values and CAST operands), DECIMAL(p,s)
// with p <= 38, DATE, TIMESTAMP, TIMESTAMPTZ, STRING. Nested and binary values
// pass through as column references only.
//
// Nodes are immutable once built and shared between threads (NodePtr).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "columnar/column.h"

namespace re2 {
class RE2;
}

namespace sluice::expr {

enum class Op : uint8_t {
  // Arithmetic on two arguments of one numeric type (INT, BIGINT, DOUBLE,
  // DECIMAL); results outside the type are row errors, as is / or % by zero.
  // For DECIMAL the result type carries the precision and scale.
  kAdd,
  kSubtract,
  kMultiply,
  kDivide,  // integers truncate toward zero; DECIMAL / is done in DOUBLE
  kModulo,  // the sign of the dividend
  kNegate,
  // Comparisons of two arguments of one type; NULL if either is NULL.
  kEqual,
  kNotEqual,
  kLess,
  kLessEqual,
  kGreater,
  kGreaterEqual,
  // Three-valued logic; the right side of AND/OR is only evaluated for rows
  // the left side does not decide.
  kAnd,
  kOr,
  kNot,
  kIsNull,
  kIsNotNull,
  // args[0] IN (args[1..]): TRUE on a match, NULL when no match but a NULL
  // in the list or a NULL operand, else FALSE.
  kIn,
  // args[0] LIKE pattern (a constant: Node::pattern, with % and _).
  kLike,
  // CASE: args are when_1, then_1, ..., when_n, then_n[, else]. A THEN is
  // evaluated only for rows whose WHEN is the first that holds; ELSE only
  // for rows no WHEN holds (so a branch not taken raises no row error).
  kCase,
  kCoalesce,  // each argument only for rows still NULL
  kNullIf,
  // CAST to the node's type: a value that does not convert is a row error
  // (kCast) or NULL (kTryCast).
  kCast,
  kTryCast,
  // Strings.
  kConcat,          // a || b: NULL if either is NULL
  kConcatSkipNull,  // concat(a, b, ...): NULLs are skipped
  kLower,           // ASCII letters only
  kUpper,
  kLength,     // in code points
  kSubstring,  // (s, start[, length]), 1-based in code points
  kTrim,       // spaces, both ends
  kLTrim,
  kRTrim,
  kStartsWith,
  kRegexpMatches,  // Node::regex (RE2), matched anywhere in the string
  // Math.
  kAbs,
  kRound,  // (x[, digits]): half away from zero; digits a constant
  kFloor,
  kCeil,
  // Time (UTC).
  kDateTrunc,    // Node::unit; same type as the argument
  kExtract,      // Node::unit; BIGINT
  kAddInterval,  // args[0] + Node::interval (negated for subtraction by the binder)
};

// A calendar interval: months (variable length) and microseconds.
struct Interval {
  int32_t months = 0;
  int64_t micros = 0;
};

// date_trunc / extract units.
enum class TimeUnit : uint8_t {
  kMicrosecond,
  kMillisecond,
  kSecond,
  kMinute,
  kHour,
  kDay,
  kWeek,  // date_trunc: the Monday; extract: ISO week number
  kMonth,
  kQuarter,
  kYear,
  kDayOfWeek,  // extract only: 0 = Sunday .. 6
  kDayOfYear,  // extract only
  kEpoch,      // extract only: whole seconds since 1970-01-01 UTC
};

struct Node;
using NodePtr = std::shared_ptr<const Node>;

struct Node {
  enum class Kind : uint8_t { kColumn, kLiteral, kCall };
  Kind kind = Kind::kLiteral;
  TypePtr type;  // the result type

  int column = -1;  // kColumn: index of the top-level column in the batch
  // kLiteral: one row holding the value (or a null) of `type`.
  std::shared_ptr<const Column> literal;

  Op op = Op::kAdd;  // kCall
  std::vector<NodePtr> args;
  std::string pattern;                    // kLike
  char like_escape = 0;                   // kLike: 0 = none
  std::shared_ptr<const re2::RE2> regex;  // kRegexpMatches
  TimeUnit unit = TimeUnit::kDay;         // kDateTrunc, kExtract
  Interval interval;                      // kAddInterval
  int round_digits = 0;                   // kRound

  // For row errors: "line L, column C: <what>" names the expression.
  std::string where;  // "line 3, column 17"
  std::string text;   // the expression as written, shortened: "a + b"
};

NodePtr ColumnRef(int column, TypePtr type);
// A literal from a one-row column (null or not) of its type.
NodePtr Literal(Column value);
NodePtr NullLiteral(TypePtr type);

// Whether the node is a literal (its value the same for every row).
inline bool IsConstant(const Node& n) { return n.kind == Node::Kind::kLiteral; }

}  // namespace sluice::expr
