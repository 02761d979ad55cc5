// Conversion between Avro schemas and Iceberg schemas (spec Appendix A).
//
// Iceberg -> Avro, as Java Iceberg and pyiceberg write it:
//   optional T            ["null", T] with "default": null
//   struct                record "r<field-id>" (the top level takes a given name)
//   list                  array with "element-id"
//   map<string, V>        map with "key-id" / "value-id"
//   map<K, V>, K!=string  array with logicalType "map" of record "k<kid>_v<vid>"
//                         with fields key / value (each with its field-id)
//   date                  int + date;  time: long + time-micros
//   timestamp[tz][_ns]    long + timestamp-micros|timestamp-nanos + adjust-to-utc
//   uuid                  fixed(16) "uuid_fixed" + uuid
//   decimal(P,S)          fixed "decimal_P_S" of the minimal size + decimal
//   fixed[n]              fixed "fixed_n";  binary: bytes
// Avro -> Iceberg is the inverse, lenient enough for other writers: enums read
// as strings, string+uuid and bytes+decimal are accepted, time-millis and
// timestamp-millis widen to micros, and fields without a field-id get fresh
// ids above the highest one present. A union with more than one non-null
// branch is kNotImplemented.
#pragma once

#include <string>
#include <string_view>

#include "avro/schema.h"
#include "columnar/types.h"
#include "common/status.h"

namespace sluice::avro {

// The Iceberg schema of a record schema (the top level of an Avro file).
Result<Schema> AvroToIcebergSchema(const AvroNode& record);
// The Iceberg type of any Avro schema; `*required` is false for a null union.
Result<TypePtr> AvroToIcebergType(const AvroNode& node, bool* required);

// The Avro schema of an Iceberg schema; the top-level record is `record_name`.
Result<AvroNodePtr> IcebergToAvroSchema(const Schema& schema, const std::string& record_name);

// True for Iceberg's encoding of a non-string-key map: an array with
// logicalType "map" whose items are a record of fields "key" and "value".
bool IsKeyValueArray(const AvroNode& array);

// A valid Avro name ([A-Za-z_][A-Za-z0-9_]*) for an Iceberg field name, as
// Java Iceberg makes one: a leading digit gets a "_" prefix, any other invalid
// character becomes "_x" + its code point in upper-case hex ("a-b" ->
// "a_x2Db"). The writer keeps the original in the "iceberg-field-name"
// attribute, which the reader prefers.
std::string SanitizeAvroName(std::string_view name);

// Bytes of the smallest two's-complement fixed that holds `precision` digits.
int DecimalFixedSize(int precision);

}  // namespace sluice::avro
