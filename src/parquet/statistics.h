// Column statistics for the Parquet writer: min/max accumulators with the
// ordering of each logical type, bound truncation, and conversion to Parquet
// `Statistics` and to Iceberg's single-value bound serialization.
//
// Orders: signed for INT32/INT64 (every sluice integer, date, time, timestamp
// and INT32/INT64 decimal), IEEE order ignoring NaN for FLOAT/DOUBLE (a zero
// min is written as -0.0 and a zero max as +0.0, as parquet.thrift asks),
// false < true for BOOLEAN, unsigned lexicographic bytes for strings, binary,
// fixed and uuid, and signed two's-complement big-endian for decimals stored
// as FIXED_LEN_BYTE_ARRAY.
//
// Truncation (strings, binary and fixed only; `length` counts code points for
// strings and bytes otherwise): the lower bound is a prefix; the upper bound a
// prefix whose last byte / code point is incremented (carrying leftwards), or
// none when no such prefix exists (all 0xFF bytes, all U+10FFFF).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "columnar/column.h"
#include "columnar/types.h"
#include "parquet/metadata.h"

namespace sluice::parquet {

template <typename T>
struct MinMax {
  bool has = false;
  T min{}, max{};

  void Update(T v) {
    if (!has) {
      min = max = v;
      has = true;
      return;
    }
    if (v < min) min = v;
    if (max < v) max = v;
  }
  // Over a contiguous array (NaN-free for floating point).
  void UpdateAll(const T* v, int64_t n) {
    if (n == 0) return;
    T lo = has ? min : v[0], hi = has ? max : v[0];
    for (int64_t i = 0; i < n; ++i) {
      lo = v[i] < lo ? v[i] : lo;
      hi = hi < v[i] ? v[i] : hi;
    }
    min = lo;
    max = hi;
    has = true;
  }
  void Merge(const MinMax& o) {
    if (!o.has) return;
    Update(o.min);
    Update(o.max);
  }
  void Reset() { has = false; }
};

// Compares byte strings unsigned-lexicographically, or as big-endian two's
// complement integers of equal width when `signed_decimal`.
bool LessBytes(std::string_view a, std::string_view b, bool signed_decimal);

struct BytesMinMax {
  bool has = false;
  bool signed_decimal = false;
  std::string min, max;

  void Update(std::string_view v) {
    if (!has) {
      min.assign(v);
      max.assign(v);
      has = true;
      return;
    }
    if (LessBytes(v, min, signed_decimal)) min.assign(v);
    if (LessBytes(max, v, signed_decimal)) max.assign(v);
  }
  void Merge(const BytesMinMax& o) {
    if (!o.has) return;
    Update(o.min);
    Update(o.max);
  }
  void Reset() { has = false; }
};

// Statistics of a page, chunk or file, min/max PLAIN-encoded (byte arrays
// without their length prefix), untruncated unless a flag says otherwise: a
// bound taken from another file's truncated statistics (pages copied without
// decoding, page_copy.h) is a bound, not a value of the data.
struct EncodedStats {
  int64_t null_count = 0;
  int64_t nan_count = 0;
  bool nan_count_known = true;  // false once pages of unknown NaN count are in
  bool has_min_max = false;
  std::string min, max;
  bool min_exact = true, max_exact = true;
};

// Byte-string bounds gathered from the statistics of copied pages, each with
// whether it is a value of the data (exact) or a truncated bound.
struct CopiedBytesBounds {
  bool has = false;
  std::string min, max;
  bool min_exact = true, max_exact = true;

  void Merge(std::string_view lo, bool lo_exact, std::string_view hi, bool hi_exact,
             bool signed_decimal);
  void Merge(const CopiedBytesBounds& o, bool signed_decimal) {
    if (o.has) Merge(o.min, o.min_exact, o.max, o.max_exact, signed_decimal);
  }
  // Folds these bounds into `stats` (whose own min/max are exact values).
  void FoldInto(EncodedStats* stats, bool signed_decimal) const;
  void Reset() { has = false; }
};

std::string TruncateLowerBound(std::string_view v, int length, bool utf8);
std::optional<std::string> TruncateUpperBound(std::string_view v, int length, bool utf8);

// Parquet Statistics: null_count, min_value/max_value (BYTE_ARRAY bounds
// truncated to `truncate_length`, with is_*_exact), and the deprecated
// min/max where the legacy signed order equals the column order (BOOLEAN,
// INT32, INT64, FLOAT, DOUBLE).
Statistics ToParquetStatistics(const EncodedStats& stats, PhysicalType physical,
                               const DataType& type, int truncate_length);

// Iceberg single-value serialization of the bounds of a primitive leaf:
// little-endian int/long/float/double (dates as int days, times and
// timestamps as long), booleans as one byte, strings as UTF-8, binary and
// fixed raw, uuids as 16 bytes, decimals as minimal big-endian two's
// complement. Strings, binary and fixed are truncated to `truncate_length`.
void ToIcebergBounds(const EncodedStats& stats, PhysicalType physical, const DataType& type,
                     int truncate_length, std::optional<std::string>* lower,
                     std::optional<std::string>* upper);

// Big-endian two's complement of `v` in exactly `width` bytes (1..16).
void DecimalToFixedBytes(int128_t v, int width, char* out);

}  // namespace sluice::parquet
