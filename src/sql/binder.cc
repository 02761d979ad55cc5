#include "sql/binder.h"

#include <algorithm>
#include <cctype>

#include "columnar/sql_schema.h"
#include "sql/binder_internal.h"
#include "sql/lexer.h"

namespace sluice::sql {
namespace {

using internal::ChangesZoneOnly;
using internal::SameType;
using internal::Widens;

bool NameMatches(const Identifier& id, std::string_view name) {
  if (id.quoted) return id.name == name;
  return id.name.size() == name.size() &&
         std::equal(name.begin(), name.end(), id.name.begin(), [](char a, char b) {
           return std::tolower(static_cast<unsigned char>(a)) ==
                  std::tolower(static_cast<unsigned char>(b));
         });
}

std::string ColumnNames(const Schema& schema) {
  std::string out;
  for (const Field& f : schema.fields) out += (out.empty() ? "" : ", ") + f.name;
  return out;
}

// A select item after binding its expression, before assigning it to a target.
struct BoundValue {
  enum class Kind { kSource, kLiteral, kNull };
  Kind kind = Kind::kNull;
  int source_index = -1;
  TypePtr type;  // kSource: its type after casts; otherwise the CAST type or null
  Literal literal;
  std::string what;  // "column kind", "CAST(ts AS TIMESTAMPTZ)", "'x'"
};

class Binder {
 public:
  Binder(const InsertSelect& insert, const Schema& source, const Schema& target)
      : insert_(insert), source_(source), target_(target) {}

  Result<ProjectionPlan> Bind() {
    // Values in select order, * expanded.
    std::vector<std::pair<BoundValue, SourcePos>> values;
    for (const SelectItem& item : insert_.items) {
      if (item.expr.kind == Expr::Kind::kStar) {
        for (size_t i = 0; i < source_.fields.size(); ++i) {
          const Field& f = source_.fields[i];
          values.push_back({BoundValue{BoundValue::Kind::kSource,
                                       static_cast<int>(i),
                                       f.type,
                                       {},
                                       fmt::format("column {}", f.name)},
                            item.pos});
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
  Result<BoundValue> BindExpr(const Expr& expr) {
    BoundValue v;
    switch (expr.kind) {
      case Expr::Kind::kStar: return ErrorAt(expr.pos, "* is only allowed as a select item");
      case Expr::Kind::kColumn: {
        ASSIGN_OR_RETURN(v.source_index, ResolveSource(expr));
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
      case Expr::Kind::kCast: break;
    }
    ASSIGN_OR_RETURN(v, BindExpr(*expr.operand));
    const TypePtr& to = expr.cast_type;
    std::string operand =
        v.kind == BoundValue::Kind::kSource ? source_.fields[v.source_index].name : v.what;
    if (v.type != nullptr && !SameType(*v.type, *to) && !Widens(*v.type, *to) &&
        !ChangesZoneOnly(*v.type, *to)) {
      return NotSupportedAt(expr.pos, "CAST from {} to {}", ToSqlType(*v.type), ToSqlType(*to));
    }
    if (v.kind == BoundValue::Kind::kLiteral) {
      Result<std::string> converted = internal::ConvertLiteral(v.literal, to);
      if (!converted.ok()) return ErrorAt(expr.pos, "{}", converted.status().message());
    }
    v.type = to;
    v.what = fmt::format("CAST({} AS {})", operand, expr.cast_type_text);
    return v;
  }

  Result<ProjectionColumn> Assign(const BoundValue& v, const Field& target, SourcePos pos) {
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

  Result<int> ResolveSource(const Expr& expr) {
    const std::vector<Identifier>& parts = expr.column.parts;
    const std::vector<Identifier>& source_parts = insert_.source.parts;
    // Qualifiers must name the source: id, events_in.id, lake.events_in.id.
    size_t qualifiers = parts.size() - 1;
    bool qualified_ok = qualifiers <= source_parts.size();
    for (size_t i = 0; qualified_ok && i < qualifiers; ++i) {
      qualified_ok = NameMatches(parts[i], source_parts[source_parts.size() - qualifiers + i].name);
    }
    if (!qualified_ok) {
      return ErrorAt(expr.pos, "'{}' does not name a column of the source {}",
                     expr.column.ToString(), insert_.source.ToString());
    }
    const Identifier& name = parts.back();
    int found = -1;
    for (size_t i = 0; i < source_.fields.size(); ++i) {
      if (source_.fields[i].name == name.name) return static_cast<int>(i);  // exact wins
      if (NameMatches(name, source_.fields[i].name)) {
        if (found >= 0) {
          return ErrorAt(expr.pos, "column {} is ambiguous in source {} (quote it)", name.name,
                         insert_.source.ToString());
        }
        found = static_cast<int>(i);
      }
    }
    if (found < 0) {
      return ErrorAt(expr.pos, "unknown column {} (source {} has {})", name.name,
                     insert_.source.ToString(), ColumnNames(source_));
    }
    return found;
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
};

}  // namespace

Result<ProjectionPlan> BindInsert(const InsertSelect& insert, const Schema& source,
                                  const Schema& target) {
  return Binder(insert, source, target).Bind();
}

}  // namespace sluice::sql
