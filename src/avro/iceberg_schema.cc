#include "avro/iceberg_schema.h"

#include "columnar/value_format.h"

namespace sluice::avro {

namespace {

constexpr int32_t kNoId = INT32_MIN;  // placeholder for a missing id attribute
// Field attribute holding the Iceberg name of a field whose Avro name was sanitized.
constexpr char kIcebergFieldName[] = "iceberg-field-name";

class AvroToIceberg {
 public:
  Result<TypePtr> Convert(const AvroNode& n, bool* required, const std::string& path);
  Result<Field> ConvertField(const AvroField& f, const std::string& path);
  int32_t max_id() const { return max_id_; }
  bool missing_ids() const { return missing_ids_; }

 private:
  int32_t Id(const std::optional<int32_t>& id) {
    if (!id) {
      missing_ids_ = true;
      return kNoId;
    }
    max_id_ = std::max(max_id_, *id);
    return *id;
  }
  Result<TypePtr> ConvertPrimitive(const AvroNode& n, const std::string& path);
  Result<TypePtr> ConvertArray(const AvroNode& n, const std::string& path);

  int32_t max_id_ = 0;
  bool missing_ids_ = false;
};

Result<TypePtr> DecimalType(const AvroNode& n, const std::string& path) {
  if (n.precision < 1 || n.scale < 0 || n.scale > n.precision) {
    return Status::Invalid("avro schema {}: bad decimal precision {} / scale {}", path, n.precision,
                           n.scale);
  }
  if (n.precision > 38) {
    return Status::NotImplemented("avro schema {}: decimal precision {} above 38", path,
                                  n.precision);
  }
  if (n.type == AvroType::kFixed && n.size > 16) {
    return Status::NotImplemented("avro schema {}: decimal fixed size {} above 16", path, n.size);
  }
  return DataType::Decimal(n.precision, n.scale);
}

Result<TypePtr> AvroToIceberg::ConvertPrimitive(const AvroNode& n, const std::string& path) {
  const std::string& lt = n.logical_type;
  bool utc = n.adjust_to_utc.value_or(false);
  switch (n.type) {
    case AvroType::kBoolean: return DataType::Boolean();
    case AvroType::kInt:
      if (lt == "date") return DataType::Date();
      if (lt == "time-millis") return DataType::Time();
      return DataType::Int();
    case AvroType::kLong:
      if (lt == "time-micros") return DataType::Time();
      if (lt == "timestamp-micros" || lt == "timestamp-millis") {
        return utc ? DataType::TimestampTz() : DataType::Timestamp();
      }
      if (lt == "timestamp-nanos") return utc ? DataType::TimestampTzNs() : DataType::TimestampNs();
      if (lt == "local-timestamp-micros" || lt == "local-timestamp-millis") {
        return DataType::Timestamp();
      }
      if (lt == "local-timestamp-nanos") return DataType::TimestampNs();
      return DataType::Long();
    case AvroType::kFloat: return DataType::Float();
    case AvroType::kDouble: return DataType::Double();
    case AvroType::kBytes:
      if (lt == "decimal") return DecimalType(n, path);
      return DataType::Binary();
    case AvroType::kString:
      if (lt == "uuid") return DataType::Uuid();
      return DataType::String();
    case AvroType::kEnum: return DataType::String();
    case AvroType::kFixed:
      if (lt == "decimal") return DecimalType(n, path);
      if (lt == "uuid") {
        if (n.size != 16) {
          return Status::Invalid("avro schema {}: uuid fixed has size {}, not 16", path, n.size);
        }
        return DataType::Uuid();
      }
      return DataType::Fixed(n.size);
    default:
      return Status::Internal("avro schema {}: not a primitive: {}", path, AvroTypeName(n.type));
  }
}

Result<TypePtr> AvroToIceberg::ConvertArray(const AvroNode& n, const std::string& path) {
  if (IsKeyValueArray(n)) {
    const AvroNode& rec = *n.items;
    ASSIGN_OR_RETURN(Field key, ConvertField(rec.fields[0], path + ".key"));
    ASSIGN_OR_RETURN(Field value, ConvertField(rec.fields[1], path + ".value"));
    if (!key.required) {
      return Status::NotImplemented("avro schema {}: map keys must not be nullable", path);
    }
    return DataType::Map(std::move(key), std::move(value));
  }
  Field element;
  element.name = "element";
  element.id = Id(n.element_id);
  ASSIGN_OR_RETURN(element.type, Convert(*n.items, &element.required, path + ".element"));
  return DataType::List(std::move(element));
}

Result<TypePtr> AvroToIceberg::Convert(const AvroNode& n, bool* required, const std::string& path) {
  *required = true;
  switch (n.type) {
    case AvroType::kNull:
      return Status::NotImplemented("avro schema {}: a value of type null has no Iceberg type",
                                    path);
    case AvroType::kUnion: {
      const AvroNode* value = nullptr;
      int non_null = 0;
      for (const auto& b : n.branches) {
        if (b->type == AvroType::kNull) {
          *required = false;
        } else {
          value = b.get();
          ++non_null;
        }
      }
      if (non_null != 1) {
        return Status::NotImplemented(
            "avro schema {}: union with {} non-null branches is not supported", path, non_null);
      }
      bool ignored;
      return Convert(*value, &ignored, path);
    }
    case AvroType::kRecord: {
      std::vector<Field> fields;
      for (const AvroField& f : n.fields) {
        ASSIGN_OR_RETURN(Field field, ConvertField(f, path + "." + f.name));
        fields.push_back(std::move(field));
      }
      return DataType::Struct(std::move(fields));
    }
    case AvroType::kArray: return ConvertArray(n, path);
    case AvroType::kMap: {
      Field key{Id(n.key_id), "key", DataType::String(), true, ""};
      Field value;
      value.name = "value";
      value.id = Id(n.value_id);
      ASSIGN_OR_RETURN(value.type, Convert(*n.values, &value.required, path + ".value"));
      return DataType::Map(std::move(key), std::move(value));
    }
    default: return ConvertPrimitive(n, path);
  }
}

Result<Field> AvroToIceberg::ConvertField(const AvroField& f, const std::string& path) {
  Field field;
  field.name = f.name;
  if (auto it = f.props.find(kIcebergFieldName); it != f.props.end() && it->is_string()) {
    field.name = it->get<std::string>();
  }
  field.doc = f.doc;
  field.id = Id(f.field_id);
  ASSIGN_OR_RETURN(field.type, Convert(*f.type, &field.required, path));
  return field;
}

TypePtr FillIds(const TypePtr& type, int32_t* next_id);

void FillFieldIds(std::vector<Field>* fields, int32_t* next_id) {
  for (Field& f : *fields) {
    if (f.id == kNoId) f.id = (*next_id)++;
    f.type = FillIds(f.type, next_id);
  }
}

TypePtr FillIds(const TypePtr& type, int32_t* next_id) {
  if (!type->is_nested()) return type;
  std::vector<Field> fields = type->fields();
  FillFieldIds(&fields, next_id);
  switch (type->id()) {
    case TypeId::kList: return DataType::List(fields[0]);
    case TypeId::kMap: return DataType::Map(fields[0], fields[1]);
    default: return DataType::Struct(std::move(fields));
  }
}

// ---- Iceberg -> Avro ----

std::shared_ptr<AvroNode> Node(AvroType type) {
  auto n = std::make_shared<AvroNode>();
  n->type = type;
  return n;
}

AvroNodePtr Optional(AvroNodePtr value) {
  auto u = Node(AvroType::kUnion);
  u->branches = {Node(AvroType::kNull), std::move(value)};
  return u;
}

Result<AvroNodePtr> ToAvro(const TypePtr& type, int32_t field_id, const std::string& path);

Result<AvroNodePtr> FieldValue(const Field& f, const std::string& path) {
  ASSIGN_OR_RETURN(AvroNodePtr node, ToAvro(f.type, f.id, path));
  return f.required ? node : Optional(std::move(node));
}

Result<AvroField> ToAvroField(const Field& f, const std::string& path) {
  AvroField af;
  af.name = SanitizeAvroName(f.name);
  if (af.name != f.name) af.props[kIcebergFieldName] = f.name;
  af.doc = f.doc;
  af.field_id = f.id;
  ASSIGN_OR_RETURN(af.type, FieldValue(f, path));
  if (!f.required) af.default_value = Json(nullptr);
  return af;
}

Result<std::shared_ptr<AvroNode>> ToRecord(const std::vector<Field>& fields, std::string name,
                                           const std::string& path) {
  auto rec = Node(AvroType::kRecord);
  rec->name = std::move(name);
  for (const Field& f : fields) {
    ASSIGN_OR_RETURN(AvroField af, ToAvroField(f, path + "." + f.name));
    rec->fields.push_back(std::move(af));
  }
  return rec;
}

std::shared_ptr<AvroNode> Timestamp(const char* logical, bool utc) {
  auto n = Node(AvroType::kLong);
  n->logical_type = logical;
  n->adjust_to_utc = utc;
  return n;
}

Result<AvroNodePtr> ToAvro(const TypePtr& type, int32_t field_id, const std::string& path) {
  switch (type->id()) {
    case TypeId::kBoolean: return AvroNodePtr(Node(AvroType::kBoolean));
    case TypeId::kInt: return AvroNodePtr(Node(AvroType::kInt));
    case TypeId::kLong: return AvroNodePtr(Node(AvroType::kLong));
    case TypeId::kFloat: return AvroNodePtr(Node(AvroType::kFloat));
    case TypeId::kDouble: return AvroNodePtr(Node(AvroType::kDouble));
    case TypeId::kDate: {
      auto n = Node(AvroType::kInt);
      n->logical_type = "date";
      return AvroNodePtr(n);
    }
    case TypeId::kTime: {
      auto n = Node(AvroType::kLong);
      n->logical_type = "time-micros";
      return AvroNodePtr(n);
    }
    case TypeId::kTimestamp: return AvroNodePtr(Timestamp("timestamp-micros", false));
    case TypeId::kTimestampTz: return AvroNodePtr(Timestamp("timestamp-micros", true));
    case TypeId::kTimestampNs: return AvroNodePtr(Timestamp("timestamp-nanos", false));
    case TypeId::kTimestampTzNs: return AvroNodePtr(Timestamp("timestamp-nanos", true));
    case TypeId::kString: return AvroNodePtr(Node(AvroType::kString));
    case TypeId::kBinary: return AvroNodePtr(Node(AvroType::kBytes));
    case TypeId::kUuid: {
      auto n = Node(AvroType::kFixed);
      n->name = "uuid_fixed";
      n->size = 16;
      n->logical_type = "uuid";
      return AvroNodePtr(n);
    }
    case TypeId::kFixed: {
      auto n = Node(AvroType::kFixed);
      n->name = fmt::format("fixed_{}", type->width());
      n->size = type->width();
      return AvroNodePtr(n);
    }
    case TypeId::kDecimal: {
      if (type->precision() < 1 || type->precision() > 38) {
        return Status::NotImplemented("{}: decimal precision {} not in 1..38", path,
                                      type->precision());
      }
      auto n = Node(AvroType::kFixed);
      n->name = fmt::format("decimal_{}_{}", type->precision(), type->scale());
      n->size = DecimalFixedSize(type->precision());
      n->logical_type = "decimal";
      n->precision = type->precision();
      n->scale = type->scale();
      return AvroNodePtr(n);
    }
    case TypeId::kStruct: {
      ASSIGN_OR_RETURN(auto rec, ToRecord(type->fields(), fmt::format("r{}", field_id), path));
      return AvroNodePtr(rec);
    }
    case TypeId::kList: {
      const Field& e = type->fields()[0];
      auto n = Node(AvroType::kArray);
      n->element_id = e.id;
      ASSIGN_OR_RETURN(n->items, FieldValue(e, path + ".element"));
      return AvroNodePtr(n);
    }
    case TypeId::kMap: {
      const Field& k = type->fields()[0];
      const Field& v = type->fields()[1];
      if (k.type->id() == TypeId::kString) {
        auto n = Node(AvroType::kMap);
        n->key_id = k.id;
        n->value_id = v.id;
        ASSIGN_OR_RETURN(n->values, FieldValue(v, path + ".value"));
        return AvroNodePtr(n);
      }
      Field key = k;
      key.required = true;
      ASSIGN_OR_RETURN(auto rec, ToRecord({key, v}, fmt::format("k{}_v{}", k.id, v.id), path));
      auto n = Node(AvroType::kArray);
      n->logical_type = "map";
      n->items = rec;
      return AvroNodePtr(n);
    }
  }
  return Status::Internal("{}: unknown type", path);
}

}  // namespace

bool IsKeyValueArray(const AvroNode& n) {
  if (n.type != AvroType::kArray || n.logical_type != "map" || n.items->type != AvroType::kRecord) {
    return false;
  }
  const auto& f = n.items->fields;
  return f.size() == 2 && f[0].name == "key" && f[1].name == "value";
}

Result<TypePtr> AvroToIcebergType(const AvroNode& node, bool* required) {
  AvroToIceberg conv;
  ASSIGN_OR_RETURN(TypePtr type, conv.Convert(node, required, ""));
  if (!conv.missing_ids()) return type;
  int32_t next = conv.max_id() + 1;
  return FillIds(type, &next);
}

Result<Schema> AvroToIcebergSchema(const AvroNode& record) {
  if (record.type != AvroType::kRecord) {
    return Status::NotImplemented("avro schema: top-level type is {}, sluice reads only records",
                                  AvroTypeName(record.type));
  }
  AvroToIceberg conv;
  Schema schema;
  for (const AvroField& f : record.fields) {
    ASSIGN_OR_RETURN(Field field, conv.ConvertField(f, f.name));
    schema.fields.push_back(std::move(field));
  }
  if (conv.missing_ids()) {
    int32_t next = conv.max_id() + 1;
    FillFieldIds(&schema.fields, &next);
  }
  return schema;
}

Result<AvroNodePtr> IcebergToAvroSchema(const Schema& schema, const std::string& record_name) {
  ASSIGN_OR_RETURN(auto rec, ToRecord(schema.fields, record_name, ""));
  return AvroNodePtr(rec);
}

std::string SanitizeAvroName(std::string_view name) {
  auto letter = [](unsigned char ch) {
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '_';
  };
  auto digit = [](unsigned char ch) { return ch >= '0' && ch <= '9'; };
  std::string out;
  for (size_t i = 0; i < name.size();) {
    unsigned char ch = static_cast<unsigned char>(name[i]);
    if (letter(ch) || (i > 0 && digit(ch))) {
      out.push_back(static_cast<char>(ch));
      ++i;
      continue;
    }
    if (i == 0 && digit(ch)) {
      out.push_back('_');
      out.push_back(static_cast<char>(ch));
      ++i;
      continue;
    }
    // One UTF-8 sequence -> its code point; a stray byte stands for itself.
    uint32_t cp = ch;
    size_t len = 1;
    if (ch >= 0xc0) {
      len = ch >= 0xf0 ? 4 : ch >= 0xe0 ? 3 : 2;
      if (i + len > name.size()) {
        len = 1;
      } else {
        cp = ch & (0x3f >> (len - 1));
        for (size_t k = 1; k < len; ++k) cp = (cp << 6) | (name[i + k] & 0x3f);
      }
    }
    out += fmt::format("_x{:X}", cp);
    i += len;
  }
  return out.empty() ? "_" : out;
}

int DecimalFixedSize(int precision) {
  int128_t max_unscaled = DecimalMaxUnscaled(precision);
  for (int n = 1; n < 16; ++n) {
    int128_t max_fit = (static_cast<int128_t>(1) << (8 * n - 1)) - 1;
    if (max_fit >= max_unscaled) return n;
  }
  return 16;
}

}  // namespace sluice::avro
