// BindAggregateInsert: windows, GROUP BY, aggregates and HAVING (binder.h).
#include <algorithm>
#include <cctype>
#include <map>

#include "columnar/sql_schema.h"
#include "common/ascii.h"
#include "sql/binder.h"
#include "sql/binder_internal.h"
#include "sql/lexer.h"

namespace sluice::sql {
namespace {

using internal::ExprBinder;
using operators::AggKind;

// The aggregate calls of `e` (not inside another aggregate: that is an error).
Status CollectAggregates(const Expr& e, bool inside, std::vector<const Expr*>* out) {
  if (e.kind == Expr::Kind::kFunction && internal::IsAggregateFunction(e.op)) {
    if (inside) return ErrorAt(e.pos, "an aggregate inside an aggregate: {}", e.text);
    out->push_back(&e);
    for (const Expr& a : e.args) RETURN_IF_ERROR(CollectAggregates(a, true, out));
    return Status::OK();
  }
  for (const Expr& a : e.args) RETURN_IF_ERROR(CollectAggregates(a, inside, out));
  if (e.operand) RETURN_IF_ERROR(CollectAggregates(*e.operand, inside, out));
  return Status::OK();
}

// The key an aggregate call is known by: its text, lowercased, without spaces.
std::string AggregateKey(const Expr& e) {
  std::string k;
  for (char c : e.text) {
    if (c != ' ' && c != '\n' && c != '\t') k += static_cast<char>(std::tolower(c));
  }
  return k;
}

bool IsWindowBound(const Expr& e, std::string* which) {
  if (e.kind != Expr::Kind::kColumn || e.column.parts.size() != 1) return false;
  std::string name =
      e.column.parts[0].quoted ? e.column.parts[0].name : AsciiLower(e.column.parts[0].name);
  if (name != "window_start" && name != "window_end") return false;
  *which = name;
  return true;
}

class AggregateBinder {
 public:
  AggregateBinder(const InsertSelect& insert, const Schema& source, const Schema& target,
                  bool over_changelog)
      : insert_(insert),
        source_(source),
        target_(target),
        pre_(source, insert.source),
        retracting_(over_changelog) {}

  Result<AggregatePlan> Bind(const std::string& watermark_column, int64_t lateness_us) {
    plan_.window.allowed_lateness_us = lateness_us;
    if (retracting_ && insert_.window) {
      return NotSupportedAt(insert_.window->pos,
                            "a window over a changelog (a window's rows are committed once, so "
                            "later updates and deletes could not take rows back out of them); "
                            "aggregate with GROUP BY alone");
    }
    if (insert_.window) {
      RETURN_IF_ERROR(BindWindow(watermark_column));
    } else {
      // GROUP BY without a window: one row per group, updated in place.
      plan_.window.window.kind = operators::WindowSpec::Kind::kGlobal;
      time_type_ = DataType::Long();  // (its window bounds are never selected)
    }
    RETURN_IF_ERROR(BindGroupBy());
    RETURN_IF_ERROR(BindAggregates());
    if (retracting_) AddRowCount();
    RETURN_IF_ERROR(BuildPre());
    RETURN_IF_ERROR(BuildPost());
    if (!insert_.window) RETURN_IF_ERROR(BuildKeyPlan());
    return std::move(plan_);
  }

 private:
  Status BindWindow(const std::string& watermark_column) {
    const WindowClause& w = *insert_.window;
    Expr column;
    column.kind = Expr::Kind::kColumn;
    column.pos = w.time_column.pos;
    column.column.parts = {w.time_column};
    ASSIGN_OR_RETURN(plan_.time_column, pre_.ResolveColumn(column));
    const Field& time = source_.fields[plan_.time_column];
    if (time.type->id() != TypeId::kTimestamp && time.type->id() != TypeId::kTimestampTz) {
      return ErrorAt(w.time_column.pos, "the window's time column {} is {}, not a TIMESTAMP",
                     time.name, ToSqlType(*time.type));
    }
    if (watermark_column.empty()) {
      return ErrorAt(w.pos,
                     "source {} has no WATERMARK: declare one on {} (WATERMARK FOR {} AS {} - "
                     "INTERVAL '5' SECOND) so that windows can close",
                     insert_.source.ToString(), time.name, time.name, time.name);
    }
    if (time.name != watermark_column) {
      return ErrorAt(w.time_column.pos,
                     "the window is on {}, but the source's WATERMARK is on {}: windows close "
                     "by the watermark of their time column",
                     time.name, watermark_column);
    }
    time_type_ = time.type;
    std::vector<int64_t> micros;
    for (const Expr& e : w.intervals) {
      ASSIGN_OR_RETURN(expr::Interval iv, internal::IntervalValue(e));
      constexpr int64_t kMaxWindowUs = int64_t{100} * 366 * 86400 * 1000000;  // 100 years
      if (iv.months != 0 || iv.micros <= 0 || iv.micros > kMaxWindowUs) {
        return ErrorAt(e.pos,
                       "a window's {} must be a positive fixed length (microseconds to weeks, at "
                       "most 100 years)",
                       e.text);
      }
      micros.push_back(iv.micros);
    }
    operators::WindowSpec& spec = plan_.window.window;
    switch (w.kind) {
      case WindowClause::Kind::kTumble:
        spec.kind = operators::WindowSpec::Kind::kTumble;
        spec.size_us = micros[0];
        break;
      case WindowClause::Kind::kHop:
        spec.kind = operators::WindowSpec::Kind::kHop;
        spec.slide_us = micros[0];
        spec.size_us = micros[1];
        if (spec.size_us % spec.slide_us != 0 || spec.size_us / spec.slide_us > 1000) {
          return ErrorAt(w.pos,
                         "HOP's size ({}) must be a multiple of its slide ({}), at most 1000 "
                         "times",
                         w.intervals[1].text, w.intervals[0].text);
        }
        break;
      case WindowClause::Kind::kSession:
        spec.kind = operators::WindowSpec::Kind::kSession;
        spec.gap_us = micros[0];
        break;
    }
    return Status::OK();
  }

  Status BindGroupBy() {
    bool bound = false;
    for (const Expr& g : insert_.group_by) {
      std::string which;
      if (IsWindowBound(g, &which)) {
        if (!insert_.window) return NoWindow(g.pos, which);
        bound = true;
        continue;
      }
      if (g.kind != Expr::Kind::kColumn) {
        return NotSupportedAt(g.pos, "GROUP BY an expression ({}); group by a column", g.text);
      }
      ASSIGN_OR_RETURN(int index, pre_.ResolveColumn(g));
      if (std::find(keys_.begin(), keys_.end(), index) != keys_.end()) continue;
      const Field& f = source_.fields[index];
      if (f.type->is_nested()) {
        return NotSupportedAt(g.pos, "GROUP BY a {} column", ToSqlType(*f.type));
      }
      keys_.push_back(index);
      plan_.window.key_types.push_back(f.type);
    }
    if (!insert_.window) {
      if (keys_.empty()) {
        return ErrorAt(insert_.select_pos,
                       "an aggregate without a window needs GROUP BY: each group is a row of "
                       "{}, keyed by the grouped columns",
                       insert_.target.ToString());
      }
      return Status::OK();
    }
    if (!bound) {
      return ErrorAt(insert_.group_by.empty() ? insert_.window->pos : insert_.group_by[0].pos,
                     "GROUP BY must name window_start or window_end of the {} window",
                     insert_.window->kind == WindowClause::Kind::kTumble ? "TUMBLE"
                     : insert_.window->kind == WindowClause::Kind::kHop  ? "HOP"
                                                                         : "SESSION");
    }
    return Status::OK();
  }

  Status BindAggregates() {
    std::vector<const Expr*> calls;
    for (const SelectItem& item : insert_.items) {
      if (item.expr.kind == Expr::Kind::kStar) {
        return ErrorAt(item.pos,
                       "* in an aggregation: name the window bounds, keys and "
                       "aggregates");
      }
      RETURN_IF_ERROR(CollectAggregates(item.expr, false, &calls));
    }
    if (insert_.having) RETURN_IF_ERROR(CollectAggregates(*insert_.having, false, &calls));
    for (const Expr* call : calls) {
      std::string key = AggregateKey(*call);
      if (agg_index_.count(key)) continue;
      operators::AggSpec spec;
      spec.text = call->text;
      bool star = call->args.size() == 1 && call->args[0].kind == Expr::Kind::kStar;
      if (call->op == "count" && star) {
        spec.kind = AggKind::kCountStar;
      } else {
        if (call->args.size() != 1 || star) {
          return ErrorAt(call->pos, "{}() takes one argument{}", call->op,
                         call->op == "count" ? " or *" : "");
        }
        if (call->distinct && call->op != "count") {
          return NotSupportedAt(call->pos, "{}(DISTINCT ...) (only count(DISTINCT x))", call->op);
        }
        static const std::map<std::string, AggKind, std::less<>> kKinds = {
            {"count", AggKind::kCount}, {"sum", AggKind::kSum},
            {"avg", AggKind::kAvg},     {"min", AggKind::kMin},
            {"max", AggKind::kMax},     {"approx_count_distinct", AggKind::kApproxCountDistinct}};
        spec.kind = call->distinct ? AggKind::kCountDistinct : kKinds.at(call->op);
        if (retracting_ && spec.kind == AggKind::kApproxCountDistinct) {
          return NotSupportedAt(call->pos,
                                "{} over a changelog (a HyperLogLog cannot take values back); "
                                "count(DISTINCT ...) can",
                                call->text);
        }
        ASSIGN_OR_RETURN(expr::NodePtr arg, pre_.Bind(call->args[0]));
        spec.input = arg->type;
        args_.push_back(std::move(arg));
      }
      Result<TypePtr> type = operators::ResultType(spec.kind, spec.input);
      if (!type.ok()) return ErrorAt(call->pos, "{}: {}", call->text, type.status().message());
      spec.output = *type;
      spec.retracts = retracting_;
      agg_index_[key] = static_cast<int>(plan_.window.aggs.size());
      plan_.window.aggs.push_back(std::move(spec));
    }
    return Status::OK();
  }

  // $row, the event time, the keys, the aggregate arguments.
  Status BuildPre() {
    ProjectionPlan& pre = plan_.pre;
    Schema with_row = source_;
    Field row;
    row.id = with_row.HighestFieldId() + 1;
    row.name = "$row";
    row.type = DataType::Long();
    row.required = true;
    with_row.fields.push_back(row);
    Schema input;
    auto add = [&](std::string name, TypePtr type, ProjectionColumn c) {
      Field f;
      f.id = static_cast<int32_t>(input.fields.size()) + 1;
      f.name = std::move(name);
      f.type = std::move(type);
      input.fields.push_back(std::move(f));
      pre.columns.push_back(std::move(c));
    };
    auto source_column = [](int index) {
      ProjectionColumn c;
      c.kind = ProjectionColumn::Kind::kSource;
      c.source_index = index;
      return c;
    };
    add("$row", DataType::Long(), source_column(static_cast<int>(source_.fields.size())));
    if (insert_.window) {
      add("$time", time_type_, source_column(plan_.time_column));
    } else {
      add("$time", DataType::Long(), ProjectionColumn{});  // NULL: no window reads it
    }
    for (size_t k = 0; k < keys_.size(); ++k) {
      add(fmt::format("$key{}", k), source_.fields[keys_[k]].type, source_column(keys_[k]));
    }
    for (size_t a = 0; a < args_.size(); ++a) {
      ProjectionColumn c;
      c.kind = ProjectionColumn::Kind::kExpr;
      c.expr = args_[a];
      c.pos = insert_.select_pos;
      add(fmt::format("$arg{}", a), args_[a]->type, std::move(c));
    }
    if (retracting_) add("$retract", DataType::Boolean(), ProjectionColumn{});  // the pipeline's
    if (insert_.where) {
      ASSIGN_OR_RETURN(pre.filter, pre_.BindPredicate(*insert_.where, "WHERE"));
    }
    pre.source_schema = std::make_shared<Schema>(std::move(with_row));
    pre.target_schema = std::make_shared<Schema>(std::move(input));
    return Status::OK();
  }

  // The window rows' schema, and the select list and HAVING over it.
  Status BuildPost() {
    Schema out;
    auto add = [&](std::string name, TypePtr type) {
      Field f;
      f.id = static_cast<int32_t>(out.fields.size()) + 1;
      f.name = std::move(name);
      f.type = std::move(type);
      out.fields.push_back(std::move(f));
    };
    add("window_start", time_type_);
    add("window_end", time_type_);
    for (int k : keys_) add(source_.fields[k].name, source_.fields[k].type);
    for (size_t a = 0; a < plan_.window.aggs.size(); ++a) {
      add(fmt::format("$agg{}", a), plan_.window.aggs[a].output);
    }
    plan_.window.output_schema = std::make_shared<Schema>(out);
    size_t first_agg = 2 + keys_.size();
    const Schema& schema = *plan_.window.output_schema;
    auto resolver = [this, first_agg, &schema](const Expr& e) -> Result<expr::NodePtr> {
      if (e.kind == Expr::Kind::kFunction && internal::IsAggregateFunction(e.op)) {
        int index = static_cast<int>(first_agg) + agg_index_.at(AggregateKey(e));
        return expr::ColumnRef(index, schema.fields[index].type);
      }
      if (e.kind != Expr::Kind::kColumn) return expr::NodePtr();
      std::string which;
      if (IsWindowBound(e, &which)) {
        if (!insert_.window) return NoWindow(e.pos, which);
        int index = which == "window_start" ? 0 : 1;
        return expr::ColumnRef(index, schema.fields[index].type);
      }
      ASSIGN_OR_RETURN(int source_index, pre_.ResolveColumn(e));
      auto key = std::find(keys_.begin(), keys_.end(), source_index);
      if (key == keys_.end()) {
        return ErrorAt(e.pos, "column {} is neither grouped nor inside an aggregate",
                       source_.fields[source_index].name);
      }
      int index = 2 + static_cast<int>(key - keys_.begin());
      return expr::ColumnRef(index, schema.fields[index].type);
    };
    ASSIGN_OR_RETURN(plan_.post, internal::BindProjection(insert_, schema, target_,
                                                          insert_.having.get(), resolver));
    return Status::OK();
  }

  // A retracting operator counts each group's rows (a group left with none
  // is gone): the query's count(*), or one added for it.
  void AddRowCount() {
    plan_.window.retracting = true;
    auto& aggs = plan_.window.aggs;
    for (size_t a = 0; a < aggs.size(); ++a) {
      if (aggs[a].kind == AggKind::kCountStar) {
        plan_.window.rows_agg = static_cast<int>(a);
        return;
      }
    }
    plan_.window.rows_agg = static_cast<int>(aggs.size());
    aggs.push_back({AggKind::kCountStar, nullptr, DataType::Long(), "count(*)", true});
  }

  Status NoWindow(SourcePos pos, const std::string& which) const {
    return ErrorAt(pos, "{}: the query has no window (FROM TUMBLE, HOP or SESSION)", which);
  }

  // The group key a target column takes as it is (or widened: INT into
  // BIGINT maps distinct keys to distinct keys), or -1.
  int GroupKeyOf(const ProjectionColumn& c) const {
    if (c.kind != ProjectionColumn::Kind::kExpr || !c.expr) return -1;
    const expr::Node* n = c.expr.get();
    if (n->kind == expr::Node::Kind::kCall && n->op == expr::Op::kCast && n->args.size() == 1 &&
        n->args[0]->kind == expr::Node::Kind::kColumn &&
        internal::Widens(*n->args[0]->type, *n->type)) {
      n = n->args[0].get();
    }
    if (n->kind != expr::Node::Kind::kColumn) return -1;
    int key = n->column - 2;  // after window_start, window_end
    return key < static_cast<int>(keys_.size()) ? key : -1;
  }

  // Without a window, each group's row is replaced as the group changes: the
  // target's primary key must be the grouped columns, selected as they are.
  Status CheckKeyedByTheGroups() const {
    std::string grouped;
    for (int k : keys_) grouped += (grouped.empty() ? "" : ", ") + source_.fields[k].name;
    auto refuse = [&](const std::string& why) {
      return ErrorAt(insert_.select_pos,
                     "GROUP BY without a window updates one row per group, so table {} needs "
                     "PRIMARY KEY ({}) and those columns selected as they are: {}",
                     insert_.target.ToString(), grouped, why);
    };
    const auto& ids = target_.identifier_field_ids;
    if (ids.empty()) return refuse("it has no primary key");
    std::vector<bool> covered(keys_.size(), false);
    for (size_t i = 0; i < target_.fields.size(); ++i) {
      const Field& f = target_.fields[i];
      if (std::find(ids.begin(), ids.end(), f.id) == ids.end()) continue;
      int key = GroupKeyOf(plan_.post.columns[i]);
      if (key < 0 || key >= static_cast<int>(keys_.size()) || covered[key]) {
        return refuse(fmt::format("its key column {} is not one of them", f.name));
      }
      covered[key] = true;
    }
    for (size_t k = 0; k < keys_.size(); ++k) {
      if (!covered[k]) {
        return refuse(
            fmt::format("{} is grouped but not in its key", source_.fields[keys_[k]].name));
      }
    }
    return Status::OK();
  }

  Status BuildKeyPlan() {
    RETURN_IF_ERROR(CheckKeyedByTheGroups());
    ProjectionPlan& keys = plan_.key_plan;
    keys.source_schema = plan_.post.source_schema;
    auto schema = std::make_shared<Schema>();
    for (int32_t id : target_.identifier_field_ids) {
      for (size_t i = 0; i < target_.fields.size(); ++i) {
        if (target_.fields[i].id != id) continue;
        schema->fields.push_back(target_.fields[i]);
        keys.columns.push_back(plan_.post.columns[i]);
      }
    }
    keys.target_schema = std::move(schema);
    return Status::OK();
  }

  const InsertSelect& insert_;
  const Schema& source_;
  const Schema& target_;
  ExprBinder pre_;
  AggregatePlan plan_;
  TypePtr time_type_;
  std::vector<int> keys_;            // source columns
  std::vector<expr::NodePtr> args_;  // aggregate arguments, in aggregate order (none for count(*))
  std::map<std::string, int> agg_index_;
  bool retracting_;
};

}  // namespace

bool IsAggregation(const InsertSelect& insert) {
  return insert.window != nullptr || !insert.group_by.empty() || insert.having != nullptr;
}

Result<AggregatePlan> BindAggregateInsert(const InsertSelect& insert, const Schema& source,
                                          const Schema& target, const std::string& watermark_column,
                                          int64_t allowed_lateness_us, bool over_changelog) {
  return AggregateBinder(insert, source, target, over_changelog)
      .Bind(watermark_column, allowed_lateness_us);
}

Result<WatermarkSpec> SourceWatermark(const CreateSource& source) {
  if (!source.watermark)
    return Status::Invalid("source {} has no WATERMARK", source.name.ToString());
  const Watermark& wm = *source.watermark;
  const Expr& e = *wm.expr;
  WatermarkSpec out;
  for (const Field& f : source.schema.fields) {
    if (internal::NameMatches(wm.column, f.name)) out.column = f.name;
  }
  if (out.column.empty()) {
    return ErrorAt(wm.column.pos, "WATERMARK FOR {}: no such column", wm.column.name);
  }
  auto names_column = [&](const Expr& c) {
    return c.kind == Expr::Kind::kColumn && c.column.parts.size() == 1 &&
           internal::NameMatches(c.column.parts[0], out.column);
  };
  if (names_column(e)) return out;
  if (e.kind == Expr::Kind::kBinary && e.op == "-" && names_column(e.args[0]) &&
      e.args[1].kind == Expr::Kind::kInterval) {
    ASSIGN_OR_RETURN(expr::Interval iv, internal::IntervalValue(e.args[1]));
    if (iv.months != 0 || iv.micros < 0) {
      return ErrorAt(e.args[1].pos, "a watermark delay is a fixed length (seconds to weeks)");
    }
    out.delay_us = iv.micros;
    return out;
  }
  return ErrorAt(e.pos, "WATERMARK FOR {0} AS must be {0} or {0} - INTERVAL '...' unit",
                 wm.column.name);
}

}  // namespace sluice::sql
