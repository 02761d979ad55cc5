// Evaluate: the tree walk, column references and literals, and the operators
// that decide which rows their arguments are evaluated for (AND, OR, CASE,
// COALESCE), plus NOT, IS NULL, IN and NULLIF.
#include "expr/evaluate.h"

#include <functional>

#include "expr/kernels.h"

namespace sluice::expr {

using internal::IsActive;

void RowErrors::Reset(int64_t rows) {
  rows_ = rows;
  count_ = 0;
  failed_.clear();
  messages_.clear();
}

const std::string& RowErrors::message(int64_t row) const {
  static const std::string kNone;
  return Failed(row) ? messages_[row] : kNone;
}

void RowErrors::Fail(int64_t row, std::string message) {
  if (failed_.empty()) {
    failed_.assign(rows_, 0);
    messages_.resize(rows_);
  }
  if (failed_[row]) return;
  failed_[row] = 1;
  messages_[row] = std::move(message);
  ++count_;
}

void RowErrors::Merge(const RowErrors& other) {
  if (other.count_ == 0) return;
  for (int64_t i = 0; i < other.rows_; ++i) {
    if (other.failed_[i]) Fail(i, other.messages_[i]);
  }
}

NodePtr ColumnRef(int column, TypePtr type) {
  auto n = std::make_shared<Node>();
  n->kind = Node::Kind::kColumn;
  n->column = column;
  n->type = std::move(type);
  return n;
}

NodePtr Literal(Column value) {
  auto n = std::make_shared<Node>();
  n->kind = Node::Kind::kLiteral;
  n->type = value.type();
  n->literal = std::make_shared<Column>(std::move(value));
  return n;
}

NodePtr NullLiteral(TypePtr type) {
  Column c(type);
  c.AppendNull();
  return Literal(std::move(c));
}

namespace {

// The rows of `active` (all when empty) where `mask` says so.
Active Narrow(const Active& active, int64_t n, const std::function<bool(int64_t)>& keep) {
  Active out(n, 0);
  for (int64_t i = 0; i < n; ++i) out[i] = IsActive(active, i) && keep(i);
  return out;
}

// Copies row `row` of `from` to the end of `to` (same fixed-width or bytes type).
void AppendRow(const Column& from, int64_t row, Column* to) {
  if (from.IsNull(row)) {
    to->AppendNull();
    return;
  }
  if (from.type()->is_binary_like()) {
    to->AppendBytes(from.GetBytes(row));
    return;
  }
  internal::VisitFixed(from.type()->id(), [&](auto t) {
    using T = decltype(t);
    to->Append<T>(from.Value<T>(row));
  });
}

// Row i from values[chosen[i]] (NULL where chosen[i] < 0).
Column Gather(const TypePtr& type, const std::vector<int32_t>& chosen,
              const std::vector<Column>& values) {
  Column out(type);
  out.Reserve(static_cast<int64_t>(chosen.size()));
  for (size_t i = 0; i < chosen.size(); ++i) {
    if (chosen[i] < 0) {
      out.AppendNull();
    } else {
      AppendRow(values[chosen[i]], static_cast<int64_t>(i), &out);
    }
  }
  return out;
}

class Evaluator {
 public:
  Evaluator(const Batch& batch, RowErrors* errors) : batch_(batch), errors_(errors) {}

  Result<Column> Eval(const Node& node, const Active& active) {
    int64_t n = batch_.num_rows();
    switch (node.kind) {
      case Node::Kind::kColumn: return CopyColumn(batch_.columns[node.column], active);
      case Node::Kind::kLiteral: return internal::Broadcast(*node.literal, n);
      case Node::Kind::kCall: break;
    }
    switch (node.op) {
      case Op::kAnd:
      case Op::kOr: return AndOr(node, active);
      case Op::kCase: return Case(node, active);
      case Op::kCoalesce: return Coalesce(node, active);
      default: break;
    }
    std::vector<Column> args;
    args.reserve(node.args.size());
    for (const NodePtr& a : node.args) {
      ASSIGN_OR_RETURN(Column c, Eval(*a, active));
      args.push_back(std::move(c));
    }
    switch (node.op) {
      case Op::kAdd:
      case Op::kSubtract:
      case Op::kMultiply:
      case Op::kDivide:
      case Op::kModulo:
      case Op::kNegate: return internal::EvalArithmetic(node, args, errors_, active);
      case Op::kAbs:
      case Op::kRound:
      case Op::kFloor:
      case Op::kCeil: return internal::EvalMath(node, args, errors_, active);
      case Op::kEqual:
      case Op::kNotEqual:
      case Op::kLess:
      case Op::kLessEqual:
      case Op::kGreater:
      case Op::kGreaterEqual: return internal::EvalCompare(node, args, active);
      case Op::kNot: return Not(args[0], active);
      case Op::kIsNull:
      case Op::kIsNotNull: return IsNull(node.op == Op::kIsNull, args[0], active);
      case Op::kIn: return In(args, active);
      case Op::kNullIf: return NullIf(node, args, active);
      case Op::kCast:
      case Op::kTryCast: return internal::EvalCast(node, args[0], errors_, active);
      case Op::kDateTrunc:
      case Op::kExtract:
      case Op::kAddInterval: return internal::EvalTime(node, args, errors_, active);
      default: return internal::EvalString(node, args, errors_, active);
    }
  }

 private:
  // A column reference evaluates to a copy: the result is owned by the caller.
  Result<Column> CopyColumn(const Column& c, const Active& active) {
    Column out(c.type());
    out.Reserve(c.size());
    for (int64_t i = 0; i < c.size(); ++i) {
      if (IsActive(active, i)) {
        AppendRow(c, i, &out);
      } else {
        out.AppendNull();
      }
    }
    return out;
  }

  // a AND b: FALSE if either is FALSE, else NULL if either is NULL, else TRUE
  // (OR mirrored). b is evaluated only where a does not decide.
  Result<Column> AndOr(const Node& node, const Active& active) {
    bool is_and = node.op == Op::kAnd;
    int64_t n = batch_.num_rows();
    ASSIGN_OR_RETURN(Column a, Eval(*node.args[0], active));
    Active undecided =
        Narrow(active, n, [&](int64_t i) { return a.IsNull(i) || a.GetBool(i) == is_and; });
    ASSIGN_OR_RETURN(Column b, Eval(*node.args[1], undecided));
    Column out(DataType::Boolean());
    out.Reserve(n);
    for (int64_t i = 0; i < n; ++i) {
      if (!IsActive(active, i)) {
        out.AppendNull();
        continue;
      }
      bool a_null = a.IsNull(i), b_null = b.IsNull(i);
      if (!a_null && a.GetBool(i) != is_and) {
        out.AppendBool(!is_and);  // decided by a
      } else if (!b_null && b.GetBool(i) != is_and) {
        out.AppendBool(!is_and);  // decided by b
      } else if (a_null || b_null) {
        out.AppendNull();
      } else {
        out.AppendBool(is_and);
      }
    }
    return out;
  }

  Result<Column> Case(const Node& node, const Active& active) {
    int64_t n = batch_.num_rows();
    size_t pairs = node.args.size() / 2;
    bool has_else = node.args.size() % 2 == 1;
    // chosen[i]: the branch that gives row i its value (pairs = ELSE, -1 = NULL).
    std::vector<int32_t> chosen(n, -1);
    Active open = active.empty() ? Active(n, 1) : active;
    std::vector<Column> values;
    for (size_t k = 0; k < pairs + (has_else ? 1 : 0); ++k) values.emplace_back(node.type);
    for (size_t k = 0; k < pairs; ++k) {
      ASSIGN_OR_RETURN(Column when, Eval(*node.args[2 * k], open));
      Active take = Narrow(open, n, [&](int64_t i) { return !when.IsNull(i) && when.GetBool(i); });
      for (int64_t i = 0; i < n; ++i) {
        if (take[i]) {
          chosen[i] = static_cast<int32_t>(k);
          open[i] = 0;
        }
      }
      ASSIGN_OR_RETURN(values[k], Eval(*node.args[2 * k + 1], take));
    }
    if (has_else) {
      for (int64_t i = 0; i < n; ++i) {
        if (open[i]) chosen[i] = static_cast<int32_t>(pairs);
      }
      ASSIGN_OR_RETURN(values[pairs], Eval(*node.args.back(), open));
    }
    return Gather(node.type, chosen, values);
  }

  Result<Column> Coalesce(const Node& node, const Active& active) {
    int64_t n = batch_.num_rows();
    std::vector<Column> values;
    std::vector<int32_t> chosen(n, -1);
    Active open = active.empty() ? Active(n, 1) : active;
    for (size_t k = 0; k < node.args.size(); ++k) {
      ASSIGN_OR_RETURN(Column v, Eval(*node.args[k], open));
      for (int64_t i = 0; i < n; ++i) {
        if (open[i] && v.IsValid(i)) {
          chosen[i] = static_cast<int32_t>(k);
          open[i] = 0;
        }
      }
      values.push_back(std::move(v));
    }
    return Gather(node.type, chosen, values);
  }

  Result<Column> Not(const Column& a, const Active& active) {
    Column out(DataType::Boolean());
    out.Reserve(a.size());
    for (int64_t i = 0; i < a.size(); ++i) {
      if (!IsActive(active, i) || a.IsNull(i)) {
        out.AppendNull();
      } else {
        out.AppendBool(!a.GetBool(i));
      }
    }
    return out;
  }

  Result<Column> IsNull(bool want_null, const Column& a, const Active& active) {
    Column out(DataType::Boolean());
    out.Reserve(a.size());
    for (int64_t i = 0; i < a.size(); ++i) {
      if (!IsActive(active, i)) {
        out.AppendNull();
      } else {
        out.AppendBool(a.IsNull(i) == want_null);
      }
    }
    return out;
  }

  Result<Column> In(const std::vector<Column>& args, const Active& active) {
    const Column& x = args[0];
    Column out(DataType::Boolean());
    out.Reserve(x.size());
    for (int64_t i = 0; i < x.size(); ++i) {
      if (!IsActive(active, i) || x.IsNull(i)) {
        out.AppendNull();
        continue;
      }
      bool found = false, saw_null = false;
      for (size_t k = 1; k < args.size() && !found; ++k) {
        if (args[k].IsNull(i)) {
          saw_null = true;
        } else {
          found = internal::CompareValues(x, i, args[k], i) == 0;
        }
      }
      if (found) {
        out.AppendBool(true);
      } else if (saw_null) {
        out.AppendNull();
      } else {
        out.AppendBool(false);
      }
    }
    return out;
  }

  // NULLIF(a, b): NULL when a = b, else a.
  Result<Column> NullIf(const Node& node, const std::vector<Column>& args, const Active& active) {
    const Column& a = args[0];
    const Column& b = args[1];
    Column out(node.type);
    out.Reserve(a.size());
    for (int64_t i = 0; i < a.size(); ++i) {
      bool equal = a.IsValid(i) && b.IsValid(i) && internal::CompareValues(a, i, b, i) == 0;
      if (!IsActive(active, i) || equal) {
        out.AppendNull();
      } else {
        AppendRow(a, i, &out);
      }
    }
    return out;
  }

  const Batch& batch_;
  RowErrors* errors_;
};

}  // namespace

Result<Column> Evaluate(const Node& node, const Batch& batch, RowErrors* errors,
                        const Active& active) {
  return Evaluator(batch, errors).Eval(node, active);
}

Result<std::vector<int32_t>> Select(const Node& predicate, const Batch& batch, RowErrors* errors) {
  ASSIGN_OR_RETURN(Column keep, Evaluate(predicate, batch, errors));
  std::vector<int32_t> rows;
  rows.reserve(keep.size());
  for (int64_t i = 0; i < keep.size(); ++i) {
    if (keep.IsValid(i) && keep.GetBool(i) && !errors->Failed(i)) {
      rows.push_back(static_cast<int32_t>(i));
    }
  }
  return rows;
}

}  // namespace sluice::expr
