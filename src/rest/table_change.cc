#include "rest/table_change.h"

#include <fmt/format.h>

#include <map>
#include <set>

#include "iceberg/json_internal.h"
#include "iceberg/table_builder.h"
#include "rest/table_locations.h"
#include "rest/table_updates.h"

namespace sluice::rest {
namespace {

using json = nlohmann::json;
using iceberg::PartitionSpec;
using iceberg::SortOrder;
using iceberg::TableMetadata;
using internal::CheckOrderSources;
using internal::CheckSpecSources;
using internal::Member;

const std::set<std::string>& RequirementTypes() {
  static const std::set<std::string> kTypes = {"assert-create",
                                               "assert-table-uuid",
                                               "assert-ref-snapshot-id",
                                               "assert-last-assigned-field-id",
                                               "assert-current-schema-id",
                                               "assert-last-assigned-partition-id",
                                               "assert-default-spec-id",
                                               "assert-default-sort-order-id"};
  return kTypes;
}

const std::set<std::string>& UpdateActions() {
  static const std::set<std::string> kActions = {"assign-uuid",
                                                 "upgrade-format-version",
                                                 "add-schema",
                                                 "set-current-schema",
                                                 "add-spec",
                                                 "set-default-spec",
                                                 "add-sort-order",
                                                 "set-default-sort-order",
                                                 "add-snapshot",
                                                 "set-snapshot-ref",
                                                 "remove-snapshots",
                                                 "remove-snapshot-ref",
                                                 "set-location",
                                                 "set-properties",
                                                 "remove-properties",
                                                 "set-statistics",
                                                 "remove-statistics",
                                                 "set-partition-statistics",
                                                 "remove-partition-statistics",
                                                 "remove-partition-specs",
                                                 "remove-schemas",
                                                 "add-encryption-key",
                                                 "remove-encryption-key"};
  return kActions;
}

// Whether `actual` equals what requirement `r` asserts under `key`.
Status Expect(const json& r, const char* key, int64_t actual) {
  ASSIGN_OR_RETURN(int64_t expected, Member<int64_t>(r, key, r["type"].get<std::string>()));
  if (expected == actual) return Status::OK();
  return Status::Conflict("requirement {} failed: {} is {}, not {}", r["type"].get<std::string>(),
                          key, actual, expected);
}

Status CheckOne(const json& r, const TableMetadata* m) {
  std::string type = r["type"].get<std::string>();
  if (type == "assert-create") {
    if (m != nullptr) return Status::Conflict("requirement assert-create failed: the table exists");
    return Status::OK();
  }
  if (m == nullptr) return Status::NotFound("the table does not exist");
  if (type == "assert-table-uuid") {
    ASSIGN_OR_RETURN(std::string uuid, Member<std::string>(r, "uuid", type));
    if (uuid == m->table_uuid) return Status::OK();
    return Status::Conflict("requirement assert-table-uuid failed: the table's uuid is {}, not {}",
                            m->table_uuid, uuid);
  }
  if (type == "assert-ref-snapshot-id") {
    ASSIGN_OR_RETURN(std::string ref, Member<std::string>(r, "ref", type));
    auto it = m->refs.find(ref);
    auto id = r.find("snapshot-id");
    if (id == r.end() || id->is_null()) {
      if (it == m->refs.end()) return Status::OK();
      return Status::Conflict(
          "requirement assert-ref-snapshot-id failed: ref '{}' exists (snapshot {})", ref,
          it->second.snapshot_id);
    }
    if (!id->is_number_integer()) return Status::Invalid("{}: snapshot-id is not an integer", type);
    if (it != m->refs.end() && it->second.snapshot_id == id->get<int64_t>()) return Status::OK();
    return Status::Conflict(
        "requirement assert-ref-snapshot-id failed: ref '{}' is at {}, not {}", ref,
        it == m->refs.end() ? std::string("nothing") : std::to_string(it->second.snapshot_id),
        id->get<int64_t>());
  }
  if (type == "assert-last-assigned-field-id") {
    return Expect(r, "last-assigned-field-id", m->last_column_id);
  }
  if (type == "assert-current-schema-id")
    return Expect(r, "current-schema-id", m->current_schema_id);
  if (type == "assert-last-assigned-partition-id") {
    return Expect(r, "last-assigned-partition-id", m->last_partition_id);
  }
  if (type == "assert-default-spec-id") return Expect(r, "default-spec-id", m->default_spec_id);
  return Expect(r, "default-sort-order-id", m->default_sort_order_id);  // the last type left
}

// Maps the ids of `from` to those of `to` (the same fields, renumbered).
void MapIds(const std::vector<Field>& from, const std::vector<Field>& to,
            std::map<int32_t, int32_t>* ids) {
  for (size_t i = 0; i < from.size(); ++i) {
    (*ids)[from[i].id] = to[i].id;
    MapIds(from[i].type->fields(), to[i].type->fields(), ids);
  }
}

}  // namespace

Result<TableChange> TableChange::Parse(const json& request, std::string warehouse) {
  TableChange c;
  c.warehouse_ = std::move(warehouse);
  auto requirements = request.find("requirements");
  auto updates = request.find("updates");
  if (requirements == request.end() || !requirements->is_array() || updates == request.end() ||
      !updates->is_array()) {
    return Status::Invalid("a commit needs \"requirements\" and \"updates\" arrays");
  }
  for (const json& r : *requirements) {
    if (!r.is_object() || !r.contains("type") || !r["type"].is_string()) {
      return Status::Invalid("requirement {}: expected an object with a \"type\"", r.dump());
    }
    std::string type = r["type"].get<std::string>();
    if (!RequirementTypes().count(type)) {
      return Status::Invalid("requirement type '{}' is not one the spec defines", type);
    }
    if (type == "assert-create") c.creates_ = true;
  }
  for (const json& u : *updates) {
    if (!u.is_object() || !u.contains("action") || !u["action"].is_string()) {
      return Status::Invalid("update {}: expected an object with an \"action\"", u.dump());
    }
    std::string action = u["action"].get<std::string>();
    if (!UpdateActions().count(action)) {
      return Status::Invalid("update action '{}' is not one the spec defines", action);
    }
  }
  c.requirements_ = *requirements;
  c.updates_ = *updates;
  return c;
}

Status TableChange::Check(const TableMetadata* current) const {
  for (size_t i = 0; i < requirements_.size(); ++i) {
    RETURN_IF_ERROR(iceberg::internal::Guard(fmt::format("requirements[{}]", i),
                                             [&] { return CheckOne(requirements_[i], current); }));
  }
  return Status::OK();
}

Result<TableMetadata> TableChange::Apply(const TableMetadata& base) const {
  return internal::ApplyTableUpdates(base, updates_, warehouse_, creates_);
}

TableMetadata TableChange::EmptyMetadata(std::string location) {
  TableMetadata m;
  m.format_version = 2;
  m.location = std::move(location);
  m.current_schema_id = -1;
  m.default_spec_id = 0;
  m.default_sort_order_id = 0;
  m.last_partition_id = 999;
  return m;
}

Result<TableMetadata> NewTableFromRequest(const json& request, const std::string& location,
                                          const std::string& warehouse) {
  if (!request.contains("schema")) return Status::Invalid("create table: missing \"schema\"");
  using iceberg::internal::Json;
  ASSIGN_OR_RETURN(Schema given, iceberg::internal::SchemaFromJsonValue(Json(request["schema"])));
  Schema schema = given;
  int32_t next_id = 1;
  AssignFreshIds(&schema.fields, &next_id);
  std::map<int32_t, int32_t> ids;
  MapIds(given.fields, schema.fields, &ids);
  auto moved = [&](int32_t old_id, std::string_view what) -> Result<int32_t> {
    auto it = ids.find(old_id);
    if (it == ids.end()) {
      return Status::Invalid("create table: {} names field {}, which the schema lacks", what,
                             old_id);
    }
    return it->second;
  };
  schema.schema_id = 0;
  for (int32_t& id : schema.identifier_field_ids) {
    ASSIGN_OR_RETURN(id, moved(id, "identifier-field-ids"));
  }

  PartitionSpec spec;
  if (request.contains("partition-spec") && !request["partition-spec"].is_null()) {
    ASSIGN_OR_RETURN(spec, iceberg::internal::Guard("partition-spec", [&] {
                       return iceberg::internal::SpecFromJsonValue(Json(request["partition-spec"]),
                                                                   0);
                     }));
    spec.spec_id = 0;
    int32_t field_id = 1000;
    for (auto& f : spec.fields) {
      ASSIGN_OR_RETURN(f.source_id, moved(f.source_id, "partition-spec"));
      f.field_id = field_id++;
    }
    RETURN_IF_ERROR(CheckSpecSources(spec, schema, "create table"));
  }
  SortOrder order;
  if (request.contains("write-order") && !request["write-order"].is_null()) {
    ASSIGN_OR_RETURN(
        order, iceberg::internal::Guard("write-order", [&] {
          return iceberg::internal::SortOrderFromJsonValue(Json(request["write-order"]));
        }));
    for (auto& f : order.fields) {
      ASSIGN_OR_RETURN(f.source_id, moved(f.source_id, "write-order"));
    }
    order.order_id = order.fields.empty() ? 0 : 1;
    RETURN_IF_ERROR(CheckOrderSources(order, schema, "create table"));
  }
  std::map<std::string, std::string> properties;
  if (request.contains("properties") && !request["properties"].is_null()) {
    ASSIGN_OR_RETURN(properties, (Member<std::map<std::string, std::string>>(request, "properties",
                                                                             "create table")));
  }
  std::string at = location;
  if (request.contains("location") && !request["location"].is_null()) {
    ASSIGN_OR_RETURN(at, Member<std::string>(request, "location", "create table"));
    RETURN_IF_ERROR(CheckLocationInWarehouse(at, warehouse));
    while (at.size() > 1 && at.back() == '/') at.pop_back();
  }
  ASSIGN_OR_RETURN(iceberg::NewTableOptions options,
                   iceberg::NewTableOptionsFromProperties(std::move(properties)));
  return iceberg::NewTableMetadata(schema, spec, order, at, options);
}

}  // namespace sluice::rest
