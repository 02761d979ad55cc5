#include "iceberg/table_metadata.h"

#include <zlib.h>

#include <algorithm>

#include "iceberg/json_internal.h"

namespace sluice::iceberg {

using internal::Json;

bool PartitionSpec::unpartitioned() const {
  for (const auto& f : fields) {
    if (f.transform.kind != Transform::Kind::kVoid) return false;
  }
  return true;
}

std::string Snapshot::operation() const {
  auto it = summary.find("operation");
  return it == summary.end() ? "" : it->second;
}

const Schema* TableMetadata::schema_by_id(int32_t id) const {
  for (const auto& s : schemas) {
    if (s.schema_id == id) return &s;
  }
  return nullptr;
}
const Schema* TableMetadata::current_schema() const { return schema_by_id(current_schema_id); }

const PartitionSpec* TableMetadata::spec_by_id(int32_t id) const {
  for (const auto& s : partition_specs) {
    if (s.spec_id == id) return &s;
  }
  return nullptr;
}

const Snapshot* TableMetadata::snapshot_by_id(int64_t id) const {
  for (const auto& s : snapshots) {
    if (s.snapshot_id == id) return &s;
  }
  return nullptr;
}

const Snapshot* TableMetadata::current_snapshot() const {
  return current_snapshot_id ? snapshot_by_id(*current_snapshot_id) : nullptr;
}

std::vector<const Snapshot*> TableMetadata::Ancestry(int64_t snapshot_id) const {
  std::vector<const Snapshot*> out;
  const Snapshot* s = snapshot_by_id(snapshot_id);
  while (s != nullptr && out.size() <= snapshots.size()) {  // bound guards a parent cycle
    out.push_back(s);
    s = s->parent_snapshot_id ? snapshot_by_id(*s->parent_snapshot_id) : nullptr;
  }
  return out;
}

void TableMetadata::RemoveSnapshots(const std::set<int64_t>& ids) {
  std::erase_if(snapshots, [&](const Snapshot& s) { return ids.count(s.snapshot_id) > 0; });
  std::erase_if(refs, [&](const auto& ref) { return ids.count(ref.second.snapshot_id) > 0; });
  for (auto* stats : {&statistics, &partition_statistics}) {
    std::erase_if(*stats, [&](const StatisticsFile& f) { return ids.count(f.snapshot_id) > 0; });
  }
  if (current_snapshot_id && ids.count(*current_snapshot_id)) current_snapshot_id.reset();
  auto last_gone =
      std::find_if(snapshot_log.rbegin(), snapshot_log.rend(),
                   [&](const SnapshotLogEntry& e) { return ids.count(e.snapshot_id); });
  snapshot_log.erase(snapshot_log.begin(), last_gone.base());
}

namespace {

Result<std::string> Gunzip(std::string_view in, std::string_view where) {
  z_stream zs{};
  if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK) return Status::Internal("inflateInit2 failed");
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  zs.avail_in = static_cast<uInt>(in.size());
  std::string out;
  char buf[1 << 16];
  int rc;
  do {
    zs.next_out = reinterpret_cast<Bytef*>(buf);
    zs.avail_out = sizeof(buf);
    rc = inflate(&zs, Z_NO_FLUSH);
    if (rc != Z_OK && rc != Z_STREAM_END) {
      inflateEnd(&zs);
      return Status::Corruption("{}: gzip metadata does not decompress (zlib error {})", where, rc);
    }
    out.append(buf, sizeof(buf) - zs.avail_out);
    if (out.size() > (1u << 30)) {
      inflateEnd(&zs);
      return Status::Corruption("{}: gzip metadata expands past 1 GiB", where);
    }
  } while (rc != Z_STREAM_END && (zs.avail_in > 0 || zs.avail_out == 0));
  inflateEnd(&zs);
  if (rc != Z_STREAM_END) return Status::Corruption("{}: gzip metadata is truncated", where);
  return out;
}

template <typename T>
std::optional<T> Opt(const Json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return std::nullopt;
  return it->get<T>();
}

template <typename T>
Result<T> Req(const Json& j, const char* key, std::string_view where) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return Status::Invalid("{}: missing \"{}\"", where, key);
  return it->get<T>();
}

Result<PartitionField> ParsePartitionField(const Json& f, int32_t default_field_id) {
  PartitionField pf;
  if (f.contains("source-ids") && !f.contains("source-id")) {
    return Status::NotImplemented("multi-argument partition transforms are not supported");
  }
  ASSIGN_OR_RETURN(pf.source_id, Req<int32_t>(f, "source-id", "partition field"));
  pf.field_id = f.value("field-id", default_field_id);  // v1 specs may omit field ids
  ASSIGN_OR_RETURN(pf.name, Req<std::string>(f, "name", "partition field"));
  ASSIGN_OR_RETURN(std::string t, Req<std::string>(f, "transform", "partition field"));
  ASSIGN_OR_RETURN(pf.transform, Transform::Parse(t));
  return pf;
}

}  // namespace

namespace internal {

Result<PartitionSpec> SpecFromJsonValue(const Json& j, int32_t spec_id) {
  PartitionSpec spec;
  spec.spec_id = spec_id;
  const Json* fields = &j;
  if (j.is_object()) {
    spec.spec_id = j.value("spec-id", spec_id);
    fields = &j.at("fields");
  }
  int32_t next_id = 1000;
  for (const Json& f : *fields) {
    ASSIGN_OR_RETURN(PartitionField pf, ParsePartitionField(f, next_id));
    next_id = pf.field_id + 1;
    spec.fields.push_back(std::move(pf));
  }
  return spec;
}

Json SpecToJsonValue(const PartitionSpec& spec) {
  Json fields = Json::array();
  for (const auto& f : spec.fields) {
    fields.push_back({{"name", f.name},
                      {"transform", f.transform.ToString()},
                      {"source-id", f.source_id},
                      {"field-id", f.field_id}});
  }
  return {{"spec-id", spec.spec_id}, {"fields", std::move(fields)}};
}

Result<SortOrder> SortOrderFromJsonValue(const Json& j) {
  SortOrder o;
  o.order_id = j.value("order-id", 0);
  for (const Json& f : j.at("fields")) {
    SortField sf;
    ASSIGN_OR_RETURN(sf.source_id, Req<int32_t>(f, "source-id", "sort field"));
    ASSIGN_OR_RETURN(sf.transform, Transform::Parse(f.value("transform", "identity")));
    sf.descending = f.value("direction", "asc") == "desc";
    sf.nulls_first = f.value("null-order", "nulls-first") == "nulls-first";
    o.fields.push_back(std::move(sf));
  }
  return o;
}

Result<Snapshot> SnapshotFromJsonValue(const Json& j, std::string_view where) {
  Snapshot s;
  ASSIGN_OR_RETURN(s.snapshot_id, Req<int64_t>(j, "snapshot-id", where));
  s.parent_snapshot_id = Opt<int64_t>(j, "parent-snapshot-id");
  s.sequence_number = j.value("sequence-number", int64_t{0});  // v1: 0
  ASSIGN_OR_RETURN(s.timestamp_ms, Req<int64_t>(j, "timestamp-ms", where));
  if (j.contains("manifest-list")) {
    s.manifest_list = j["manifest-list"].get<std::string>();
  } else if (j.contains("manifests")) {
    return Status::NotImplemented(
        "{}: snapshot {} lists manifests inline (v1 without a manifest "
        "list)",
        where, s.snapshot_id);
  }
  if (auto it = j.find("summary"); it != j.end() && it->is_object()) {
    for (const auto& [k, v] : it->items()) {
      s.summary[k] = v.is_string() ? v.get<std::string>() : v.dump();
    }
  }
  s.schema_id = Opt<int32_t>(j, "schema-id");
  s.first_row_id = Opt<int64_t>(j, "first-row-id");
  s.added_rows = Opt<int64_t>(j, "added-rows");
  return s;
}

Result<SnapshotRef> SnapshotRefFromJsonValue(const Json& r) {
  SnapshotRef ref;
  auto id = r.find("snapshot-id");
  if (id == r.end() || !id->is_number_integer()) {
    return Status::Invalid("snapshot ref: missing \"snapshot-id\"");
  }
  ref.snapshot_id = id->get<int64_t>();
  std::string type = r.value("type", "branch");
  if (type != "branch" && type != "tag") {
    return Status::Invalid("snapshot ref: type '{}' is neither branch nor tag", type);
  }
  ref.is_branch = type == "branch";
  ref.min_snapshots_to_keep = Opt<int32_t>(r, "min-snapshots-to-keep");
  ref.max_snapshot_age_ms = Opt<int64_t>(r, "max-snapshot-age-ms");
  ref.max_ref_age_ms = Opt<int64_t>(r, "max-ref-age-ms");
  return ref;
}

Result<StatisticsFile> StatisticsFileFromJsonValue(const Json& j, std::string_view what) {
  if (!j.is_object()) return Status::Invalid("{}: a statistics file is not an object", what);
  auto id = j.find("snapshot-id");
  auto path = j.find("statistics-path");
  if (id == j.end() || !id->is_number_integer() || path == j.end() || !path->is_string() ||
      path->get<std::string>().empty()) {
    return Status::Invalid("{}: a statistics file needs \"snapshot-id\" and \"statistics-path\"",
                           what);
  }
  return StatisticsFile{id->get<int64_t>(), path->get<std::string>(), j.dump()};
}

}  // namespace internal

namespace {

Result<TableMetadata> ParseMetadataJson(const Json& j, std::string_view where) {
  TableMetadata m;
  ASSIGN_OR_RETURN(m.format_version, Req<int>(j, "format-version", where));
  if (m.format_version < 1 || m.format_version > kMaxFormatVersion) {
    return Status::NotImplemented("{}: format version {} is not supported (1 to {})", where,
                                  m.format_version, kMaxFormatVersion);
  }
  m.table_uuid = j.value("table-uuid", "");
  ASSIGN_OR_RETURN(m.location, Req<std::string>(j, "location", where));
  m.last_sequence_number = j.value("last-sequence-number", int64_t{0});
  m.last_updated_ms = j.value("last-updated-ms", int64_t{0});
  m.last_column_id = j.value("last-column-id", 0);

  if (j.contains("schemas")) {
    for (const Json& sj : j["schemas"]) {
      ASSIGN_OR_RETURN(Schema s, internal::SchemaFromJsonValue(sj));
      m.schemas.push_back(std::move(s));
    }
    m.current_schema_id = j.value("current-schema-id", 0);
  } else if (j.contains("schema")) {  // v1
    ASSIGN_OR_RETURN(Schema s, internal::SchemaFromJsonValue(j["schema"]));
    m.current_schema_id = s.schema_id;
    m.schemas.push_back(std::move(s));
  } else {
    return Status::Invalid("{}: no \"schemas\" (or v1 \"schema\")", where);
  }
  if (m.current_schema() == nullptr) {
    return Status::Invalid("{}: current-schema-id {} is not among the schemas", where,
                           m.current_schema_id);
  }

  if (j.contains("partition-specs")) {
    for (const Json& sj : j["partition-specs"]) {
      ASSIGN_OR_RETURN(PartitionSpec s, internal::SpecFromJsonValue(sj, 0));
      m.partition_specs.push_back(std::move(s));
    }
    m.default_spec_id = j.value("default-spec-id", 0);
  } else if (j.contains("partition-spec")) {  // v1: a bare list of fields
    ASSIGN_OR_RETURN(PartitionSpec s, internal::SpecFromJsonValue(j["partition-spec"], 0));
    m.partition_specs.push_back(std::move(s));
  } else {
    m.partition_specs.push_back(PartitionSpec{});
  }
  int32_t max_partition_id = 999;
  for (const auto& s : m.partition_specs) {
    for (const auto& f : s.fields) max_partition_id = std::max(max_partition_id, f.field_id);
  }
  m.last_partition_id = j.value("last-partition-id", max_partition_id);

  if (auto it = j.find("properties"); it != j.end() && it->is_object()) {
    for (const auto& [k, v] : it->items()) {
      m.properties[k] = v.is_string() ? v.get<std::string>() : v.dump();
    }
  }
  if (auto id = Opt<int64_t>(j, "current-snapshot-id"); id && *id != -1) m.current_snapshot_id = id;
  if (auto it = j.find("snapshots"); it != j.end() && it->is_array()) {
    for (const Json& sj : *it) {
      ASSIGN_OR_RETURN(Snapshot s, internal::SnapshotFromJsonValue(sj, where));
      m.snapshots.push_back(std::move(s));
    }
  }
  if (auto it = j.find("snapshot-log"); it != j.end() && it->is_array()) {
    for (const Json& e : *it) {
      m.snapshot_log.push_back(
          {e.at("snapshot-id").get<int64_t>(), e.at("timestamp-ms").get<int64_t>()});
    }
  }
  if (auto it = j.find("metadata-log"); it != j.end() && it->is_array()) {
    for (const Json& e : *it) {
      m.metadata_log.push_back(
          {e.at("metadata-file").get<std::string>(), e.at("timestamp-ms").get<int64_t>()});
    }
  }
  if (auto it = j.find("sort-orders"); it != j.end() && it->is_array()) {
    for (const Json& oj : *it) {
      ASSIGN_OR_RETURN(SortOrder o, internal::SortOrderFromJsonValue(oj));
      m.sort_orders.push_back(std::move(o));
    }
  }
  if (m.sort_orders.empty()) m.sort_orders.push_back(SortOrder{});
  m.default_sort_order_id = j.value("default-sort-order-id", 0);
  if (auto it = j.find("refs"); it != j.end() && it->is_object()) {
    for (const auto& [name, r] : it->items()) {
      auto ref = internal::SnapshotRefFromJsonValue(r);
      RETURN_IF_ERROR_CTX(ref, "{}: ref '{}'", where, name);
      m.refs[name] = *ref;
    }
  }
  // The implicit main branch (spec: refs may omit it).
  if (m.current_snapshot_id && !m.refs.count("main")) {
    m.refs["main"] = SnapshotRef{*m.current_snapshot_id, true, {}, {}, {}};
  }
  m.next_row_id = Opt<int64_t>(j, "next-row-id");
  if (m.format_version >= 3 && !m.next_row_id) m.next_row_id = 0;
  for (auto [key, into] : {std::pair{"statistics", &m.statistics},
                           std::pair{"partition-statistics", &m.partition_statistics}}) {
    auto it = j.find(key);
    if (it == j.end() || it->is_null()) continue;
    if (!it->is_array()) return Status::Invalid("{}: \"{}\" is not an array", where, key);
    for (const Json& e : *it) {
      ASSIGN_OR_RETURN(StatisticsFile f,
                       internal::StatisticsFileFromJsonValue(e, fmt::format("{}: {}", where, key)));
      into->push_back(std::move(f));
    }
  }
  return m;
}

}  // namespace

Result<TableMetadata> ParseTableMetadata(std::string_view text, std::string_view where) {
  std::string inflated;
  if (text.size() >= 2 && static_cast<uint8_t>(text[0]) == 0x1f &&
      static_cast<uint8_t>(text[1]) == 0x8b) {
    ASSIGN_OR_RETURN(inflated, Gunzip(text, where));
    text = inflated;
  }
  return internal::Guard(where, [&]() -> Result<TableMetadata> {
    ASSIGN_OR_RETURN(Json j, internal::ParseJson(text, where));
    if (!j.is_object()) return Status::Invalid("{}: table metadata must be a JSON object", where);
    return ParseMetadataJson(j, where);
  });
}

std::string TableMetadataToJson(const TableMetadata& m) {
  Json j = {{"format-version", m.format_version},
            {"table-uuid", m.table_uuid},
            {"location", m.location},
            {"last-sequence-number", m.last_sequence_number},
            {"last-updated-ms", m.last_updated_ms},
            {"last-column-id", m.last_column_id}};
  Json schemas = Json::array();
  for (const auto& s : m.schemas) schemas.push_back(internal::SchemaToJsonValue(s));
  j["schemas"] = std::move(schemas);
  j["current-schema-id"] = m.current_schema_id;
  Json specs = Json::array();
  for (const auto& s : m.partition_specs) specs.push_back(internal::SpecToJsonValue(s));
  j["partition-specs"] = std::move(specs);
  j["default-spec-id"] = m.default_spec_id;
  j["last-partition-id"] = m.last_partition_id;
  j["properties"] = Json::object();
  for (const auto& [k, v] : m.properties) j["properties"][k] = v;
  if (m.current_snapshot_id) {
    j["current-snapshot-id"] = *m.current_snapshot_id;
  } else if (m.format_version < 3) {
    j["current-snapshot-id"] = -1;  // what Java writes for v1/v2; v3 writes null
  } else {
    j["current-snapshot-id"] = nullptr;
  }
  Json snaps = Json::array();
  for (const auto& s : m.snapshots) {
    Json sj = {{"snapshot-id", s.snapshot_id}};
    if (s.parent_snapshot_id) sj["parent-snapshot-id"] = *s.parent_snapshot_id;
    sj["sequence-number"] = s.sequence_number;
    sj["timestamp-ms"] = s.timestamp_ms;
    sj["manifest-list"] = s.manifest_list;
    sj["summary"] = Json::object();
    for (const auto& [k, v] : s.summary) sj["summary"][k] = v;
    if (s.schema_id) sj["schema-id"] = *s.schema_id;
    if (s.first_row_id) sj["first-row-id"] = *s.first_row_id;
    if (s.added_rows) sj["added-rows"] = *s.added_rows;
    snaps.push_back(std::move(sj));
  }
  j["snapshots"] = std::move(snaps);
  Json slog = Json::array();
  for (const auto& e : m.snapshot_log) {
    slog.push_back({{"snapshot-id", e.snapshot_id}, {"timestamp-ms", e.timestamp_ms}});
  }
  j["snapshot-log"] = std::move(slog);
  Json mlog = Json::array();
  for (const auto& e : m.metadata_log) {
    mlog.push_back({{"metadata-file", e.metadata_file}, {"timestamp-ms", e.timestamp_ms}});
  }
  j["metadata-log"] = std::move(mlog);
  Json orders = Json::array();
  for (const auto& o : m.sort_orders) {
    Json fields = Json::array();
    for (const auto& f : o.fields) {
      fields.push_back({{"transform", f.transform.ToString()},
                        {"source-id", f.source_id},
                        {"direction", f.descending ? "desc" : "asc"},
                        {"null-order", f.nulls_first ? "nulls-first" : "nulls-last"}});
    }
    orders.push_back({{"order-id", o.order_id}, {"fields", std::move(fields)}});
  }
  j["sort-orders"] = std::move(orders);
  j["default-sort-order-id"] = m.default_sort_order_id;
  Json refs = Json::object();
  for (const auto& [name, r] : m.refs) {
    Json rj = {{"snapshot-id", r.snapshot_id}, {"type", r.is_branch ? "branch" : "tag"}};
    if (r.min_snapshots_to_keep) rj["min-snapshots-to-keep"] = *r.min_snapshots_to_keep;
    if (r.max_snapshot_age_ms) rj["max-snapshot-age-ms"] = *r.max_snapshot_age_ms;
    if (r.max_ref_age_ms) rj["max-ref-age-ms"] = *r.max_ref_age_ms;
    refs[name] = std::move(rj);
  }
  j["refs"] = std::move(refs);
  if (m.format_version >= 3) j["next-row-id"] = m.next_row_id.value_or(0);
  for (auto [key, from] : {std::pair{"statistics", &m.statistics},
                           std::pair{"partition-statistics", &m.partition_statistics}}) {
    if (from->empty()) continue;
    Json files = Json::array();
    for (const StatisticsFile& f : *from) files.push_back(Json::parse(f.json));
    j[key] = std::move(files);
  }
  return j.dump(2);
}

std::string PartitionSpecToJson(const PartitionSpec& spec) {
  return internal::SpecToJsonValue(spec).dump();
}

Result<PartitionSpec> PartitionSpecFromJson(std::string_view text) {
  return internal::Guard("partition spec", [&]() -> Result<PartitionSpec> {
    ASSIGN_OR_RETURN(Json j, internal::ParseJson(text, "partition spec"));
    return internal::SpecFromJsonValue(j, 0);
  });
}

}  // namespace sluice::iceberg
