#include "iceberg/expression.h"

#include <cctype>
#include <cmath>

#include "columnar/column_ops.h"
#include "columnar/single_value.h"
#include "columnar/value_format.h"
#include "common/endian.h"
#include "iceberg/expression_internal.h"

namespace sluice::iceberg {

using Kind = Expr::Kind;
using Op = Expr::Op;

namespace internal {

ExprPtr MakeExpr(Expr e) { return std::make_shared<const Expr>(std::move(e)); }

ExprPtr MakeConst(bool v) {
  Expr e;
  e.kind = v ? Kind::kTrue : Kind::kFalse;
  return MakeExpr(std::move(e));
}

namespace {
Op Negate(Op op) {
  switch (op) {
    case Op::kEq: return Op::kNe;
    case Op::kNe: return Op::kEq;
    case Op::kLt: return Op::kGe;
    case Op::kLe: return Op::kGt;
    case Op::kGt: return Op::kLe;
    case Op::kGe: return Op::kLt;
  }
  return op;
}

}  // namespace

// Pushes NOT down to the predicates (negation normal form).

ExprPtr PushNot(const ExprPtr& e, bool negate) {
  Expr out = *e;
  switch (e->kind) {
    case Kind::kTrue:
    case Kind::kFalse: return negate ? MakeConst(e->kind == Kind::kFalse) : e;
    case Kind::kNot: return PushNot(e->children[0], !negate);
    case Kind::kAnd:
    case Kind::kOr:
      out.children = {PushNot(e->children[0], negate), PushNot(e->children[1], negate)};
      if (negate) out.kind = e->kind == Kind::kAnd ? Kind::kOr : Kind::kAnd;
      return MakeExpr(std::move(out));
    case Kind::kCompare:
      if (negate) out.op = Negate(e->op);
      return MakeExpr(std::move(out));
    case Kind::kIn:
    case Kind::kNotIn:
      if (negate) out.kind = e->kind == Kind::kIn ? Kind::kNotIn : Kind::kIn;
      return MakeExpr(std::move(out));
    case Kind::kIsNull:
    case Kind::kNotNull:
      if (negate) out.kind = e->kind == Kind::kIsNull ? Kind::kNotNull : Kind::kIsNull;
      return MakeExpr(std::move(out));
  }
  return e;
}

bool IsNaNValue(const DataType& t, std::string_view v) {
  if (t.id() == TypeId::kFloat) return std::isnan(LoadLE<float>(v.data()));
  if (t.id() == TypeId::kDouble) {
    return v.size() == 4 ? std::isnan(LoadLE<float>(v.data()))
                         : std::isnan(LoadLE<double>(v.data()));
  }
  return false;
}

bool Holds(Op op, int cmp) {
  switch (op) {
    case Op::kEq: return cmp == 0;
    case Op::kNe: return cmp != 0;
    case Op::kLt: return cmp < 0;
    case Op::kLe: return cmp <= 0;
    case Op::kGt: return cmp > 0;
    case Op::kGe: return cmp >= 0;
  }
  return false;
}

// Evaluates a predicate on one non-null value (single-value bytes).
bool PredicateOnValue(const Expr& e, std::string_view v) {
  if (IsNaNValue(*e.type, v))
    return e.kind == Kind::kNotIn || (e.kind == Kind::kCompare && e.op == Op::kNe);
  switch (e.kind) {
    case Kind::kCompare: return Holds(e.op, CompareSingleValues(*e.type, v, e.values[0]));
    case Kind::kIn:
    case Kind::kNotIn: {
      bool found = false;
      for (const auto& lit : e.values) found |= CompareSingleValues(*e.type, v, lit) == 0;
      return e.kind == Kind::kIn ? found : !found;
    }
    case Kind::kIsNull: return false;
    case Kind::kNotNull: return true;
    default: return true;
  }
}

}  // namespace internal

namespace {

using internal::MakeExpr;
using internal::PredicateOnValue;
using internal::PushNot;

Status AppendLiteral(const std::string& text, bool is_string, Column* c) {
  const DataType& t = *c->type();
  auto number = [&](auto parse) -> Status {
    if (is_string) return Status::Invalid("'{}' is a string, the column is {}", text, t.ToString());
    return parse();
  };
  char* end = nullptr;
  switch (t.id()) {
    case TypeId::kBoolean: {
      std::string l = text;
      for (auto& ch : l) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      if (l != "true" && l != "false") return Status::Invalid("'{}' is not a boolean", text);
      c->AppendBool(l == "true");
      return Status::OK();
    }
    case TypeId::kInt:
    case TypeId::kLong:
      return number([&]() -> Status {
        errno = 0;
        long long v = std::strtoll(text.c_str(), &end, 10);
        if (*end != '\0' || errno == ERANGE) {
          return Status::Invalid("'{}' is not an integer", text);
        }
        if (t.id() == TypeId::kInt) {
          if (v < INT32_MIN || v > INT32_MAX)
            return Status::OutOfRange("{} is out of int range", text);
          c->Append<int32_t>(static_cast<int32_t>(v));
        } else {
          c->Append<int64_t>(v);
        }
        return Status::OK();
      });
    case TypeId::kFloat:
    case TypeId::kDouble: {
      double v = std::strtod(text.c_str(), &end);
      if (*end != '\0' || text.empty()) return Status::Invalid("'{}' is not a number", text);
      if (t.id() == TypeId::kFloat) {
        c->Append<float>(static_cast<float>(v));
      } else {
        c->Append<double>(v);
      }
      return Status::OK();
    }
    case TypeId::kDecimal: {
      ASSIGN_OR_RETURN(int128_t v, ParseDecimal(text, t.precision(), t.scale()));
      c->Append<int128_t>(v);
      return Status::OK();
    }
    case TypeId::kDate: {
      ASSIGN_OR_RETURN(int32_t v, ParseDate(text));
      c->Append<int32_t>(v);
      return Status::OK();
    }
    case TypeId::kTime: {
      ASSIGN_OR_RETURN(int64_t v, ParseTime(text));
      c->Append<int64_t>(v);
      return Status::OK();
    }
    case TypeId::kTimestamp:
    case TypeId::kTimestampTz:
    case TypeId::kTimestampNs:
    case TypeId::kTimestampTzNs: {
      bool ns = t.id() == TypeId::kTimestampNs || t.id() == TypeId::kTimestampTzNs;
      ASSIGN_OR_RETURN(int64_t v, ParseTimestamp(text, ns));
      c->Append<int64_t>(v);
      return Status::OK();
    }
    case TypeId::kString: c->AppendBytes(text); return Status::OK();
    case TypeId::kUuid: {
      ASSIGN_OR_RETURN(std::string b, ParseUuid(text));
      c->AppendBytes(b);
      return Status::OK();
    }
    case TypeId::kFixed:
    case TypeId::kBinary: {
      ASSIGN_OR_RETURN(std::string b, ParseHex(text));
      if (t.id() == TypeId::kFixed && static_cast<int>(b.size()) != t.width()) {
        return Status::Invalid("'{}' is not {} bytes", text, t.width());
      }
      c->AppendBytes(b);
      return Status::OK();
    }
    default: return Status::Invalid("cannot compare a {} column with a literal", t.ToString());
  }
}

Result<ExprPtr> BindTree(const ExprPtr& e, const Schema& schema) {
  Expr out = *e;
  switch (e->kind) {
    case Kind::kTrue:
    case Kind::kFalse: return e;
    case Kind::kAnd:
    case Kind::kOr:
    case Kind::kNot:
      out.children.clear();
      for (const auto& c : e->children) {
        ASSIGN_OR_RETURN(ExprPtr b, BindTree(c, schema));
        out.children.push_back(b);
      }
      return MakeExpr(std::move(out));
    default: break;
  }
  const Field* f = schema.FindByPath(e->column);
  if (f == nullptr) return Status::Invalid("filter: no column named '{}'", e->column);
  if (f->type->is_nested()) {
    return Status::Invalid("filter: column '{}' is a {}, not a primitive", e->column,
                           f->type->ToString());
  }
  out.field_id = f->id;
  out.type = f->type;
  for (size_t i = 0; i < e->literal_texts.size(); ++i) {
    Column c(f->type);
    Status st = AppendLiteral(e->literal_texts[i], e->literal_is_string[i], &c);
    if (!st.ok()) return st.WithContextF("filter on column '{}'", e->column);
    std::string v;
    AppendSingleValue(c, 0, &v);
    out.values.push_back(std::move(v));
  }
  return MakeExpr(std::move(out));
}

Status EvalInto(const Expr& e, const Batch& batch, std::vector<bool>* keep) {
  const size_t n = static_cast<size_t>(batch.num_rows());
  switch (e.kind) {
    case Kind::kTrue: keep->assign(n, true); return Status::OK();
    case Kind::kFalse: keep->assign(n, false); return Status::OK();
    case Kind::kAnd:
    case Kind::kOr: {
      std::vector<bool> a, b;
      RETURN_IF_ERROR(EvalInto(*e.children[0], batch, &a));
      RETURN_IF_ERROR(EvalInto(*e.children[1], batch, &b));
      keep->resize(n);
      for (size_t i = 0; i < n; ++i)
        (*keep)[i] = e.kind == Kind::kAnd ? (a[i] && b[i]) : (a[i] || b[i]);
      return Status::OK();
    }
    case Kind::kNot: {
      // SQL three-valued logic: NOT of a comparison with NULL is still not true.
      ExprPtr pushed = PushNot(std::make_shared<const Expr>(e), false);
      return EvalInto(*pushed, batch, keep);
    }
    default: break;
  }
  const Column* c = FindColumnById(batch, e.field_id);
  if (c == nullptr) {
    return Status::Internal("filter column {} (field id {}) is not in the batch", e.column,
                            e.field_id);
  }
  keep->resize(n);
  std::string v;
  for (size_t i = 0; i < n; ++i) {
    if (c->IsNull(static_cast<int64_t>(i))) {
      (*keep)[i] = e.kind == Kind::kIsNull;
      continue;
    }
    v.clear();
    AppendSingleValue(*c, static_cast<int64_t>(i), &v);
    (*keep)[i] = PredicateOnValue(e, v);
  }
  return Status::OK();
}

}  // namespace

std::string Expr::ToString() const {
  static const char* kOps[] = {"=", "!=", "<", "<=", ">", ">="};
  switch (kind) {
    case Kind::kTrue: return "true";
    case Kind::kFalse: return "false";
    case Kind::kAnd: return "(" + children[0]->ToString() + " AND " + children[1]->ToString() + ")";
    case Kind::kOr: return "(" + children[0]->ToString() + " OR " + children[1]->ToString() + ")";
    case Kind::kNot: return "NOT " + children[0]->ToString();
    case Kind::kIsNull: return column + " IS NULL";
    case Kind::kNotNull: return column + " IS NOT NULL";
    case Kind::kCompare:
      return fmt::format("{} {} {}", column, kOps[static_cast<int>(op)], literal_texts[0]);
    case Kind::kIn:
    case Kind::kNotIn: {
      std::string s = column + (kind == Kind::kIn ? " IN (" : " NOT IN (");
      for (size_t i = 0; i < literal_texts.size(); ++i) s += (i ? ", " : "") + literal_texts[i];
      return s + ")";
    }
  }
  return "?";
}

Result<ExprPtr> Bind(const ExprPtr& expr, const Schema& schema) {
  ASSIGN_OR_RETURN(ExprPtr bound, BindTree(expr, schema));
  return PushNot(bound, false);
}

void ReferencedFieldIds(const Expr& e, std::vector<int32_t>* ids) {
  for (const auto& c : e.children) ReferencedFieldIds(*c, ids);
  if (e.field_id != 0) ids->push_back(e.field_id);
}

Result<std::vector<bool>> EvaluateRows(const Expr& bound, const Batch& batch) {
  std::vector<bool> keep;
  RETURN_IF_ERROR(EvalInto(bound, batch, &keep));
  return keep;
}

}  // namespace sluice::iceberg
