// Thrift compact protocol: a writer and a bounds-checked reader, enough for
// the Parquet metadata structs (metadata.h).
//
// Contract: CompactReader never reads outside the view it was given; every
// malformed input (truncation, bad type, negative size, nesting deeper than
// kMaxDepth, oversized container) is a kCorruption status. Unknown fields of
// any type can be skipped with Skip(). Neither class is thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace sluice::parquet::thrift {

// Compact protocol type codes (field headers and container element types).
enum class CType : uint8_t {
  kStop = 0,
  kBoolTrue = 1,  // also "bool" as a list element type
  kBoolFalse = 2,
  kByte = 3,
  kI16 = 4,
  kI32 = 5,
  kI64 = 6,
  kDouble = 7,
  kBinary = 8,
  kList = 9,
  kSet = 10,
  kMap = 11,
  kStruct = 12,
};

std::string_view CTypeName(CType t);

// Appends compact-protocol bytes to a string. Structs are nested with
// StructBegin/StructEnd (StructEnd writes the stop byte); fields must be
// written in any order but ids are delta-encoded relative to the previous one.
class CompactWriter {
 public:
  explicit CompactWriter(std::string* out) : out_(out) {}

  void StructBegin();
  void StructEnd();

  void FieldBool(int16_t id, bool v);
  void FieldI8(int16_t id, int8_t v);
  void FieldI16(int16_t id, int16_t v);
  void FieldI32(int16_t id, int32_t v);
  void FieldI64(int16_t id, int64_t v);
  void FieldDouble(int16_t id, double v);
  void FieldBinary(int16_t id, std::string_view v);
  // Writes the header of a struct field and begins the nested struct.
  void FieldStructBegin(int16_t id);
  // Writes the header of a list field followed by the list header.
  void FieldListBegin(int16_t id, CType elem, int32_t size);

  // Container elements (after a list header).
  void ListBegin(CType elem, int32_t size);
  void ElemBool(bool v);
  void ElemI32(int32_t v);
  void ElemI64(int64_t v);
  void ElemBinary(std::string_view v);

 private:
  void FieldHeader(int16_t id, CType type);
  std::string* out_;
  std::vector<int16_t> last_id_stack_;
  int16_t last_id_ = 0;
};

// Reads compact-protocol bytes from a view.
class CompactReader {
 public:
  static constexpr int kMaxDepth = 64;

  explicit CompactReader(std::string_view data)
      : p_(reinterpret_cast<const uint8_t*>(data.data())), begin_(p_), end_(p_ + data.size()) {}

  // Structs: call StructBegin, then ReadFieldHeader until it yields kStop,
  // then StructEnd.
  Status StructBegin();
  void StructEnd();
  // Reads the next field header; *type is kStop at the end of the struct.
  Status ReadFieldHeader(CType* type, int16_t* id);

  // Field values; `type` is the type from the field header and must match.
  Status ReadBool(CType type, bool* v);
  Status ReadI8(CType type, int8_t* v);
  Status ReadI16(CType type, int16_t* v);
  Status ReadI32(CType type, int32_t* v);
  Status ReadI64(CType type, int64_t* v);
  Status ReadDouble(CType type, double* v);
  Status ReadBinary(CType type, std::string* v);
  // A list (or set) header; *size is bounded by the remaining bytes.
  Status ReadListHeader(CType type, CType* elem, int32_t* size);

  // List elements.
  Status ReadElemBool(bool* v);
  Status ReadElemI32(int32_t* v) { return ReadI32(CType::kI32, v); }
  Status ReadElemI64(int64_t* v) { return ReadI64(CType::kI64, v); }
  Status ReadElemBinary(std::string* v) { return ReadBinary(CType::kBinary, v); }

  // Skips one value of `type` (recursing into structs and containers).
  Status Skip(CType type);

  size_t position() const { return static_cast<size_t>(p_ - begin_); }

 private:
  Status ReadVarint64(uint64_t* v);
  Status Expect(CType got, CType want) const;
  Status Truncated(const char* what) const;

  const uint8_t* p_;
  const uint8_t* begin_;
  const uint8_t* end_;
  int depth_ = 0;
  std::vector<int16_t> last_id_stack_;
  int16_t last_id_ = 0;
};

}  // namespace sluice::parquet::thrift
