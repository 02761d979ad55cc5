#include "iceberg/schema_update.h"

#include <algorithm>

#include "iceberg/table_builder.h"

namespace sluice::iceberg {

namespace {

// Adds `schema` as a new schema (or reuses an identical one) and makes it current.
TableMetadata WithSchema(const TableMetadata& base, Schema schema) {
  TableMetadata m = base;
  for (const Schema& s : m.schemas) {
    if (s.AsStruct()->Equals(*schema.AsStruct()) &&
        s.identifier_field_ids == schema.identifier_field_ids) {
      m.current_schema_id = s.schema_id;
      return m;
    }
  }
  int32_t id = 0;
  for (const Schema& s : m.schemas) id = std::max(id, s.schema_id + 1);
  schema.schema_id = id;
  m.last_column_id = std::max(m.last_column_id, schema.HighestFieldId());
  m.schemas.push_back(std::move(schema));
  m.current_schema_id = id;
  return m;
}

Result<size_t> FindTop(const Schema& s, const std::string& name) {
  for (size_t i = 0; i < s.fields.size(); ++i) {
    if (s.fields[i].name == name) return i;
  }
  return Status::Invalid("no column named '{}'", name);
}

}  // namespace

Result<TableMetadata> AddColumn(const TableMetadata& base, const Field& column) {
  Schema s = *base.current_schema();
  if (FindTop(s, column.name).ok())
    return Status::Invalid("column '{}' already exists", column.name);
  if (column.required) {
    return Status::Invalid("a new column must be optional (existing rows have no value): '{}'",
                           column.name);
  }
  std::vector<Field> added = {column};
  int32_t next = base.last_column_id + 1;
  AssignFreshIds(&added, &next);
  s.fields.push_back(std::move(added[0]));
  return WithSchema(base, std::move(s));
}

Result<TableMetadata> RenameColumn(const TableMetadata& base, const std::string& from,
                                   const std::string& to) {
  Schema s = *base.current_schema();
  ASSIGN_OR_RETURN(size_t i, FindTop(s, from));
  if (to.empty()) return Status::Invalid("the new name of '{}' is empty", from);
  if (FindTop(s, to).ok()) return Status::Invalid("column '{}' already exists", to);
  s.fields[i].name = to;
  return WithSchema(base, std::move(s));
}

Result<TableMetadata> WidenColumn(const TableMetadata& base, const std::string& name,
                                  const TypePtr& type) {
  Schema s = *base.current_schema();
  ASSIGN_OR_RETURN(size_t i, FindTop(s, name));
  const DataType& from = *s.fields[i].type;
  const DataType& to = *type;
  bool ok = (from.id() == TypeId::kInt && to.id() == TypeId::kLong) ||
            (from.id() == TypeId::kFloat && to.id() == TypeId::kDouble) ||
            (from.id() == TypeId::kDecimal && to.id() == TypeId::kDecimal &&
             to.scale() == from.scale() && to.precision() >= from.precision()) ||
            from.Equals(to);
  if (!ok) {
    return Status::Invalid(
        "column '{}' cannot change from {} to {} (allowed: int→long, "
        "float→double, decimal precision up)",
        name, from.ToString(), to.ToString());
  }
  s.fields[i].type = type;
  return WithSchema(base, std::move(s));
}

Result<TableMetadata> MakeOptional(const TableMetadata& base, const std::string& name) {
  Schema s = *base.current_schema();
  ASSIGN_OR_RETURN(size_t i, FindTop(s, name));
  auto& ids = s.identifier_field_ids;
  if (std::find(ids.begin(), ids.end(), s.fields[i].id) != ids.end()) {
    return Status::Invalid("column '{}' is an identifier field and must stay required", name);
  }
  s.fields[i].required = false;
  return WithSchema(base, std::move(s));
}

Result<TableMetadata> DropColumn(const TableMetadata& base, const std::string& name) {
  Schema s = *base.current_schema();
  ASSIGN_OR_RETURN(size_t i, FindTop(s, name));
  const Field& f = s.fields[i];
  for (const PartitionSpec& spec : base.partition_specs) {
    if (spec.spec_id != base.default_spec_id) continue;
    for (const auto& pf : spec.fields) {
      Schema one;
      one.fields = {f};
      if (one.FindById(pf.source_id) != nullptr) {
        return Status::Invalid("column '{}' is used by partition field {}", name, pf.name);
      }
    }
  }
  auto& ids = s.identifier_field_ids;
  if (std::find(ids.begin(), ids.end(), f.id) != ids.end()) {
    return Status::Invalid("column '{}' is an identifier field", name);
  }
  if (s.fields.size() == 1) return Status::Invalid("cannot drop the last column '{}'", name);
  s.fields.erase(s.fields.begin() + static_cast<long>(i));
  return WithSchema(base, std::move(s));
}

Result<TableMetadata> SetPartitionSpec(const TableMetadata& base, const std::string& text) {
  ASSIGN_OR_RETURN(PartitionSpec spec,
                   ParsePartitionSpec(text, *base.current_schema(), 0, base.last_partition_id + 1));
  TableMetadata m = base;
  // Keep the field id of an equivalent field of any earlier spec (same source
  // and transform); v2 requires partition field ids to stay unique.
  int32_t next = base.last_partition_id + 1;
  for (auto& f : spec.fields) {
    f.field_id = 0;
    for (const auto& old : base.partition_specs) {
      for (const auto& of : old.fields) {
        if (of.source_id == f.source_id && of.transform == f.transform) f.field_id = of.field_id;
      }
    }
    if (f.field_id == 0) f.field_id = next++;
  }
  for (const auto& old : base.partition_specs) {
    bool same = old.fields.size() == spec.fields.size();
    for (size_t i = 0; same && i < spec.fields.size(); ++i) {
      same = old.fields[i].source_id == spec.fields[i].source_id &&
             old.fields[i].transform == spec.fields[i].transform &&
             old.fields[i].field_id == spec.fields[i].field_id;
    }
    if (same) {
      m.default_spec_id = old.spec_id;
      return m;
    }
  }
  int32_t id = 0;
  for (const auto& old : base.partition_specs) id = std::max(id, old.spec_id + 1);
  spec.spec_id = id;
  m.last_partition_id = std::max(base.last_partition_id, next - 1);
  m.partition_specs.push_back(spec);
  m.default_spec_id = id;
  return m;
}

}  // namespace sluice::iceberg
