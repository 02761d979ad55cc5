// Iceberg schema JSON (spec Appendix C): Schema <-> JSON text.
//
//   {"type":"struct","schema-id":0,"identifier-field-ids":[1],
//    "fields":[{"id":1,"name":"id","required":true,"type":"long"}, ...]}
//
// Parsing is lenient where other writers differ ("decimal(9, 2)", missing
// "schema-id" in v1, unknown keys); writing is exactly the spec's form.
// v3 field defaults (`initial-default`, `write-default`) are kept as JSON text.
#pragma once

#include <string>
#include <string_view>

#include "columnar/types.h"
#include "common/status.h"
#include "parquet/schema.h"

namespace sluice::iceberg {

Result<Schema> SchemaFromJson(std::string_view json);
std::string SchemaToJson(const Schema& schema);

// A type string or object ("long", "decimal(10,2)", {"type":"list",...}).
Result<TypePtr> TypeFromJson(std::string_view json);
std::string TypeToJson(const DataType& type);

// `schema.name-mapping.default`: [{"field-id": 1, "names": ["id"]},
// {"field-id": 2, "names": ["loc"], "fields": [...]}, ...].
Result<std::vector<parquet::MappedField>> NameMappingFromJson(std::string_view json);

// The primitive type for an Iceberg type string ("timestamptz", "fixed[16]").
Result<TypePtr> PrimitiveFromString(std::string_view name);

}  // namespace sluice::iceberg
