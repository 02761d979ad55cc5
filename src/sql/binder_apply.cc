// ApplyPlan: moving, converting and filling columns of a batch.
#include "columnar/column_ops.h"
#include "columnar/json_writer.h"
#include "columnar/single_value.h"
#include "columnar/sql_schema.h"
#include "expr/evaluate.h"
#include "sql/binder.h"
#include "sql/binder_internal.h"

namespace sluice::sql {
namespace {

// The same values under another type of the same physical layout: a re-zoned
// timestamp, or a nested type whose field ids differ.
Column CopyAs(const Column& src, const TypePtr& type) {
  Column out(type);
  out.Reserve(src.size());
  AppendRowsFrom(src, 0, src.size(), &out);
  return out;
}

Result<Column> LiteralColumn(const std::string& bytes, const TypePtr& type, int64_t rows) {
  Column out(type);
  out.Reserve(rows);
  for (int64_t i = 0; i < rows; ++i) RETURN_IF_ERROR(AppendFromSingleValue(bytes, &out));
  return out;
}

}  // namespace

namespace {

// Rows of `work` (rows `origin[i]` of the source) that failed, with their
// payloads taken from `source` before its columns move.
struct Failures {
  std::vector<uint8_t> failed;  // per row of work
  int64_t count = 0;
  void Fail(int64_t row, std::string error, const Batch& source, int64_t origin,
            std::vector<RejectedRow>* rejected) {
    if (failed.empty()) failed.assign(failed_size, 0);
    if (failed[row]) return;
    failed[row] = 1;
    ++count;
    RejectedRow r;
    r.row = origin;
    r.error = std::move(error);
    AppendJsonRow(source, origin, &r.payload);
    rejected->push_back(std::move(r));
  }
  size_t failed_size = 0;
};

Result<Batch> ApplyPlanRows(const ProjectionPlan& plan, Batch& source, bool may_move,
                            std::vector<RejectedRow>* rejected, std::vector<int64_t>* kept);
Result<Batch> ApplyPlanOrFail(const ProjectionPlan& plan, Batch& source, bool may_move,
                              std::vector<RejectedRow>* rejected, std::vector<int64_t>* kept);

void MarkColumns(const expr::Node* n, std::vector<bool>* read) {
  if (n == nullptr) return;
  if (n->kind == expr::Node::Kind::kColumn && n->column >= 0 &&
      static_cast<size_t>(n->column) < read->size()) {
    (*read)[n->column] = true;
  }
  for (const expr::NodePtr& a : n->args) MarkColumns(a.get(), read);
}

}  // namespace

std::vector<bool> ColumnsRead(const ProjectionPlan& plan) {
  std::vector<bool> read(plan.source_schema->fields.size(), false);
  for (const ProjectionColumn& c : plan.columns) {
    if (c.kind == ProjectionColumn::Kind::kSource && c.source_index >= 0) {
      read[c.source_index] = true;
    }
    MarkColumns(c.expr.get(), &read);
  }
  MarkColumns(plan.filter.get(), &read);
  return read;
}

Result<Batch> ApplyPlan(const ProjectionPlan& plan, Batch source,
                        std::vector<RejectedRow>* rejected, std::vector<int64_t>* kept) {
  return ApplyPlanOrFail(plan, source, true, rejected, kept);
}

Result<Batch> ApplyPlanKeepingSource(const ProjectionPlan& plan, const Batch& source,
                                     std::vector<RejectedRow>* rejected,
                                     std::vector<int64_t>* kept) {
  // Nothing of `source` is moved: the const_cast only lets the shared code take it.
  return ApplyPlanOrFail(plan, const_cast<Batch&>(source), false, rejected, kept);
}

namespace {

Result<Batch> ApplyPlanRows(const ProjectionPlan& plan, Batch& source, bool may_move,
                            std::vector<RejectedRow>* rejected, std::vector<int64_t>* kept) {
  const Schema& from = *plan.source_schema;
  const Schema& to = *plan.target_schema;
  if (source.columns.size() != from.fields.size()) {
    return Status::Invalid("batch has {} columns, the plan's source has {}", source.columns.size(),
                           from.fields.size());
  }
  // How many more outputs read each source column: the last one may move it.
  std::vector<int> uses(source.columns.size(), 0);
  for (const ProjectionColumn& c : plan.columns) {
    if (c.kind == ProjectionColumn::Kind::kSource) {
      const Column& column = source.columns[c.source_index];
      if (!internal::SameType(*column.type(), *from.fields[c.source_index].type)) {
        return Status::Invalid("batch column {} is {}, the plan's source has {}",
                               from.fields[c.source_index].name, ToSqlType(*column.type()),
                               ToSqlType(*from.fields[c.source_index].type));
      }
      ++uses[c.source_index];
    }
  }
  // 1. WHERE: the rows it keeps (failed rows are rejected).
  int64_t source_rows = source.num_rows();
  std::vector<int64_t> origin;  // row of `work` -> row of `source`
  Batch filtered;
  bool has_filter = plan.filter != nullptr;
  Failures failures;
  if (has_filter) {
    expr::RowErrors errors(source_rows);
    ASSIGN_OR_RETURN(std::vector<int32_t> keep, expr::Select(*plan.filter, source, &errors));
    for (int64_t r = 0; r < source_rows && errors.count() > 0; ++r) {
      if (!errors.Failed(r)) continue;
      RejectedRow row{r, errors.message(r), ""};
      AppendJsonRow(source, r, &row.payload);
      rejected->push_back(std::move(row));
    }
    std::vector<uint32_t> take(keep.begin(), keep.end());
    origin.assign(keep.begin(), keep.end());
    filtered = TakeRows(source, take);
  }
  Batch& work = has_filter ? filtered : source;
  int64_t rows = work.num_rows();
  auto origin_of = [&](int64_t r) { return has_filter ? origin[r] : r; };
  failures.failed_size = static_cast<size_t>(rows);

  // 2. Expressions, evaluated before any column of `work` moves; NULL for a
  //    NOT NULL target fails the row.
  std::vector<Column> computed;
  computed.reserve(plan.columns.size());
  for (size_t i = 0; i < plan.columns.size(); ++i) {
    const ProjectionColumn& c = plan.columns[i];
    if (c.kind != ProjectionColumn::Kind::kExpr) {
      computed.emplace_back(to.fields[i].type);
      continue;
    }
    expr::RowErrors errors(rows);
    ASSIGN_OR_RETURN(Column values, expr::Evaluate(*c.expr, work, &errors));
    for (int64_t r = 0; r < rows; ++r) {
      if (errors.Failed(r)) {
        failures.Fail(r, errors.message(r), source, origin_of(r), rejected);
      } else if (to.fields[i].required && values.IsNull(r)) {
        failures.Fail(r,
                      fmt::format("line {}, column {}: NULL for target column {}, which is NOT "
                                  "NULL",
                                  c.pos.line, c.pos.column, to.fields[i].name),
                      source, origin_of(r), rejected);
      }
    }
    computed.push_back(std::move(values));
  }
  for (size_t i = 0; i < plan.columns.size(); ++i) {
    const ProjectionColumn& c = plan.columns[i];
    if (c.kind != ProjectionColumn::Kind::kSource || !to.fields[i].required) continue;
    const Column& src = work.columns[c.source_index];
    for (int64_t r = 0; r < rows && src.null_count() > 0; ++r) {
      if (src.IsNull(r)) {
        failures.Fail(r,
                      fmt::format("target column {} is NOT NULL, source column {} is null",
                                  to.fields[i].name, from.fields[c.source_index].name),
                      source, origin_of(r), rejected);
      }
    }
  }

  Batch out;
  out.schema = plan.target_schema;
  out.columns.reserve(to.fields.size());
  for (size_t i = 0; i < plan.columns.size(); ++i) {
    const ProjectionColumn& c = plan.columns[i];
    const Field& target = to.fields[i];
    switch (c.kind) {
      case ProjectionColumn::Kind::kNull: {
        Column nulls(target.type);
        nulls.Reserve(rows);
        for (int64_t r = 0; r < rows; ++r) nulls.AppendNull();
        out.columns.push_back(std::move(nulls));
        break;
      }
      case ProjectionColumn::Kind::kLiteral: {
        ASSIGN_OR_RETURN(Column values, LiteralColumn(c.literal, target.type, rows));
        out.columns.push_back(std::move(values));
        break;
      }
      case ProjectionColumn::Kind::kExpr: out.columns.push_back(std::move(computed[i])); break;
      case ProjectionColumn::Kind::kSource: {
        Column& src = work.columns[c.source_index];
        const std::string& name = from.fields[c.source_index].name;
        bool last_use = --uses[c.source_index] == 0 && (may_move || has_filter);
        const DataType& have = *src.type();
        if (have.Equals(*target.type) ||
            (!have.is_nested() && internal::SameType(have, *target.type))) {
          out.columns.push_back(last_use ? std::move(src) : CopyAs(src, src.type()));
        } else if (internal::SameType(have, *target.type) ||
                   internal::ChangesZoneOnly(have, *target.type)) {
          out.columns.push_back(CopyAs(src, target.type));
        } else {
          Result<Column> cast = CastColumn(src, target.type);
          if (!cast.ok()) {
            return cast.status().WithContextF("column {} to target column {}", name, target.name);
          }
          out.columns.push_back(std::move(cast).value());
        }
        break;
      }
    }
  }
  // 3. Failed rows leave the output.
  if (kept != nullptr) {
    kept->clear();
    for (int64_t r = 0; r < rows; ++r) {
      if (failures.count == 0 || failures.failed[r] == 0) kept->push_back(origin_of(r));
    }
  }
  if (failures.count > 0) {
    std::vector<bool> keep(rows);
    for (int64_t r = 0; r < rows; ++r) keep[r] = failures.failed[r] == 0;
    out = FilterRows(out, keep);
  }
  return out;
}

// Without `rejected`, the first rejected row is the error.
Result<Batch> ApplyPlanOrFail(const ProjectionPlan& plan, Batch& source, bool may_move,
                              std::vector<RejectedRow>* rejected, std::vector<int64_t>* kept) {
  std::vector<RejectedRow> local;
  std::vector<RejectedRow>* out_rejected = rejected != nullptr ? rejected : &local;
  size_t first_rejected = out_rejected->size();
  ASSIGN_OR_RETURN(Batch out, ApplyPlanRows(plan, source, may_move, out_rejected, kept));
  if (rejected == nullptr && out_rejected->size() > first_rejected) {
    return Status::Invalid("{}", (*out_rejected)[first_rejected].error);
  }
  return out;
}

}  // namespace

}  // namespace sluice::sql
