#include "catalog/rest_diff.h"

#include <map>
#include <optional>
#include <set>

#include "iceberg/table_metadata.h"

namespace sluice::catalog {
namespace {

using json = nlohmann::json;

// The elements of `array` (of objects) by their integer `key`.
std::map<int64_t, const json*> ById(const json& doc, const char* array, const char* key) {
  std::map<int64_t, const json*> out;
  auto it = doc.find(array);
  if (it == doc.end() || !it->is_array()) return out;
  for (const json& e : *it) {
    if (e.contains(key) && e[key].is_number_integer()) out[e[key].get<int64_t>()] = &e;
  }
  return out;
}

json Requirement(const char* type, const char* key, const json& value) {
  return {{"type", type}, {key, value}};
}

// Calls `on_add` with each element `to` has and `from` lacks (by id: the
// server's file may spell an element both have differently).
template <typename Fn>
void AddNew(const json& from, const json& to, const char* array, const char* key, Fn&& on_add) {
  auto before = ById(from, array, key);
  for (const auto& [id, e] : ById(to, array, key)) {
    if (!before.count(id)) on_add(*e);
  }
}

// One kind of element with a default: schemas (current-schema-id), partition
// specs, sort orders.
struct Kind {
  const char* array;        // "schemas"
  const char* id;           // "schema-id"
  const char* add;          // "add-schema"
  const char* member;       // "schema"
  const char* set_default;  // "set-current-schema"
};

// Adds the elements of `kind` that `to` gained and switches the default when
// it moved: to the one this change added last as -1 ("the last added": the
// server may number it differently), else by id. True when anything changed.
bool AddAndSwitch(const json& from, const json& to, const Kind& kind, int64_t from_default,
                  int64_t to_default, json* upd) {
  std::optional<int64_t> last_added;
  AddNew(from, to, kind.array, kind.id, [&](const json& e) {
    upd->push_back({{"action", kind.add}, {kind.member, e}});
    last_added = e[kind.id].get<int64_t>();
  });
  if (to_default != from_default) {
    const char* key = std::string_view(kind.id) == "order-id" ? "sort-order-id" : kind.id;
    upd->push_back(
        {{"action", kind.set_default}, {key, last_added == to_default ? int64_t{-1} : to_default}});
  }
  return last_added.has_value() || to_default != from_default;
}

}  // namespace

Result<json> RestCommitFor(std::string_view from_text, std::string_view to_text) {
  // Parsed twice: as the model (to validate and for ids) and as JSON (updates
  // carry each element exactly as the new file wrote it).
  ASSIGN_OR_RETURN(iceberg::TableMetadata from_md, iceberg::ParseTableMetadata(from_text, "base"));
  ASSIGN_OR_RETURN(iceberg::TableMetadata to_md, iceberg::ParseTableMetadata(to_text, "new"));
  json from = json::parse(from_text, nullptr, false);
  json to = json::parse(to_text, nullptr, false);
  if (!from.is_object() || !to.is_object()) return Status::Invalid("metadata is not a JSON object");
  if (from_md.table_uuid != to_md.table_uuid) {
    return Status::NotImplemented("a commit cannot change the table's uuid");
  }
  json req = json::array(), upd = json::array();
  req.push_back({{"type", "assert-table-uuid"}, {"uuid", from_md.table_uuid}});

  if (to_md.format_version != from_md.format_version) {
    upd.push_back({{"action", "upgrade-format-version"}, {"format-version", to_md.format_version}});
  }
  // Schemas, specs and sort orders; each requirement guards what the
  // change was planned against.
  if (AddAndSwitch(from, to, {"schemas", "schema-id", "add-schema", "schema", "set-current-schema"},
                   from_md.current_schema_id, to_md.current_schema_id, &upd)) {
    req.push_back(
        Requirement("assert-current-schema-id", "current-schema-id", from_md.current_schema_id));
    req.push_back(Requirement("assert-last-assigned-field-id", "last-assigned-field-id",
                              from_md.last_column_id));
  }
  if (AddAndSwitch(from, to, {"partition-specs", "spec-id", "add-spec", "spec", "set-default-spec"},
                   from_md.default_spec_id, to_md.default_spec_id, &upd)) {
    req.push_back(
        Requirement("assert-default-spec-id", "default-spec-id", from_md.default_spec_id));
    req.push_back(Requirement("assert-last-assigned-partition-id", "last-assigned-partition-id",
                              from_md.last_partition_id));
  }
  if (AddAndSwitch(
          from, to,
          {"sort-orders", "order-id", "add-sort-order", "sort-order", "set-default-sort-order"},
          from_md.default_sort_order_id, to_md.default_sort_order_id, &upd)) {
    req.push_back(Requirement("assert-default-sort-order-id", "default-sort-order-id",
                              from_md.default_sort_order_id));
  }

  // Snapshots, oldest first (a child after its parent).
  std::vector<const json*> added;
  AddNew(from, to, "snapshots", "snapshot-id", [&](const json& s) { added.push_back(&s); });
  std::stable_sort(added.begin(), added.end(), [](const json* a, const json* b) {
    return a->value("sequence-number", int64_t{0}) < b->value("sequence-number", int64_t{0});
  });
  for (const json* s : added) upd.push_back({{"action", "add-snapshot"}, {"snapshot", *s}});

  // Refs: as the model reads them (the implicit main included).
  auto ref_json = [&](const std::string& name, const iceberg::SnapshotRef& r) {
    json j = {{"action", "set-snapshot-ref"},
              {"ref-name", name},
              {"type", r.is_branch ? "branch" : "tag"},
              {"snapshot-id", r.snapshot_id}};
    if (r.min_snapshots_to_keep) j["min-snapshots-to-keep"] = *r.min_snapshots_to_keep;
    if (r.max_snapshot_age_ms) j["max-snapshot-age-ms"] = *r.max_snapshot_age_ms;
    if (r.max_ref_age_ms) j["max-ref-age-ms"] = *r.max_ref_age_ms;
    return j;
  };
  auto assert_ref = [&](const std::string& name) {
    auto it = from_md.refs.find(name);
    req.push_back(
        {{"type", "assert-ref-snapshot-id"},
         {"ref", name},
         {"snapshot-id", it == from_md.refs.end() ? json(nullptr) : json(it->second.snapshot_id)}});
  };
  for (const auto& [name, r] : to_md.refs) {
    auto it = from_md.refs.find(name);
    json set = ref_json(name, r);
    if (it != from_md.refs.end() && ref_json(name, it->second) == set) continue;
    assert_ref(name);
    upd.push_back(std::move(set));
  }
  for (const auto& [name, r] : from_md.refs) {
    if (to_md.refs.count(name)) continue;
    assert_ref(name);
    upd.push_back({{"action", "remove-snapshot-ref"}, {"ref-name", name}});
  }
  json removed = json::array();
  for (const auto& s : from_md.snapshots) {
    if (to_md.snapshot_by_id(s.snapshot_id) == nullptr) removed.push_back(s.snapshot_id);
  }
  if (!removed.empty()) {
    // Judged against this history: main must not have moved meanwhile.
    if (to_md.refs.count("main") && from_md.refs.count("main") &&
        to_md.refs.at("main").snapshot_id == from_md.refs.at("main").snapshot_id) {
      assert_ref("main");
    }
    upd.push_back({{"action", "remove-snapshots"}, {"snapshot-ids", removed}});
  }

  json set = json::object(), unset = json::array();
  for (const auto& [k, v] : to_md.properties) {
    auto it = from_md.properties.find(k);
    if (it == from_md.properties.end() || it->second != v) set[k] = v;
  }
  for (const auto& [k, v] : from_md.properties) {
    if (!to_md.properties.count(k)) unset.push_back(k);
  }
  if (!set.empty()) upd.push_back({{"action", "set-properties"}, {"updates", set}});
  if (!unset.empty()) upd.push_back({{"action", "remove-properties"}, {"removals", unset}});
  if (to_md.location != from_md.location) {
    upd.push_back({{"action", "set-location"}, {"location", to_md.location}});
  }
  return json{{"requirements", req}, {"updates", upd}};
}

}  // namespace sluice::catalog
