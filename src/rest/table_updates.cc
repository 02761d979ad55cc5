#include "rest/table_updates.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <set>

#include "common/uuid.h"
#include "iceberg/json_internal.h"
#include "iceberg/table_builder.h"
#include "rest/table_locations.h"

namespace sluice::rest::internal {
namespace {

using json = nlohmann::json;
using iceberg::PartitionSpec;
using iceberg::Snapshot;
using iceberg::SortOrder;
using iceberg::TableMetadata;

// The id an update names, or the last one this change added for -1.
Result<int32_t> IdOrLastAdded(const json& u, const char* key, std::optional<int32_t> last_added,
                              std::string_view what) {
  ASSIGN_OR_RETURN(int32_t id, Member<int32_t>(u, key, what));
  if (id != -1) return id;
  if (!last_added)
    return Status::Invalid("{}: {} -1 names the last added, but none was", what, key);
  return *last_added;
}

// The same fields, ids, docs, defaults and identifier fields (the schema id
// aside): an update that changes only a doc or a default is a new schema.
bool SameSchema(const Schema& a, const Schema& b) {
  Schema x = a, y = b;
  x.schema_id = y.schema_id = 0;
  return iceberg::internal::SchemaToJsonValue(x) == iceberg::internal::SchemaToJsonValue(y);
}

bool SameSpec(const PartitionSpec& a, const PartitionSpec& b) {
  if (a.fields.size() != b.fields.size()) return false;
  for (size_t i = 0; i < a.fields.size(); ++i) {
    const auto &x = a.fields[i], &y = b.fields[i];
    if (x.source_id != y.source_id || x.field_id != y.field_id || x.name != y.name ||
        !(x.transform == y.transform)) {
      return false;
    }
  }
  return true;
}

bool SameOrder(const SortOrder& a, const SortOrder& b) {
  if (a.fields.size() != b.fields.size()) return false;
  for (size_t i = 0; i < a.fields.size(); ++i) {
    const auto &x = a.fields[i], &y = b.fields[i];
    if (x.source_id != y.source_id || !(x.transform == y.transform) ||
        x.descending != y.descending || x.nulls_first != y.nulls_first) {
      return false;
    }
  }
  return true;
}

// The updates of one change, applied in order to one metadata (Iceberg's
// TableMetadata.Builder, for the part of the metadata sluice models).
class Applier {
 public:
  Applier(TableMetadata m, const std::string& warehouse)
      : m_(std::move(m)), warehouse_(warehouse) {}

  Status Apply(const json& u) {
    std::string action = u["action"].get<std::string>();
    std::string what = fmt::format("update {}", action);
    if (action == "assign-uuid") return AssignUuid(u, what);
    if (action == "upgrade-format-version") return UpgradeFormat(u, what);
    if (action == "add-schema") return AddSchema(u, what);
    if (action == "set-current-schema") {
      ASSIGN_OR_RETURN(int32_t id, IdOrLastAdded(u, "schema-id", last_schema_, what));
      if (m_.schema_by_id(id) == nullptr) return Status::Invalid("{}: no schema {}", what, id);
      m_.current_schema_id = id;
      return Status::OK();
    }
    if (action == "add-spec") return AddSpec(u, what);
    if (action == "set-default-spec") {
      ASSIGN_OR_RETURN(int32_t id, IdOrLastAdded(u, "spec-id", last_spec_, what));
      if (m_.spec_by_id(id) == nullptr)
        return Status::Invalid("{}: no partition spec {}", what, id);
      m_.default_spec_id = id;
      return Status::OK();
    }
    if (action == "add-sort-order") return AddSortOrder(u, what);
    if (action == "set-default-sort-order") {
      ASSIGN_OR_RETURN(int32_t id, IdOrLastAdded(u, "sort-order-id", last_order_, what));
      if (FindOrder(id) == nullptr) return Status::Invalid("{}: no sort order {}", what, id);
      m_.default_sort_order_id = id;
      return Status::OK();
    }
    if (action == "add-snapshot") return AddSnapshot(u, what);
    if (action == "set-snapshot-ref") return SetRef(u, what);
    if (action == "remove-snapshots") {
      ASSIGN_OR_RETURN(std::vector<int64_t> ids,
                       Member<std::vector<int64_t>>(u, "snapshot-ids", what));
      std::set<int64_t> gone(ids.begin(), ids.end());
      for (const auto& [name, ref] : m_.refs) {
        if (gone.count(ref.snapshot_id)) {  // tagged or branched meanwhile: judge again
          return Status::Conflict("{}: ref '{}' points at snapshot {}", what, name,
                                  ref.snapshot_id);
        }
      }
      m_.RemoveSnapshots(gone);
      return Status::OK();
    }
    if (action == "remove-snapshot-ref") {
      ASSIGN_OR_RETURN(std::string name, Member<std::string>(u, "ref-name", what));
      m_.refs.erase(name);
      if (name == "main") m_.current_snapshot_id.reset();
      return Status::OK();
    }
    if (action == "set-location") {
      ASSIGN_OR_RETURN(std::string location, Member<std::string>(u, "location", what));
      RETURN_IF_ERROR_CTX(CheckLocationInWarehouse(location, warehouse_), "{}", what);
      while (location.size() > 1 && location.back() == '/') location.pop_back();
      m_.location = location;
      return Status::OK();
    }
    if (action == "set-properties") {
      ASSIGN_OR_RETURN(auto updates,
                       (Member<std::map<std::string, std::string>>(u, "updates", what)));
      for (auto& [k, v] : updates) m_.properties[k] = v;
      return Status::OK();
    }
    if (action == "remove-properties") {
      ASSIGN_OR_RETURN(auto removals, Member<std::vector<std::string>>(u, "removals", what));
      for (const auto& k : removals) m_.properties.erase(k);
      return Status::OK();
    }
    if (action == "remove-partition-specs") return RemoveSpecs(u, what);
    if (action == "remove-schemas") return RemoveSchemas(u, what);
    if (action == "set-statistics") return SetStatistics(u, "statistics", &m_.statistics, what);
    if (action == "set-partition-statistics") {
      return SetStatistics(u, "partition-statistics", &m_.partition_statistics, what);
    }
    if (action == "remove-statistics" || action == "remove-partition-statistics") {
      ASSIGN_OR_RETURN(int64_t id, Member<int64_t>(u, "snapshot-id", what));
      auto* stats = action == "remove-statistics" ? &m_.statistics : &m_.partition_statistics;
      std::erase_if(*stats, [&](const iceberg::StatisticsFile& f) { return f.snapshot_id == id; });
      return Status::OK();
    }
    return Status::NotImplemented("{}: sluice's table metadata does not keep encryption keys",
                                  what);
  }

  // The rules every table's metadata keeps, checked once all updates ran.
  Result<TableMetadata> Finish(bool creating) && {
    if (creating) {
      if (m_.table_uuid.empty()) m_.table_uuid = NewUuid();
      if (m_.partition_specs.empty()) {
        m_.partition_specs.push_back(PartitionSpec{});
        m_.default_spec_id = 0;
      }
    }
    if (m_.current_schema() == nullptr) {
      return Status::Invalid("the table's current schema {} does not exist", m_.current_schema_id);
    }
    if (m_.spec_by_id(m_.default_spec_id) == nullptr) {
      return Status::Invalid("the table's default partition spec {} does not exist",
                             m_.default_spec_id);
    }
    if (FindOrder(0) == nullptr) m_.sort_orders.insert(m_.sort_orders.begin(), SortOrder{});
    if (FindOrder(m_.default_sort_order_id) == nullptr) {
      return Status::Invalid("the table's default sort order {} does not exist",
                             m_.default_sort_order_id);
    }
    if (m_.location.empty()) return Status::Invalid("the table has no location");
    RETURN_IF_ERROR(iceberg::ValidateIdentifierFields(*m_.current_schema()));
    return std::move(m_);
  }

 private:
  const SortOrder* FindOrder(int32_t id) const {
    for (const auto& o : m_.sort_orders) {
      if (o.order_id == id) return &o;
    }
    return nullptr;
  }

  Status AssignUuid(const json& u, std::string_view what) {
    ASSIGN_OR_RETURN(std::string uuid, Member<std::string>(u, "uuid", what));
    if (uuid.empty()) return Status::Invalid("{}: the uuid is empty", what);
    if (!m_.table_uuid.empty() && m_.table_uuid != uuid) {
      return Status::Invalid("{}: the table's uuid is {}; it cannot change", what, m_.table_uuid);
    }
    m_.table_uuid = uuid;
    return Status::OK();
  }

  Status UpgradeFormat(const json& u, std::string_view what) {
    ASSIGN_OR_RETURN(int version, Member<int>(u, "format-version", what));
    if (version < m_.format_version) {
      return Status::Invalid("{}: cannot downgrade format version {} to {}", what,
                             m_.format_version, version);
    }
    if (version > iceberg::kMaxFormatVersion) {
      return Status::Invalid("{}: format version {} is not supported (at most {})", what, version,
                             iceberg::kMaxFormatVersion);
    }
    m_.format_version = version;
    if (version >= 3 && !m_.next_row_id) m_.next_row_id = 0;
    return Status::OK();
  }

  Status AddSchema(const json& u, std::string_view what) {
    if (!u.contains("schema")) return Status::Invalid("{}: missing \"schema\"", what);
    ASSIGN_OR_RETURN(Schema schema,
                     iceberg::internal::SchemaFromJsonValue(iceberg::internal::Json(u["schema"])));
    for (const Schema& s : m_.schemas) {
      if (SameSchema(s, schema)) {
        last_schema_ = s.schema_id;
        return Status::OK();
      }
    }
    int32_t id = 0;
    for (const Schema& s : m_.schemas) id = std::max(id, s.schema_id + 1);
    schema.schema_id = id;
    m_.last_column_id = std::max(m_.last_column_id, schema.HighestFieldId());
    m_.schemas.push_back(std::move(schema));
    last_schema_ = id;
    return Status::OK();
  }

  Status AddSpec(const json& u, std::string_view what) {
    if (!u.contains("spec")) return Status::Invalid("{}: missing \"spec\"", what);
    ASSIGN_OR_RETURN(PartitionSpec spec,
                     iceberg::internal::SpecFromJsonValue(iceberg::internal::Json(u["spec"]), 0));
    const Schema* schema = m_.current_schema();
    if (schema == nullptr) return Status::Invalid("{}: the table has no schema yet", what);
    RETURN_IF_ERROR(CheckSpecSources(spec, *schema, what));
    for (const PartitionSpec& s : m_.partition_specs) {
      if (SameSpec(s, spec)) {
        last_spec_ = s.spec_id;
        return Status::OK();
      }
    }
    int32_t id = 0;
    for (const PartitionSpec& s : m_.partition_specs) id = std::max(id, s.spec_id + 1);
    spec.spec_id = id;
    for (const auto& f : spec.fields)
      m_.last_partition_id = std::max(m_.last_partition_id, f.field_id);
    m_.partition_specs.push_back(std::move(spec));
    last_spec_ = id;
    return Status::OK();
  }

  Status AddSortOrder(const json& u, std::string_view what) {
    if (!u.contains("sort-order")) return Status::Invalid("{}: missing \"sort-order\"", what);
    ASSIGN_OR_RETURN(SortOrder order, iceberg::internal::Guard(what, [&] {
                       return iceberg::internal::SortOrderFromJsonValue(
                           iceberg::internal::Json(u["sort-order"]));
                     }));
    if (order.fields.empty()) {  // the unsorted order is always id 0
      if (FindOrder(0) == nullptr) m_.sort_orders.insert(m_.sort_orders.begin(), SortOrder{});
      last_order_ = 0;
      return Status::OK();
    } else {
      const Schema* schema = m_.current_schema();
      if (schema == nullptr) return Status::Invalid("{}: the table has no schema yet", what);
      RETURN_IF_ERROR(CheckOrderSources(order, *schema, what));
    }
    for (const SortOrder& o : m_.sort_orders) {
      if (SameOrder(o, order)) {
        last_order_ = o.order_id;
        return Status::OK();
      }
    }
    int32_t id = 1;
    for (const SortOrder& o : m_.sort_orders) id = std::max(id, o.order_id + 1);
    order.order_id = id;
    m_.sort_orders.push_back(std::move(order));
    last_order_ = id;
    return Status::OK();
  }

  Status AddSnapshot(const json& u, std::string_view what) {
    if (!u.contains("snapshot")) return Status::Invalid("{}: missing \"snapshot\"", what);
    ASSIGN_OR_RETURN(Snapshot s, iceberg::internal::Guard(what, [&] {
                       return iceberg::internal::SnapshotFromJsonValue(
                           iceberg::internal::Json(u["snapshot"]), what);
                     }));
    if (m_.snapshot_by_id(s.snapshot_id) != nullptr) {
      return Status::Invalid("{}: snapshot {} already exists", what, s.snapshot_id);
    }
    if (s.manifest_list.empty())
      return Status::Invalid("{}: the snapshot names no manifest list", what);
    if (s.schema_id && m_.schema_by_id(*s.schema_id) == nullptr) {
      return Status::Invalid("{}: snapshot {} names schema {}, which does not exist", what,
                             s.snapshot_id, *s.schema_id);
    }
    // Planned against an older table (a commit on another branch landed):
    // the client refreshes and plans again.
    if (s.parent_snapshot_id && s.sequence_number <= m_.last_sequence_number) {
      return Status::Conflict(
          "{}: snapshot {} has sequence number {}, not above the table's last ({})", what,
          s.snapshot_id, s.sequence_number, m_.last_sequence_number);
    }
    if (m_.format_version >= 3) {
      if (!s.first_row_id || !s.added_rows) {
        return Status::Invalid("{}: a format v3 snapshot needs first-row-id and added-rows", what);
      }
      if (*s.first_row_id < m_.next_row_id.value_or(0)) {
        return Status::Conflict("{}: first-row-id {} is below the table's next-row-id {}", what,
                                *s.first_row_id, m_.next_row_id.value_or(0));
      }
      m_.next_row_id = *s.first_row_id + *s.added_rows;
    }
    m_.last_sequence_number = std::max(m_.last_sequence_number, s.sequence_number);
    added_snapshots_.insert(s.snapshot_id);
    m_.snapshots.push_back(std::move(s));
    return Status::OK();
  }

  Status SetRef(const json& u, std::string_view what) {
    ASSIGN_OR_RETURN(std::string name, Member<std::string>(u, "ref-name", what));
    if (name.empty()) return Status::Invalid("{}: the ref name is empty", what);
    auto ref = iceberg::internal::SnapshotRefFromJsonValue(iceberg::internal::Json(u));
    RETURN_IF_ERROR_CTX(ref, "{}", what);
    const Snapshot* snap = m_.snapshot_by_id(ref->snapshot_id);
    if (snap == nullptr) {
      return Status::Invalid("{}: ref '{}' names snapshot {}, which does not exist", what, name,
                             ref->snapshot_id);
    }
    if (name == "main") {
      if (!ref->is_branch) return Status::Invalid("{}: main must be a branch", what);
      if (m_.current_snapshot_id != ref->snapshot_id) {
        m_.current_snapshot_id = ref->snapshot_id;
        int64_t at =
            added_snapshots_.count(ref->snapshot_id) ? snap->timestamp_ms : iceberg::NowMillis();
        // One entry per change: main's intermediate moves are not history.
        if (logged_main_) m_.snapshot_log.pop_back();
        // Readers (Java's) refuse a log running backwards by over a minute.
        if (!m_.snapshot_log.empty() && at < m_.snapshot_log.back().timestamp_ms - 60000) {
          return Status::Invalid(
              "{}: snapshot {} is timestamped {} ms, over a minute before the table's last "
              "snapshot-log entry ({} ms): is the writer's clock behind?",
              what, ref->snapshot_id, at, m_.snapshot_log.back().timestamp_ms);
        }
        m_.snapshot_log.push_back({ref->snapshot_id, at});
        logged_main_ = true;
      }
    }
    m_.refs[name] = *ref;
    return Status::OK();
  }

  // The snapshot's statistics file (one per snapshot: a new one replaces it).
  Status SetStatistics(const json& u, const char* key, std::vector<iceberg::StatisticsFile>* into,
                       std::string_view what) {
    if (!u.contains(key)) return Status::Invalid("{}: missing \"{}\"", what, key);
    // The spec's required members (Java's parser fails on a file without
    // them, so a table holding one would not load in Spark or Trino).
    const json& given_file = u[key];
    const bool partition = std::string_view(key) == "partition-statistics";
    for (const char* member : {"file-size-in-bytes", "file-footer-size-in-bytes"}) {
      if (partition && std::string_view(member) == "file-footer-size-in-bytes") continue;
      if (!given_file.is_object() || !given_file.contains(member) ||
          !given_file[member].is_number_integer()) {
        return Status::Invalid("{}: the {} file needs an integer \"{}\"", what, key, member);
      }
    }
    if (!partition) {
      auto blobs = given_file.find("blob-metadata");
      if (blobs == given_file.end() || !blobs->is_array()) {
        return Status::Invalid("{}: the statistics file needs a \"blob-metadata\" array", what);
      }
      for (const json& b : *blobs) {
        bool ok = b.is_object() && b.contains("type") && b["type"].is_string() &&
                  b.contains("snapshot-id") && b["snapshot-id"].is_number_integer() &&
                  b.contains("sequence-number") && b["sequence-number"].is_number_integer() &&
                  b.contains("fields") && b["fields"].is_array();
        for (const json& field : ok ? b["fields"] : json::array()) {
          ok = ok && field.is_number_integer();
        }
        if (!ok) {
          return Status::Invalid(
              "{}: a blob of the statistics file needs \"type\", \"snapshot-id\", "
              "\"sequence-number\" and integer \"fields\" ({})",
              what, b.dump());
        }
      }
    }
    ASSIGN_OR_RETURN(iceberg::StatisticsFile file, iceberg::internal::StatisticsFileFromJsonValue(
                                                       iceberg::internal::Json(given_file), what));
    auto given = u.find("snapshot-id");  // the deprecated top-level id, when sent, must agree
    if (given != u.end() && !given->is_null() &&
        (!given->is_number_integer() || given->get<int64_t>() != file.snapshot_id)) {
      return Status::Invalid("{}: snapshot-id {} is not the statistics file's ({})", what,
                             given->dump(), file.snapshot_id);
    }
    if (m_.snapshot_by_id(file.snapshot_id) == nullptr) {
      return Status::Invalid("{}: snapshot {} does not exist", what, file.snapshot_id);
    }
    std::erase_if(
        *into, [&](const iceberg::StatisticsFile& f) { return f.snapshot_id == file.snapshot_id; });
    into->push_back(std::move(file));
    return Status::OK();
  }

  Status RemoveSpecs(const json& u, std::string_view what) {
    ASSIGN_OR_RETURN(std::vector<int32_t> ids, Member<std::vector<int32_t>>(u, "spec-ids", what));
    for (int32_t id : ids) {
      if (id == m_.default_spec_id) {
        return Status::Invalid("{}: spec {} is the default; it cannot be removed", what, id);
      }
    }
    std::erase_if(m_.partition_specs, [&](const PartitionSpec& s) {
      return std::find(ids.begin(), ids.end(), s.spec_id) != ids.end();
    });
    return Status::OK();
  }

  Status RemoveSchemas(const json& u, std::string_view what) {
    ASSIGN_OR_RETURN(std::vector<int32_t> ids, Member<std::vector<int32_t>>(u, "schema-ids", what));
    for (int32_t id : ids) {
      if (id == m_.current_schema_id) {
        return Status::Invalid("{}: schema {} is current; it cannot be removed", what, id);
      }
    }
    std::erase_if(m_.schemas, [&](const Schema& s) {
      return std::find(ids.begin(), ids.end(), s.schema_id) != ids.end();
    });
    return Status::OK();
  }

  TableMetadata m_;
  const std::string& warehouse_;
  std::optional<int32_t> last_schema_, last_spec_, last_order_;
  std::set<int64_t> added_snapshots_;
  bool logged_main_ = false;  // this change appended main's snapshot-log entry
};

}  // namespace

Status CheckSpecSources(const PartitionSpec& spec, const Schema& schema, std::string_view what) {
  for (const auto& f : spec.fields) {
    const Field* src = schema.FindById(f.source_id);
    if (src == nullptr) {
      return Status::Invalid("{}: partition field '{}' reads field {}, which the schema lacks",
                             what, f.name, f.source_id);
    }
    RETURN_IF_ERROR_CTX(f.transform.CheckSource(*src->type), "{}: partition field '{}'", what,
                        f.name);
  }
  return Status::OK();
}

Status CheckOrderSources(const SortOrder& order, const Schema& schema, std::string_view what) {
  for (const auto& f : order.fields) {
    const Field* src = schema.FindById(f.source_id);
    if (src == nullptr) {
      return Status::Invalid("{}: sort field reads field {}, which the schema lacks", what,
                             f.source_id);
    }
    RETURN_IF_ERROR_CTX(f.transform.CheckSource(*src->type), "{}: sort field {}", what,
                        f.source_id);
  }
  return Status::OK();
}

Result<TableMetadata> ApplyTableUpdates(const TableMetadata& base, const json& updates,
                                        const std::string& warehouse, bool creating) {
  Applier applier(base, warehouse);
  for (size_t i = 0; i < updates.size(); ++i) {
    std::string what = fmt::format("updates[{}]", i);
    RETURN_IF_ERROR(iceberg::internal::Guard(
        what, [&]() -> Status { return applier.Apply(updates[i]).WithContext(what); }));
  }
  return std::move(applier).Finish(creating);
}

}  // namespace sluice::rest::internal
