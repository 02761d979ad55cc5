// The SQL parser: a script of CREATE TABLE / CREATE SOURCE / CREATE PIPELINE
// statements → Script (ast.h). The accepted grammar is in docs/sql.md.
//
// Statements are separated by ';' (the last one is optional). Every error is
// kInvalidArgument "line L, column C: expected X, got 'Y'", naming the position
// and the offending token; valid SQL that sluice does not run yet (joins,
// FORMAT other than JSON, UPSERT and DEBEZIUM) is kNotImplemented "line L,
// column C: FORMAT AVRO is not supported yet". Pure function; thread-safe.
#pragma once

#include <string_view>

#include "common/status.h"
#include "sql/ast.h"

namespace sluice::sql {

Result<Script> ParseScript(std::string_view text);

}  // namespace sluice::sql
