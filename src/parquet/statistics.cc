#include "parquet/statistics.h"

#include <cstring>
#include <vector>

#include "columnar/single_value.h"
#include "common/endian.h"

namespace sluice::parquet {

bool LessBytes(std::string_view a, std::string_view b, bool signed_decimal) {
  if (signed_decimal && !a.empty() && !b.empty()) {
    int8_t ha = static_cast<int8_t>(a[0]), hb = static_cast<int8_t>(b[0]);
    if (ha != hb) return ha < hb;
    a.remove_prefix(1);
    b.remove_prefix(1);
  }
  size_t n = a.size() < b.size() ? a.size() : b.size();
  int c = n == 0 ? 0 : std::memcmp(a.data(), b.data(), n);
  return c < 0 || (c == 0 && a.size() < b.size());
}

namespace {

// Byte length of the UTF-8 sequence starting with `lead` (1 for stray bytes).
int Utf8Length(uint8_t lead) {
  if (lead < 0xC0) return 1;
  if (lead < 0xE0) return 2;
  if (lead < 0xF0) return 3;
  if (lead < 0xF8) return 4;
  return 1;
}

// Bytes of the first `length` code points of `v`.
size_t Utf8Prefix(std::string_view v, int length) {
  size_t pos = 0;
  for (int i = 0; i < length && pos < v.size(); ++i) {
    pos += Utf8Length(static_cast<uint8_t>(v[pos]));
  }
  return pos < v.size() ? pos : v.size();
}

void AppendUtf8(uint32_t cp, std::string* out) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

uint32_t DecodeUtf8(std::string_view s) {
  uint8_t lead = static_cast<uint8_t>(s[0]);
  if (s.size() == 1) return lead;
  uint32_t cp = lead & (0x7F >> s.size());
  for (size_t i = 1; i < s.size(); ++i) cp = (cp << 6) | (static_cast<uint8_t>(s[i]) & 0x3F);
  return cp;
}

}  // namespace

std::string TruncateLowerBound(std::string_view v, int length, bool utf8) {
  if (length <= 0) return std::string(v);
  size_t n = utf8 ? Utf8Prefix(v, length) : std::min<size_t>(v.size(), length);
  return std::string(v.substr(0, n));
}

std::optional<std::string> TruncateUpperBound(std::string_view v, int length, bool utf8) {
  if (length <= 0) return std::string(v);
  size_t n = utf8 ? Utf8Prefix(v, length) : std::min<size_t>(v.size(), length);
  if (n == v.size()) return std::string(v);
  std::string_view prefix = v.substr(0, n);
  if (!utf8) {
    for (size_t i = n; i-- > 0;) {
      if (static_cast<uint8_t>(prefix[i]) != 0xFF) {
        std::string out(prefix.substr(0, i + 1));
        out[i] = static_cast<char>(static_cast<uint8_t>(out[i]) + 1);
        return out;
      }
    }
    return std::nullopt;
  }
  // Split into code points; increment the last one that can be incremented.
  std::vector<size_t> starts;
  for (size_t pos = 0; pos < n; pos += Utf8Length(static_cast<uint8_t>(prefix[pos]))) {
    starts.push_back(pos);
  }
  for (size_t k = starts.size(); k-- > 0;) {
    size_t end = k + 1 < starts.size() ? starts[k + 1] : n;
    uint32_t cp = DecodeUtf8(prefix.substr(starts[k], end - starts[k])) + 1;
    if (cp >= 0xD800 && cp <= 0xDFFF) cp = 0xE000;
    if (cp > 0x10FFFF) continue;
    std::string out(prefix.substr(0, starts[k]));
    AppendUtf8(cp, &out);
    return out;
  }
  return std::nullopt;
}

void CopiedBytesBounds::Merge(std::string_view lo, bool lo_exact, std::string_view hi,
                              bool hi_exact, bool signed_decimal) {
  if (!has || LessBytes(lo, min, signed_decimal)) {
    min.assign(lo);
    min_exact = lo_exact;
  } else if (lo == min) {
    min_exact = min_exact || lo_exact;
  }
  if (!has || LessBytes(max, hi, signed_decimal)) {
    max.assign(hi);
    max_exact = hi_exact;
  } else if (hi == max) {
    max_exact = max_exact || hi_exact;
  }
  has = true;
}

void CopiedBytesBounds::FoldInto(EncodedStats* stats, bool signed_decimal) const {
  if (!has) return;
  if (!stats->has_min_max) {
    stats->has_min_max = true;
    stats->min = min;
    stats->max = max;
    stats->min_exact = min_exact;
    stats->max_exact = max_exact;
    return;
  }
  // (on a tie the exact side's value is in the data: the bound is exact)
  if (LessBytes(min, stats->min, signed_decimal)) {
    stats->min = min;
    stats->min_exact = min_exact;
  }
  if (LessBytes(stats->max, max, signed_decimal)) {
    stats->max = max;
    stats->max_exact = max_exact;
  }
}

Statistics ToParquetStatistics(const EncodedStats& stats, PhysicalType physical,
                               const DataType& type, int truncate_length) {
  Statistics s;
  s.null_count = stats.null_count;
  if (!stats.has_min_max) return s;
  if (physical == PhysicalType::kByteArray) {
    bool utf8 = type.id() == TypeId::kString;
    std::string min = TruncateLowerBound(stats.min, truncate_length, utf8);
    s.is_min_value_exact = stats.min_exact && min.size() == stats.min.size();
    s.min_value = std::move(min);
    std::optional<std::string> max = TruncateUpperBound(stats.max, truncate_length, utf8);
    if (max) {
      s.is_max_value_exact = stats.max_exact && *max == stats.max;
      s.max_value = std::move(*max);
    }
    return s;
  }
  s.min_value = stats.min;
  s.max_value = stats.max;
  s.is_min_value_exact = stats.min_exact;
  s.is_max_value_exact = stats.max_exact;
  switch (physical) {
    case PhysicalType::kBoolean:
    case PhysicalType::kInt32:
    case PhysicalType::kInt64:
    case PhysicalType::kFloat:
    case PhysicalType::kDouble:
      s.min = stats.min;
      s.max = stats.max;
      break;
    default: break;
  }
  return s;
}

void DecimalToFixedBytes(int128_t v, int width, char* out) {
  auto u = static_cast<unsigned __int128>(v);
  for (int i = width - 1; i >= 0; --i) {
    out[i] = static_cast<char>(static_cast<uint8_t>(u));
    u >>= 8;
  }
}

namespace {

std::string DecimalBound(std::string_view plain, PhysicalType physical) {
  switch (physical) {
    case PhysicalType::kInt32: return DecimalToBigEndian(LoadLE<int32_t>(plain.data()));
    case PhysicalType::kInt64: return DecimalToBigEndian(LoadLE<int64_t>(plain.data()));
    default: return DecimalToBigEndian(DecimalFromBigEndian(plain));
  }
}

}  // namespace

void ToIcebergBounds(const EncodedStats& stats, PhysicalType physical, const DataType& type,
                     int truncate_length, std::optional<std::string>* lower,
                     std::optional<std::string>* upper) {
  lower->reset();
  upper->reset();
  if (!stats.has_min_max) return;
  switch (type.id()) {
    case TypeId::kDecimal:
      *lower = DecimalBound(stats.min, physical);
      *upper = DecimalBound(stats.max, physical);
      return;
    case TypeId::kString:
    case TypeId::kBinary:
    case TypeId::kFixed: {
      bool utf8 = type.id() == TypeId::kString;
      *lower = TruncateLowerBound(stats.min, truncate_length, utf8);
      *upper = TruncateUpperBound(stats.max, truncate_length, utf8);
      return;
    }
    case TypeId::kStruct:
    case TypeId::kList:
    case TypeId::kMap: return;
    default:
      *lower = stats.min;
      *upper = stats.max;
      return;
  }
}

}  // namespace sluice::parquet
