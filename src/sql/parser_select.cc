// INSERT ... SELECT, select items and expressions, column lists and types.
#include <algorithm>
#include <cctype>
#include <unordered_set>

#include "columnar/sql_schema.h"
#include "common/ascii.h"
#include "sql/parser_internal.h"

namespace sluice::sql::internal {
namespace {

// Clauses of a SELECT that a later issue brings; named when they appear.
struct Clause {
  std::string_view keyword, name;
};
constexpr Clause kUnsupportedClauses[] = {
    {"ORDER", "ORDER BY"}, {"LIMIT", "LIMIT"},  {"JOIN", "JOIN"}, {"LEFT", "JOIN"},
    {"RIGHT", "JOIN"},     {"INNER", "JOIN"},   {"FULL", "JOIN"}, {"CROSS", "JOIN"},
    {"UNION", "UNION"},    {"WINDOW", "WINDOW"}};

}  // namespace

bool IsReservedWord(const Token& t) {
  static constexpr std::string_view kReserved[] = {
      "SELECT", "FROM",  "AS",       "INSERT", "INTO",  "CREATE", "WITH",     "ON",     "BY",
      "WHERE",  "GROUP", "HAVING",   "ORDER",  "LIMIT", "JOIN",   "UNION",    "NULL",   "TRUE",
      "FALSE",  "CAST",  "TRY_CAST", "AND",    "OR",    "NOT",    "IS",       "IN",     "BETWEEN",
      "LIKE",   "CASE",  "WHEN",     "THEN",   "ELSE",  "END",    "INTERVAL", "ESCAPE", "DISTINCT"};
  if (t.kind != TokenKind::kIdentifier) return false;
  return std::any_of(std::begin(kReserved), std::end(kReserved),
                     [&](std::string_view kw) { return t.IsKeyword(kw); });
}

Result<InsertSelect> Parser::ParseInsert() {
  InsertSelect insert;
  insert.pos = Peek().pos;
  RETURN_IF_ERROR(ExpectKeyword("INSERT", "after AS"));
  RETURN_IF_ERROR(ExpectKeyword("INTO", "after INSERT"));
  ASSIGN_OR_RETURN(insert.target, ParseQualifiedName("a table name after INSERT INTO"));
  if (AcceptSymbol("(")) {
    do {
      ASSIGN_OR_RETURN(Identifier column, ParseIdentifier("a column name"));
      for (const Identifier& other : insert.columns) {
        bool same = other.quoted || column.quoted ? other.name == column.name
                                                  : EqualsIgnoreCase(other.name, column.name);
        if (same) {
          return ErrorAt(column.pos, "column '{}' is listed twice", column.name);
        }
      }
      insert.columns.push_back(std::move(column));
    } while (AcceptSymbol(","));
    RETURN_IF_ERROR(ExpectSymbol(")", "after the INSERT column list"));
  }
  insert.select_pos = Peek().pos;
  RETURN_IF_ERROR(ExpectKeyword("SELECT", "after the INSERT target"));
  while (true) {
    ASSIGN_OR_RETURN(SelectItem item, ParseSelectItem());
    insert.items.push_back(std::move(item));
    if (AcceptSymbol(",")) continue;
    if (AcceptKeyword("FROM")) break;
    return Expected("',' or FROM after a select item");
  }
  RETURN_IF_ERROR(ParseFrom(&insert));
  if (AcceptKeyword("WHERE")) {
    ASSIGN_OR_RETURN(Expr where, ParseExpr());
    insert.where = std::make_unique<Expr>(std::move(where));
  }
  if (AcceptKeyword("GROUP")) {
    RETURN_IF_ERROR(ExpectKeyword("BY", "after GROUP"));
    do {
      ASSIGN_OR_RETURN(Expr key, ParseExpr());
      insert.group_by.push_back(std::move(key));
    } while (AcceptSymbol(","));
  }
  if (AcceptKeyword("HAVING")) {
    ASSIGN_OR_RETURN(Expr having, ParseExpr());
    insert.having = std::make_unique<Expr>(std::move(having));
  }
  for (const Clause& clause : kUnsupportedClauses) {
    if (Peek().IsKeyword(clause.keyword)) return NotSupportedAt(Peek().pos, "{}", clause.name);
  }
  return insert;
}

Result<SelectItem> Parser::ParseSelectItem() {
  SelectItem item;
  item.pos = Peek().pos;
  if (AcceptSymbol("*")) {
    item.expr.kind = Expr::Kind::kStar;
    item.expr.pos = item.pos;
    return item;
  }
  ASSIGN_OR_RETURN(item.expr, ParseExpr());
  if (AcceptKeyword("AS")) {
    ASSIGN_OR_RETURN(Identifier alias, ParseIdentifier("an alias after AS"));
    item.alias = std::move(alias.name);
  } else if ((Peek().kind == TokenKind::kIdentifier && !IsReservedWord(Peek())) ||
             Peek().kind == TokenKind::kQuotedIdentifier) {
    item.alias = Next().text;
  }
  return item;
}

Status Parser::ParseFrom(InsertSelect* insert) {
  // TABLE(TUMBLE(TABLE src, DESCRIPTOR(ts), size)) or TUMBLE(src, ts, size).
  bool flink = Peek().IsKeyword("TABLE") && Peek(1).IsSymbol("(");
  if (flink) {
    Next();
    Next();
  }
  const Token& fn = Peek();
  bool window = fn.kind == TokenKind::kIdentifier && Peek(1).IsSymbol("(") &&
                (fn.IsKeyword("TUMBLE") || fn.IsKeyword("HOP") || fn.IsKeyword("SESSION"));
  if (!window) {
    if (flink) return Expected("TUMBLE, HOP or SESSION in TABLE(...)");
    ASSIGN_OR_RETURN(insert->source, ParseQualifiedName("a source name after FROM"));
    return Status::OK();
  }
  auto w = std::make_unique<WindowClause>();
  w->pos = fn.pos;
  w->kind = fn.IsKeyword("TUMBLE") ? WindowClause::Kind::kTumble
            : fn.IsKeyword("HOP")  ? WindowClause::Kind::kHop
                                   : WindowClause::Kind::kSession;
  std::string name = fn.text;
  Next();
  Next();  // (
  (void)AcceptKeyword("TABLE");
  ASSIGN_OR_RETURN(insert->source, ParseQualifiedName(fmt::format("a source name in {}(", name)));
  if (Peek().IsKeyword("PARTITION")) {
    return NotSupportedAt(Peek().pos, "PARTITION BY in {}() (GROUP BY the keys instead)", name);
  }
  RETURN_IF_ERROR(ExpectSymbol(",", fmt::format("after the source of {}(", name)));
  bool descriptor = AcceptKeyword("DESCRIPTOR");
  if (descriptor) RETURN_IF_ERROR(ExpectSymbol("(", "after DESCRIPTOR"));
  ASSIGN_OR_RETURN(w->time_column, ParseIdentifier("the time column"));
  if (descriptor) RETURN_IF_ERROR(ExpectSymbol(")", "after the DESCRIPTOR column"));
  size_t want = w->kind == WindowClause::Kind::kHop ? 2 : 1;
  for (size_t i = 0; i < want; ++i) {
    RETURN_IF_ERROR(ExpectSymbol(",", fmt::format("and an INTERVAL in {}(", name)));
    ASSIGN_OR_RETURN(Expr interval, ParseExpr(1));
    w->intervals.push_back(std::move(interval));
  }
  RETURN_IF_ERROR(ExpectSymbol(")", fmt::format("to close {}(", name)));
  if (flink) RETURN_IF_ERROR(ExpectSymbol(")", "to close TABLE("));
  insert->window = std::move(w);
  return Status::OK();
}

Status Parser::ParseKeyColumns(std::vector<Identifier>* primary_key) {
  RETURN_IF_ERROR(ExpectSymbol("(", "after PRIMARY KEY"));
  do {
    ASSIGN_OR_RETURN(Identifier column, ParseIdentifier("a primary key column"));
    primary_key->push_back(std::move(column));
  } while (AcceptSymbol(","));
  RETURN_IF_ERROR(ExpectSymbol(")", "after the primary key's columns"));
  if (AcceptKeyword("NOT"))
    RETURN_IF_ERROR(ExpectKeyword("ENFORCED", "after PRIMARY KEY (...) NOT"));
  return Status::OK();
}

Result<Schema> Parser::ParseColumnList(std::optional<Watermark>* watermark,
                                       std::vector<Identifier>* primary_key) {
  RETURN_IF_ERROR(ExpectSymbol("(", "before the column list"));
  Schema schema;
  std::unordered_set<std::string> seen;  // lowercased names
  while (true) {
    if (Peek().IsKeyword("PRIMARY") && Peek(1).IsKeyword("KEY")) {
      if (primary_key == nullptr) {
        return ErrorAt(Peek().pos, "a PRIMARY KEY is declared on a table (CREATE TABLE)");
      }
      if (!primary_key->empty()) return ErrorAt(Peek().pos, "a table has one PRIMARY KEY");
      Next();
      Next();
      RETURN_IF_ERROR(ParseKeyColumns(primary_key));
      if (AcceptSymbol(",")) continue;
      if (AcceptSymbol(")")) break;
      return Expected("',' or ')' after the PRIMARY KEY");
    }
    if (watermark != nullptr && Peek().IsKeyword("WATERMARK") && Peek(1).IsKeyword("FOR")) {
      Watermark wm;
      wm.pos = Peek().pos;
      if (watermark->has_value()) return ErrorAt(wm.pos, "a source has one WATERMARK");
      Next();
      Next();
      ASSIGN_OR_RETURN(wm.column, ParseIdentifier("the watermark's column"));
      RETURN_IF_ERROR(ExpectKeyword("AS", "after WATERMARK FOR column"));
      ASSIGN_OR_RETURN(Expr e, ParseExpr());
      wm.expr = std::make_shared<const Expr>(std::move(e));
      *watermark = std::move(wm);
      if (AcceptSymbol(",")) continue;
      if (AcceptSymbol(")")) break;
      return Expected("',' or ')' after the WATERMARK");
    }
    ASSIGN_OR_RETURN(Identifier name, ParseIdentifier("a column name"));
    if (!seen.insert(AsciiLower(name.name)).second) {
      return ErrorAt(name.pos, "duplicate column name '{}'", name.name);
    }
    Field field;
    field.name = name.name;
    std::string type_text;
    ASSIGN_OR_RETURN(field.type, ParseType(&type_text));
    if (AcceptKeyword("NOT")) {
      RETURN_IF_ERROR(ExpectKeyword("NULL", "after NOT"));
      field.required = true;
    } else {
      (void)AcceptKeyword("NULL");
    }
    if (Peek().IsKeyword("PRIMARY") && Peek(1).IsKeyword("KEY")) {  // id BIGINT PRIMARY KEY
      if (primary_key == nullptr) {
        return ErrorAt(Peek().pos, "a PRIMARY KEY is declared on a table (CREATE TABLE)");
      }
      if (!primary_key->empty()) return ErrorAt(Peek().pos, "a table has one PRIMARY KEY");
      Next();
      Next();
      if (AcceptKeyword("NOT")) RETURN_IF_ERROR(ExpectKeyword("ENFORCED", "after PRIMARY KEY NOT"));
      primary_key->push_back(name);
    }
    if (AcceptKeyword("COMMENT")) {
      if (Peek().kind != TokenKind::kString) return Expected("a 'string' after COMMENT");
      field.doc = Next().text;
    }
    schema.fields.push_back(std::move(field));
    if (AcceptSymbol(",")) continue;
    if (AcceptSymbol(")")) break;
    return Expected(fmt::format("',' or ')' after column '{}'", name.name));
  }
  int32_t next_id = 1;
  AssignFreshIds(&schema.fields, &next_id);
  if (primary_key != nullptr && !primary_key->empty()) {
    std::vector<std::string> names;
    for (const Identifier& c : *primary_key) {
      // A bare name matches ignoring case; a "quoted" one only exactly.
      if (c.quoted && schema.FindByName(c.name) == nullptr) {
        return ErrorAt(c.pos, "primary key column \"{}\" is not a column", c.name);
      }
      names.push_back(c.name);
    }
    Status st = SetPrimaryKey(&schema, names);
    if (!st.ok()) return ErrorAt(primary_key->front().pos, "{}", st.message());
  }
  return schema;
}

Result<TypePtr> Parser::ParseType(std::string* text) {
  // name [PRECISION] [(...) | <...>]: the bracketed part is matched by depth so
  // that ParseSqlType sees the whole of DECIMAL(10, 2) or MAP<STRING, ARRAY<INT>>.
  const Token& first = Peek();
  if (first.kind != TokenKind::kIdentifier) return Expected("a type name");
  const Token* last = &Next();
  if (Peek().IsKeyword("PRECISION")) last = &Next();
  if (Peek().IsSymbol("(") || Peek().IsSymbol("<")) {
    int depth = 0;
    do {
      const Token& t = Peek();
      if (t.kind == TokenKind::kEnd || t.IsSymbol(";")) {
        return Expected(fmt::format("the end of type '{}'", first.text));
      }
      if (t.IsSymbol("(") || t.IsSymbol("<")) ++depth;
      if (t.IsSymbol(")") || t.IsSymbol(">")) --depth;
      last = &Next();
    } while (depth > 0);
  }
  *text = std::string(text_.substr(first.offset, last->end - first.offset));
  Result<TypePtr> type = ParseSqlType(*text);
  if (!type.ok()) {
    // Quote a long type by its start only: the message must stay readable.
    std::string shown = text->size() > 80 ? text->substr(0, 60) + "..." : *text;
    return ErrorAt(first.pos, "invalid type '{}': {}", shown, type.status().message());
  }
  return type;
}

}  // namespace sluice::sql::internal
