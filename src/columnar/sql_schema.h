// Schemas written as SQL column lists, the form sluice uses on the command line
// and in DDL:
//   "id BIGINT NOT NULL, name STRING, amount DECIMAL(10,2), ts TIMESTAMPTZ,
//    tags ARRAY<STRING>, attrs MAP<STRING, INT>, loc STRUCT<lat: DOUBLE, lon DOUBLE>"
// Type names (case-insensitive) map onto Iceberg types:
//   BOOLEAN|BOOL, INT|INTEGER|SMALLINT|TINYINT, BIGINT|LONG, FLOAT|REAL, DOUBLE,
//   DECIMAL(p[,s])|NUMERIC, DATE, TIME, TIMESTAMP, TIMESTAMPTZ, TIMESTAMP_NS,
//   TIMESTAMPTZ_NS, STRING|VARCHAR[(n)]|TEXT, BINARY|VARBINARY|BYTES|BLOB, UUID,
//   FIXED(n), ARRAY<T>|LIST<T>, MAP<K,V>, STRUCT<name T, ...>.
// Identifiers may be quoted with "..." or `...`. Field ids are assigned as
// Iceberg assigns them to a new schema (AssignFreshIds).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "columnar/types.h"
#include "common/status.h"

namespace sluice {

// Errors name the offending text and its character position.
Result<Schema> ParseColumnList(std::string_view sql);

// Makes `columns` the schema's primary key: its identifier fields (Iceberg's
// identifier-field-ids, in key order), each made NOT NULL. A name matches a
// top-level column exactly, else ignoring case when only one column does. A
// key column must be a primitive other than FLOAT/DOUBLE (Iceberg's rule for
// identifier fields); an unknown or repeated name is an error naming it.
Status SetPrimaryKey(Schema* schema, const std::vector<std::string>& columns);
// The names of the schema's identifier fields, in key order.
std::vector<std::string> PrimaryKeyColumns(const Schema& schema);

// Parses one type name ("DECIMAL(10,2)", "ARRAY<STRING>"); nested field ids are 0.
Result<TypePtr> ParseSqlType(std::string_view sql);

// The SQL spelling of a type (inverse of ParseSqlType).
std::string ToSqlType(const DataType& type);

}  // namespace sluice
