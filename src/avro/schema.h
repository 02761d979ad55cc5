// Avro schema model: parsed from and written back to Avro schema JSON.
//
// The model keeps what sluice needs to read and write Iceberg's Avro files
// exactly: Iceberg's id attributes (`field-id` on record fields, `element-id`
// on arrays, `key-id`/`value-id` on maps), logical types with their parameters,
// `adjust-to-utc`, docs, defaults, and any other attribute verbatim (`props`).
// Named types (record, enum, fixed) are shared nodes: a later reference by name
// points at the same node. ToJson() writes a named type in full once and by
// name afterwards, so Parse(ToJson(s)) describes the same schema.
//
// Recursive named types are rejected (NotImplemented): Iceberg has none.
// Nodes are immutable once parsed and may be shared across threads.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace sluice::avro {

// Insertion-ordered JSON, so schemas print in the order they were written.
using Json = nlohmann::ordered_json;

enum class AvroType : uint8_t {
  kNull,
  kBoolean,
  kInt,
  kLong,
  kFloat,
  kDouble,
  kBytes,
  kString,
  kRecord,
  kEnum,
  kArray,
  kMap,
  kUnion,
  kFixed,
};

std::string_view AvroTypeName(AvroType type);

struct AvroNode;
using AvroNodePtr = std::shared_ptr<const AvroNode>;

struct AvroField {
  std::string name;
  AvroNodePtr type;
  std::string doc;
  std::optional<int32_t> field_id;    // Iceberg "field-id"
  std::optional<Json> default_value;  // "default", when present
  Json props = Json::object();        // other attributes, verbatim
};

struct AvroNode {
  AvroType type = AvroType::kNull;
  // Named types (record, enum, fixed): name and namespace; full_name() joins them.
  std::string name;
  std::string name_space;
  std::string doc;
  std::vector<AvroField> fields;            // record
  std::vector<std::string> symbols;         // enum
  int32_t size = 0;                         // fixed
  AvroNodePtr items;                        // array
  AvroNodePtr values;                       // map
  std::vector<AvroNodePtr> branches;        // union
  std::string logical_type;                 // "" when absent
  int32_t precision = 0, scale = 0;         // decimal
  std::optional<bool> adjust_to_utc;        // Iceberg timestamps
  std::optional<int32_t> element_id;        // array
  std::optional<int32_t> key_id, value_id;  // map
  Json props = Json::object();              // other attributes, verbatim

  bool is_named() const {
    return type == AvroType::kRecord || type == AvroType::kEnum || type == AvroType::kFixed;
  }
  std::string full_name() const { return name_space.empty() ? name : name_space + "." + name; }
  // For a union of exactly "null" and one other branch: index of the null
  // branch (0 or 1); -1 otherwise.
  int NullBranch() const;
  // The non-null branch of a ["null", T] union, or null.
  const AvroNode* NonNullBranch() const;
};

// Parses Avro schema JSON text. Errors (kInvalidArgument) name the JSON path.
Result<AvroNodePtr> ParseAvroSchema(std::string_view json_text);
Result<AvroNodePtr> ParseAvroSchemaJson(const Json& json);

// The schema as JSON (named types written in full once, then by name).
Json AvroSchemaToJson(const AvroNode& node);
// Compact JSON text, the form stored under `avro.schema`.
std::string AvroSchemaToString(const AvroNode& node);

}  // namespace sluice::avro
