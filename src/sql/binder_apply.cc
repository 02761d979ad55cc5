// ApplyPlan: moving, converting and filling columns of a batch.
#include "columnar/column_ops.h"
#include "columnar/single_value.h"
#include "columnar/sql_schema.h"
#include "sql/binder.h"
#include "sql/binder_internal.h"

namespace sluice::sql {
namespace {

// The same values under another type of the same physical layout: a re-zoned
// timestamp, or a nested type whose field ids differ.
Column CopyAs(const Column& src, const TypePtr& type) {
  Column out(type);
  out.Reserve(src.size());
  for (int64_t i = 0; i < src.size(); ++i) AppendRowFrom(src, i, &out);
  return out;
}

Result<Column> LiteralColumn(const std::string& bytes, const TypePtr& type, int64_t rows) {
  Column out(type);
  out.Reserve(rows);
  for (int64_t i = 0; i < rows; ++i) RETURN_IF_ERROR(AppendFromSingleValue(bytes, &out));
  return out;
}

}  // namespace

Result<Batch> ApplyPlan(const ProjectionPlan& plan, Batch source) {
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
  int64_t rows = source.num_rows();
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
      case ProjectionColumn::Kind::kSource: {
        Column& src = source.columns[c.source_index];
        const std::string& name = from.fields[c.source_index].name;
        if (target.required && src.null_count() > 0) {
          int64_t row = 0;
          while (src.IsValid(row)) ++row;
          return Status::Invalid("target column {} is NOT NULL, source column {} is null in row {}",
                                 target.name, name, row);
        }
        bool last_use = --uses[c.source_index] == 0;
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
  return out;
}

}  // namespace sluice::sql
