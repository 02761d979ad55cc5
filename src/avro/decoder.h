// RecordDecoder: Avro binary encoding -> sluice Columns, for one writer schema.
//
// Make() compiles the top-level record schema once into a tree of decode
// steps whose shape matches the Iceberg schema from AvroToIcebergSchema();
// Decode() then appends records straight into the Batch's Column buffers with
// no per-value allocation (enum symbols and strings are copied into the
// column heap). Every length and count is checked against the bytes left, so
// corrupt input yields kCorruption with the offset (relative to `data`) and
// the field path, never a crash or an allocation larger than the input.
// A RecordDecoder is immutable after Make() and may be shared by threads.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "avro/schema.h"
#include "columnar/column.h"
#include "common/status.h"

namespace sluice::avro {

enum class DecodeOp : uint8_t {
  kBool,
  kInt32,
  kInt64,
  kIntMillisToMicros,   // time-millis int -> µs
  kLongMillisToMicros,  // timestamp-millis long -> µs
  kFloat,
  kDouble,
  kBytes,  // bytes and string
  kFixed,
  kEnum,
  kUuidString,  // string + uuid: canonical text -> 16 bytes
  kDecimalFixed,
  kDecimalBytes,
  kRecord,
  kArray,
  kMap,            // Avro map: string keys
  kKeyValueArray,  // array of {key, value} records (Iceberg non-string-key map)
};

struct DecodeNode {
  DecodeOp op = DecodeOp::kInt32;
  int8_t union_branches = 0;         // 0: not a union
  int8_t null_branch = -1;           // union index meaning null, or -1
  int32_t size = 0;                  // fixed size
  int64_t min_bytes = 0;             // smallest encoding of one value (saturating)
  bool skip = false;                 // read past, its column left null
  std::string name;                  // field name, for error messages
  std::vector<std::string> symbols;  // enum
  std::vector<DecodeNode> children;  // record fields; array item; map value; kv key+value
};

class RecordDecoder {
 public:
  // `record` must be a record schema; AvroToIcebergSchema(record) gives the
  // schema of the batches Decode() fills. Record fields (of the top record
  // or any nested one; not map keys or values, nor list elements) whose
  // Iceberg field id is in `skip_field_ids` are read past, not decoded: their
  // column gets a null for each record (their bytes are still
  // bounds-checked).
  static Result<std::unique_ptr<RecordDecoder>> Make(
      const AvroNode& record, const std::vector<int32_t>& skip_field_ids = {});

  // Decodes `count` records from `block` starting at byte *pos, appending one
  // row per record to `batch` (whose columns match the record's Iceberg
  // schema), and advances *pos past them. Errors give byte offsets within
  // `block` and number records from `first_record`.
  Status Decode(std::string_view block, size_t* pos, int64_t count, int64_t first_record,
                Batch* batch) const;

  // Smallest encoding of one record in bytes (0 is possible, e.g. no fields).
  int64_t min_record_bytes() const { return root_.min_bytes; }

 private:
  DecodeNode root_;
};

}  // namespace sluice::avro
