// Internal: helpers shared by the expression parser, evaluator and pruner.
#pragma once

#include <string_view>

#include "iceberg/expression.h"

namespace sluice::iceberg::internal {

ExprPtr MakeExpr(Expr e);
ExprPtr MakeConst(bool v);
// Negation normal form: NOT pushed down to the predicates.
ExprPtr PushNot(const ExprPtr& e, bool negate);
bool IsNaNValue(const DataType& t, std::string_view v);
bool Holds(Expr::Op op, int cmp);
// A predicate on one non-null value (single-value bytes).
bool PredicateOnValue(const Expr& e, std::string_view v);

}  // namespace sluice::iceberg::internal
