// Type rules and literal conversion for the binder.
#include <algorithm>
#include <cctype>
#include <charconv>
#include <limits>

#include "columnar/single_value.h"
#include "columnar/sql_schema.h"
#include "columnar/value_format.h"
#include "common/ascii.h"
#include "sql/binder_internal.h"

namespace sluice::sql::internal {
namespace {

bool IsTimestamp(TypeId id) {
  return id == TypeId::kTimestamp || id == TypeId::kTimestampTz || id == TypeId::kTimestampNs ||
         id == TypeId::kTimestampTzNs;
}
bool HasZone(TypeId id) { return id == TypeId::kTimestampTz || id == TypeId::kTimestampTzNs; }
bool IsNanos(TypeId id) { return id == TypeId::kTimestampNs || id == TypeId::kTimestampTzNs; }

template <typename T>
Result<T> ParseWhole(std::string_view text, std::string_view what) {
  T v{};
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec == std::errc::result_out_of_range) return Status::Invalid("out of range");
  if (ec != std::errc() || end != text.data() + text.size()) {
    return Status::Invalid("not {}", what);
  }
  return v;
}

Result<bool> ParseBool(std::string_view text) {
  std::string lower = AsciiLower(text);
  if (lower == "true") return true;
  if (lower == "false") return false;
  return Status::Invalid("not true or false");
}

// Appends the literal's value to `out` (a column of the target type).
Status AppendLiteral(const Literal& lit, Column* out) {
  const DataType& type = *out->type();
  TypeId id = type.id();
  bool is_string = lit.kind == Literal::Kind::kString;
  bool is_number = lit.kind == Literal::Kind::kNumber;
  std::string_view text = lit.text;
  if (lit.kind == Literal::Kind::kBoolean || (is_string && id == TypeId::kBoolean)) {
    if (id != TypeId::kBoolean) return Status::Invalid("it is a BOOLEAN");
    ASSIGN_OR_RETURN(bool v, ParseBool(text));
    out->AppendBool(v);
    return Status::OK();
  }
  switch (id) {
    case TypeId::kInt: {
      ASSIGN_OR_RETURN(int32_t v, ParseWhole<int32_t>(text, "a whole number"));
      out->Append<int32_t>(v);
      return Status::OK();
    }
    case TypeId::kLong: {
      ASSIGN_OR_RETURN(int64_t v, ParseWhole<int64_t>(text, "a whole number"));
      out->Append<int64_t>(v);
      return Status::OK();
    }
    case TypeId::kFloat: {
      ASSIGN_OR_RETURN(float v, ParseWhole<float>(text, "a number"));
      out->Append<float>(v);
      return Status::OK();
    }
    case TypeId::kDouble: {
      ASSIGN_OR_RETURN(double v, ParseWhole<double>(text, "a number"));
      out->Append<double>(v);
      return Status::OK();
    }
    case TypeId::kDecimal: {
      ASSIGN_OR_RETURN(int128_t v, ParseDecimal(text, type.precision(), type.scale()));
      out->Append<int128_t>(v);
      return Status::OK();
    }
    default: break;
  }
  if (is_number) return Status::Invalid("it is a number");
  if (!is_string) return Status::Invalid("unexpected literal");
  switch (id) {
    case TypeId::kString: out->AppendBytes(text); return Status::OK();
    case TypeId::kDate: {
      ASSIGN_OR_RETURN(int32_t v, ParseDate(text));
      out->Append<int32_t>(v);
      return Status::OK();
    }
    case TypeId::kTime: {
      ASSIGN_OR_RETURN(int64_t v, ParseTime(text));
      out->Append<int64_t>(v);
      return Status::OK();
    }
    case TypeId::kUuid: {
      ASSIGN_OR_RETURN(std::string v, ParseUuid(text));
      out->AppendBytes(v);
      return Status::OK();
    }
    default: break;
  }
  if (IsTimestamp(id)) {
    bool had_zone = false;
    ASSIGN_OR_RETURN(int64_t v, ParseTimestamp(text, IsNanos(id), &had_zone));
    if (had_zone && !HasZone(id)) {
      return Status::Invalid("it has a zone offset; only TIMESTAMPTZ has one");
    }
    out->Append<int64_t>(v);
    return Status::OK();
  }
  return Status::NotImplemented("a string for a {} is not supported yet", ToSqlType(type));
}

}  // namespace

std::string SqlTypeName(const TypePtr& t) { return t ? ToSqlType(*t) : "NULL"; }

bool NameMatches(const Identifier& id, std::string_view name) {
  if (id.quoted) return id.name == name;
  return EqualsIgnoreCase(id.name, name);
}

bool SameType(const DataType& a, const DataType& b) {
  if (a.id() != b.id() || a.precision() != b.precision() || a.scale() != b.scale() ||
      a.width() != b.width() || a.fields().size() != b.fields().size()) {
    return false;
  }
  for (size_t i = 0; i < a.fields().size(); ++i) {
    const Field& fa = a.fields()[i];
    const Field& fb = b.fields()[i];
    if (fa.name != fb.name || fa.required != fb.required || !SameType(*fa.type, *fb.type)) {
      return false;
    }
  }
  return true;
}

bool Widens(const DataType& from, const DataType& to) {
  if (from.id() == TypeId::kInt && to.id() == TypeId::kLong) return true;
  if (from.id() == TypeId::kFloat && to.id() == TypeId::kDouble) return true;
  return from.id() == TypeId::kDecimal && to.id() == TypeId::kDecimal &&
         from.scale() == to.scale() && to.precision() >= from.precision();
}

bool ChangesZoneOnly(const DataType& from, const DataType& to) {
  return IsTimestamp(from.id()) && IsTimestamp(to.id()) && from.id() != to.id() &&
         IsNanos(from.id()) == IsNanos(to.id());
}

Result<Column> LiteralValue(const Literal& literal, const TypePtr& type) {
  Column column(type);
  Status st = AppendLiteral(literal, &column);
  if (!st.ok()) {
    return Status(st.code(), fmt::format("{} is not a valid {} ({})", DescribeLiteral(literal),
                                         ToSqlType(*type), st.message()));
  }
  return column;
}

Result<std::string> ConvertLiteral(const Literal& literal, const TypePtr& type) {
  ASSIGN_OR_RETURN(Column column, LiteralValue(literal, type));
  std::string bytes;
  AppendSingleValue(column, 0, &bytes);
  return bytes;
}

std::string DescribeLiteral(const Literal& literal) {
  switch (literal.kind) {
    case Literal::Kind::kNull: return "NULL";
    case Literal::Kind::kBoolean: return literal.text == "true" ? "TRUE" : "FALSE";
    case Literal::Kind::kNumber: return literal.text;
    case Literal::Kind::kString: return fmt::format("'{}'", literal.text);
  }
  return "?";
}

}  // namespace sluice::sql::internal
