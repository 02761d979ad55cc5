#include "columnar/value_format.h"

#include <charconv>
#include <cmath>

namespace sluice {

// Days <-> civil date in the proleptic Gregorian calendar, by the era
// decomposition (400-year cycles of 146097 days).
int64_t DaysFromCivil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

void CivilFromDays(int64_t z, int64_t* y, unsigned* m, unsigned* d) {
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const unsigned doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  *d = doy - (153 * mp + 2) / 5 + 1;
  *m = mp < 10 ? mp + 3 : mp - 9;
  *y = static_cast<int64_t>(yoe) + era * 400 + (*m <= 2);
}

namespace {

void AppendDigits(uint64_t v, int width, std::string* out) {
  char buf[24];
  int n = 0;
  do {
    buf[n++] = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v > 0);
  for (int i = n; i < width; ++i) out->push_back('0');
  while (n > 0) out->push_back(buf[--n]);
}

int64_t FloorDiv(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

}  // namespace

void AppendDate(int32_t days, std::string* out) {
  int64_t y;
  unsigned m, d;
  CivilFromDays(days, &y, &m, &d);
  if (y < 0) {
    out->push_back('-');
    AppendDigits(static_cast<uint64_t>(-y), 4, out);
  } else {
    AppendDigits(static_cast<uint64_t>(y), 4, out);
  }
  out->push_back('-');
  AppendDigits(m, 2, out);
  out->push_back('-');
  AppendDigits(d, 2, out);
}

static void AppendTimeOfDay(int64_t units, int64_t per_second, int frac_digits, std::string* out) {
  int64_t secs = units / per_second;
  int64_t frac = units % per_second;
  AppendDigits(static_cast<uint64_t>(secs / 3600), 2, out);
  out->push_back(':');
  AppendDigits(static_cast<uint64_t>(secs / 60 % 60), 2, out);
  out->push_back(':');
  AppendDigits(static_cast<uint64_t>(secs % 60), 2, out);
  out->push_back('.');
  AppendDigits(static_cast<uint64_t>(frac), frac_digits, out);
}

void AppendTime(int64_t micros, std::string* out) { AppendTimeOfDay(micros, 1000000, 6, out); }

void AppendTimestamp(int64_t value, bool nanos, bool utc, std::string* out) {
  const int64_t per_second = nanos ? 1000000000 : 1000000;
  const int64_t per_day = per_second * 86400;
  int64_t days = FloorDiv(value, per_day);
  // value - days * per_day can overflow only at the int64 extremes; compute via
  // the remainder instead.
  int64_t rem = value % per_day;
  if (rem < 0) rem += per_day;
  AppendDate(static_cast<int32_t>(days), out);
  out->push_back('T');
  AppendTimeOfDay(rem, per_second, nanos ? 9 : 6, out);
  if (utc) out->append("+00:00");
}

void AppendInt128(int128_t v, std::string* out) {
  unsigned __int128 u = v < 0 ? -static_cast<unsigned __int128>(v) : v;
  char buf[48];
  int n = 0;
  do {
    buf[n++] = static_cast<char>('0' + static_cast<int>(u % 10));
    u /= 10;
  } while (u > 0);
  if (v < 0) out->push_back('-');
  while (n > 0) out->push_back(buf[--n]);
}

void AppendDecimal(int128_t unscaled, int scale, std::string* out) {
  if (scale <= 0) {
    AppendInt128(unscaled, out);
    for (int i = 0; i < -scale; ++i) out->push_back('0');
    return;
  }
  unsigned __int128 u = unscaled < 0 ? -static_cast<unsigned __int128>(unscaled) : unscaled;
  char buf[48];
  int n = 0;
  do {
    buf[n++] = static_cast<char>('0' + static_cast<int>(u % 10));
    u /= 10;
  } while (u > 0);
  while (n <= scale) buf[n++] = '0';  // at least one digit before the point
  if (unscaled < 0) out->push_back('-');
  while (n > scale) out->push_back(buf[--n]);
  out->push_back('.');
  while (n > 0) out->push_back(buf[--n]);
}

template <typename T>
static void AppendFloating(T v, std::string* out) {
  if (std::isnan(v)) {
    out->append("NaN");
  } else if (std::isinf(v)) {
    out->append(v > 0 ? "Infinity" : "-Infinity");
  } else {
    char buf[64];
    auto r = std::to_chars(buf, buf + sizeof(buf), v);
    out->append(buf, r.ptr);
  }
}
void AppendDouble(double v, std::string* out) { AppendFloating(v, out); }
void AppendFloat(float v, std::string* out) { AppendFloating(v, out); }

void AppendHex(std::string_view bytes, std::string* out) {
  static const char kHex[] = "0123456789abcdef";
  for (unsigned char c : bytes) {
    out->push_back(kHex[c >> 4]);
    out->push_back(kHex[c & 15]);
  }
}

void AppendUuid(std::string_view b, std::string* out) {
  for (size_t i = 0; i < b.size(); ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out->push_back('-');
    AppendHex(b.substr(i, 1), out);
  }
}

// ---- parsing ----

namespace {

bool ParseUnsigned(std::string_view s, size_t* pos, int min_digits, int max_digits, int64_t* out) {
  int64_t v = 0;
  int n = 0;
  while (*pos < s.size() && n < max_digits && s[*pos] >= '0' && s[*pos] <= '9') {
    v = v * 10 + (s[*pos] - '0');
    ++*pos;
    ++n;
  }
  *out = v;
  return n >= min_digits;
}

bool ParseDateAt(std::string_view s, size_t* pos, int64_t* days) {
  bool neg = false;
  if (*pos < s.size() && (s[*pos] == '-' || s[*pos] == '+')) {
    neg = s[*pos] == '-';
    ++*pos;
  }
  int64_t y, m, d;
  if (!ParseUnsigned(s, pos, 4, 6, &y)) return false;
  if (*pos >= s.size() || s[*pos] != '-') return false;
  ++*pos;
  if (!ParseUnsigned(s, pos, 2, 2, &m) || m < 1 || m > 12) return false;
  if (*pos >= s.size() || s[*pos] != '-') return false;
  ++*pos;
  if (!ParseUnsigned(s, pos, 2, 2, &d) || d < 1) return false;
  static const int kDays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (d > kDays[m - 1]) return false;
  if (neg) y = -y;
  bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  if (m == 2 && d == 29 && !leap) return false;
  *days = DaysFromCivil(y, static_cast<unsigned>(m), static_cast<unsigned>(d));
  return true;
}

// HH:MM[:SS[.fraction]] → units of 10^-digits seconds.
bool ParseTimeAt(std::string_view s, size_t* pos, int digits, int64_t* out) {
  int64_t h, m, sec = 0, frac = 0;
  if (!ParseUnsigned(s, pos, 2, 2, &h) || h > 23) return false;
  if (*pos >= s.size() || s[*pos] != ':') return false;
  ++*pos;
  if (!ParseUnsigned(s, pos, 2, 2, &m) || m > 59) return false;
  if (*pos < s.size() && s[*pos] == ':') {
    ++*pos;
    if (!ParseUnsigned(s, pos, 2, 2, &sec) || sec > 59) return false;
    if (*pos < s.size() && s[*pos] == '.') {
      ++*pos;
      int n = 0;
      while (*pos < s.size() && s[*pos] >= '0' && s[*pos] <= '9') {
        if (n < digits) frac = frac * 10 + (s[*pos] - '0');
        ++n;
        ++*pos;
      }
      if (n == 0) return false;
      for (int i = n; i < digits; ++i) frac *= 10;
    }
  }
  int64_t scale = 1;
  for (int i = 0; i < digits; ++i) scale *= 10;
  *out = ((h * 60 + m) * 60 + sec) * scale + frac;
  return true;
}

}  // namespace

Result<int32_t> ParseDate(std::string_view s) {
  size_t pos = 0;
  int64_t days;
  if (!ParseDateAt(s, &pos, &days) || pos != s.size()) {
    return Status::Invalid("'{}' is not a date (expected YYYY-MM-DD)", s);
  }
  return static_cast<int32_t>(days);
}

Result<int64_t> ParseTime(std::string_view s) {
  size_t pos = 0;
  int64_t v;
  if (!ParseTimeAt(s, &pos, 6, &v) || pos != s.size()) {
    return Status::Invalid("'{}' is not a time (expected HH:MM:SS[.ffffff])", s);
  }
  return v;
}

bool FastTimestamp(std::string_view s, bool nanos, int64_t* out) {
  const size_t n = s.size();
  if (n < 19) return false;
  const char* p = s.data();
  auto digit = [p](size_t i) {
    return static_cast<unsigned>(static_cast<unsigned char>(p[i]) - '0');
  };
  for (size_t i : {0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18}) {
    if (digit(i) > 9) return false;
  }
  if (p[4] != '-' || p[7] != '-' || (p[10] != 'T' && p[10] != ' ') || p[13] != ':' ||
      p[16] != ':') {
    return false;
  }
  const int y = digit(0) * 1000 + digit(1) * 100 + digit(2) * 10 + digit(3);
  const unsigned mo = digit(5) * 10 + digit(6), d = digit(8) * 10 + digit(9);
  const int64_t h = digit(11) * 10 + digit(12), mi = digit(14) * 10 + digit(15),
                sec = digit(17) * 10 + digit(18);
  static const unsigned kDays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (mo < 1 || mo > 12 || d < 1 || d > kDays[mo - 1] || h > 23 || mi > 59 || sec > 59) {
    return false;
  }
  const bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  if (mo == 2 && d == 29 && !leap) return false;
  if (nanos && (y < 1678 || y > 2261)) return false;  // near the int64 limits
  const int digits = nanos ? 9 : 6;
  size_t pos = 19;
  int64_t frac = 0;
  if (pos < n && p[pos] == '.') {
    ++pos;
    int k = 0;
    for (; pos < n && digit(pos) <= 9; ++pos, ++k) {
      if (k < digits) frac = frac * 10 + digit(pos);
    }
    if (k == 0) return false;
    for (; k < digits; ++k) frac *= 10;
  }
  if (pos < n) {
    std::string_view zone = s.substr(pos);
    if (zone != "Z" && zone != "+00:00") return false;
  }
  const int64_t per_second = nanos ? 1000000000 : 1000000;
  const int64_t seconds = DaysFromCivil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec;
  *out = seconds * per_second + frac;
  return true;
}

Result<int64_t> ParseTimestamp(std::string_view s, bool nanos, bool* had_zone) {
  auto bad = [&] {
    return Status::Invalid("'{}' is not a timestamp (expected YYYY-MM-DDTHH:MM:SS[.f][Z|+HH:MM])",
                           s);
  };
  size_t pos = 0;
  int64_t days, tod = 0;
  if (!ParseDateAt(s, &pos, &days)) return bad();
  const int digits = nanos ? 9 : 6;
  if (pos < s.size() && (s[pos] == 'T' || s[pos] == ' ')) {
    ++pos;
    if (!ParseTimeAt(s, &pos, digits, &tod)) return bad();
  }
  int64_t offset_minutes = 0;
  bool zone = false;
  if (pos < s.size()) {
    if (s[pos] == 'Z' || s[pos] == 'z') {
      zone = true;
      ++pos;
    } else if (s[pos] == '+' || s[pos] == '-') {
      int sign = s[pos] == '-' ? -1 : 1;
      ++pos;
      int64_t hh, mm = 0;
      if (!ParseUnsigned(s, &pos, 2, 2, &hh) || hh > 18) return bad();
      if (pos < s.size() && s[pos] == ':') ++pos;
      if (pos < s.size() && !ParseUnsigned(s, &pos, 2, 2, &mm)) return bad();
      offset_minutes = sign * (hh * 60 + mm);
      zone = true;
    }
  }
  if (pos != s.size()) return bad();
  if (had_zone) *had_zone = zone;
  const int64_t per_second = nanos ? 1000000000 : 1000000;
  const int64_t per_day = per_second * 86400;
  // Out of the int64 range (nanosecond timestamps span ±292 years).
  int64_t v;
  if (__builtin_mul_overflow(days, per_day, &v) || __builtin_add_overflow(v, tod, &v) ||
      __builtin_sub_overflow(v, offset_minutes * 60 * per_second, &v)) {
    return Status::OutOfRange("timestamp '{}' is out of range", s);
  }
  return v;
}

int128_t DecimalMaxUnscaled(int precision) {
  int128_t v = 1;
  for (int i = 0; i < precision; ++i) v *= 10;
  return v - 1;
}

Result<int128_t> ParseDecimal(std::string_view s, int precision, int scale) {
  size_t pos = 0;
  bool neg = false;
  if (pos < s.size() && (s[pos] == '-' || s[pos] == '+')) {
    neg = s[pos] == '-';
    ++pos;
  }
  int128_t v = 0;
  int int_digits = 0, frac_digits = 0;
  bool any = false;
  const int128_t limit = DecimalMaxUnscaled(38);
  while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') {
    if (v > limit / 10) return Status::OutOfRange("decimal '{}' has too many digits", s);
    v = v * 10 + (s[pos++] - '0');
    if (v != 0) ++int_digits;
    any = true;
  }
  if (pos < s.size() && s[pos] == '.') {
    ++pos;
    while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') {
      char c = s[pos++];
      any = true;
      if (frac_digits == scale) {
        if (c != '0') {
          return Status::OutOfRange("decimal '{}' has more than {} fractional digits", s, scale);
        }
        continue;
      }
      v = v * 10 + (c - '0');
      ++frac_digits;
    }
  }
  int exp = 0;
  if (pos < s.size() && (s[pos] == 'e' || s[pos] == 'E')) {
    ++pos;
    bool eneg = false;
    if (pos < s.size() && (s[pos] == '-' || s[pos] == '+')) eneg = s[pos++] == '-';
    int64_t e;
    if (!ParseUnsigned(s, &pos, 1, 4, &e)) any = false;
    exp = static_cast<int>(eneg ? -e : e);
  }
  if (!any || pos != s.size()) return Status::Invalid("'{}' is not a decimal number", s);
  int shift = scale - frac_digits + exp;
  for (; shift > 0; --shift) {
    if (v > limit / 10) return Status::OutOfRange("decimal '{}' out of range", s);
    v *= 10;
  }
  for (; shift < 0; ++shift) {
    if (v % 10 != 0) {
      return Status::OutOfRange("decimal '{}' has more than {} fractional digits", s, scale);
    }
    v /= 10;
  }
  if (v > DecimalMaxUnscaled(precision)) {
    return Status::OutOfRange("decimal '{}' does not fit decimal({},{})", s, precision, scale);
  }
  return neg ? -v : v;
}

Result<std::string> ParseHex(std::string_view s) {
  if (s.size() % 2 != 0) return Status::Invalid("'{}' is not hex (odd length)", s);
  std::string out;
  out.reserve(s.size() / 2);
  auto nib = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  for (size_t i = 0; i < s.size(); i += 2) {
    int hi = nib(s[i]), lo = nib(s[i + 1]);
    if (hi < 0 || lo < 0) return Status::Invalid("'{}' is not hex", s);
    out.push_back(static_cast<char>(hi << 4 | lo));
  }
  return out;
}

Result<std::string> ParseUuid(std::string_view s) {
  if (s.size() != 36 || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-') {
    return Status::Invalid("'{}' is not a uuid (expected 8-4-4-4-12 hex digits)", s);
  }
  std::string hex;
  for (char c : s) {
    if (c != '-') hex.push_back(c);
  }
  auto r = ParseHex(hex);
  if (!r.ok()) return Status::Invalid("'{}' is not a uuid", s);
  return r;
}

}  // namespace sluice
