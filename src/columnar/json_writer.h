// Rows as JSON lines: one object per row, keys in schema order, values in
// Iceberg's JSON single-value forms (see value_format.h). Maps with string keys
// become objects, other maps arrays of {"key": k, "value": v}.
#pragma once

#include <string>
#include <string_view>

#include "columnar/column.h"

namespace sluice {

void AppendJsonString(std::string_view s, std::string* out);
void AppendJsonValue(const Column& column, int64_t row, std::string* out);
// Appends `{"a":1,...}` for one row (no newline).
void AppendJsonRow(const Batch& batch, int64_t row, std::string* out);

}  // namespace sluice
