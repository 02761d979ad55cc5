// Type rules and literal conversion shared by binder.cc and binder_apply.cc.
// Private to src/sql.
#pragma once

#include <string>

#include "columnar/column.h"
#include "common/status.h"
#include "sql/ast.h"

namespace sluice::sql::internal {

// The same type, ignoring field ids (nested: same shape, names, nullability).
bool SameType(const DataType& a, const DataType& b);
// INT → BIGINT, FLOAT → DOUBLE, DECIMAL(p,s) → DECIMAL(p',s) with p' >= p.
bool Widens(const DataType& from, const DataType& to);
// TIMESTAMP <-> TIMESTAMPTZ, TIMESTAMP_NS <-> TIMESTAMPTZ_NS.
bool ChangesZoneOnly(const DataType& from, const DataType& to);

// `literal` (not NULL) as a value of `type`, in single-value form; errors are
// kInvalidArgument without a position (the caller adds it).
Result<std::string> ConvertLiteral(const Literal& literal, const TypePtr& type);

// For messages: 'x', 12, TRUE.
std::string DescribeLiteral(const Literal& literal);

}  // namespace sluice::sql::internal
