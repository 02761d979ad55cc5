// Type rules and literal conversion shared by binder.cc and binder_apply.cc.
// Private to src/sql.
#pragma once

#include <functional>
#include <string>

#include "columnar/column.h"
#include "common/status.h"
#include "expr/expr.h"
#include "sql/ast.h"
#include "sql/binder.h"

namespace sluice::sql::internal {

// Type families the expression rules speak of.
inline bool IsIntegerType(TypeId id) { return id == TypeId::kInt || id == TypeId::kLong; }
inline bool IsNumericType(TypeId id) {
  return IsIntegerType(id) || id == TypeId::kFloat || id == TypeId::kDouble ||
         id == TypeId::kDecimal;
}
inline bool IsTimestampType(TypeId id) {
  return id == TypeId::kTimestamp || id == TypeId::kTimestampTz;
}
// For messages: "BIGINT", or "NULL" for an untyped NULL.
std::string SqlTypeName(const TypePtr& t);
// count, sum, avg, min, max, approx_count_distinct (binder_functions.cc).
bool IsAggregateFunction(std::string_view fn);

// Whether `id` names `name`: exactly when quoted, else ignoring case.
bool NameMatches(const Identifier& id, std::string_view name);

// The same type, ignoring field ids (nested: same shape, names, nullability).
bool SameType(const DataType& a, const DataType& b);
// INT → BIGINT, FLOAT → DOUBLE, DECIMAL(p,s) → DECIMAL(p',s) with p' >= p.
bool Widens(const DataType& from, const DataType& to);
// TIMESTAMP <-> TIMESTAMPTZ, TIMESTAMP_NS <-> TIMESTAMPTZ_NS.
bool ChangesZoneOnly(const DataType& from, const DataType& to);

// `literal` (not NULL) as a value of `type`, in single-value form; errors are
// kInvalidArgument without a position (the caller adds it).
Result<std::string> ConvertLiteral(const Literal& literal, const TypePtr& type);

// The same as a one-row column of `type`.
Result<Column> LiteralValue(const Literal& literal, const TypePtr& type);

// For messages: 'x', 12, TRUE.
std::string DescribeLiteral(const Literal& literal);

// Binds scalar expressions over the columns of one source (binder_expr.cc):
// resolves names, types every node by the rules of docs/sql.md
// "Expressions" and inserts the implicit casts, so that the evaluator sees
// arguments of the types each op needs.
class ExprBinder {
 public:
  // Binds some expressions itself (an aggregate call, a grouped column), or
  // returns null to let the binder go on.
  using Resolver = std::function<Result<expr::NodePtr>(const Expr& e)>;

  ExprBinder(const Schema& source, const QualifiedName& source_name, Resolver resolver = nullptr)
      : source_(source), source_name_(source_name), resolver_(std::move(resolver)) {}

  // A node of the expression's own type. A bare NULL has no type of its own:
  // kInvalidArgument unless `want` gives one.
  Result<expr::NodePtr> Bind(const Expr& e, const TypePtr& want = nullptr);
  // A BOOLEAN node (WHERE, HAVING); `what` names the clause in errors.
  Result<expr::NodePtr> BindPredicate(const Expr& e, std::string_view what);
  // The top-level source column an expression names.
  Result<int> ResolveColumn(const Expr& e) const;

  // A typed value while binding: a bare literal keeps its AST form so that it
  // can take the type its context needs ('2024-01-01' compared with a DATE).
  struct Typed {
    expr::NodePtr node;             // null for a bare NULL
    const Expr* literal = nullptr;  // set for bare literals (NULL, numbers, strings)
    TypePtr type() const { return node ? node->type : nullptr; }
  };

 private:
  Result<Typed> BindAny(const Expr& e);
  Result<Typed> BindUnary(const Expr& e);
  Result<Typed> BindBinary(const Expr& e);
  Result<Typed> BindArithmetic(const Expr& e, Typed a, Typed b);
  Result<Typed> BindInterval(const Expr& e, Typed ts, const Expr& interval, bool subtract);
  Result<Typed> BindCompare(const Expr& e, expr::Op op, Typed a, Typed b);
  Result<Typed> BindFunction(const Expr& e);
  Result<Typed> BindCase(const Expr& e);
  Result<Typed> BindIn(const Expr& e);
  Result<Typed> BindLike(const Expr& e);
  Result<Typed> BindCast(const Expr& e);
  Result<std::vector<expr::NodePtr>> BindArgs(const Expr& e, size_t min, size_t max);
  // Every argument of `e`, converted to their common type (IN, COALESCE, NULLIF).
  // The arguments of `e` coerced to their common type; `compared` (IN): 38-digit
  // decimals of other scales keep their own (OwnScales in binder_expr.cc).
  Result<std::pair<std::vector<expr::NodePtr>, TypePtr>> BindCommon(const Expr& e,
                                                                    bool compared = false);

  // `t` as exactly `type`: literals convert, NULL takes it, other values get
  // an implicit cast when `type` holds every value of theirs (else an error).
  Result<expr::NodePtr> Coerce(const Typed& t, const TypePtr& type, const Expr& at);
  // The type all of `values` convert to (comparisons, CASE, COALESCE, IN).
  Result<TypePtr> CommonType(const std::vector<Typed>& values, const Expr& at);
  expr::NodePtr Call(const Expr& at, expr::Op op, TypePtr type, std::vector<expr::NodePtr> args);

  const Schema& source_;
  const QualifiedName& source_name_;
  Resolver resolver_;
};

// INTERVAL '5' SECOND, '90 minutes', '1' MONTH as months and microseconds.
Result<expr::Interval> IntervalValue(const Expr& interval);

// Binds `insert`'s select items onto `target` over `source`, with `filter` as
// its condition (WHERE, or HAVING for a window's rows) and `resolver` for
// names only the caller knows (binder.cc; BindInsert is the plain case).
Result<ProjectionPlan> BindProjection(const InsertSelect& insert, const Schema& source,
                                      const Schema& target, const Expr* filter,
                                      ExprBinder::Resolver resolver);

}  // namespace sluice::sql::internal
