// Iceberg's binary single-value serialization (spec Appendix D), used for
// column bounds and partition values in manifests:
//   boolean 1 byte; int/date 4-byte LE; long/time/timestamp* 8-byte LE;
//   float/double IEEE LE; string UTF-8; uuid 16 bytes; fixed/binary raw;
//   decimal unscaled big-endian two's complement, minimal bytes.
// Only primitive types have a single-value form.
#pragma once

#include <string>
#include <string_view>

#include "columnar/column.h"
#include "common/status.h"

namespace sluice {

// Appends the serialized value of row `row` (which must not be null).
void AppendSingleValue(const Column& column, int64_t row, std::string* out);

// Decodes `bytes` as a value of column->type() and appends it. Accepts the
// widths left by type promotion: 4 bytes for long (int), double (float) and
// timestamps (a date, in days). Wrong sizes are kCorruption.
Status AppendFromSingleValue(std::string_view bytes, Column* column);

// Orders two serialized values of `type` (<0, 0, >0) as Iceberg orders them:
// signed numbers, floats by value, strings and binary as unsigned bytes.
int CompareSingleValues(const DataType& type, std::string_view a, std::string_view b);

// Minimal big-endian two's-complement bytes of an unscaled decimal.
std::string DecimalToBigEndian(int128_t unscaled);
// The inverse, for 1 to 16 bytes.
int128_t DecimalFromBigEndian(std::string_view bytes);

}  // namespace sluice
