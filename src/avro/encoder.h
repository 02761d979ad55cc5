// RecordEncoder: sluice Columns -> Avro binary encoding, for one Avro schema.
//
// Make() matches an Avro record schema against an Iceberg schema once (record
// fields by field-id, else by name) and compiles the write steps; Encode()
// then appends rows to a buffer. The Avro schema may be derived from the
// Iceberg one (IcebergToAvroSchema) or given explicitly, as Iceberg manifests
// need; a nullable Avro field with no Iceberg column is written as null.
// Errors: a mismatch between the two schemas is kInvalidArgument at Make();
// a null in a non-nullable Avro field is kInvalidArgument and a decimal too
// wide for its fixed is kOutOfRange at Encode(), naming the field and row.
// Immutable after Make(); may be shared by threads.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "avro/schema.h"
#include "columnar/column.h"
#include "common/status.h"

namespace sluice::avro {

enum class EncodeOp : uint8_t {
  kNull,  // Avro field with no Iceberg column: always null
  kBool,
  kInt,
  kIntToLong,
  kLong,
  kFloat,
  kFloatToDouble,
  kDouble,
  kBytes,
  kFixed,
  kUuidString,
  kDecimalFixed,
  kDecimalBytes,
  kRecord,
  kArray,
  kMap,
  kKeyValueArray,
};

struct EncodeNode {
  EncodeOp op = EncodeOp::kNull;
  int8_t null_branch = -1;   // union index of null, -1 when not nullable
  int8_t value_branch = -1;  // union index of the value, -1 when not a union
  int32_t size = 0;          // fixed size
  std::string name;
  std::vector<int> columns;  // record: Iceberg child index per Avro field (-1: none)
  std::vector<EncodeNode> children;
};

class RecordEncoder {
 public:
  static Result<std::unique_ptr<RecordEncoder>> Make(const AvroNode& record, const Schema& schema);

  // Appends the encoding of rows [begin, end) of `batch` to *out.
  Status Encode(const Batch& batch, int64_t begin, int64_t end, std::string* out) const;

 private:
  EncodeNode root_;
  std::vector<TypePtr> types_;  // column types of the schema given to Make()
};

}  // namespace sluice::avro
