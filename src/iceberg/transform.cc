#include "iceberg/transform.h"

#include <charconv>

#include "columnar/single_value.h"
#include "columnar/value_format.h"
#include "common/endian.h"
#include "common/hash.h"

namespace sluice::iceberg {
namespace {

bool IsTimestamp(TypeId id) {
  return id == TypeId::kTimestamp || id == TypeId::kTimestampTz || id == TypeId::kTimestampNs ||
         id == TypeId::kTimestampTzNs;
}
bool IsNanos(TypeId id) { return id == TypeId::kTimestampNs || id == TypeId::kTimestampTzNs; }

int64_t FloorDiv(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

// Epoch-based units for the time transforms.
int32_t YearsFromDays(int64_t days) {
  int64_t y;
  unsigned m, d;
  CivilFromDays(days, &y, &m, &d);
  return static_cast<int32_t>(y - 1970);
}
int32_t MonthsFromDays(int64_t days) {
  int64_t y;
  unsigned m, d;
  CivilFromDays(days, &y, &m, &d);
  return static_cast<int32_t>((y - 1970) * 12 + (m - 1));
}

int64_t MicrosOf(const Column& c, int64_t row) {
  int64_t v = c.Value<int64_t>(row);
  return IsNanos(c.type()->id()) ? FloorDiv(v, 1000) : v;
}

int64_t DaysOf(const Column& c, int64_t row) {
  if (c.type()->id() == TypeId::kDate) return c.Value<int32_t>(row);
  return FloorDiv(MicrosOf(c, row), 86400LL * 1000000);
}

std::string_view Utf8Prefix(std::string_view s, int32_t code_points) {
  size_t i = 0;
  for (int32_t n = 0; i < s.size() && n < code_points; ++n) {
    auto c = static_cast<unsigned char>(s[i]);
    i += c < 0x80 ? 1 : c < 0xe0 ? 2 : c < 0xf0 ? 3 : 4;
  }
  return s.substr(0, std::min(i, s.size()));
}

}  // namespace

Result<Transform> Transform::Parse(std::string_view text) {
  Transform t;
  auto with_param = [&](std::string_view prefix, Kind kind) -> bool {
    if (!text.starts_with(prefix) || !text.ends_with("]")) return false;
    std::string_view num = text.substr(prefix.size(), text.size() - prefix.size() - 1);
    int32_t v = 0;
    auto r = std::from_chars(num.data(), num.data() + num.size(), v);
    if (r.ec != std::errc() || r.ptr != num.data() + num.size() || v <= 0) return false;
    t.kind = kind;
    t.param = v;
    return true;
  };
  if (text == "identity") {
    t.kind = Kind::kIdentity;
  } else if (text == "year") {
    t.kind = Kind::kYear;
  } else if (text == "month") {
    t.kind = Kind::kMonth;
  } else if (text == "day") {
    t.kind = Kind::kDay;
  } else if (text == "hour") {
    t.kind = Kind::kHour;
  } else if (text == "void") {
    t.kind = Kind::kVoid;
  } else if (with_param("bucket[", Kind::kBucket) || with_param("truncate[", Kind::kTruncate)) {
    // parsed
  } else if (text.starts_with("bucket[") || text.starts_with("truncate[")) {
    return Status::Invalid("transform \"{}\": the width must be a positive integer", text);
  } else {
    t.kind = Kind::kUnknown;
    t.text = std::string(text);
  }
  return t;
}

std::string Transform::ToString() const {
  switch (kind) {
    case Kind::kIdentity: return "identity";
    case Kind::kBucket: return fmt::format("bucket[{}]", param);
    case Kind::kTruncate: return fmt::format("truncate[{}]", param);
    case Kind::kYear: return "year";
    case Kind::kMonth: return "month";
    case Kind::kDay: return "day";
    case Kind::kHour: return "hour";
    case Kind::kVoid: return "void";
    case Kind::kUnknown: return text;
  }
  return text;
}

Status Transform::CheckSource(const DataType& source) const {
  TypeId id = source.id();
  bool ok = false;
  switch (kind) {
    case Kind::kIdentity: ok = !source.is_nested(); break;
    case Kind::kVoid: ok = true; break;
    case Kind::kBucket:
      ok = !source.is_nested() && id != TypeId::kBoolean && id != TypeId::kFloat &&
           id != TypeId::kDouble;
      break;
    case Kind::kTruncate:
      ok = id == TypeId::kInt || id == TypeId::kLong || id == TypeId::kDecimal ||
           id == TypeId::kString || id == TypeId::kBinary;
      break;
    case Kind::kYear:
    case Kind::kMonth:
    case Kind::kDay: ok = id == TypeId::kDate || IsTimestamp(id); break;
    case Kind::kHour: ok = IsTimestamp(id); break;
    case Kind::kUnknown: return Status::NotImplemented("unknown partition transform \"{}\"", text);
  }
  if (!ok) {
    return Status::Invalid("transform {} cannot apply to a {} column", ToString(),
                           source.ToString());
  }
  return Status::OK();
}

Result<TypePtr> Transform::ResultType(const TypePtr& source) const {
  RETURN_IF_ERROR(CheckSource(*source));
  switch (kind) {
    case Kind::kIdentity:
    case Kind::kTruncate:
    case Kind::kVoid: return source;
    case Kind::kDay: return DataType::Date();
    default: return DataType::Int();
  }
}

Result<int32_t> BucketHash(const Column& c, int64_t row) {
  std::string bytes;
  switch (c.type()->id()) {
    case TypeId::kInt:
    case TypeId::kDate: AppendLE<int64_t>(&bytes, c.Value<int32_t>(row)); break;
    case TypeId::kLong:
    case TypeId::kTime: AppendLE<int64_t>(&bytes, c.Value<int64_t>(row)); break;
    case TypeId::kTimestamp:
    case TypeId::kTimestampTz:
    case TypeId::kTimestampNs:
    case TypeId::kTimestampTzNs: AppendLE<int64_t>(&bytes, MicrosOf(c, row)); break;
    case TypeId::kDecimal: bytes = DecimalToBigEndian(c.Value<int128_t>(row)); break;
    case TypeId::kString:
    case TypeId::kUuid:
    case TypeId::kFixed:
    case TypeId::kBinary: return Murmur3_32(c.GetBytes(row));
    default: return Status::Invalid("bucket cannot hash a {} value", c.type()->ToString());
  }
  return Murmur3_32(bytes);
}

Result<Column> Transform::Apply(const Column& src) const {
  ASSIGN_OR_RETURN(TypePtr result_type, ResultType(src.type()));
  const TypeId id = src.type()->id();
  Column out(result_type);
  out.Reserve(src.size());
  for (int64_t i = 0; i < src.size(); ++i) {
    if (src.IsNull(i) || kind == Kind::kVoid) {
      out.AppendNull();
      continue;
    }
    switch (kind) {
      case Kind::kIdentity:
        if (src.type()->is_binary_like()) {
          out.AppendBytes(src.GetBytes(i));
        } else if (id == TypeId::kBoolean) {
          out.AppendBool(src.GetBool(i));
        } else {
          int w = src.type()->value_width();
          out.AppendRaw(src.data<uint8_t>() + i * w, 1);
        }
        break;
      case Kind::kBucket: {
        ASSIGN_OR_RETURN(int32_t h, BucketHash(src, i));
        out.Append<int32_t>((h & 0x7fffffff) % param);
        break;
      }
      case Kind::kTruncate:
        if (id == TypeId::kInt) {
          int64_t v = src.Value<int32_t>(i);
          out.Append<int32_t>(static_cast<int32_t>(v - (((v % param) + param) % param)));
        } else if (id == TypeId::kLong) {
          int64_t v = src.Value<int64_t>(i);
          out.Append<int64_t>(v - (((v % param) + param) % param));
        } else if (id == TypeId::kDecimal) {
          int128_t v = src.Value<int128_t>(i);
          out.Append<int128_t>(v - (((v % param) + param) % param));
        } else if (id == TypeId::kString) {
          out.AppendBytes(Utf8Prefix(src.GetBytes(i), param));
        } else {
          std::string_view b = src.GetBytes(i);
          out.AppendBytes(b.substr(0, std::min<size_t>(b.size(), param)));
        }
        break;
      case Kind::kYear: out.Append<int32_t>(YearsFromDays(DaysOf(src, i))); break;
      case Kind::kMonth: out.Append<int32_t>(MonthsFromDays(DaysOf(src, i))); break;
      case Kind::kDay: out.Append<int32_t>(static_cast<int32_t>(DaysOf(src, i))); break;
      case Kind::kHour:
        out.Append<int32_t>(static_cast<int32_t>(FloorDiv(MicrosOf(src, i), 3600LL * 1000000)));
        break;
      case Kind::kVoid:
      case Kind::kUnknown: break;  // handled above / by ResultType
    }
  }
  return out;
}

}  // namespace sluice::iceberg
