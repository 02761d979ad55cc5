// CAST and TRY_CAST. Numbers convert among INT, BIGINT, FLOAT, DOUBLE and
// DECIMAL (range checked; decimals round half away from zero, doubles to
// integers half to even, as PostgreSQL and DuckDB do); every primitive
// converts to and from STRING (the text forms of columnar/value_format.h);
// DATE, TIMESTAMP and TIMESTAMPTZ convert among each other (UTC) and to the
// _NS forms. A value that does not convert fails the row (CAST) or becomes
// NULL (TRY_CAST).
#include <charconv>
#include <cmath>
#include <limits>

#include "columnar/sql_schema.h"
#include "columnar/value_format.h"
#include "expr/kernels.h"

namespace sluice::expr::internal {
namespace {

constexpr int64_t kMicrosPerDay = int64_t{86400} * 1000000;

bool IsInteger(TypeId id) { return id == TypeId::kInt || id == TypeId::kLong; }
bool IsNumber(TypeId id) {
  return IsInteger(id) || id == TypeId::kFloat || id == TypeId::kDouble || id == TypeId::kDecimal;
}
bool IsMicros(TypeId id) { return id == TypeId::kTimestamp || id == TypeId::kTimestampTz; }
bool IsNanos(TypeId id) { return id == TypeId::kTimestampNs || id == TypeId::kTimestampTzNs; }

// A number read from a column: exact (unscaled at `scale`) or a double.
struct Number {
  bool exact = true;
  int128_t unscaled = 0;
  int scale = 0;
  double d = 0;
};

Number ReadNumber(const Column& c, int64_t i) {
  switch (c.type()->id()) {
    case TypeId::kInt: return {true, c.Value<int32_t>(i), 0, 0};
    case TypeId::kLong: return {true, c.Value<int64_t>(i), 0, 0};
    case TypeId::kDecimal: return {true, c.Value<int128_t>(i), c.type()->scale(), 0};
    case TypeId::kFloat: return {false, 0, 0, c.Value<float>(i)};
    default: return {false, 0, 0, c.Value<double>(i)};
  }
}

int128_t RoundDiv(int128_t n, int128_t d) {
  int128_t q = n / d, r = n % d;
  if (r < 0) r = -r;
  if (2 * r >= d) q += n < 0 ? -1 : 1;
  return q;
}

std::string OutOfRangeFor(std::string_view shown, const DataType& type) {
  return fmt::format("{} is out of range for {}", shown, ToSqlType(type));
}

// Converts one row; returns an error text (the row fails) or "" on success.
class RowCaster {
 public:
  RowCaster(const Column& in, Column* out) : in_(in), out_(out), to_(out->type()->id()) {}

  std::string Cast(int64_t i) {
    TypeId from = in_.type()->id();
    if (to_ == TypeId::kString) return ToString(i);
    if (from == TypeId::kString) return FromString(in_.GetBytes(i));
    if (IsNumber(from) && IsNumber(to_)) return FromNumber(ReadNumber(in_, i));
    if (from == TypeId::kDate || IsMicros(from) || IsNanos(from)) return FromTime(i);
    if (from == to_) {
      if (in_.type()->is_binary_like()) {
        out_->AppendBytes(in_.GetBytes(i));
      } else {
        VisitFixed(from, [&](auto t) { out_->Append(in_.Value<decltype(t)>(i)); });
      }
      return "";
    }
    return fmt::format("no conversion from {} to {}", ToSqlType(*in_.type()),
                       ToSqlType(*out_->type()));
  }

 private:
  std::string OutOfRange(std::string_view shown) { return OutOfRangeFor(shown, *out_->type()); }
  std::string Shown(const Number& n) {
    std::string s;
    if (n.exact) {
      AppendDecimal(n.unscaled, n.scale, &s);
    } else {
      AppendDouble(n.d, &s);
    }
    return s;
  }

  std::string FromNumber(const Number& n) {
    switch (to_) {
      case TypeId::kInt: return ToInteger<int32_t>(n);
      case TypeId::kLong: return ToInteger<int64_t>(n);
      case TypeId::kFloat:
      case TypeId::kDouble: {
        double d = n.exact ? static_cast<double>(static_cast<long double>(n.unscaled) /
                                                 static_cast<long double>(Pow10(n.scale)))
                           : n.d;
        if (to_ == TypeId::kDouble) {
          out_->Append<double>(d);
          return "";
        }
        if (std::isfinite(d) && std::fabs(d) > std::numeric_limits<float>::max()) {
          return OutOfRange(Shown(n));
        }
        out_->Append<float>(static_cast<float>(d));
        return "";
      }
      default: return ToDecimal(n);
    }
  }

  template <typename T>
  std::string ToInteger(const Number& n) {
    int128_t v;
    if (n.exact) {
      v = n.scale == 0 ? n.unscaled : RoundDiv(n.unscaled, Pow10(n.scale));
    } else {
      if (!std::isfinite(n.d) || std::fabs(n.d) >= 1.8e19) return OutOfRange(Shown(n));
      v = static_cast<int128_t>(std::nearbyint(n.d));  // half to even, as PostgreSQL and DuckDB
    }
    if (v < std::numeric_limits<T>::min() || v > std::numeric_limits<T>::max()) {
      return OutOfRange(Shown(n));
    }
    out_->Append<T>(static_cast<T>(v));
    return "";
  }

  std::string ToDecimal(const Number& n) {
    int scale = out_->type()->scale();
    int128_t max = DecimalMaxUnscaled(out_->type()->precision());
    int128_t v;
    if (n.exact) {
      if (scale >= n.scale) {
        if (__builtin_mul_overflow(n.unscaled, Pow10(scale - n.scale), &v)) {
          return OutOfRange(Shown(n));
        }
      } else {
        v = RoundDiv(n.unscaled, Pow10(n.scale - scale));
      }
    } else {
      long double scaled = std::round(static_cast<long double>(n.d) * Pow10(scale));
      if (!std::isfinite(n.d) || std::fabs(scaled) > static_cast<long double>(max)) {
        return OutOfRange(Shown(n));
      }
      v = static_cast<int128_t>(scaled);
    }
    if (v > max || v < -max) return OutOfRange(Shown(n));
    out_->Append<int128_t>(v);
    return "";
  }

  std::string FromTime(int64_t i) {
    TypeId from = in_.type()->id();
    // As µs (or ns) since the epoch, UTC.
    int64_t micros = 0;
    if (from == TypeId::kDate) {
      micros = int64_t{in_.Value<int32_t>(i)} * kMicrosPerDay;
    } else if (IsNanos(from)) {
      int64_t ns = in_.Value<int64_t>(i);
      micros = ns / 1000 - (ns % 1000 < 0 ? 1 : 0);
    } else {
      micros = in_.Value<int64_t>(i);
    }
    if (to_ == TypeId::kDate) {
      int64_t days = micros / kMicrosPerDay - (micros % kMicrosPerDay < 0 ? 1 : 0);
      out_->Append<int32_t>(static_cast<int32_t>(days));
    } else if (IsMicros(to_)) {
      out_->Append<int64_t>(micros);
    } else if (IsNanos(to_)) {
      int64_t ns;
      if (IsNanos(from)) {
        ns = in_.Value<int64_t>(i);
      } else if (__builtin_mul_overflow(micros, int64_t{1000}, &ns)) {
        return OutOfRange("the timestamp");
      }
      out_->Append<int64_t>(ns);
    } else {
      return fmt::format("no conversion from {} to {}", ToSqlType(*in_.type()),
                         ToSqlType(*out_->type()));
    }
    return "";
  }

  std::string ToString(int64_t i) {
    std::string s;
    switch (in_.type()->id()) {
      case TypeId::kBoolean: s = in_.GetBool(i) ? "true" : "false"; break;
      case TypeId::kInt: s = std::to_string(in_.Value<int32_t>(i)); break;
      case TypeId::kLong: s = std::to_string(in_.Value<int64_t>(i)); break;
      case TypeId::kFloat: AppendFloat(in_.Value<float>(i), &s); break;
      case TypeId::kDouble: AppendDouble(in_.Value<double>(i), &s); break;
      case TypeId::kDecimal: AppendDecimal(in_.Value<int128_t>(i), in_.type()->scale(), &s); break;
      case TypeId::kDate: AppendDate(in_.Value<int32_t>(i), &s); break;
      case TypeId::kTime: AppendTime(in_.Value<int64_t>(i), &s); break;
      case TypeId::kTimestamp:
      case TypeId::kTimestampTz:
      case TypeId::kTimestampNs:
      case TypeId::kTimestampTzNs: {
        TypeId id = in_.type()->id();
        AppendTimestamp(in_.Value<int64_t>(i), IsNanos(id),
                        id == TypeId::kTimestampTz || id == TypeId::kTimestampTzNs, &s);
        break;
      }
      case TypeId::kUuid: AppendUuid(in_.GetBytes(i), &s); break;
      case TypeId::kString: s = in_.GetBytes(i); break;
      default: AppendHex(in_.GetBytes(i), &s); break;
    }
    out_->AppendBytes(s);
    return "";
  }

  std::string FromString(std::string_view text) {
    std::string_view s = text;
    while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
    while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
    std::string bad = fmt::format("cannot cast '{}' to {}", PrintableText(text.substr(0, 64)),
                                  ToSqlType(*out_->type()));
    switch (to_) {
      case TypeId::kBoolean: {
        std::string lower(s);
        for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        for (const char* t : {"true", "t", "yes", "y", "on", "1"}) {
          if (lower == t) {
            out_->AppendBool(true);
            return "";
          }
        }
        for (const char* f : {"false", "f", "no", "n", "off", "0"}) {
          if (lower == f) {
            out_->AppendBool(false);
            return "";
          }
        }
        return bad;
      }
      case TypeId::kInt:
      case TypeId::kLong: {
        if (!s.empty() && s.front() == '+') s.remove_prefix(1);
        int64_t v = 0;
        auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
        if (ec == std::errc::result_out_of_range) return OutOfRange(PrintableText(s));
        if (ec != std::errc() || end != s.data() + s.size() || s.empty()) return bad;
        return FromNumber(Number{true, v, 0, 0});
      }
      case TypeId::kFloat:
      case TypeId::kDouble: {
        if (!s.empty() && s.front() == '+') s.remove_prefix(1);
        double d = 0;
        auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), d);
        if (ec != std::errc() || end != s.data() + s.size() || s.empty()) return bad;
        return FromNumber(Number{false, 0, 0, d});
      }
      case TypeId::kDecimal: {
        if (s.find_first_of("eE") != std::string_view::npos) {
          double d = 0;
          auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), d);
          if (ec != std::errc() || end != s.data() + s.size()) return bad;
          return FromNumber(Number{false, 0, 0, d});
        }
        size_t dot = s.find('.');
        int fraction = dot == std::string_view::npos ? 0 : static_cast<int>(s.size() - dot - 1);
        if (fraction > 38) return bad;
        Result<int128_t> v = ParseDecimal(s, 38, fraction);
        if (!v.ok()) {
          return v.status().code() == StatusCode::kOutOfRange ? OutOfRange(PrintableText(s)) : bad;
        }
        return FromNumber(Number{true, *v, fraction, 0});
      }
      case TypeId::kDate: {
        Result<int32_t> d = ParseDate(s);
        if (!d.ok()) return bad;
        out_->Append<int32_t>(*d);
        return "";
      }
      case TypeId::kTime: {
        Result<int64_t> t = ParseTime(s);
        if (!t.ok()) return bad;
        out_->Append<int64_t>(*t);
        return "";
      }
      case TypeId::kTimestamp:
      case TypeId::kTimestampTz:
      case TypeId::kTimestampNs:
      case TypeId::kTimestampTzNs: {
        Result<int64_t> t = ParseTimestamp(s, IsNanos(to_));
        if (!t.ok()) return bad;
        out_->Append<int64_t>(*t);
        return "";
      }
      case TypeId::kUuid: {
        Result<std::string> u = ParseUuid(s);
        if (!u.ok()) return bad;
        out_->AppendBytes(*u);
        return "";
      }
      case TypeId::kBinary: out_->AppendBytes(text); return "";
      default: return bad;
    }
  }

  const Column& in_;
  Column* out_;
  TypeId to_;
};

// INT → BIGINT and integers → DOUBLE: every value converts; no per-row checks.
template <typename From, typename To>
Column Widen(const Node& node, const Column& arg, const Active& active) {
  int64_t n = arg.size();
  Column out(node.type);
  out.ResizeFixed(n);
  To* o = out.mutable_data<To>();
  const From* x = arg.data<From>();
  for (int64_t i = 0; i < n; ++i) {
    o[i] = static_cast<To>(x[i]);
    if (!IsActive(active, i) || arg.IsNull(i)) out.SetNull(i);
  }
  return out;
}

// INT or BIGINT → DECIMAL(p, s) with s <= 18 (the product of an integer and
// 10^s then fits in 128 bits): one multiply and a range check a row, the
// bounds computed once.
template <typename From>
Column IntegerToDecimal(const Node& node, const Column& arg, RowErrors* errors,
                        const Active& active, bool try_cast) {
  const int64_t n = arg.size();
  const int128_t unit = Pow10(node.type->scale());
  const int128_t max = DecimalMaxUnscaled(node.type->precision());
  Column out(node.type);
  out.ResizeFixed(n);
  int128_t* o = out.mutable_data<int128_t>();
  const From* x = arg.data<From>();
  const bool nullable = arg.null_count() > 0 || !active.empty();
  for (int64_t i = 0; i < n; ++i) {
    if (nullable && (!IsActive(active, i) || arg.IsNull(i))) {
      out.SetNull(i);
      continue;
    }
    const int128_t v = int128_t{x[i]} * unit;
    if (v > max || v < -max) {
      if (!try_cast) RowError(errors, node, i, OutOfRangeFor(std::to_string(x[i]), *node.type));
      out.SetNull(i);
      continue;
    }
    o[i] = v;
  }
  return out;
}

}  // namespace

Result<Column> EvalCast(const Node& node, Column& arg, RowErrors* errors, const Active& active) {
  TypeId from = arg.type()->id(), to = node.type->id();
  if (from == TypeId::kInt && to == TypeId::kLong)
    return Widen<int32_t, int64_t>(node, arg, active);
  if (from == TypeId::kInt && to == TypeId::kDouble)
    return Widen<int32_t, double>(node, arg, active);
  if (from == TypeId::kLong && to == TypeId::kDouble) {
    return Widen<int64_t, double>(node, arg, active);
  }
  if (from == TypeId::kFloat && to == TypeId::kDouble)
    return Widen<float, double>(node, arg, active);
  bool try_cast = node.op == Op::kTryCast;
  if (to == TypeId::kDecimal && node.type->scale() <= 18) {
    if (from == TypeId::kInt) return IntegerToDecimal<int32_t>(node, arg, errors, active, try_cast);
    if (from == TypeId::kLong)
      return IntegerToDecimal<int64_t>(node, arg, errors, active, try_cast);
  }
  Column out(node.type);
  out.Reserve(arg.size());
  RowCaster caster(arg, &out);
  for (int64_t i = 0; i < arg.size(); ++i) {
    if (!IsActive(active, i) || arg.IsNull(i)) {
      out.AppendNull();
      continue;
    }
    std::string error = caster.Cast(i);
    if (error.empty()) continue;
    if (!try_cast) RowError(errors, node, i, error);
    out.AppendNull();
  }
  return out;
}

}  // namespace sluice::expr::internal
