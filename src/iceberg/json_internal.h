// Internal: nlohmann-json helpers shared by the Iceberg JSON parsers and the
// REST catalog (whose requests carry schemas, specs and snapshots in the
// metadata's JSON form). The public headers keep JSON types out of their
// signatures.
#pragma once

#include <nlohmann/json.hpp>
#include <string_view>

#include "columnar/types.h"
#include "common/status.h"
#include "iceberg/table_metadata.h"

namespace sluice::iceberg::internal {

// ordered_json keeps keys in the spec's order when writing.
using Json = nlohmann::ordered_json;

Result<Json> ParseJson(std::string_view text, std::string_view what);
Result<Schema> SchemaFromJsonValue(const Json& j);
Json SchemaToJsonValue(const Schema& schema);
// A partition spec object ({"spec-id", "fields"}) or a v1 bare field list
// (which takes `spec_id`).
Result<PartitionSpec> SpecFromJsonValue(const Json& j, int32_t spec_id);
Json SpecToJsonValue(const PartitionSpec& spec);
Result<SortOrder> SortOrderFromJsonValue(const Json& j);
Result<Snapshot> SnapshotFromJsonValue(const Json& j, std::string_view where);
// {"snapshot-id", "type": "branch"|"tag", retention fields}.
Result<SnapshotRef> SnapshotRefFromJsonValue(const Json& j);
// A StatisticsFile or PartitionStatisticsFile object ("snapshot-id" and
// "statistics-path" required; the rest kept as written); `what` names it.
Result<StatisticsFile> StatisticsFileFromJsonValue(const Json& j, std::string_view what);

// nlohmann throws on a value of the wrong JSON type; Guard turns that into a
// Status at the module boundary.
template <typename Fn>
auto Guard(std::string_view what, Fn&& fn) -> decltype(fn()) {
  try {
    return fn();
  } catch (const std::exception& e) {
    return Status::Invalid("{}: {}", what, e.what());
  }
}

}  // namespace sluice::iceberg::internal
