// Internal: nlohmann-json helpers shared by the Iceberg JSON parsers. The
// public headers keep JSON types out of their signatures.
#pragma once

#include <nlohmann/json.hpp>
#include <string_view>

#include "columnar/types.h"
#include "common/status.h"

namespace sluice::iceberg::internal {

// ordered_json keeps keys in the spec's order when writing.
using Json = nlohmann::ordered_json;

Result<Json> ParseJson(std::string_view text, std::string_view what);
Result<Schema> SchemaFromJsonValue(const Json& j);
Json SchemaToJsonValue(const Schema& schema);

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
