#include "columnar/types.h"

#include <fmt/format.h>

#include <algorithm>

namespace sluice {

#define SLUICE_PRIMITIVE(Name, Id)                        \
  TypePtr DataType::Name() {                              \
    static const TypePtr kType(new DataType(TypeId::Id)); \
    return kType;                                         \
  }
SLUICE_PRIMITIVE(Boolean, kBoolean)
SLUICE_PRIMITIVE(Int, kInt)
SLUICE_PRIMITIVE(Long, kLong)
SLUICE_PRIMITIVE(Float, kFloat)
SLUICE_PRIMITIVE(Double, kDouble)
SLUICE_PRIMITIVE(Date, kDate)
SLUICE_PRIMITIVE(Time, kTime)
SLUICE_PRIMITIVE(Timestamp, kTimestamp)
SLUICE_PRIMITIVE(TimestampTz, kTimestampTz)
SLUICE_PRIMITIVE(TimestampNs, kTimestampNs)
SLUICE_PRIMITIVE(TimestampTzNs, kTimestampTzNs)
SLUICE_PRIMITIVE(String, kString)
SLUICE_PRIMITIVE(Uuid, kUuid)
SLUICE_PRIMITIVE(Binary, kBinary)
#undef SLUICE_PRIMITIVE

TypePtr DataType::Primitive(TypeId id) {
  switch (id) {
    case TypeId::kBoolean: return Boolean();
    case TypeId::kInt: return Int();
    case TypeId::kLong: return Long();
    case TypeId::kFloat: return Float();
    case TypeId::kDouble: return Double();
    case TypeId::kDate: return Date();
    case TypeId::kTime: return Time();
    case TypeId::kTimestamp: return Timestamp();
    case TypeId::kTimestampTz: return TimestampTz();
    case TypeId::kTimestampNs: return TimestampNs();
    case TypeId::kTimestampTzNs: return TimestampTzNs();
    case TypeId::kString: return String();
    case TypeId::kUuid: return Uuid();
    case TypeId::kBinary: return Binary();
    default: return nullptr;
  }
}

TypePtr DataType::Decimal(int precision, int scale) {
  auto* t = new DataType(TypeId::kDecimal);
  t->precision_ = precision;
  t->scale_ = scale;
  return TypePtr(t);
}

TypePtr DataType::Fixed(int width) {
  auto* t = new DataType(TypeId::kFixed);
  t->width_ = width;
  return TypePtr(t);
}

TypePtr DataType::Struct(std::vector<Field> fields) {
  auto* t = new DataType(TypeId::kStruct);
  t->fields_ = std::move(fields);
  return TypePtr(t);
}

TypePtr DataType::List(Field element) {
  auto* t = new DataType(TypeId::kList);
  if (element.name.empty()) element.name = "element";
  t->fields_.push_back(std::move(element));
  return TypePtr(t);
}

TypePtr DataType::Map(Field key, Field value) {
  auto* t = new DataType(TypeId::kMap);
  if (key.name.empty()) key.name = "key";
  if (value.name.empty()) value.name = "value";
  key.required = true;  // Iceberg map keys are always required
  t->fields_.push_back(std::move(key));
  t->fields_.push_back(std::move(value));
  return TypePtr(t);
}

int DataType::value_width() const {
  switch (id_) {
    case TypeId::kBoolean: return 1;
    case TypeId::kInt:
    case TypeId::kDate:
    case TypeId::kFloat: return 4;
    case TypeId::kLong:
    case TypeId::kTime:
    case TypeId::kTimestamp:
    case TypeId::kTimestampTz:
    case TypeId::kTimestampNs:
    case TypeId::kTimestampTzNs:
    case TypeId::kDouble: return 8;
    case TypeId::kDecimal: return 16;
    default: return 0;
  }
}

std::string DataType::ToString() const {
  switch (id_) {
    case TypeId::kBoolean: return "boolean";
    case TypeId::kInt: return "int";
    case TypeId::kLong: return "long";
    case TypeId::kFloat: return "float";
    case TypeId::kDouble: return "double";
    case TypeId::kDecimal: return fmt::format("decimal({},{})", precision_, scale_);
    case TypeId::kDate: return "date";
    case TypeId::kTime: return "time";
    case TypeId::kTimestamp: return "timestamp";
    case TypeId::kTimestampTz: return "timestamptz";
    case TypeId::kTimestampNs: return "timestamp_ns";
    case TypeId::kTimestampTzNs: return "timestamptz_ns";
    case TypeId::kString: return "string";
    case TypeId::kUuid: return "uuid";
    case TypeId::kFixed: return fmt::format("fixed[{}]", width_);
    case TypeId::kBinary: return "binary";
    case TypeId::kList: return fmt::format("list<{}>", fields_[0].type->ToString());
    case TypeId::kMap:
      return fmt::format("map<{}, {}>", fields_[0].type->ToString(), fields_[1].type->ToString());
    case TypeId::kStruct: {
      std::string s = "struct<";
      for (size_t i = 0; i < fields_.size(); ++i) {
        const Field& f = fields_[i];
        s += fmt::format("{}{}: {}: {} {}", i ? ", " : "", f.id, f.name,
                         f.required ? "required" : "optional", f.type->ToString());
      }
      return s + ">";
    }
  }
  return "?";
}

bool DataType::Equals(const DataType& o) const {
  if (id_ != o.id_ || precision_ != o.precision_ || scale_ != o.scale_ || width_ != o.width_ ||
      fields_.size() != o.fields_.size()) {
    return false;
  }
  for (size_t i = 0; i < fields_.size(); ++i) {
    const Field& a = fields_[i];
    const Field& b = o.fields_[i];
    if (a.id != b.id || a.name != b.name || a.required != b.required || !a.type->Equals(*b.type)) {
      return false;
    }
  }
  return true;
}

namespace {
const Field* FindIn(const std::vector<Field>& fields, int32_t id) {
  for (const Field& f : fields) {
    if (f.id == id) return &f;
    if (const Field* c = FindIn(f.type->fields(), id)) return c;
  }
  return nullptr;
}
int32_t MaxId(const std::vector<Field>& fields) {
  int32_t m = 0;
  for (const Field& f : fields) m = std::max({m, f.id, MaxId(f.type->fields())});
  return m;
}

TypePtr WithFreshIds(const TypePtr& type, int32_t* next_id) {
  if (!type->is_nested()) return type;
  std::vector<Field> fields = type->fields();
  AssignFreshIds(&fields, next_id);
  switch (type->id()) {
    case TypeId::kList: return DataType::List(fields[0]);
    case TypeId::kMap: return DataType::Map(fields[0], fields[1]);
    default: return DataType::Struct(std::move(fields));
  }
}
}  // namespace

void AssignFreshIds(std::vector<Field>* fields, int32_t* next_id) {
  for (Field& f : *fields) f.id = (*next_id)++;
  for (Field& f : *fields) f.type = WithFreshIds(f.type, next_id);
}

const Field* Schema::FindById(int32_t id) const { return FindIn(fields, id); }

const Field* Schema::FindByName(const std::string& name) const {
  for (const Field& f : fields) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

const Field* Schema::FindByPath(const std::string& path) const {
  const std::vector<Field>* level = &fields;
  size_t start = 0;
  while (true) {
    size_t dot = path.find('.', start);
    std::string part = path.substr(start, dot == std::string::npos ? dot : dot - start);
    const Field* found = nullptr;
    for (const Field& f : *level) {
      if (f.name == part) found = &f;
    }
    if (found == nullptr || dot == std::string::npos) return found;
    if (found->type->id() != TypeId::kStruct) return nullptr;
    level = &found->type->fields();
    start = dot + 1;
  }
}

int32_t Schema::HighestFieldId() const { return MaxId(fields); }

std::string Schema::ToString() const { return AsStruct()->ToString(); }

}  // namespace sluice
