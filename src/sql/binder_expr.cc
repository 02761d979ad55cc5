// ExprBinder: SQL expressions to typed expr::Node trees (docs/sql.md
// "Expressions" has the rules this file implements).
#include <re2/re2.h>

#include <algorithm>
#include <cctype>
#include <map>

#include "columnar/sql_schema.h"
#include "common/ascii.h"
#include "sql/binder_internal.h"
#include "sql/lexer.h"

namespace sluice::sql::internal {
namespace {

using expr::NodePtr;
using expr::Op;

std::string WhereOf(const Expr& e) {
  return fmt::format("line {}, column {}", e.pos.line, e.pos.column);
}

bool IsTemporal(TypeId id) {
  return id == TypeId::kDate || id == TypeId::kTimestamp || id == TypeId::kTimestampTz ||
         id == TypeId::kTimestampNs || id == TypeId::kTimestampTzNs || id == TypeId::kTime;
}

// INT → DECIMAL(10,0), BIGINT → DECIMAL(19,0).
TypePtr AsDecimal(const DataType& t) {
  if (t.id() == TypeId::kDecimal) return DataType::Decimal(t.precision(), t.scale());
  return DataType::Decimal(t.id() == TypeId::kInt ? 10 : 19, 0);
}

// The numeric type holding both (exactly, but for DOUBLE).
TypePtr NumericCommon(const DataType& a, const DataType& b) {
  TypeId x = a.id(), y = b.id();
  if (x == TypeId::kDouble || y == TypeId::kDouble || x == TypeId::kFloat || y == TypeId::kFloat) {
    return DataType::Double();
  }
  if (x == TypeId::kDecimal || y == TypeId::kDecimal) {
    TypePtr da = AsDecimal(a), db = AsDecimal(b);
    int scale = std::max(da->scale(), db->scale());
    int whole = std::max(da->precision() - da->scale(), db->precision() - db->scale());
    return DataType::Decimal(std::min(38, whole + scale), scale);
  }
  return x == TypeId::kLong || y == TypeId::kLong ? DataType::Long() : DataType::Int();
}

// Decimals compared (=, <, IN ...) whose common type would need more than 38
// digits (DECIMAL(38,0) against 0.5): each keeps its own scale and the kernels
// compare the scaled values exactly, so no value fails a cast to a capped type.
bool OwnScales(const TypePtr& common, const std::vector<ExprBinder::Typed>& values) {
  if (common->id() != TypeId::kDecimal) return false;
  int whole = 0, scale = 0;
  for (const ExprBinder::Typed& v : values) {
    if (!v.node) continue;  // NULL: takes the common type
    TypePtr d = AsDecimal(*v.type());
    whole = std::max(whole, d->precision() - d->scale());
    scale = std::max(scale, d->scale());
  }
  return whole + scale > 38;
}

// A number literal's own type: INT, else BIGINT; with a point DECIMAL(p,s);
// with an exponent (or more than 38 digits) DOUBLE.
Result<TypePtr> NumberType(const Expr& e) {
  std::string_view t = e.literal.text;
  bool negative = !t.empty() && t[0] == '-';
  std::string_view digits = negative ? t.substr(1) : t;
  if (digits.find_first_of("eE") != std::string_view::npos) return DataType::Double();
  size_t dot = digits.find('.');
  if (dot == std::string_view::npos) {
    errno = 0;
    long long v = std::strtoll(std::string(t).c_str(), nullptr, 10);
    if (errno == 0) {
      return v >= INT32_MIN && v <= INT32_MAX ? DataType::Int() : DataType::Long();
    }
    if (digits.size() <= 38) return DataType::Decimal(static_cast<int>(digits.size()), 0);
    return DataType::Double();
  }
  size_t lead = 0;  // leading zeros do not count towards the precision
  while (lead < dot && digits[lead] == '0') ++lead;
  int scale = static_cast<int>(digits.size() - dot - 1);
  int precision = static_cast<int>(dot - lead) + scale;
  if (precision > 38) return DataType::Double();
  return DataType::Decimal(std::max(precision, 1), scale);
}

}  // namespace

Result<expr::Interval> IntervalValue(const Expr& interval) {
  if (interval.kind != Expr::Kind::kInterval) {
    return ErrorAt(interval.pos, "expected an INTERVAL, got {}", interval.text);
  }
  // INTERVAL '5' SECOND, INTERVAL '5 seconds', INTERVAL '1.5' HOUR.
  std::string text = interval.literal.text, unit = interval.op;
  if (unit.empty()) {
    size_t space = text.find(' ');
    if (space == std::string::npos) {
      return ErrorAt(interval.pos, "INTERVAL '{}' needs a unit (INTERVAL '5' SECOND)", text);
    }
    unit = text.substr(space + 1);
    text = text.substr(0, space);
    unit = AsciiUpper(unit);
    if (unit.size() > 1 && unit.back() == 'S') unit.pop_back();
  }
  errno = 0;
  char* end = nullptr;
  double amount = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || errno != 0 || !std::isfinite(amount)) {
    return ErrorAt(interval.pos, "INTERVAL '{}': not a number", interval.literal.text);
  }
  static const std::map<std::string, int64_t, std::less<>> kMicros = {
      {"MICROSECOND", 1},
      {"MILLISECOND", 1000},
      {"SECOND", 1000000},
      {"MINUTE", 60000000},
      {"HOUR", int64_t{3600000000}},
      {"DAY", int64_t{86400000000}},
      {"WEEK", int64_t{604800000000}}};
  expr::Interval iv;
  if (unit == "MONTH" || unit == "YEAR") {
    double months = amount * (unit == "YEAR" ? 12 : 1);
    if (months != std::floor(months) || std::fabs(months) > 1e6) {
      return ErrorAt(interval.pos, "INTERVAL '{}' {}: months and years must be whole", text, unit);
    }
    iv.months = static_cast<int32_t>(months);
  } else if (auto it = kMicros.find(unit); it != kMicros.end()) {
    double micros = amount * static_cast<double>(it->second);
    if (std::fabs(micros) > 9e18 || micros != std::floor(micros)) {
      return ErrorAt(interval.pos,
                     "INTERVAL '{}' {} is not a whole number of microseconds in range", text, unit);
    }
    iv.micros = static_cast<int64_t>(micros);
  } else {
    return ErrorAt(interval.pos, "unknown INTERVAL unit '{}'", unit);
  }
  return iv;
}

NodePtr ExprBinder::Call(const Expr& at, Op op, TypePtr type, std::vector<NodePtr> args) {
  auto n = std::make_shared<expr::Node>();
  n->kind = expr::Node::Kind::kCall;
  n->op = op;
  n->type = std::move(type);
  n->args = std::move(args);
  n->where = WhereOf(at);
  n->text = at.text;
  return n;
}

Result<int> ExprBinder::ResolveColumn(const Expr& expr) const {
  const std::vector<Identifier>& parts = expr.column.parts;
  const std::vector<Identifier>& source_parts = source_name_.parts;
  // Qualifiers must name the source: id, events_in.id, lake.events_in.id.
  size_t qualifiers = parts.size() - 1;
  bool qualified_ok = qualifiers <= source_parts.size();
  for (size_t i = 0; qualified_ok && i < qualifiers; ++i) {
    qualified_ok = NameMatches(parts[i], source_parts[source_parts.size() - qualifiers + i].name);
  }
  if (!qualified_ok) {
    return ErrorAt(expr.pos, "'{}' does not name a column of the source {}", expr.column.ToString(),
                   source_name_.ToString());
  }
  const Identifier& name = parts.back();
  int found = -1;
  for (size_t i = 0; i < source_.fields.size(); ++i) {
    if (source_.fields[i].name == name.name) return static_cast<int>(i);  // exact wins
    if (NameMatches(name, source_.fields[i].name)) {
      if (found >= 0) {
        return ErrorAt(expr.pos, "column {} is ambiguous in source {} (quote it)", name.name,
                       source_name_.ToString());
      }
      found = static_cast<int>(i);
    }
  }
  if (found < 0) {
    std::string names;
    for (const Field& f : source_.fields) names += (names.empty() ? "" : ", ") + f.name;
    return ErrorAt(expr.pos, "unknown column {} (source {} has {})", name.name,
                   source_name_.ToString(), names);
  }
  return found;
}

Result<NodePtr> ExprBinder::Bind(const Expr& e, const TypePtr& want) {
  ASSIGN_OR_RETURN(Typed t, BindAny(e));
  if (want) return Coerce(t, want, e);
  if (t.literal != nullptr && t.node == nullptr) {
    return ErrorAt(e.pos, "the type of NULL is unknown here (write CAST(NULL AS type))");
  }
  return t.node;
}

Result<NodePtr> ExprBinder::BindPredicate(const Expr& e, std::string_view what) {
  ASSIGN_OR_RETURN(Typed t, BindAny(e));
  if (t.node && t.type()->id() != TypeId::kBoolean) {
    return ErrorAt(e.pos, "{} needs a BOOLEAN condition, {} is {}", what, e.text,
                   SqlTypeName(t.type()));
  }
  return Coerce(t, DataType::Boolean(), e);
}

Result<NodePtr> ExprBinder::Coerce(const Typed& t, const TypePtr& type, const Expr& at) {
  if (t.literal != nullptr && t.literal->kind == Expr::Kind::kLiteral) {
    if (t.literal->literal.kind == Literal::Kind::kNull) return expr::NullLiteral(type);
    if (t.node && SameType(*t.node->type, *type)) return t.node;
    Result<Column> v = LiteralValue(t.literal->literal, type);
    if (!v.ok()) return ErrorAt(t.literal->pos, "{}", v.status().message());
    return expr::Literal(std::move(v).value());
  }
  const TypePtr& have = t.node->type;
  if (SameType(*have, *type)) return t.node;
  TypeId from = have->id(), to = type->id();
  bool exact =
      Widens(*have, *type) || (from == TypeId::kInt && to == TypeId::kDouble) ||
      (from == TypeId::kLong && to == TypeId::kDouble) ||
      (IsIntegerType(from) && to == TypeId::kDecimal) ||
      (from == TypeId::kDecimal && to == TypeId::kDecimal && type->scale() >= have->scale()) ||
      (from == TypeId::kDecimal && to == TypeId::kDouble) ||
      (from == TypeId::kDate && IsTimestampType(to));
  if (!exact) {
    return ErrorAt(at.pos, "{} is {}, {} is needed here{}", at.text, SqlTypeName(have),
                   SqlTypeName(type),
                   ChangesZoneOnly(*have, *type) || IsNumericType(from) == IsNumericType(to)
                       ? fmt::format(" (use CAST(... AS {}))", SqlTypeName(type))
                       : "");
  }
  // A decimal of a larger scale, an integer as a decimal: the cast is exact
  // when the precision suffices; otherwise a value that does not fit fails
  // its row.
  return Call(at, Op::kCast, type, {t.node});
}

Result<TypePtr> ExprBinder::CommonType(const std::vector<Typed>& values, const Expr& at) {
  // Typed values decide; bare literals follow them. Only literals: their own types.
  TypePtr common;
  bool only_literals = std::all_of(values.begin(), values.end(),
                                   [](const Typed& t) { return t.literal != nullptr; });
  for (const Typed& v : values) {
    if (!v.node || (v.literal != nullptr && !only_literals)) continue;
    const TypePtr& t = v.node->type;
    if (!common) {
      common = t;
      continue;
    }
    if (SameType(*common, *t)) continue;
    if (IsNumericType(common->id()) && IsNumericType(t->id())) {
      common = NumericCommon(*common, *t);
    } else if (common->id() == TypeId::kDate && IsTimestampType(t->id())) {
      common = t;
    } else if (IsTimestampType(common->id()) && t->id() == TypeId::kDate) {
      // keep the timestamp
    } else {
      return ErrorAt(at.pos, "{} mixes {} and {}{}", at.text, SqlTypeName(common), SqlTypeName(t),
                     ChangesZoneOnly(*common, *t) ? " (CAST one side)" : "");
    }
  }
  if (!common) return ErrorAt(at.pos, "the type of {} is unknown (CAST a NULL)", at.text);
  // Number literals next to numbers: the common type must hold them too.
  if (IsNumericType(common->id())) {
    for (const Typed& v : values) {
      if (v.literal && v.node && IsNumericType(v.node->type->id()) && !only_literals) {
        TypeId lit = v.node->type->id();
        if (common->id() == TypeId::kInt && lit == TypeId::kLong) common = DataType::Long();
        if (IsIntegerType(common->id()) && (lit == TypeId::kDecimal || lit == TypeId::kDouble)) {
          common = NumericCommon(*common, *v.node->type);
        }
        if (common->id() == TypeId::kDecimal && lit == TypeId::kDecimal &&
            v.node->type->scale() > common->scale()) {
          common = NumericCommon(*common, *v.node->type);
        }
      }
    }
  }
  return common;
}

Result<std::vector<NodePtr>> ExprBinder::BindArgs(const Expr& e, size_t min, size_t max) {
  if (e.args.size() < min || e.args.size() > max) {
    return ErrorAt(e.pos, "{}() takes {} argument{}, got {}", e.op,
                   min == max ? std::to_string(min) : fmt::format("{} to {}", min, max),
                   max == 1 ? "" : "s", e.args.size());
  }
  std::vector<NodePtr> out;
  for (const Expr& a : e.args) {
    if (a.kind == Expr::Kind::kStar) return ErrorAt(a.pos, "* is not an argument of {}()", e.op);
    ASSIGN_OR_RETURN(NodePtr n, Bind(a));
    out.push_back(std::move(n));
  }
  return out;
}

Result<ExprBinder::Typed> ExprBinder::BindAny(const Expr& e) {
  if (resolver_) {
    ASSIGN_OR_RETURN(NodePtr resolved, resolver_(e));
    if (resolved) return Typed{std::move(resolved), nullptr};
  }
  switch (e.kind) {
    case Expr::Kind::kStar: return ErrorAt(e.pos, "* is only allowed as a select item");
    case Expr::Kind::kColumn: {
      ASSIGN_OR_RETURN(int index, ResolveColumn(e));
      const Field& f = source_.fields[index];
      if (f.type->is_nested()) {
        return NotSupportedAt(e.pos,
                              "column {} of type {} inside an expression (nested values "
                              "can only be selected as they are)",
                              f.name, ToSqlType(*f.type));
      }
      return Typed{expr::ColumnRef(index, f.type), nullptr};
    }
    case Expr::Kind::kLiteral: {
      Typed t{nullptr, &e};
      switch (e.literal.kind) {
        case Literal::Kind::kNull: return t;
        case Literal::Kind::kBoolean: {
          ASSIGN_OR_RETURN(t.node, Coerce(t, DataType::Boolean(), e));
          return t;
        }
        case Literal::Kind::kString: {
          ASSIGN_OR_RETURN(t.node, Coerce(t, DataType::String(), e));
          return t;
        }
        case Literal::Kind::kNumber: {
          ASSIGN_OR_RETURN(TypePtr type, NumberType(e));
          ASSIGN_OR_RETURN(t.node, Coerce(t, type, e));
          return t;
        }
      }
      return t;
    }
    case Expr::Kind::kCast: return BindCast(e);
    case Expr::Kind::kUnary: return BindUnary(e);
    case Expr::Kind::kBinary: return BindBinary(e);
    case Expr::Kind::kFunction: return BindFunction(e);
    case Expr::Kind::kCase: return BindCase(e);
    case Expr::Kind::kIn: return BindIn(e);
    case Expr::Kind::kBetween: {
      // x BETWEEN a AND b is x >= a AND x <= b (x is evaluated twice: it is pure).
      ASSIGN_OR_RETURN(Typed x, BindAny(e.args[0]));
      ASSIGN_OR_RETURN(Typed low, BindAny(e.args[1]));
      ASSIGN_OR_RETURN(Typed high, BindAny(e.args[2]));
      ASSIGN_OR_RETURN(Typed ge, BindCompare(e, Op::kGreaterEqual, x, low));
      ASSIGN_OR_RETURN(Typed le, BindCompare(e, Op::kLessEqual, x, high));
      NodePtr both = Call(e, Op::kAnd, DataType::Boolean(), {ge.node, le.node});
      if (e.negated) both = Call(e, Op::kNot, DataType::Boolean(), {both});
      return Typed{both, nullptr};
    }
    case Expr::Kind::kLike: return BindLike(e);
    case Expr::Kind::kIsNull: {
      ASSIGN_OR_RETURN(Typed x, BindAny(e.args[0]));
      if (!x.node) {  // NULL IS NULL
        return Typed{expr::Literal([&] {
                       Column c(DataType::Boolean());
                       c.AppendBool(!e.negated);
                       return c;
                     }()),
                     nullptr};
      }
      return Typed{Call(e, e.negated ? Op::kIsNotNull : Op::kIsNull, DataType::Boolean(), {x.node}),
                   nullptr};
    }
    case Expr::Kind::kInterval:
      return ErrorAt(e.pos, "an INTERVAL can only be added to or subtracted from a timestamp");
  }
  return ErrorAt(e.pos, "unexpected expression");
}

Result<ExprBinder::Typed> ExprBinder::BindUnary(const Expr& e) {
  ASSIGN_OR_RETURN(Typed x, BindAny(e.args[0]));
  if (e.op == "NOT") {
    ASSIGN_OR_RETURN(NodePtr b, Coerce(x, DataType::Boolean(), e.args[0]));
    return Typed{Call(e, Op::kNot, DataType::Boolean(), {b}), nullptr};
  }
  if (!x.node) return ErrorAt(e.pos, "the type of -NULL is unknown (CAST the NULL)");
  TypePtr type = x.type();
  if (!IsNumericType(type->id())) {
    return ErrorAt(e.pos, "unary - needs a number, {} is {}", e.args[0].text, SqlTypeName(type));
  }
  if (type->id() == TypeId::kFloat) type = DataType::Double();
  ASSIGN_OR_RETURN(NodePtr n, Coerce(x, type, e.args[0]));
  return Typed{Call(e, Op::kNegate, type, {n}), nullptr};
}

Result<ExprBinder::Typed> ExprBinder::BindBinary(const Expr& e) {
  const std::string& op = e.op;
  if (op == "AND" || op == "OR") {
    ASSIGN_OR_RETURN(Typed a, BindAny(e.args[0]));
    ASSIGN_OR_RETURN(Typed b, BindAny(e.args[1]));
    std::vector<NodePtr> args;
    for (size_t i = 0; i < 2; ++i) {
      const Typed& t = i == 0 ? a : b;
      if (t.node && t.type()->id() != TypeId::kBoolean) {
        return ErrorAt(e.args[i].pos, "{} needs BOOLEAN operands, {} is {}", op, e.args[i].text,
                       SqlTypeName(t.type()));
      }
      ASSIGN_OR_RETURN(NodePtr n, Coerce(t, DataType::Boolean(), e.args[i]));
      args.push_back(std::move(n));
    }
    return Typed{Call(e, op == "AND" ? Op::kAnd : Op::kOr, DataType::Boolean(), args), nullptr};
  }
  // An interval operand: timestamp ± interval, interval + timestamp.
  if ((op == "+" || op == "-") && e.args[1].kind == Expr::Kind::kInterval) {
    ASSIGN_OR_RETURN(Typed ts, BindAny(e.args[0]));
    return BindInterval(e, ts, e.args[1], op == "-");
  }
  if (op == "+" && e.args[0].kind == Expr::Kind::kInterval) {
    ASSIGN_OR_RETURN(Typed ts, BindAny(e.args[1]));
    return BindInterval(e, ts, e.args[0], false);
  }
  ASSIGN_OR_RETURN(Typed a, BindAny(e.args[0]));
  ASSIGN_OR_RETURN(Typed b, BindAny(e.args[1]));
  static const std::map<std::string, Op, std::less<>> kCompare = {
      {"=", Op::kEqual},      {"<>", Op::kNotEqual}, {"<", Op::kLess},
      {"<=", Op::kLessEqual}, {">", Op::kGreater},   {">=", Op::kGreaterEqual}};
  if (auto it = kCompare.find(op); it != kCompare.end()) return BindCompare(e, it->second, a, b);
  if (op == "||") {
    std::vector<NodePtr> args;
    for (size_t i = 0; i < 2; ++i) {
      const Typed& t = i == 0 ? a : b;
      if (t.node && t.type()->id() != TypeId::kString) {
        args.push_back(Call(e.args[i], Op::kCast, DataType::String(), {t.node}));
      } else {
        ASSIGN_OR_RETURN(NodePtr n, Coerce(t, DataType::String(), e.args[i]));
        args.push_back(std::move(n));
      }
    }
    return Typed{Call(e, Op::kConcat, DataType::String(), args), nullptr};
  }
  return BindArithmetic(e, a, b);
}

Result<ExprBinder::Typed> ExprBinder::BindArithmetic(const Expr& e, Typed a, Typed b) {
  for (size_t i = 0; i < 2; ++i) {
    const Typed& t = i == 0 ? a : b;
    if (t.node && !IsNumericType(t.type()->id())) {
      return ErrorAt(e.args[i].pos, "{} needs numbers, {} is {}{}", e.op, e.args[i].text,
                     SqlTypeName(t.type()),
                     IsTemporal(t.type()->id()) ? " (add an INTERVAL to a timestamp)" : "");
    }
  }
  ASSIGN_OR_RETURN(TypePtr common, CommonType({a, b}, e));
  Op op = e.op == "+"   ? Op::kAdd
          : e.op == "-" ? Op::kSubtract
          : e.op == "*" ? Op::kMultiply
          : e.op == "/" ? Op::kDivide
                        : Op::kModulo;
  if (common->id() == TypeId::kFloat) common = DataType::Double();
  if (common->id() == TypeId::kDecimal && op == Op::kDivide) common = DataType::Double();
  if (common->id() == TypeId::kDecimal && op == Op::kMultiply) {
    // Scales add up; the factors keep their own types.
    TypePtr ta = a.node ? AsDecimal(*a.type()) : common;
    TypePtr tb = b.node ? AsDecimal(*b.type()) : common;
    if (a.literal && a.node && a.type()->id() == TypeId::kDouble) ta = common;
    int scale = ta->scale() + tb->scale();
    if (scale > 38) {
      return ErrorAt(e.pos, "{} has a scale of {} (at most 38: CAST a factor to DOUBLE)", e.text,
                     scale);
    }
    int precision = std::min(38, ta->precision() + tb->precision() + 1);
    ASSIGN_OR_RETURN(NodePtr x, Coerce(a, ta, e.args[0]));
    ASSIGN_OR_RETURN(NodePtr y, Coerce(b, tb, e.args[1]));
    return Typed{Call(e, op, DataType::Decimal(std::max(precision, scale), scale), {x, y}),
                 nullptr};
  }
  TypePtr result = common;
  if (common->id() == TypeId::kDecimal && (op == Op::kAdd || op == Op::kSubtract)) {
    result = DataType::Decimal(std::min(38, common->precision() + 1), common->scale());
  }
  ASSIGN_OR_RETURN(NodePtr x, Coerce(a, common, e.args[0]));
  ASSIGN_OR_RETURN(NodePtr y, Coerce(b, common, e.args[1]));
  if (result.get() != common.get()) {
    // Operands at the result's precision (same scale): the kernel checks the sum against it.
    x = Call(e.args[0], Op::kCast, result, {x});
    y = Call(e.args[1], Op::kCast, result, {y});
  }
  return Typed{Call(e, op, result, {x, y}), nullptr};
}

Result<ExprBinder::Typed> ExprBinder::BindInterval(const Expr& e, Typed ts, const Expr& interval,
                                                   bool subtract) {
  if (!ts.node || !(IsTimestampType(ts.type()->id()) || ts.type()->id() == TypeId::kDate)) {
    return ErrorAt(
        e.pos,
        "an INTERVAL can only be added to a DATE, TIMESTAMP or TIMESTAMPTZ; {} is "
        "{}",
        subtract || e.args[0].kind != Expr::Kind::kInterval ? e.args[0].text : e.args[1].text,
        SqlTypeName(ts.type()));
  }
  ASSIGN_OR_RETURN(expr::Interval iv, IntervalValue(interval));
  if (subtract) {
    iv.months = -iv.months;
    iv.micros = -iv.micros;
  }
  NodePtr x = ts.node;
  if (x->type->id() == TypeId::kDate) x = Call(e.args[0], Op::kCast, DataType::Timestamp(), {x});
  auto n = std::const_pointer_cast<expr::Node>(Call(e, Op::kAddInterval, x->type, {x}));
  n->interval = iv;
  return Typed{n, nullptr};
}

Result<ExprBinder::Typed> ExprBinder::BindCompare(const Expr& e, Op op, Typed a, Typed b) {
  ASSIGN_OR_RETURN(TypePtr common, CommonType({a, b}, e));
  if (common->is_nested() || common->id() == TypeId::kBinary) {
    return NotSupportedAt(e.pos, "comparing {} values", SqlTypeName(common));
  }
  // Positions for errors: the operands when `e` has them (a = b), else `e`
  // itself (the value of CASE x WHEN value).
  const Expr& at_a = !e.args.empty() ? e.args[0] : e;
  const Expr& at_b = e.args.size() > 1 ? e.args[1] : e;
  if (OwnScales(common, {a, b})) {
    ASSIGN_OR_RETURN(NodePtr x, Coerce(a, AsDecimal(*a.type()), at_a));
    ASSIGN_OR_RETURN(NodePtr y, Coerce(b, AsDecimal(*b.type()), at_b));
    return Typed{Call(e, op, DataType::Boolean(), {x, y}), nullptr};
  }
  ASSIGN_OR_RETURN(NodePtr x, Coerce(a, common, at_a));
  ASSIGN_OR_RETURN(NodePtr y, Coerce(b, common, at_b));
  return Typed{Call(e, op, DataType::Boolean(), {x, y}), nullptr};
}

Result<ExprBinder::Typed> ExprBinder::BindCast(const Expr& e) {
  ASSIGN_OR_RETURN(Typed x, BindAny(*e.operand));
  const TypePtr& to = e.cast_type;
  if (to->is_nested()) return NotSupportedAt(e.pos, "CAST to {}", ToSqlType(*to));
  if (!x.node) return Typed{expr::NullLiteral(to), nullptr};
  const TypePtr& from = x.type();
  TypeId f = from->id(), t = to->id();
  bool ok = SameType(*from, *to) || (IsNumericType(f) && IsNumericType(t)) ||
            f == TypeId::kString || t == TypeId::kString ||
            (IsTemporal(f) && IsTemporal(t) && f != TypeId::kTime && t != TypeId::kTime);
  if (!ok) return NotSupportedAt(e.pos, "CAST from {} to {}", ToSqlType(*from), ToSqlType(*to));
  // CAST('2024-01-31' AS DATE): converted now, so a bad literal is a bind error.
  if (x.literal != nullptr && f == TypeId::kString && !e.try_cast) {
    Result<Column> v = LiteralValue(x.literal->literal, to);
    if (!v.ok()) return ErrorAt(e.pos, "{}", v.status().message());
    return Typed{expr::Literal(std::move(v).value()), nullptr};
  }
  return Typed{Call(e, e.try_cast ? Op::kTryCast : Op::kCast, to, {x.node}), nullptr};
}

Result<ExprBinder::Typed> ExprBinder::BindCase(const Expr& e) {
  size_t first = e.case_operand ? 1 : 0;
  size_t end = e.args.size() - (e.case_else ? 1 : 0);
  std::vector<NodePtr> whens;
  std::vector<Typed> values;
  std::vector<const Expr*> value_exprs;
  Typed operand;
  if (e.case_operand) {
    ASSIGN_OR_RETURN(operand, BindAny(e.args[0]));
  }
  for (size_t i = first; i < end; i += 2) {
    const Expr& when = e.args[i];
    if (e.case_operand) {
      // CASE x WHEN v THEN ...: x = v.
      ASSIGN_OR_RETURN(Typed v, BindAny(when));
      ASSIGN_OR_RETURN(Typed eq, BindCompare(when, Op::kEqual, operand, v));
      whens.push_back(eq.node);
    } else {
      ASSIGN_OR_RETURN(NodePtr w, BindPredicate(when, "WHEN"));
      whens.push_back(std::move(w));
    }
    ASSIGN_OR_RETURN(Typed then, BindAny(e.args[i + 1]));
    values.push_back(std::move(then));
    value_exprs.push_back(&e.args[i + 1]);
  }
  if (e.case_else) {
    ASSIGN_OR_RETURN(Typed otherwise, BindAny(e.args.back()));
    values.push_back(std::move(otherwise));
    value_exprs.push_back(&e.args.back());
  }
  ASSIGN_OR_RETURN(TypePtr type, CommonType(values, e));
  std::vector<NodePtr> args;
  for (size_t k = 0; k < whens.size(); ++k) {
    args.push_back(whens[k]);
    ASSIGN_OR_RETURN(NodePtr v, Coerce(values[k], type, *value_exprs[k]));
    args.push_back(std::move(v));
  }
  if (e.case_else) {
    ASSIGN_OR_RETURN(NodePtr v, Coerce(values.back(), type, *value_exprs.back()));
    args.push_back(std::move(v));
  }
  return Typed{Call(e, Op::kCase, type, std::move(args)), nullptr};
}

Result<std::pair<std::vector<NodePtr>, TypePtr>> ExprBinder::BindCommon(const Expr& e,
                                                                        bool compared) {
  std::vector<Typed> values;
  for (const Expr& a : e.args) {
    ASSIGN_OR_RETURN(Typed t, BindAny(a));
    values.push_back(std::move(t));
  }
  ASSIGN_OR_RETURN(TypePtr type, CommonType(values, e));
  bool own_scales = compared && OwnScales(type, values);
  std::vector<NodePtr> args;
  for (size_t i = 0; i < values.size(); ++i) {
    TypePtr want = own_scales && values[i].node ? AsDecimal(*values[i].type()) : type;
    ASSIGN_OR_RETURN(NodePtr n, Coerce(values[i], want, e.args[i]));
    args.push_back(std::move(n));
  }
  return std::make_pair(std::move(args), std::move(type));
}

Result<ExprBinder::Typed> ExprBinder::BindIn(const Expr& e) {
  ASSIGN_OR_RETURN(auto bound, BindCommon(e, /*compared=*/true));
  NodePtr in = Call(e, Op::kIn, DataType::Boolean(), std::move(bound.first));
  if (e.negated) in = Call(e, Op::kNot, DataType::Boolean(), {in});
  return Typed{in, nullptr};
}

Result<ExprBinder::Typed> ExprBinder::BindLike(const Expr& e) {
  ASSIGN_OR_RETURN(Typed x, BindAny(e.args[0]));
  ASSIGN_OR_RETURN(NodePtr value, Coerce(x, DataType::String(), e.args[0]));
  const Expr& pattern = e.args[1];
  if (pattern.kind != Expr::Kind::kLiteral || pattern.literal.kind != Literal::Kind::kString) {
    return NotSupportedAt(pattern.pos, "LIKE with a pattern that is not a 'string' literal");
  }
  char escape = 0;
  if (e.args.size() > 2) {
    const Expr& esc = e.args[2];
    if (esc.kind != Expr::Kind::kLiteral || esc.literal.kind != Literal::Kind::kString ||
        esc.literal.text.size() != 1) {
      return ErrorAt(esc.pos, "ESCAPE takes a one-character 'string'");
    }
    escape = esc.literal.text[0];
  }
  auto n = std::const_pointer_cast<expr::Node>(Call(e, Op::kLike, DataType::Boolean(), {value}));
  n->pattern = pattern.literal.text;
  n->like_escape = escape;
  NodePtr out = n;
  if (e.negated) out = Call(e, Op::kNot, DataType::Boolean(), {out});
  return Typed{out, nullptr};
}

}  // namespace sluice::sql::internal
