#include "avro/schema.h"

#include <map>
#include <set>

namespace sluice::avro {

using json = Json;

std::string_view AvroTypeName(AvroType type) {
  switch (type) {
    case AvroType::kNull: return "null";
    case AvroType::kBoolean: return "boolean";
    case AvroType::kInt: return "int";
    case AvroType::kLong: return "long";
    case AvroType::kFloat: return "float";
    case AvroType::kDouble: return "double";
    case AvroType::kBytes: return "bytes";
    case AvroType::kString: return "string";
    case AvroType::kRecord: return "record";
    case AvroType::kEnum: return "enum";
    case AvroType::kArray: return "array";
    case AvroType::kMap: return "map";
    case AvroType::kUnion: return "union";
    case AvroType::kFixed: return "fixed";
  }
  return "?";
}

int AvroNode::NullBranch() const {
  if (type != AvroType::kUnion || branches.size() != 2) return -1;
  bool n0 = branches[0]->type == AvroType::kNull;
  bool n1 = branches[1]->type == AvroType::kNull;
  if (n0 == n1) return -1;
  return n0 ? 0 : 1;
}

const AvroNode* AvroNode::NonNullBranch() const {
  int n = NullBranch();
  return n < 0 ? nullptr : branches[1 - n].get();
}

namespace {

constexpr int kMaxDepth = 100;

std::optional<AvroType> PrimitiveFromName(std::string_view s) {
  if (s == "null") return AvroType::kNull;
  if (s == "boolean") return AvroType::kBoolean;
  if (s == "int") return AvroType::kInt;
  if (s == "long") return AvroType::kLong;
  if (s == "float") return AvroType::kFloat;
  if (s == "double") return AvroType::kDouble;
  if (s == "bytes") return AvroType::kBytes;
  if (s == "string") return AvroType::kString;
  return std::nullopt;
}

Result<std::optional<int32_t>> GetInt(const json& obj, const char* key, const std::string& path) {
  auto it = obj.find(key);
  if (it == obj.end()) return std::optional<int32_t>();
  if (!it->is_number_integer()) {
    return Status::Invalid("avro schema {}: attribute '{}' must be an integer, got {}", path, key,
                           it->dump(-1, ' ', false, json::error_handler_t::replace));
  }
  int64_t v = it->get<int64_t>();
  if (v < INT32_MIN || v > INT32_MAX) {
    return Status::Invalid("avro schema {}: attribute '{}' out of range: {}", path, key, v);
  }
  return std::optional<int32_t>(static_cast<int32_t>(v));
}

Result<std::string> GetString(const json& obj, const char* key, const std::string& path,
                              bool required) {
  auto it = obj.find(key);
  if (it == obj.end()) {
    if (required) return Status::Invalid("avro schema {}: missing '{}'", path, key);
    return std::string();
  }
  if (!it->is_string()) {
    return Status::Invalid("avro schema {}: attribute '{}' must be a string", path, key);
  }
  return it->get<std::string>();
}

class Parser {
 public:
  Result<AvroNodePtr> Parse(const json& j, const std::string& ns, const std::string& path,
                            int depth);

 private:
  Result<AvroNodePtr> ParseObject(const json& j, const std::string& ns, const std::string& path,
                                  int depth);
  Result<AvroNodePtr> Lookup(const std::string& name, const std::string& ns,
                             const std::string& path);
  Status SetName(const json& j, const std::string& ns, const std::string& path, AvroNode* node);
  Status Register(const AvroNodePtr& node, const std::string& path);

  std::map<std::string, AvroNodePtr> named_;
  std::set<std::string> in_progress_;
};

Result<AvroNodePtr> Parser::Lookup(const std::string& name, const std::string& ns,
                                   const std::string& path) {
  std::string full = name.find('.') == std::string::npos && !ns.empty() ? ns + "." + name : name;
  for (const std::string& candidate : {full, name}) {
    if (in_progress_.count(candidate)) {
      return Status::NotImplemented("avro schema {}: recursive type '{}' is not supported", path,
                                    candidate);
    }
    auto it = named_.find(candidate);
    if (it != named_.end()) return it->second;
  }
  return Status::Invalid("avro schema {}: unknown type '{}'", path, name);
}

Status Parser::SetName(const json& j, const std::string& ns, const std::string& path,
                       AvroNode* node) {
  ASSIGN_OR_RETURN(std::string name, GetString(j, "name", path, true));
  ASSIGN_OR_RETURN(std::string space, GetString(j, "namespace", path, false));
  if (name.empty()) return Status::Invalid("avro schema {}: empty name", path);
  size_t dot = name.rfind('.');
  if (dot != std::string::npos) {
    node->name_space = name.substr(0, dot);
    node->name = name.substr(dot + 1);
  } else {
    node->name = name;
    node->name_space = j.contains("namespace") ? space : ns;
  }
  return Status::OK();
}

Status Parser::Register(const AvroNodePtr& node, const std::string& path) {
  if (!named_.emplace(node->full_name(), node).second) {
    return Status::Invalid("avro schema {}: type '{}' is defined twice", path, node->full_name());
  }
  return Status::OK();
}

Result<AvroNodePtr> Parser::Parse(const json& j, const std::string& ns, const std::string& path,
                                  int depth) {
  if (depth > kMaxDepth) {
    return Status::NotImplemented("avro schema {}: nested deeper than {}", path, kMaxDepth);
  }
  if (j.is_string()) {
    const std::string& s = j.get_ref<const std::string&>();
    if (auto prim = PrimitiveFromName(s)) {
      auto node = std::make_shared<AvroNode>();
      node->type = *prim;
      return AvroNodePtr(node);
    }
    return Lookup(s, ns, path);
  }
  if (j.is_array()) {
    auto node = std::make_shared<AvroNode>();
    node->type = AvroType::kUnion;
    for (size_t i = 0; i < j.size(); ++i) {
      ASSIGN_OR_RETURN(AvroNodePtr b, Parse(j[i], ns, fmt::format("{}[{}]", path, i), depth + 1));
      if (b->type == AvroType::kUnion) {
        return Status::Invalid("avro schema {}: a union may not contain a union", path);
      }
      node->branches.push_back(std::move(b));
    }
    if (node->branches.empty()) return Status::Invalid("avro schema {}: empty union", path);
    return AvroNodePtr(node);
  }
  if (j.is_object()) return ParseObject(j, ns, path, depth);
  return Status::Invalid("avro schema {}: expected a string, array or object", path);
}

Result<AvroNodePtr> Parser::ParseObject(const json& j, const std::string& ns,
                                        const std::string& path, int depth) {
  auto type_it = j.find("type");
  if (type_it == j.end()) return Status::Invalid("avro schema {}: missing 'type'", path);
  if (!type_it->is_string()) return Parse(*type_it, ns, path + ".type", depth + 1);
  const std::string& type = type_it->get_ref<const std::string&>();
  auto node = std::make_shared<AvroNode>();
  static const std::set<std::string> kKnown = {
      "type",       "name",   "namespace", "doc",          "fields",    "symbols",
      "size",       "items",  "values",    "logicalType",  "precision", "scale",
      "element-id", "key-id", "value-id",  "adjust-to-utc"};
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (!kKnown.count(it.key())) node->props[it.key()] = it.value();
  }
  ASSIGN_OR_RETURN(node->doc, GetString(j, "doc", path, false));
  ASSIGN_OR_RETURN(node->logical_type, GetString(j, "logicalType", path, false));
  ASSIGN_OR_RETURN(auto precision, GetInt(j, "precision", path));
  ASSIGN_OR_RETURN(auto scale, GetInt(j, "scale", path));
  node->precision = precision.value_or(0);
  node->scale = scale.value_or(0);
  ASSIGN_OR_RETURN(node->element_id, GetInt(j, "element-id", path));
  ASSIGN_OR_RETURN(node->key_id, GetInt(j, "key-id", path));
  ASSIGN_OR_RETURN(node->value_id, GetInt(j, "value-id", path));
  if (auto it = j.find("adjust-to-utc"); it != j.end()) {
    if (it->is_boolean()) {
      node->adjust_to_utc = it->get<bool>();
    } else if (it->is_string()) {  // some writers quote it
      node->adjust_to_utc = it->get<std::string>() == "true";
    } else {
      return Status::Invalid("avro schema {}: 'adjust-to-utc' must be a boolean", path);
    }
  }

  if (auto prim = PrimitiveFromName(type)) {
    node->type = *prim;
    return AvroNodePtr(node);
  }
  if (type == "record" || type == "error") {
    node->type = AvroType::kRecord;
    RETURN_IF_ERROR(SetName(j, ns, path, node.get()));
    std::string full = node->full_name();
    std::string inner_path = path.empty() ? full : path + "." + full;
    auto fields_it = j.find("fields");
    if (fields_it == j.end() || !fields_it->is_array()) {
      return Status::Invalid("avro schema {}: record '{}' needs a 'fields' array", path, full);
    }
    in_progress_.insert(full);
    std::set<std::string> seen;
    for (const json& fj : *fields_it) {
      if (!fj.is_object()) {
        return Status::Invalid("avro schema {}: record field must be an object", inner_path);
      }
      AvroField f;
      ASSIGN_OR_RETURN(f.name, GetString(fj, "name", inner_path, true));
      std::string fpath = inner_path + "." + f.name;
      if (!seen.insert(f.name).second) {
        return Status::Invalid("avro schema {}: duplicate field name", fpath);
      }
      auto ft = fj.find("type");
      if (ft == fj.end()) return Status::Invalid("avro schema {}: field has no 'type'", fpath);
      ASSIGN_OR_RETURN(f.type, Parse(*ft, node->name_space, fpath, depth + 1));
      ASSIGN_OR_RETURN(f.doc, GetString(fj, "doc", fpath, false));
      ASSIGN_OR_RETURN(f.field_id, GetInt(fj, "field-id", fpath));
      if (auto d = fj.find("default"); d != fj.end()) f.default_value = *d;
      for (auto it = fj.begin(); it != fj.end(); ++it) {
        const std::string& k = it.key();
        if (k != "name" && k != "type" && k != "doc" && k != "field-id" && k != "default") {
          f.props[k] = it.value();
        }
      }
      node->fields.push_back(std::move(f));
    }
    in_progress_.erase(full);
    RETURN_IF_ERROR(Register(node, path));
    return AvroNodePtr(node);
  }
  if (type == "enum") {
    node->type = AvroType::kEnum;
    RETURN_IF_ERROR(SetName(j, ns, path, node.get()));
    auto sym = j.find("symbols");
    if (sym == j.end() || !sym->is_array()) {
      return Status::Invalid("avro schema {}: enum needs a 'symbols' array", path);
    }
    for (const json& s : *sym) {
      if (!s.is_string()) return Status::Invalid("avro schema {}: enum symbol not a string", path);
      node->symbols.push_back(s.get<std::string>());
    }
    if (node->symbols.empty()) return Status::Invalid("avro schema {}: enum has no symbols", path);
    RETURN_IF_ERROR(Register(node, path));
    return AvroNodePtr(node);
  }
  if (type == "fixed") {
    node->type = AvroType::kFixed;
    RETURN_IF_ERROR(SetName(j, ns, path, node.get()));
    ASSIGN_OR_RETURN(auto size, GetInt(j, "size", path));
    if (!size || *size < 0) {
      return Status::Invalid("avro schema {}: fixed needs a non-negative 'size'", path);
    }
    node->size = *size;
    RETURN_IF_ERROR(Register(node, path));
    return AvroNodePtr(node);
  }
  if (type == "array") {
    node->type = AvroType::kArray;
    auto items = j.find("items");
    if (items == j.end()) return Status::Invalid("avro schema {}: array needs 'items'", path);
    ASSIGN_OR_RETURN(node->items, Parse(*items, ns, path + ".items", depth + 1));
    return AvroNodePtr(node);
  }
  if (type == "map") {
    node->type = AvroType::kMap;
    auto values = j.find("values");
    if (values == j.end()) return Status::Invalid("avro schema {}: map needs 'values'", path);
    ASSIGN_OR_RETURN(node->values, Parse(*values, ns, path + ".values", depth + 1));
    return AvroNodePtr(node);
  }
  // {"type": "SomeNamedType"}: a reference written as an object.
  return Lookup(type, ns, path);
}

class Writer {
 public:
  json Write(const AvroNode& n) {
    if (n.is_named()) {
      std::string full = n.full_name();
      if (!written_.insert(full).second) return full;
    }
    bool plain = n.logical_type.empty() && !n.adjust_to_utc && !n.element_id && !n.key_id &&
                 !n.value_id && n.props.empty() && n.doc.empty();
    switch (n.type) {
      case AvroType::kUnion: {
        json a = json::array();
        for (const auto& b : n.branches) a.push_back(Write(*b));
        return a;
      }
      case AvroType::kNull:
      case AvroType::kBoolean:
      case AvroType::kInt:
      case AvroType::kLong:
      case AvroType::kFloat:
      case AvroType::kDouble:
      case AvroType::kBytes:
      case AvroType::kString:
        if (plain) return std::string(AvroTypeName(n.type));
        break;
      default: break;
    }
    json o = json::object();
    o["type"] = std::string(AvroTypeName(n.type));
    if (n.is_named()) {
      o["name"] = n.name;
      if (!n.name_space.empty()) o["namespace"] = n.name_space;
    }
    if (!n.doc.empty()) o["doc"] = n.doc;
    for (auto it = n.props.begin(); it != n.props.end(); ++it) o[it.key()] = it.value();
    switch (n.type) {
      case AvroType::kRecord: {
        json fields = json::array();
        for (const AvroField& f : n.fields) {
          json fo = json::object();
          fo["name"] = f.name;
          fo["type"] = Write(*f.type);
          if (!f.doc.empty()) fo["doc"] = f.doc;
          if (f.default_value) fo["default"] = *f.default_value;
          if (f.field_id) fo["field-id"] = *f.field_id;
          for (auto it = f.props.begin(); it != f.props.end(); ++it) fo[it.key()] = it.value();
          fields.push_back(std::move(fo));
        }
        o["fields"] = std::move(fields);
        break;
      }
      case AvroType::kEnum: o["symbols"] = n.symbols; break;
      case AvroType::kFixed: o["size"] = n.size; break;
      case AvroType::kArray: o["items"] = Write(*n.items); break;
      case AvroType::kMap: o["values"] = Write(*n.values); break;
      default: break;
    }
    if (!n.logical_type.empty()) {
      o["logicalType"] = n.logical_type;
      if (n.logical_type == "decimal") {
        o["precision"] = n.precision;
        o["scale"] = n.scale;
      }
    }
    if (n.adjust_to_utc) o["adjust-to-utc"] = *n.adjust_to_utc;
    if (n.element_id) o["element-id"] = *n.element_id;
    if (n.key_id) o["key-id"] = *n.key_id;
    if (n.value_id) o["value-id"] = *n.value_id;
    return o;
  }

 private:
  std::set<std::string> written_;
};

}  // namespace

Result<AvroNodePtr> ParseAvroSchemaJson(const json& j) {
  Parser parser;
  return parser.Parse(j, "", "", 0);
}

Result<AvroNodePtr> ParseAvroSchema(std::string_view text) {
  json j = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return Status::Invalid("avro schema: not valid JSON");
  return ParseAvroSchemaJson(j);
}

json AvroSchemaToJson(const AvroNode& node) {
  Writer w;
  return w.Write(node);
}

std::string AvroSchemaToString(const AvroNode& node) {
  return AvroSchemaToJson(node).dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace sluice::avro
