#include "iceberg/schema_json.h"

#include "iceberg/json_internal.h"

namespace sluice::iceberg {
namespace {

using json = internal::Json;

Result<TypePtr> ParseType(const json& j, std::string_view where);

Result<Field> ParseField(const json& j, std::string_view where) {
  if (!j.is_object()) return Status::Invalid("{}: a field must be a JSON object", where);
  auto id = j.find("id");
  auto name = j.find("name");
  auto type = j.find("type");
  if (id == j.end() || !id->is_number_integer()) {
    return Status::Invalid("{}: field without an integer \"id\"", where);
  }
  if (name == j.end() || !name->is_string()) {
    return Status::Invalid("{}: field {} without a \"name\"", where, id->get<int64_t>());
  }
  if (type == j.end()) {
    return Status::Invalid("{}: field {} without a \"type\"", where, name->get<std::string>());
  }
  Field f;
  f.id = id->get<int32_t>();
  f.name = name->get<std::string>();
  std::string path = fmt::format("{}.{}", where, f.name);
  ASSIGN_OR_RETURN(f.type, ParseType(*type, path));
  f.required = j.value("required", false);
  if (auto doc = j.find("doc"); doc != j.end() && doc->is_string()) f.doc = doc->get<std::string>();
  return f;
}

Result<TypePtr> ParseType(const json& j, std::string_view where) {
  if (j.is_string()) {
    auto t = PrimitiveFromString(j.get<std::string>());
    if (!t.ok()) return t.status().WithContext(where);
    return t;
  }
  if (!j.is_object() || !j.contains("type") || !j["type"].is_string()) {
    return Status::Invalid("{}: a type must be a string or an object with \"type\"", where);
  }
  std::string kind = j["type"].get<std::string>();
  if (kind == "struct") {
    std::vector<Field> fields;
    auto fs = j.find("fields");
    if (fs == j.end() || !fs->is_array()) {
      return Status::Invalid("{}: struct without a \"fields\" array", where);
    }
    for (const json& f : *fs) {
      ASSIGN_OR_RETURN(Field field, ParseField(f, where));
      fields.push_back(std::move(field));
    }
    return DataType::Struct(std::move(fields));
  }
  if (kind == "list") {
    if (!j.contains("element-id") || !j.contains("element")) {
      return Status::Invalid("{}: list needs \"element-id\" and \"element\"", where);
    }
    ASSIGN_OR_RETURN(TypePtr elem, ParseType(j["element"], fmt::format("{}.element", where)));
    return DataType::List(Field{j["element-id"].get<int32_t>(), "element", elem,
                                j.value("element-required", false), ""});
  }
  if (kind == "map") {
    for (const char* key : {"key-id", "key", "value-id", "value"}) {
      if (!j.contains(key)) return Status::Invalid("{}: map without \"{}\"", where, key);
    }
    ASSIGN_OR_RETURN(TypePtr key, ParseType(j["key"], fmt::format("{}.key", where)));
    ASSIGN_OR_RETURN(TypePtr value, ParseType(j["value"], fmt::format("{}.value", where)));
    return DataType::Map(
        Field{j["key-id"].get<int32_t>(), "key", key, true, ""},
        Field{j["value-id"].get<int32_t>(), "value", value, j.value("value-required", false), ""});
  }
  return Status::NotImplemented("{}: unknown nested type \"{}\"", where, kind);
}

json TypeJson(const DataType& t);

// Visits every field object of a type's JSON (struct members at any depth).
template <typename J, typename Fn>
void ForEachFieldJson(J& type_json, Fn&& fn) {
  if (!type_json.is_object()) return;
  if (auto fs = type_json.find("fields"); fs != type_json.end() && fs->is_array()) {
    for (auto& f : *fs) {
      fn(f);
      if (auto t = f.find("type"); t != f.end()) ForEachFieldJson(*t, fn);
    }
  }
  for (const char* k : {"element", "key", "value"}) {
    if (auto t = type_json.find(k); t != type_json.end()) ForEachFieldJson(*t, fn);
  }
}

json FieldJson(const Field& f) {
  json j = {{"id", f.id}, {"name", f.name}, {"required", f.required}, {"type", TypeJson(*f.type)}};
  if (!f.doc.empty()) j["doc"] = f.doc;
  return j;
}

json TypeJson(const DataType& t) {
  switch (t.id()) {
    case TypeId::kStruct: {
      json fields = json::array();
      for (const Field& f : t.fields()) fields.push_back(FieldJson(f));
      return {{"type", "struct"}, {"fields", std::move(fields)}};
    }
    case TypeId::kList: {
      const Field& e = t.fields()[0];
      return {{"type", "list"},
              {"element-id", e.id},
              {"element", TypeJson(*e.type)},
              {"element-required", e.required}};
    }
    case TypeId::kMap: {
      const Field& k = t.fields()[0];
      const Field& v = t.fields()[1];
      return {{"type", "map"},
              {"key-id", k.id},
              {"key", TypeJson(*k.type)},
              {"value-id", v.id},
              {"value", TypeJson(*v.type)},
              {"value-required", v.required}};
    }
    default: return t.ToString();
  }
}

}  // namespace

Result<TypePtr> PrimitiveFromString(std::string_view s) {
  static const std::pair<std::string_view, TypeId> kNames[] = {
      {"boolean", TypeId::kBoolean},
      {"int", TypeId::kInt},
      {"long", TypeId::kLong},
      {"float", TypeId::kFloat},
      {"double", TypeId::kDouble},
      {"date", TypeId::kDate},
      {"time", TypeId::kTime},
      {"timestamp", TypeId::kTimestamp},
      {"timestamptz", TypeId::kTimestampTz},
      {"timestamp_ns", TypeId::kTimestampNs},
      {"timestamptz_ns", TypeId::kTimestampTzNs},
      {"string", TypeId::kString},
      {"uuid", TypeId::kUuid},
      {"binary", TypeId::kBinary},
  };
  for (const auto& [name, id] : kNames) {
    if (s == name) return DataType::Primitive(id);
  }
  int a = 0, b = 0;
  char tail = 0;
  std::string str(s);
  if (std::sscanf(str.c_str(), "fixed[%d]%c", &a, &tail) == 1 && a > 0) return DataType::Fixed(a);
  if (std::sscanf(str.c_str(), "decimal(%d ,%d)%c", &a, &b, &tail) == 2 ||
      std::sscanf(str.c_str(), "decimal(%d, %d)%c", &a, &b, &tail) == 2) {
    if (a < 1 || a > 38 || b < 0 || b > a) {
      return Status::Invalid("type \"{}\": decimal precision must be 1..38 and scale 0..precision",
                             s);
    }
    return DataType::Decimal(a, b);
  }
  return Status::NotImplemented("unknown Iceberg type \"{}\"", s);
}

namespace {
Result<std::vector<parquet::MappedField>> ParseMapping(const json& j) {
  // Some writers wrap the list as {"type": "struct", "fields": [...]}.
  if (j.is_object() && j.contains("fields")) return ParseMapping(j["fields"]);
  if (!j.is_array()) return Status::Invalid("name mapping: expected a JSON array");
  std::vector<parquet::MappedField> out;
  for (const json& e : j) {
    parquet::MappedField m;
    if (auto id = e.find("field-id"); id != e.end() && id->is_number_integer()) {
      m.field_id = id->get<int32_t>();
    }
    for (const json& n : e.at("names")) m.names.push_back(n.get<std::string>());
    if (auto f = e.find("fields"); f != e.end() && !f->is_null()) {
      ASSIGN_OR_RETURN(m.fields, ParseMapping(*f));
    }
    out.push_back(std::move(m));
  }
  return out;
}
}  // namespace

Result<std::vector<parquet::MappedField>> NameMappingFromJson(std::string_view text) {
  return internal::Guard("name mapping", [&]() -> Result<std::vector<parquet::MappedField>> {
    ASSIGN_OR_RETURN(json j, internal::ParseJson(text, "name mapping"));
    return ParseMapping(j);
  });
}

Result<TypePtr> TypeFromJson(std::string_view text) {
  return internal::Guard("type", [&]() -> Result<TypePtr> {
    ASSIGN_OR_RETURN(json j, internal::ParseJson(text, "type"));
    return ParseType(j, "type");
  });
}

std::string TypeToJson(const DataType& type) { return TypeJson(type).dump(); }

Result<Schema> SchemaFromJson(std::string_view text) {
  return internal::Guard("schema", [&]() -> Result<Schema> {
    ASSIGN_OR_RETURN(json j, internal::ParseJson(text, "schema"));
    return internal::SchemaFromJsonValue(j);
  });
}

namespace internal {

Result<Json> ParseJson(std::string_view text, std::string_view what) {
  Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return Status::Invalid("{} is not valid JSON", what);
  return j;
}

Result<Schema> SchemaFromJsonValue(const Json& j) {
  ASSIGN_OR_RETURN(TypePtr t, ParseType(j, "schema"));
  std::map<int32_t, std::string> initial, write;
  ForEachFieldJson(j, [&](const Json& f) {
    if (!f.contains("id") || !f["id"].is_number_integer()) return;
    int32_t id = f["id"].get<int32_t>();
    if (auto d = f.find("initial-default"); d != f.end() && !d->is_null()) initial[id] = d->dump();
    if (auto d = f.find("write-default"); d != f.end() && !d->is_null()) write[id] = d->dump();
  });
  if (t->id() != TypeId::kStruct) return Status::Invalid("schema: top level must be a struct");
  Schema s;
  s.fields = t->fields();
  s.schema_id = j.value("schema-id", 0);
  if (auto ids = j.find("identifier-field-ids"); ids != j.end() && ids->is_array()) {
    for (const json& id : *ids) s.identifier_field_ids.push_back(id.get<int32_t>());
  }
  s.initial_defaults = std::move(initial);
  s.write_defaults = std::move(write);
  return s;
}

Json SchemaToJsonValue(const Schema& schema) {
  json j = TypeJson(*schema.AsStruct());
  json out = {{"type", "struct"}, {"schema-id", schema.schema_id}};
  if (!schema.identifier_field_ids.empty())
    out["identifier-field-ids"] = schema.identifier_field_ids;
  out["fields"] = std::move(j["fields"]);
  if (!schema.initial_defaults.empty() || !schema.write_defaults.empty()) {
    ForEachFieldJson(out, [&](Json& f) {
      int32_t id = f["id"].get<int32_t>();
      if (auto it = schema.initial_defaults.find(id); it != schema.initial_defaults.end()) {
        f["initial-default"] = Json::parse(it->second);
      }
      if (auto it = schema.write_defaults.find(id); it != schema.write_defaults.end()) {
        f["write-default"] = Json::parse(it->second);
      }
    });
  }
  return out;
}

}  // namespace internal

std::string SchemaToJson(const Schema& schema) {
  return internal::SchemaToJsonValue(schema).dump();
}

}  // namespace sluice::iceberg
