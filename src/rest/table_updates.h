// The updates of a REST commit (a CommitTableRequest's "updates"), applied in
// order to one table's metadata by the rules of Iceberg's
// TableMetadata.Builder, for the part of the metadata sluice models; and the
// JSON readers and source checks TableChange shares with them. Internal to
// rest/: TableChange (table_change.h) states the contract.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "common/status.h"
#include "iceberg/table_metadata.h"

namespace sluice::rest::internal {

// A member of an update or requirement, of the JSON type `T`.
template <typename T>
Result<T> Member(const nlohmann::json& j, const char* key, std::string_view what) {
  auto it = j.find(key);
  if (it == j.end()) return Status::Invalid("{}: missing \"{}\"", what, key);
  try {
    return it->get<T>();
  } catch (const std::exception&) {
    return Status::Invalid("{}: \"{}\" has the wrong type ({})", what, key, it->dump());
  }
}

// Every source column of `spec` (of `order`) is a field of `schema` its
// transform takes; `what` names the update or request in the error.
Status CheckSpecSources(const iceberg::PartitionSpec& spec, const Schema& schema,
                        std::string_view what);
Status CheckOrderSources(const iceberg::SortOrder& order, const Schema& schema,
                         std::string_view what);

// `updates` (a JSON array of update objects, their actions already known to
// be the spec's) applied in order to a copy of `base`, then the rules every
// metadata keeps checked; `creating` (an assert-create change) fills in a
// uuid, the unpartitioned spec and the unsorted order when none was given.
// Locations must lie under `warehouse`. Errors name the update (updates[i]).
Result<iceberg::TableMetadata> ApplyTableUpdates(const iceberg::TableMetadata& base,
                                                 const nlohmann::json& updates,
                                                 const std::string& warehouse, bool creating);

}  // namespace sluice::rest::internal
