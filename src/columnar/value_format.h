// Text forms of values: Iceberg's JSON single-value forms (dates
// "2024-01-31", times "13:45:00.123456", timestamps "2024-01-31T13:45:00.123456"
// with "+00:00" for timestamptz and 9 digits for the _ns types, decimals
// "14.20", hex for binary, canonical uuids) and the parsers for them.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "columnar/column.h"
#include "common/status.h"

namespace sluice {

void AppendDate(int32_t days, std::string* out);
void AppendTime(int64_t micros, std::string* out);
// `value` in µs, or ns when `nanos`; `utc` appends "+00:00".
void AppendTimestamp(int64_t value, bool nanos, bool utc, std::string* out);
void AppendDecimal(int128_t unscaled, int scale, std::string* out);
// Shortest text that reads back to the same value; "NaN", "Infinity", "-Infinity".
void AppendDouble(double v, std::string* out);
void AppendFloat(float v, std::string* out);
void AppendHex(std::string_view bytes, std::string* out);
void AppendUuid(std::string_view bytes16, std::string* out);
void AppendInt128(int128_t v, std::string* out);

int64_t DaysFromCivil(int64_t y, unsigned m, unsigned d);
void CivilFromDays(int64_t days, int64_t* y, unsigned* m, unsigned* d);

// Parsers; each returns kInvalidArgument naming the text on failure.
Result<int32_t> ParseDate(std::string_view s);  // "YYYY-MM-DD"
Result<int64_t> ParseTime(std::string_view s);  // "HH:MM[:SS[.ffffff]]" → µs
// "YYYY-MM-DD[( |T)HH:MM[:SS[.f…]]][Z|±HH[:MM]]" → µs (or ns). A zone offset is
// applied (result in UTC); `*had_zone` tells whether one was present.
Result<int64_t> ParseTimestamp(std::string_view s, bool nanos, bool* had_zone = nullptr);
// ParseTimestamp's fast path, for decoders: the common spellings
// ("YYYY-MM-DD(T| )HH:MM:SS[.f…]" with no zone, "Z" or "+00:00") read at fixed
// offsets into `*out`; false for anything else (valid or not), which
// ParseTimestamp then reads. Where it is true, ParseTimestamp gives the same.
bool FastTimestamp(std::string_view s, bool nanos, int64_t* out);
// "-12.345" → unscaled value at `scale`; more fractional digits than scale or
// more than `precision` digits is kOutOfRange.
Result<int128_t> ParseDecimal(std::string_view s, int precision, int scale);
Result<std::string> ParseUuid(std::string_view s);  // canonical form → 16 bytes
Result<std::string> ParseHex(std::string_view s);

// Largest unscaled magnitude for a precision: 10^p - 1.
int128_t DecimalMaxUnscaled(int precision);

}  // namespace sluice
