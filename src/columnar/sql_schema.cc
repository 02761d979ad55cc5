#include "columnar/sql_schema.h"

#include <algorithm>
#include <cctype>
#include <unordered_set>

#include "common/ascii.h"

namespace sluice {
namespace {

// Deeper nesting than any real schema needs; the recursion below stays far from the
// stack's end (a 50,000-deep STRUCT<...> used to overflow it).
constexpr int kMaxTypeDepth = 100;

class Parser {
 public:
  explicit Parser(std::string_view s) : s_(s) {}

  Result<std::vector<Field>> ColumnList(char terminator, int depth = 0) {
    std::vector<Field> fields;
    std::unordered_set<std::string> seen;  // lowercased names
    while (true) {
      SkipSpace();
      ASSIGN_OR_RETURN(Field f, Column(terminator == '>', depth));
      if (!seen.insert(AsciiLower(f.name)).second) {
        return Error(fmt::format("duplicate column name '{}'", f.name));
      }
      fields.push_back(std::move(f));
      SkipSpace();
      if (pos_ < s_.size() && s_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (terminator == 0 ? pos_ == s_.size() : (pos_ < s_.size() && s_[pos_] == terminator)) {
        break;
      }
      return Error(terminator == 0 ? "expected ',' or end of column list"
                                   : "expected ',' or '>' in STRUCT<...>");
    }
    return fields;
  }

  Result<TypePtr> Type(int depth = 0) {
    SkipSpace();
    size_t start = pos_;
    if (depth > kMaxTypeDepth) {
      return Error(fmt::format("type nested more than {} deep", kMaxTypeDepth));
    }
    std::string name = AsciiLower(Word());
    if (name.empty()) return Error("expected a type name");
    auto simple = [&](TypePtr t) -> Result<TypePtr> { return t; };
    if (name == "boolean" || name == "bool") return simple(DataType::Boolean());
    if (name == "int" || name == "integer" || name == "smallint" || name == "tinyint" ||
        name == "int4") {
      return simple(DataType::Int());
    }
    if (name == "bigint" || name == "long" || name == "int8") return simple(DataType::Long());
    if (name == "float" || name == "real" || name == "float4") return simple(DataType::Float());
    if (name == "double" || name == "float8") {
      SkipSpace();
      size_t save = pos_;
      if (AsciiLower(Word()) != "precision") pos_ = save;
      return simple(DataType::Double());
    }
    if (name == "date") return simple(DataType::Date());
    if (name == "time") return simple(DataType::Time());
    if (name == "timestamp") return simple(DataType::Timestamp());
    if (name == "timestamptz") return simple(DataType::TimestampTz());
    if (name == "timestamp_ns") return simple(DataType::TimestampNs());
    if (name == "timestamptz_ns") return simple(DataType::TimestampTzNs());
    if (name == "string" || name == "text" || name == "varchar" || name == "char") {
      SkipSpace();
      if (Peek('(')) {  // VARCHAR(n): the length is not enforced by Iceberg
        ++pos_;
        int64_t ignored;
        RETURN_IF_ERROR(Number(&ignored));
        RETURN_IF_ERROR(Expect(')'));
      }
      return simple(DataType::String());
    }
    if (name == "binary" || name == "varbinary" || name == "bytes" || name == "blob") {
      return simple(DataType::Binary());
    }
    if (name == "uuid") return simple(DataType::Uuid());
    if (name == "fixed") {
      RETURN_IF_ERROR(Expect('('));
      int64_t w;
      RETURN_IF_ERROR(Number(&w));
      RETURN_IF_ERROR(Expect(')'));
      if (w < 1 || w > (1 << 20)) return ErrorAt(start, "FIXED width must be 1 to 1048576");
      return simple(DataType::Fixed(static_cast<int>(w)));
    }
    if (name == "decimal" || name == "numeric") {
      int64_t p = 38, sc = 0;
      SkipSpace();
      if (Peek('(')) {
        ++pos_;
        RETURN_IF_ERROR(Number(&p));
        SkipSpace();
        if (Peek(',')) {
          ++pos_;
          RETURN_IF_ERROR(Number(&sc));
        }
        RETURN_IF_ERROR(Expect(')'));
      }
      if (p < 1 || p > 38) return ErrorAt(start, "DECIMAL precision must be 1 to 38");
      if (sc < 0 || sc > p) return ErrorAt(start, "DECIMAL scale must be 0 to the precision");
      return simple(DataType::Decimal(static_cast<int>(p), static_cast<int>(sc)));
    }
    if (name == "array" || name == "list") {
      RETURN_IF_ERROR(Expect('<'));
      ASSIGN_OR_RETURN(TypePtr elem, Type(depth + 1));
      bool required = NotNull();
      RETURN_IF_ERROR(Expect('>'));
      return DataType::List(Field{0, "element", elem, required, ""});
    }
    if (name == "map") {
      RETURN_IF_ERROR(Expect('<'));
      ASSIGN_OR_RETURN(TypePtr key, Type(depth + 1));
      RETURN_IF_ERROR(Expect(','));
      ASSIGN_OR_RETURN(TypePtr value, Type(depth + 1));
      bool required = NotNull();
      RETURN_IF_ERROR(Expect('>'));
      return DataType::Map(Field{0, "key", key, true, ""}, Field{0, "value", value, required, ""});
    }
    if (name == "struct" || name == "row") {
      RETURN_IF_ERROR(Expect('<'));
      ASSIGN_OR_RETURN(auto fields, ColumnList('>', depth + 1));
      RETURN_IF_ERROR(Expect('>'));
      return DataType::Struct(std::move(fields));
    }
    return ErrorAt(start, fmt::format("unknown type '{}'", name));
  }

  void SkipSpace() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }
  bool AtEnd() {
    SkipSpace();
    return pos_ == s_.size();
  }
  Status Error(std::string what) const { return ErrorAt(pos_, std::move(what)); }

 private:
  Status ErrorAt(size_t pos, std::string what) const {
    std::string near(s_.substr(pos, 20));
    return Status::Invalid("column list at character {}{}: {}", pos + 1,
                           near.empty() ? " (end)" : fmt::format(" ('{}')", near), what);
  }

  bool Peek(char c) const { return pos_ < s_.size() && s_[pos_] == c; }

  Status Expect(char c) {
    SkipSpace();
    if (!Peek(c)) return Error(fmt::format("expected '{}'", c));
    ++pos_;
    return Status::OK();
  }

  std::string Word() {
    size_t start = pos_;
    while (pos_ < s_.size() &&
           (std::isalnum(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '_')) {
      ++pos_;
    }
    return std::string(s_.substr(start, pos_ - start));
  }

  Status Number(int64_t* out) {
    SkipSpace();
    size_t start = pos_;
    int64_t v = 0;
    while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_])) &&
           pos_ - start < 9) {
      v = v * 10 + (s_[pos_++] - '0');
    }
    if (pos_ == start) return Error("expected a number");
    *out = v;
    return Status::OK();
  }

  Result<std::string> Identifier() {
    SkipSpace();
    if (Peek('"') || Peek('`')) {
      char q = s_[pos_++];
      size_t end = s_.find(q, pos_);
      if (end == std::string_view::npos) return Error("unterminated quoted identifier");
      std::string id(s_.substr(pos_, end - pos_));
      pos_ = end + 1;
      if (id.empty()) return Error("empty column name");
      return id;
    }
    std::string w = Word();
    if (w.empty()) return Error("expected a column name");
    return w;
  }

  // Optional "NOT NULL" / "NULL" after a type.
  bool NotNull() {
    SkipSpace();
    size_t save = pos_;
    std::string w = AsciiLower(Word());
    if (w == "not") {
      SkipSpace();
      if (AsciiLower(Word()) == "null") return true;
    } else if (w == "null") {
      return false;
    }
    pos_ = save;
    return false;
  }

  Result<Field> Column(bool in_struct, int depth) {
    ASSIGN_OR_RETURN(std::string name, Identifier());
    SkipSpace();
    if (in_struct && Peek(':')) ++pos_;
    ASSIGN_OR_RETURN(TypePtr type, Type(depth));
    Field f{0, std::move(name), std::move(type), NotNull(), ""};
    SkipSpace();
    size_t save = pos_;
    if (AsciiLower(Word()) == "comment") {
      SkipSpace();
      if (!Peek('\'')) return Error("expected a quoted comment");
      size_t end = s_.find('\'', pos_ + 1);
      if (end == std::string_view::npos) return Error("unterminated comment");
      f.doc = std::string(s_.substr(pos_ + 1, end - pos_ - 1));
      pos_ = end + 1;
    } else {
      pos_ = save;
    }
    return f;
  }

  std::string_view s_;
  size_t pos_ = 0;
};

}  // namespace

Result<Schema> ParseColumnList(std::string_view sql) {
  Parser p(sql);
  if (p.AtEnd()) return Status::Invalid("column list is empty");
  ASSIGN_OR_RETURN(auto fields, p.ColumnList(0));
  Schema schema;
  schema.fields = std::move(fields);
  int32_t next = 1;
  AssignFreshIds(&schema.fields, &next);
  return schema;
}

Status SetPrimaryKey(Schema* schema, const std::vector<std::string>& columns) {
  if (columns.empty()) return Status::Invalid("a primary key needs at least one column");
  auto lower = [](std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
  };
  std::vector<int32_t> ids;
  for (const std::string& name : columns) {
    Field* found = nullptr;
    int matches = 0;
    for (Field& f : schema->fields) {
      if (f.name == name) {
        found = &f;
        matches = 1;
        break;
      }
      if (lower(f.name) == lower(name)) {
        found = &f;
        ++matches;
      }
    }
    if (found == nullptr) return Status::Invalid("primary key column '{}' is not a column", name);
    if (matches > 1) return Status::Invalid("primary key column '{}' is ambiguous", name);
    const TypeId t = found->type->id();
    if (found->type->is_nested() || t == TypeId::kFloat || t == TypeId::kDouble) {
      return Status::Invalid(
          "primary key column '{}' is {}: a key column must be a primitive other than FLOAT and "
          "DOUBLE",
          found->name, ToSqlType(*found->type));
    }
    if (std::find(ids.begin(), ids.end(), found->id) != ids.end()) {
      return Status::Invalid("primary key column '{}' is named twice", found->name);
    }
    found->required = true;
    ids.push_back(found->id);
  }
  schema->identifier_field_ids = std::move(ids);
  return Status::OK();
}

std::vector<std::string> PrimaryKeyColumns(const Schema& schema) {
  std::vector<std::string> out;
  for (int32_t id : schema.identifier_field_ids) {
    const Field* f = schema.FindById(id);
    out.push_back(f != nullptr ? f->name : fmt::format("#{}", id));
  }
  return out;
}

Result<TypePtr> ParseSqlType(std::string_view sql) {
  Parser p(sql);
  ASSIGN_OR_RETURN(TypePtr t, p.Type());
  if (!p.AtEnd()) return p.Error("unexpected text after the type");
  return t;
}

std::string ToSqlType(const DataType& t) {
  switch (t.id()) {
    case TypeId::kBoolean: return "BOOLEAN";
    case TypeId::kInt: return "INT";
    case TypeId::kLong: return "BIGINT";
    case TypeId::kFloat: return "FLOAT";
    case TypeId::kDouble: return "DOUBLE";
    case TypeId::kDecimal: return fmt::format("DECIMAL({},{})", t.precision(), t.scale());
    case TypeId::kDate: return "DATE";
    case TypeId::kTime: return "TIME";
    case TypeId::kTimestamp: return "TIMESTAMP";
    case TypeId::kTimestampTz: return "TIMESTAMPTZ";
    case TypeId::kTimestampNs: return "TIMESTAMP_NS";
    case TypeId::kTimestampTzNs: return "TIMESTAMPTZ_NS";
    case TypeId::kString: return "STRING";
    case TypeId::kUuid: return "UUID";
    case TypeId::kFixed: return fmt::format("FIXED({})", t.width());
    case TypeId::kBinary: return "BINARY";
    case TypeId::kList: {
      const Field& e = t.fields()[0];
      return fmt::format("ARRAY<{}{}>", ToSqlType(*e.type), e.required ? " NOT NULL" : "");
    }
    case TypeId::kMap: {
      const Field& v = t.fields()[1];
      return fmt::format("MAP<{}, {}{}>", ToSqlType(*t.fields()[0].type), ToSqlType(*v.type),
                         v.required ? " NOT NULL" : "");
    }
    case TypeId::kStruct: {
      std::string s = "STRUCT<";
      for (size_t i = 0; i < t.fields().size(); ++i) {
        const Field& f = t.fields()[i];
        s += fmt::format("{}{}: {}{}", i ? ", " : "", f.name, ToSqlType(*f.type),
                         f.required ? " NOT NULL" : "");
      }
      return s + ">";
    }
  }
  return "?";
}

}  // namespace sluice
