// The recursive-descent parser behind ParseScript (parser.h). Private to src/sql.
// parser.cc holds the statements, parser_select.cc the INSERT ... SELECT part,
// column lists and types.
#pragma once

#include <initializer_list>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "sql/ast.h"
#include "sql/lexer.h"

namespace sluice::sql::internal {

class Parser {
 public:
  Parser(std::string_view text, std::vector<Token> tokens)
      : text_(text), tokens_(std::move(tokens)) {}

  Result<Script> ParseAll();

 private:
  // parser.cc
  Status ParseStatement(Statement* out);
  Result<CreateTable> ParseCreateTable();
  Result<CreateSource> ParseCreateSource();
  Status ParseTableSource(CreateSource* source);  // after CREATE SOURCE name FROM
  Result<CreatePipeline> ParseCreatePipeline();
  Result<bool> ParseIfNotExists();
  Result<Options> ParseOptions();  // after WITH: '(' key = value, ... ')'
  Result<CreateTable::PartitionTerm> ParsePartitionTerm(const Schema& schema);
  Result<std::string> ResolvePartitionColumn(const QualifiedName& name, const Schema& schema);

  // parser_select.cc
  Result<InsertSelect> ParseInsert();
  Result<SelectItem> ParseSelectItem();
  // parser_expr.cc; `depth` bounds recursion on hostile input, and every
  // node's height is bounded too (long operator chains build deep trees).
  Result<Expr> ParseExpr(int depth = 0);
  // left { op right } for the binary operators `ops` (keywords or symbols),
  // operands parsed by `next`.
  using Level = Result<Expr> (Parser::*)(int depth);
  Result<Expr> ParseChain(int depth, Level next, std::initializer_list<std::string_view> ops,
                          bool keywords);
  Result<Expr> ParseAnd(int depth);
  Result<Expr> ParseNot(int depth);
  Result<Expr> ParsePredicate(int depth);  // comparisons, IS, IN, BETWEEN, LIKE
  Result<Expr> ParseConcat(int depth);
  Result<Expr> ParseAdditive(int depth);
  Result<Expr> ParseMultiplicative(int depth);
  Result<Expr> ParseUnary(int depth);
  Result<Expr> ParsePrimary(int depth);
  Result<Expr> ParseCase(int depth);
  Result<Expr> ParseInterval();
  Result<Expr> ParseFunction(int depth);
  // A node over `args` starting at byte `start`, its text the span up to the
  // last token read.
  Expr Node(Expr::Kind kind, SourcePos pos, size_t start, std::string op, std::vector<Expr> args);
  std::string Span(size_t start) const;
  Status CheckHeight(const Expr& e) const;
  // '(' name type [NOT NULL] [COMMENT '...'], ... ')'; with `watermark`, one
  // WATERMARK FOR col AS expr entry may appear among the columns.
  // A table's list may declare its PRIMARY KEY (`primary_key` non-null): a
  // column's `PRIMARY KEY` or a `PRIMARY KEY (a, b) [NOT ENFORCED]` item.
  Result<Schema> ParseColumnList(std::optional<Watermark>* watermark = nullptr,
                                 std::vector<Identifier>* primary_key = nullptr);
  // After PRIMARY KEY: '(' a, b ')' [NOT ENFORCED].
  Status ParseKeyColumns(std::vector<Identifier>* primary_key);
  // FROM's source: a name or a window table function.
  Status ParseFrom(InsertSelect* insert);
  // A type name as columnar::ParseSqlType reads it; `text` gets it as written.
  Result<TypePtr> ParseType(std::string* text);

  // Token helpers.
  const Token& Peek(size_t ahead = 0) const {
    size_t i = std::min(pos_ + ahead, tokens_.size() - 1);
    return tokens_[i];
  }
  const Token& Next() {
    const Token& t = tokens_[pos_];
    if (pos_ + 1 < tokens_.size()) ++pos_;
    return t;
  }
  bool AcceptKeyword(std::string_view kw) {
    if (!Peek().IsKeyword(kw)) return false;
    Next();
    return true;
  }
  bool AcceptSymbol(std::string_view s) {
    if (!Peek().IsSymbol(s)) return false;
    Next();
    return true;
  }
  // "line L, column C: expected <what>, got '<token>'" at the next token.
  Status Expected(std::string_view what) const {
    return ErrorAt(Peek().pos, "expected {}, got {}", what, Peek().Describe());
  }
  Status ExpectKeyword(std::string_view kw, std::string_view where) {
    if (AcceptKeyword(kw)) return Status::OK();
    return Expected(fmt::format("{} {}", kw, where));
  }
  Status ExpectSymbol(std::string_view s, std::string_view where) {
    if (AcceptSymbol(s)) return Status::OK();
    return Expected(fmt::format("'{}' {}", s, where));
  }
  // A bare or quoted identifier; `what` names it in the error.
  Result<Identifier> ParseIdentifier(std::string_view what);
  Result<QualifiedName> ParseQualifiedName(std::string_view what);

  std::string_view text_;
  std::vector<Token> tokens_;
  size_t pos_ = 0;
  static constexpr int kMaxExprDepth = 64;
  static constexpr int kMaxExprHeight = 256;
};

// Words that end a select item or list rather than name a column.
bool IsReservedWord(const Token& t);

}  // namespace sluice::sql::internal
