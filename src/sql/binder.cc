#include "sql/binder.h"

#include <algorithm>
#include <cctype>

#include "columnar/sql_schema.h"
#include "sql/binder_internal.h"
#include "sql/lexer.h"

namespace sluice::sql {
namespace {

using internal::ChangesZoneOnly;
using internal::NameMatches;
using internal::SameType;
using internal::Widens;

std::string ColumnNames(const Schema& schema) {
  std::string out;
  for (const Field& f : schema.fields) out += (out.empty() ? "" : ", ") + f.name;
  return out;
}

// A select item after binding its expression, before assigning it to a target.
struct BoundValue {
  enum class Kind { kSource, kLiteral, kNull, kExpr };
  Kind kind = Kind::kNull;
  int source_index = -1;
  expr::NodePtr node;  // kExpr
  TypePtr type;        // kSource: its type after casts; otherwise the CAST type or null
  Literal literal;
  std::string what;  // "column kind", "CAST(ts AS TIMESTAMPTZ)", "'x'"
};

class Binder {
 public:
  Binder(const InsertSelect& insert, const Schema& source, const Schema& target, const Expr* filter,
         internal::ExprBinder::Resolver resolver)
      : insert_(insert),
        source_(source),
        target_(target),
        filter_(filter),
        computed_only_(resolver != nullptr),
        exprs_(source, insert.source, std::move(resolver)) {}

  Result<ProjectionPlan> Bind() {
    // Values in select order, * expanded.
    std::vector<std::pair<BoundValue, SourcePos>> values;
    for (const SelectItem& item : insert_.items) {
      if (item.expr.kind == Expr::Kind::kStar) {
        for (size_t i = 0; i < source_.fields.size(); ++i) {
          const Field& f = source_.fields[i];
          BoundValue v;
          v.kind = BoundValue::Kind::kSource;
          v.source_index = static_cast<int>(i);
          v.type = f.type;
          v.what = fmt::format("column {}", f.name);
          values.push_back({std::move(v), item.pos});
        }
        continue;
      }
      ASSIGN_OR_RETURN(BoundValue v, BindExpr(item.expr));
      values.push_back({std::move(v), item.pos});
    }

    // Target columns fed by the values, in order.
    std::vector<int> targets;
    if (insert_.columns.empty()) {
      for (size_t i = 0; i < target_.fields.size(); ++i) targets.push_back(static_cast<int>(i));
    } else {
      for (const Identifier& id : insert_.columns) {
        ASSIGN_OR_RETURN(int index, ResolveTarget(id));
        if (std::find(targets.begin(), targets.end(), index) != targets.end()) {
          return ErrorAt(id.pos, "target column {} is listed twice", target_.fields[index].name);
        }
        targets.push_back(index);
      }
    }
    if (values.size() != targets.size()) {
      return ErrorAt(insert_.select_pos,
                     "the SELECT gives {} values (after expanding *) but INSERT INTO {} takes {}",
                     values.size(), insert_.target.ToString(), targets.size());
    }

    ProjectionPlan plan;
    if (filter_ != nullptr) {
      ASSIGN_OR_RETURN(
          plan.filter,
          exprs_.BindPredicate(*filter_, filter_ == insert_.having.get() ? "HAVING" : "WHERE"));
    }
    plan.source_schema = std::make_shared<Schema>(source_);
    plan.target_schema = std::make_shared<Schema>(target_);
    plan.columns.resize(target_.fields.size());
    std::vector<bool> fed(target_.fields.size(), false);
    for (size_t i = 0; i < values.size(); ++i) {
      ASSIGN_OR_RETURN(plan.columns[targets[i]],
                       Assign(values[i].first, target_.fields[targets[i]], values[i].second));
      fed[targets[i]] = true;
    }
    for (size_t i = 0; i < fed.size(); ++i) {
      if (!fed[i] && target_.fields[i].required) {
        return ErrorAt(insert_.target.pos(),
                       "target column {} is NOT NULL but not in the INSERT column list",
                       target_.fields[i].name);
      }
    }
    return plan;
  }

 private:
  // A column, a literal, or a CAST of one that only widens or re-zones is
  // moved or converted whole (no expression evaluation); anything else is
  // an expression.
  static bool IsSimple(const Expr& expr) {
    if (expr.kind == Expr::Kind::kColumn || expr.kind == Expr::Kind::kLiteral) return true;
    return expr.kind == Expr::Kind::kCast && !expr.try_cast && IsSimple(*expr.operand);
  }

  Result<BoundValue> BindExpr(const Expr& expr) {
    if (computed_only_ || !IsSimple(expr)) return BindComputed(expr);
    BoundValue v;
    switch (expr.kind) {
      case Expr::Kind::kStar: return ErrorAt(expr.pos, "* is only allowed as a select item");
      case Expr::Kind::kColumn: {
        ASSIGN_OR_RETURN(v.source_index, exprs_.ResolveColumn(expr));
        const Field& f = source_.fields[v.source_index];
        v.kind = BoundValue::Kind::kSource;
        v.type = f.type;
        v.what = fmt::format("column {}", f.name);
        return v;
      }
      case Expr::Kind::kLiteral:
        v.kind = expr.literal.kind == Literal::Kind::kNull ? BoundValue::Kind::kNull
                                                           : BoundValue::Kind::kLiteral;
        v.literal = expr.literal;
        v.what = internal::DescribeLiteral(expr.literal);
        return v;
      default: break;
    }
    ASSIGN_OR_RETURN(v, BindExpr(*expr.operand));
    const TypePtr& to = expr.cast_type;
    std::string operand =
        v.kind == BoundValue::Kind::kSource ? source_.fields[v.source_index].name : v.what;
    if (v.kind == BoundValue::Kind::kExpr ||
        (v.type != nullptr && !SameType(*v.type, *to) && !Widens(*v.type, *to) &&
         !ChangesZoneOnly(*v.type, *to))) {
      return BindComputed(expr);  // a conversion that may fail per row
    }
    if (v.kind == BoundValue::Kind::kLiteral) {
      Result<std::string> converted = internal::ConvertLiteral(v.literal, to);
      if (!converted.ok()) return ErrorAt(expr.pos, "{}", converted.status().message());
    }
    v.type = to;
    v.what = fmt::format("CAST({} AS {})", operand, expr.cast_type_text);
    return v;
  }

  Result<BoundValue> BindComputed(const Expr& expr) {
    BoundValue v;
    v.kind = BoundValue::Kind::kExpr;
    ASSIGN_OR_RETURN(v.node, exprs_.Bind(expr));
    v.type = v.node->type;
    v.what = expr.text;
    return v;
  }

  // An expression's value for `target`: its own type, or converted when that
  // loses no value but range (a value beyond it fails its row).
  Result<ProjectionColumn> AssignComputed(const BoundValue& v, const Field& target, SourcePos pos) {
    ProjectionColumn out;
    out.pos = pos;
    out.kind = ProjectionColumn::Kind::kExpr;
    out.expr = v.node;
    const DataType& have = *v.type;
    const DataType& want = *target.type;
    if (SameType(have, want)) return out;
    bool converts =
        Widens(have, want) || (want.id() == TypeId::kDecimal &&
                               (have.id() == TypeId::kInt || have.id() == TypeId::kLong ||
                                (have.id() == TypeId::kDecimal && have.scale() <= want.scale())));
    if (!converts) {
      return ErrorAt(pos, "{} is {}, target column {} is {} (use CAST(... AS {}))", v.what,
                     ToSqlType(have), target.name, ToSqlType(want), ToSqlType(want));
    }
    auto cast = std::make_shared<expr::Node>();
    cast->kind = expr::Node::Kind::kCall;
    cast->op = expr::Op::kCast;
    cast->type = target.type;
    cast->args = {v.node};
    cast->where = fmt::format("line {}, column {}", pos.line, pos.column);
    cast->text = fmt::format("{} as target column {}", v.what, target.name);
    out.expr = std::move(cast);
    return out;
  }

  Result<ProjectionColumn> Assign(const BoundValue& v, const Field& target, SourcePos pos) {
    if (v.kind == BoundValue::Kind::kExpr) return AssignComputed(v, target, pos);
    ProjectionColumn out;
    out.pos = pos;
    if (v.type != nullptr && !SameType(*v.type, *target.type) && !Widens(*v.type, *target.type)) {
      return ErrorAt(pos, "{} is {}, target column {} is {}{}", v.what, ToSqlType(*v.type),
                     target.name, ToSqlType(*target.type),
                     ChangesZoneOnly(*v.type, *target.type)
                         ? fmt::format(" (use CAST(... AS {}))", ToSqlType(*target.type))
                         : "");
    }
    switch (v.kind) {
      case BoundValue::Kind::kNull:
        if (target.required) {
          return ErrorAt(pos, "NULL for target column {}, which is NOT NULL", target.name);
        }
        out.kind = ProjectionColumn::Kind::kNull;
        return out;
      case BoundValue::Kind::kSource:
        out.kind = ProjectionColumn::Kind::kSource;
        out.source_index = v.source_index;
        return out;
      case BoundValue::Kind::kExpr: break;  // AssignComputed
      case BoundValue::Kind::kLiteral: {
        Result<std::string> bytes = internal::ConvertLiteral(v.literal, target.type);
        if (!bytes.ok()) {
          if (bytes.status().code() == StatusCode::kNotImplemented) {
            return Status::NotImplemented("line {}, column {}: target column {}: {}", pos.line,
                                          pos.column, target.name, bytes.status().message());
          }
          return ErrorAt(pos, "target column {}: {}", target.name, bytes.status().message());
        }
        out.kind = ProjectionColumn::Kind::kLiteral;
        out.literal = std::move(bytes).value();
        return out;
      }
    }
    return out;
  }

  Result<int> ResolveTarget(const Identifier& id) {
    int found = -1;
    for (size_t i = 0; i < target_.fields.size(); ++i) {
      if (target_.fields[i].name == id.name) return static_cast<int>(i);
      if (NameMatches(id, target_.fields[i].name)) {
        if (found >= 0) {
          return ErrorAt(id.pos, "column {} is ambiguous in table {} (quote it)", id.name,
                         insert_.target.ToString());
        }
        found = static_cast<int>(i);
      }
    }
    if (found < 0) {
      return ErrorAt(id.pos, "table {} has no column {} (it has {})", insert_.target.ToString(),
                     id.name, ColumnNames(target_));
    }
    return found;
  }

  const InsertSelect& insert_;
  const Schema& source_;
  const Schema& target_;
  const Expr* filter_;
  bool computed_only_;  // a resolver decides names: every item goes through the ExprBinder
  internal::ExprBinder exprs_;
};

}  // namespace

Result<ProjectionPlan> BindInsert(const InsertSelect& insert, const Schema& source,
                                  const Schema& target) {
  if (insert.window || !insert.group_by.empty() || insert.having) {
    return ErrorAt(insert.select_pos, "this pipeline aggregates: bind it with BindAggregateInsert");
  }
  return Binder(insert, source, target, insert.where.get(), nullptr).Bind();
}

namespace internal {

Result<ProjectionPlan> BindProjection(const InsertSelect& insert, const Schema& source,
                                      const Schema& target, const Expr* filter,
                                      ExprBinder::Resolver resolver) {
  return Binder(insert, source, target, filter, std::move(resolver)).Bind();
}

}  // namespace internal

}  // namespace sluice::sql
