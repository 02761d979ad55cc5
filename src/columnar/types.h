// Iceberg's type system, the schema model of every sluice module.
//
// A DataType is immutable and shared (TypePtr). Nested types hold Fields:
// a struct its members, a list one element field, a map a key and a value
// field. Every Field carries its Iceberg field id.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace sluice {

enum class TypeId : uint8_t {
  kBoolean,
  kInt,
  kLong,
  kFloat,
  kDouble,
  kDecimal,
  kDate,
  kTime,
  kTimestamp,
  kTimestampTz,
  kTimestampNs,
  kTimestampTzNs,
  kString,
  kUuid,
  kFixed,
  kBinary,
  kStruct,
  kList,
  kMap,
};

class DataType;
using TypePtr = std::shared_ptr<const DataType>;

struct Field {
  int32_t id = 0;
  std::string name;
  TypePtr type;
  bool required = false;
  std::string doc;
};

class DataType {
 public:
  static TypePtr Boolean();
  static TypePtr Int();
  static TypePtr Long();
  static TypePtr Float();
  static TypePtr Double();
  static TypePtr Decimal(int precision, int scale);
  static TypePtr Date();
  static TypePtr Time();
  static TypePtr Timestamp();
  static TypePtr TimestampTz();
  static TypePtr TimestampNs();
  static TypePtr TimestampTzNs();
  static TypePtr String();
  static TypePtr Uuid();
  static TypePtr Fixed(int width);
  static TypePtr Binary();
  static TypePtr Struct(std::vector<Field> fields);
  static TypePtr List(Field element);
  static TypePtr Map(Field key, Field value);
  // A primitive from its id (not decimal/fixed/nested).
  static TypePtr Primitive(TypeId id);

  TypeId id() const { return id_; }
  int precision() const { return precision_; }
  int scale() const { return scale_; }
  int width() const { return width_; }
  // struct: members; list: {element}; map: {key, value}; primitives: empty.
  const std::vector<Field>& fields() const { return fields_; }
  bool is_nested() const { return id_ >= TypeId::kStruct; }
  bool is_binary_like() const {  // stored as bytes in a Column
    return id_ == TypeId::kString || id_ == TypeId::kBinary || id_ == TypeId::kFixed ||
           id_ == TypeId::kUuid;
  }
  // Bytes per value in a Column's fixed-width buffer (0 for bytes and nested).
  int value_width() const;

  // Iceberg's type string: "long", "decimal(10,2)", "fixed[16]", "list<string>",
  // "map<string, int>", "struct<1: a: required int, ...>".
  std::string ToString() const;
  bool Equals(const DataType& other) const;  // structural, including field ids

 private:
  explicit DataType(TypeId id) : id_(id) {}
  TypeId id_;
  int precision_ = 0, scale_ = 0, width_ = 0;
  std::vector<Field> fields_;
};

// The top-level struct of a table or file.
struct Schema {
  std::vector<Field> fields;
  int32_t schema_id = 0;
  std::vector<int32_t> identifier_field_ids;
  // v3 field defaults by field id, in Iceberg's JSON single-value form (JSON
  // text): the value of rows written before the field existed, and of rows
  // written without it.
  std::map<int32_t, std::string> initial_defaults, write_defaults;

  // Field with this id at any depth, or null.
  const Field* FindById(int32_t id) const;
  // Top-level field by name (case-sensitive), or null.
  const Field* FindByName(const std::string& name) const;
  // Field by dotted path through structs ("loc.lat"), or null.
  const Field* FindByPath(const std::string& path) const;
  int32_t HighestFieldId() const;
  TypePtr AsStruct() const { return DataType::Struct(fields); }
  std::string ToString() const;
};

// Assigns ids 1..n the way Iceberg does for a new schema: each struct's
// members first, then recursively into each member's type.
void AssignFreshIds(std::vector<Field>* fields, int32_t* next_id);

}  // namespace sluice
