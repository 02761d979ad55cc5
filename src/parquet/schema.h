// Mapping between an Iceberg schema (columnar/types.h) and a Parquet schema.
//
// Writing: each Iceberg field becomes a schema element carrying its field_id;
// lists and maps use the standard 3-level layout (`<name> (LIST) { repeated
// group list { <element> } }`, `<name> (MAP) { repeated group key_value { key;
// value } }`); types carry both LogicalType and ConvertedType annotations.
//   boolean→BOOLEAN, int→INT32, long→INT64, float→FLOAT, double→DOUBLE,
//   decimal(p,s)→INT32 (p≤9) / INT64 (p≤18) / FIXED_LEN_BYTE_ARRAY (minimal bytes),
//   date→INT32 DATE, time→INT64 TIME(µs), timestamp[tz]→INT64 TIMESTAMP(µs,
//   isAdjustedToUTC = tz), *_ns→INT64 TIMESTAMP(ns), string→BYTE_ARRAY STRING,
//   uuid→FIXED[16] UUID, fixed[n]→FIXED[n], binary→BYTE_ARRAY.
// Reading: the reverse, also accepting legacy layouts (2-level lists, repeated
// primitives, INT96 timestamps, ConvertedType-only annotations, unannotated
// byte arrays) and files without field ids (ids then assigned in order).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "columnar/types.h"
#include "common/status.h"
#include "parquet/metadata.h"

namespace sluice::parquet {

// One leaf (primitive) column of a Parquet file.
struct ColumnDescriptor {
  std::vector<std::string> path;  // path_in_schema
  int16_t max_definition_level = 0;
  int16_t max_repetition_level = 0;
  PhysicalType physical_type = PhysicalType::kInt32;
  int32_t type_length = 0;  // FIXED_LEN_BYTE_ARRAY width
  TypePtr type;             // the Iceberg type of the leaf value
  int32_t field_id = 0;     // Iceberg field id of the leaf
  int schema_index = 0;     // index of its SchemaElement in FileMetaData::schema
};

// Iceberg schema → Parquet schema elements (root first) and leaf descriptors;
// `rename`, when set, gives the name each field is written under.
Status ToParquetSchema(const Schema& schema, std::vector<SchemaElement>* elements,
                       std::vector<ColumnDescriptor>* leaves,
                       const std::function<std::string(std::string_view)>& rename = nullptr);

// Iceberg's name mapping (`schema.name-mapping.default`): field ids for the
// columns of files written without ids, by name at each level (list elements
// are "element", map keys/values "key"/"value").
struct MappedField {
  std::vector<std::string> names;
  std::optional<int32_t> field_id;
  std::vector<MappedField> fields;
};

// Parquet schema elements → Iceberg schema and leaf descriptors. A file
// without field ids takes them from `name_mapping` when one is given (fields
// it does not name get ids from 2^30 up, matching no table field); otherwise
// ids are assigned in order (AssignFreshIds).
Status FromParquetSchema(const std::vector<SchemaElement>& elements, Schema* schema,
                         std::vector<ColumnDescriptor>* leaves,
                         const std::vector<MappedField>* name_mapping = nullptr);

// The Iceberg type of one primitive schema element, from its physical type and
// LogicalType / ConvertedType annotations (INT96 → timestamptz, unsigned 32-bit
// → long, unsigned 64-bit → decimal(20,0), FLOAT16 → float).
Result<TypePtr> IcebergTypeOf(const SchemaElement& element);

}  // namespace sluice::parquet
