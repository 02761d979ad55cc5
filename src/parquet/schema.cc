#include "parquet/schema.h"

#include <algorithm>
#include <cmath>
#include <functional>

namespace sluice::parquet {

namespace {

// ---------------------------------------------------------------- Iceberg → Parquet

int DecimalBytes(int precision) {
  for (int n = 1; n <= 16; ++n) {
    if (std::floor((8 * n - 1) * std::log10(2.0)) >= precision) return n;
  }
  return 16;
}

LogicalType MakeLogical(LogicalType::Kind kind) {
  LogicalType lt;
  lt.kind = kind;
  return lt;
}

LogicalType TimeLogical(LogicalType::Kind kind, TimeUnit unit, bool utc) {
  LogicalType lt = MakeLogical(kind);
  lt.unit = unit;
  lt.is_adjusted_to_utc = utc;
  return lt;
}

Status SetPrimitive(const DataType& t, SchemaElement* e) {
  switch (t.id()) {
    case TypeId::kBoolean: e->type = PhysicalType::kBoolean; break;
    case TypeId::kInt: e->type = PhysicalType::kInt32; break;
    case TypeId::kLong: e->type = PhysicalType::kInt64; break;
    case TypeId::kFloat: e->type = PhysicalType::kFloat; break;
    case TypeId::kDouble: e->type = PhysicalType::kDouble; break;
    case TypeId::kDecimal: {
      if (t.precision() < 1 || t.precision() > 38) {
        return Status::Invalid("decimal precision {} out of range 1..38", t.precision());
      }
      if (t.precision() <= 9) {
        e->type = PhysicalType::kInt32;
      } else if (t.precision() <= 18) {
        e->type = PhysicalType::kInt64;
      } else {
        e->type = PhysicalType::kFixedLenByteArray;
        e->type_length = DecimalBytes(t.precision());
      }
      e->converted_type = ConvertedType::kDecimal;
      e->precision = t.precision();
      e->scale = t.scale();
      LogicalType lt = MakeLogical(LogicalType::Kind::kDecimal);
      lt.precision = t.precision();
      lt.scale = t.scale();
      e->logical_type = lt;
      break;
    }
    case TypeId::kDate:
      e->type = PhysicalType::kInt32;
      e->converted_type = ConvertedType::kDate;
      e->logical_type = MakeLogical(LogicalType::Kind::kDate);
      break;
    case TypeId::kTime:
      e->type = PhysicalType::kInt64;
      e->converted_type = ConvertedType::kTimeMicros;
      e->logical_type = TimeLogical(LogicalType::Kind::kTime, TimeUnit::kMicros, false);
      break;
    case TypeId::kTimestamp:
    case TypeId::kTimestampTz:
      e->type = PhysicalType::kInt64;
      e->converted_type = ConvertedType::kTimestampMicros;
      e->logical_type = TimeLogical(LogicalType::Kind::kTimestamp, TimeUnit::kMicros,
                                    t.id() == TypeId::kTimestampTz);
      break;
    case TypeId::kTimestampNs:
    case TypeId::kTimestampTzNs:
      e->type = PhysicalType::kInt64;
      e->logical_type = TimeLogical(LogicalType::Kind::kTimestamp, TimeUnit::kNanos,
                                    t.id() == TypeId::kTimestampTzNs);
      break;
    case TypeId::kString:
      e->type = PhysicalType::kByteArray;
      e->converted_type = ConvertedType::kUtf8;
      e->logical_type = MakeLogical(LogicalType::Kind::kString);
      break;
    case TypeId::kUuid:
      e->type = PhysicalType::kFixedLenByteArray;
      e->type_length = 16;
      e->logical_type = MakeLogical(LogicalType::Kind::kUuid);
      break;
    case TypeId::kFixed:
      e->type = PhysicalType::kFixedLenByteArray;
      e->type_length = t.width();
      break;
    case TypeId::kBinary: e->type = PhysicalType::kByteArray; break;
    default: return Status::Internal("not a primitive type: {}", t.ToString());
  }
  return Status::OK();
}

class ToParquet {
 public:
  ToParquet(std::vector<SchemaElement>* elements, std::vector<ColumnDescriptor>* leaves,
            const std::function<std::string(std::string_view)>& rename)
      : elements_(elements), leaves_(leaves), rename_(rename) {}

  // The name a field of a struct (or the table) is written under.
  std::string NameOf(const Field& f) const { return rename_ ? rename_(f.name) : f.name; }

  // `name` overrides field.name (list/map children); `repetition` the field's own.
  Status Emit(const Field& field, const std::string& name, Repetition repetition, int16_t def,
              int16_t rep, std::vector<std::string> path) {
    SchemaElement e;
    e.name = name;
    e.repetition_type = repetition;
    if (field.id != 0) e.field_id = field.id;
    if (repetition != Repetition::kRequired) ++def;
    if (repetition == Repetition::kRepeated) ++rep;
    path.push_back(name);
    const DataType& t = *field.type;
    switch (t.id()) {
      case TypeId::kStruct: {
        e.num_children = static_cast<int32_t>(t.fields().size());
        elements_->push_back(std::move(e));
        for (const Field& f : t.fields()) {
          RETURN_IF_ERROR(Emit(f, NameOf(f), RepetitionOf(f), def, rep, path));
        }
        return Status::OK();
      }
      case TypeId::kList: {
        e.num_children = 1;
        e.converted_type = ConvertedType::kList;
        e.logical_type = MakeLogical(LogicalType::Kind::kList);
        elements_->push_back(std::move(e));
        elements_->push_back(Group("list", 1));
        path.push_back("list");
        const Field& elem = t.fields()[0];
        return Emit(elem, "element", RepetitionOf(elem), def + 1, rep + 1, path);
      }
      case TypeId::kMap: {
        e.num_children = 1;
        e.converted_type = ConvertedType::kMap;
        e.logical_type = MakeLogical(LogicalType::Kind::kMap);
        elements_->push_back(std::move(e));
        elements_->push_back(Group("key_value", 2));
        path.push_back("key_value");
        const Field& key = t.fields()[0];
        const Field& value = t.fields()[1];
        RETURN_IF_ERROR(Emit(key, "key", Repetition::kRequired, def + 1, rep + 1, path));
        return Emit(value, "value", RepetitionOf(value), def + 1, rep + 1, path);
      }
      default: {
        RETURN_IF_ERROR_CTX(SetPrimitive(t, &e), "field {}", field.name);
        ColumnDescriptor d;
        d.path = std::move(path);
        d.max_definition_level = def;
        d.max_repetition_level = rep;
        d.physical_type = *e.type;
        d.type_length = e.type_length.value_or(0);
        d.type = field.type;
        d.field_id = field.id;
        d.schema_index = static_cast<int>(elements_->size());
        elements_->push_back(std::move(e));
        leaves_->push_back(std::move(d));
        return Status::OK();
      }
    }
  }

  static Repetition RepetitionOf(const Field& f) {
    return f.required ? Repetition::kRequired : Repetition::kOptional;
  }

 private:
  static SchemaElement Group(const char* name, int children) {
    SchemaElement g;
    g.name = name;
    g.repetition_type = Repetition::kRepeated;
    g.num_children = children;
    return g;
  }
  std::vector<SchemaElement>* elements_;
  std::vector<ColumnDescriptor>* leaves_;
  const std::function<std::string(std::string_view)>& rename_;
};

}  // namespace

Status ToParquetSchema(const Schema& schema, std::vector<SchemaElement>* elements,
                       std::vector<ColumnDescriptor>* leaves,
                       const std::function<std::string(std::string_view)>& rename) {
  elements->clear();
  leaves->clear();
  SchemaElement root;
  root.name = "table";
  root.num_children = static_cast<int32_t>(schema.fields.size());
  elements->push_back(std::move(root));
  ToParquet emitter(elements, leaves, rename);
  for (const Field& f : schema.fields) {
    RETURN_IF_ERROR(emitter.Emit(f, emitter.NameOf(f), ToParquet::RepetitionOf(f), 0, 0, {}));
  }
  return Status::OK();
}

// ---------------------------------------------------------------- Parquet → Iceberg

namespace {

bool IsList(const SchemaElement& e) {
  return e.converted_type == ConvertedType::kList ||
         (e.logical_type && e.logical_type->kind == LogicalType::Kind::kList);
}

bool IsMap(const SchemaElement& e) {
  return e.converted_type == ConvertedType::kMap ||
         e.converted_type == ConvertedType::kMapKeyValue ||
         (e.logical_type && e.logical_type->kind == LogicalType::Kind::kMap);
}

class FromParquet {
 public:
  FromParquet(const std::vector<SchemaElement>& elements, std::vector<ColumnDescriptor>* leaves)
      : elements_(elements), leaves_(leaves) {}

  // Parses the element at `index_` and its subtree into `*field`.
  Status Node(std::vector<std::string> path, Field* field, int depth) {
    if (depth > 100) return Status::Corruption("parquet schema: nested too deeply");
    if (index_ >= elements_.size()) {
      return Status::Corruption("parquet schema: num_children points past the {} elements",
                                elements_.size());
    }
    size_t self = index_++;
    const SchemaElement& e = elements_[self];
    path.push_back(e.name);
    field->name = e.name;
    field->id = e.field_id.value_or(0);
    Repetition rep = e.repetition_type.value_or(Repetition::kOptional);
    field->required = rep != Repetition::kOptional;
    if (rep == Repetition::kRepeated && !in_repeated_container_) {
      // A bare repeated field (legacy): a required list of required elements.
      Field elem;
      in_repeated_container_ = true;
      --index_;
      path.pop_back();
      Status st = Node(std::move(path), &elem, depth + 1);
      in_repeated_container_ = false;
      RETURN_IF_ERROR(st);
      elem.required = true;
      elem.name = "element";
      elem.id = 0;
      field->type = DataType::List(std::move(elem));
      field->required = true;
      return Status::OK();
    }
    in_repeated_container_ = false;
    if (!e.num_children.has_value() || (e.type.has_value() && *e.num_children == 0)) {
      if (!e.type.has_value()) {
        return Status::Corruption("parquet schema: element '{}' has neither type nor children",
                                  e.name);
      }
      ASSIGN_OR_RETURN(field->type, IcebergTypeOf(e));
      ColumnDescriptor d;
      d.path = std::move(path);
      d.physical_type = *e.type;
      d.type_length = e.type_length.value_or(0);
      d.type = field->type;
      d.field_id = field->id;
      d.schema_index = static_cast<int>(self);
      leaves_->push_back(std::move(d));
      return Status::OK();
    }
    int32_t n = *e.num_children;
    if (n < 0 || static_cast<size_t>(n) > elements_.size() - index_) {
      return Status::Corruption("parquet schema: element '{}' claims {} children", e.name, n);
    }
    if (IsList(e) && n == 1) return ListNode(e, std::move(path), field, depth);
    if (IsMap(e) && n == 1) return MapNode(e, std::move(path), field, depth);
    std::vector<Field> members(n);
    for (int32_t i = 0; i < n; ++i) RETURN_IF_ERROR(Node(path, &members[i], depth + 1));
    field->type = DataType::Struct(std::move(members));
    return Status::OK();
  }

 private:
  Status ListNode(const SchemaElement& e, std::vector<std::string> path, Field* field, int depth) {
    const SchemaElement& child = elements_[index_];
    if (child.repetition_type != Repetition::kRepeated) {
      return Status::NotImplemented("parquet schema: list '{}' whose child is not repeated",
                                    e.name);
    }
    Field elem;
    bool child_is_group = child.num_children.has_value() && !child.type.has_value();
    bool two_level = !child_is_group || *child.num_children != 1 || child.name == "array" ||
                     child.name == e.name + "_tuple";
    if (two_level) {
      // The repeated child is itself the (required) element.
      in_repeated_container_ = true;
      RETURN_IF_ERROR(Node(path, &elem, depth + 1));
      elem.required = true;
    } else {
      ++index_;
      path.push_back(child.name);
      RETURN_IF_ERROR(Node(path, &elem, depth + 1));
    }
    elem.name = "element";
    field->type = DataType::List(std::move(elem));
    return Status::OK();
  }

  Status MapNode(const SchemaElement& e, std::vector<std::string> path, Field* field, int depth) {
    const SchemaElement& kv = elements_[index_];
    if (kv.repetition_type != Repetition::kRepeated || !kv.num_children.has_value() ||
        kv.num_children < 1 || kv.num_children > 2) {
      return Status::NotImplemented("parquet schema: map '{}' is not a repeated key_value group",
                                    e.name);
    }
    ++index_;
    path.push_back(kv.name);
    Field key, value;
    RETURN_IF_ERROR(Node(path, &key, depth + 1));
    if (*kv.num_children == 1) {
      return Status::NotImplemented("parquet schema: map '{}' without values", e.name);
    }
    RETURN_IF_ERROR(Node(path, &value, depth + 1));
    if (!key.required) {
      return Status::NotImplemented("parquet schema: map '{}' has an optional key", e.name);
    }
    field->type = DataType::Map(std::move(key), std::move(value));
    return Status::OK();
  }

  const std::vector<SchemaElement>& elements_;
  std::vector<ColumnDescriptor>* leaves_;
  size_t index_ = 1;
  bool in_repeated_container_ = false;

 public:
  size_t consumed() const { return index_; }
};

// Levels of each leaf, derived from the Iceberg types (see reader assembly).
void ComputeLevels(const std::vector<Field>& fields, int16_t def, int16_t rep,
                   std::vector<ColumnDescriptor>* leaves, size_t* next) {
  for (const Field& f : fields) {
    int16_t d = static_cast<int16_t>(def + (f.required ? 0 : 1));
    const DataType& t = *f.type;
    switch (t.id()) {
      case TypeId::kStruct: ComputeLevels(t.fields(), d, rep, leaves, next); break;
      case TypeId::kList:
      case TypeId::kMap:
        ComputeLevels(t.fields(), static_cast<int16_t>(d + 1), static_cast<int16_t>(rep + 1),
                      leaves, next);
        break;
      default:
        if (*next < leaves->size()) {
          (*leaves)[*next].max_definition_level = d;
          (*leaves)[*next].max_repetition_level = rep;
          (*leaves)[*next].field_id = f.id;
        }
        ++*next;
    }
  }
}

bool AllIdsSet(const std::vector<Field>& fields) {
  for (const Field& f : fields) {
    if (f.id <= 0 || !AllIdsSet(f.type->fields())) return false;
  }
  return true;
}

TypePtr Rebuild(const TypePtr& type, std::vector<Field> fields) {
  switch (type->id()) {
    case TypeId::kList: return DataType::List(std::move(fields[0]));
    case TypeId::kMap: return DataType::Map(std::move(fields[0]), std::move(fields[1]));
    default: return DataType::Struct(std::move(fields));
  }
}

// Gives fields without an id (0) fresh ids above the highest one present.
void FillMissingIds(std::vector<Field>* fields, int32_t* next_id) {
  for (Field& f : *fields) {
    if (f.id <= 0) f.id = (*next_id)++;
  }
  for (Field& f : *fields) {
    if (!f.type->is_nested()) continue;
    std::vector<Field> children = f.type->fields();
    FillMissingIds(&children, next_id);
    f.type = Rebuild(f.type, std::move(children));
  }
}

bool AnyIdSet(const std::vector<Field>& fields) {
  for (const Field& f : fields) {
    if (f.id > 0 || AnyIdSet(f.type->fields())) return true;
  }
  return false;
}

}  // namespace

namespace {

Field ApplyMapping(const Field& f, const std::vector<MappedField>* level, int32_t* unmapped) {
  static const std::vector<MappedField> kNone;
  const MappedField* m = nullptr;
  for (const MappedField& c : level ? *level : kNone) {  // both lvalues: no copy
    if (std::find(c.names.begin(), c.names.end(), f.name) != c.names.end()) m = &c;
  }
  Field out = f;
  out.id = (m && m->field_id) ? *m->field_id : (*unmapped)++;
  const std::vector<MappedField>* children = m ? &m->fields : nullptr;
  std::vector<Field> kids;
  for (const Field& k : f.type->fields()) kids.push_back(ApplyMapping(k, children, unmapped));
  switch (f.type->id()) {
    case TypeId::kStruct: out.type = DataType::Struct(std::move(kids)); break;
    case TypeId::kList: out.type = DataType::List(std::move(kids[0])); break;
    case TypeId::kMap: out.type = DataType::Map(std::move(kids[0]), std::move(kids[1])); break;
    default: break;
  }
  return out;
}

}  // namespace

Status FromParquetSchema(const std::vector<SchemaElement>& elements, Schema* schema,
                         std::vector<ColumnDescriptor>* leaves,
                         const std::vector<MappedField>* name_mapping) {
  leaves->clear();
  schema->fields.clear();
  if (elements.empty()) return Status::Corruption("parquet schema: no elements");
  int32_t n = elements[0].num_children.value_or(0);
  if (n < 0 || static_cast<size_t>(n) >= elements.size() + (n == 0 ? 1 : 0)) {
    return Status::Corruption("parquet schema: root claims {} children but there are {} elements",
                              n, elements.size());
  }
  FromParquet parser(elements, leaves);
  for (int32_t i = 0; i < n; ++i) {
    Field f;
    RETURN_IF_ERROR(parser.Node({}, &f, 0));
    schema->fields.push_back(std::move(f));
  }
  if (parser.consumed() != elements.size()) {
    return Status::Corruption("parquet schema: {} elements are not reachable from the root",
                              elements.size() - parser.consumed());
  }
  if (!AnyIdSet(schema->fields) && name_mapping != nullptr) {
    int32_t unmapped = int32_t{1} << 30;
    for (Field& f : schema->fields) f = ApplyMapping(f, name_mapping, &unmapped);
  } else if (!AllIdsSet(schema->fields)) {
    if (AnyIdSet(schema->fields)) {
      int32_t next = schema->HighestFieldId() + 1;
      FillMissingIds(&schema->fields, &next);
    } else {
      int32_t next = 1;
      AssignFreshIds(&schema->fields, &next);
    }
  }
  size_t next = 0;
  ComputeLevels(schema->fields, 0, 0, leaves, &next);
  if (next != leaves->size()) {
    return Status::Internal("parquet schema: {} leaves but {} primitive fields", leaves->size(),
                            next);
  }
  return Status::OK();
}

Result<TypePtr> IcebergTypeOf(const SchemaElement& e) {
  using K = LogicalType::Kind;
  const LogicalType* lt = e.logical_type ? &*e.logical_type : nullptr;
  K kind = lt ? lt->kind : K::kNone;
  std::optional<ConvertedType> ct = e.converted_type;
  auto decimal = [&]() -> Result<TypePtr> {
    int p = kind == K::kDecimal ? lt->precision : e.precision.value_or(0);
    int s = kind == K::kDecimal ? lt->scale : e.scale.value_or(0);
    if (p < 1 || p > 38 || s < 0 || s > p) {
      return Status::NotImplemented("column '{}': decimal({},{}) is not supported", e.name, p, s);
    }
    return DataType::Decimal(p, s);
  };
  bool is_decimal = kind == K::kDecimal || ct == ConvertedType::kDecimal;
  switch (*e.type) {
    case PhysicalType::kBoolean: return DataType::Boolean();
    case PhysicalType::kInt32:
      if (is_decimal) return decimal();
      if (kind == K::kDate || ct == ConvertedType::kDate) return DataType::Date();
      if (kind == K::kTime || ct == ConvertedType::kTimeMillis) return DataType::Time();
      if ((kind == K::kInteger && !lt->is_signed && lt->bit_width >= 32) ||
          ct == ConvertedType::kUint32) {
        return DataType::Long();
      }
      return DataType::Int();
    case PhysicalType::kInt64:
      if (is_decimal) return decimal();
      if (kind == K::kTimestamp) {
        bool ns = lt->unit == TimeUnit::kNanos;
        if (lt->is_adjusted_to_utc) return ns ? DataType::TimestampTzNs() : DataType::TimestampTz();
        return ns ? DataType::TimestampNs() : DataType::Timestamp();
      }
      if (ct == ConvertedType::kTimestampMillis || ct == ConvertedType::kTimestampMicros) {
        return DataType::TimestampTz();
      }
      if (kind == K::kTime) return DataType::Time();  // TIME(NANOS) is truncated to µs
      if (ct == ConvertedType::kTimeMicros) return DataType::Time();
      if ((kind == K::kInteger && !lt->is_signed) || ct == ConvertedType::kUint64) {
        return DataType::Decimal(20, 0);
      }
      return DataType::Long();
    case PhysicalType::kInt96: return DataType::TimestampTz();
    case PhysicalType::kFloat: return DataType::Float();
    case PhysicalType::kDouble: return DataType::Double();
    case PhysicalType::kByteArray:
      if (is_decimal) return decimal();
      if (kind == K::kString || kind == K::kEnum || kind == K::kJson ||
          ct == ConvertedType::kUtf8 || ct == ConvertedType::kEnum || ct == ConvertedType::kJson) {
        return DataType::String();
      }
      return DataType::Binary();
    case PhysicalType::kFixedLenByteArray: {
      int len = e.type_length.value_or(0);
      if (len <= 0) {
        return Status::Corruption("column '{}': FIXED_LEN_BYTE_ARRAY without a positive length",
                                  e.name);
      }
      if (is_decimal) {
        if (len > 16) {
          return Status::NotImplemented("column '{}': decimal of {} bytes", e.name, len);
        }
        return decimal();
      }
      if (kind == K::kUuid && len == 16) return DataType::Uuid();
      if (kind == K::kFloat16 && len == 2) return DataType::Float();
      return DataType::Fixed(len);
    }
  }
  return Status::Corruption("column '{}': unknown physical type {}", e.name,
                            static_cast<int>(*e.type));
}

}  // namespace sluice::parquet
