// Expressions: precedence climbing from OR (lowest) down to primaries.
//   OR < AND < NOT < comparison, IS, IN, BETWEEN, LIKE < || < + - < * / % < unary - < primary
#include <algorithm>
#include <cctype>

#include "common/ascii.h"
#include "sql/parser_internal.h"

namespace sluice::sql::internal {
namespace {

constexpr std::string_view kComparisons[] = {"=", "<>", "!=", "<=", ">=", "<", ">"};

constexpr std::string_view kIntervalUnits[] = {
    "MICROSECOND", "MICROSECONDS", "MILLISECOND", "MILLISECONDS", "SECOND", "SECONDS",
    "MINUTE",      "MINUTES",      "HOUR",        "HOURS",        "DAY",    "DAYS",
    "WEEK",        "WEEKS",        "MONTH",       "MONTHS",       "YEAR",   "YEARS"};

}  // namespace

Expr Parser::Node(Expr::Kind kind, SourcePos pos, size_t start, std::string op,
                  std::vector<Expr> args) {
  Expr e;
  e.kind = kind;
  e.pos = pos;
  e.op = std::move(op);
  for (const Expr& a : args) e.height = std::max(e.height, a.height + 1);
  e.args = std::move(args);
  e.text = Span(start);
  return e;
}

std::string Parser::Span(size_t start) const {
  size_t end = pos_ == 0 ? start : tokens_[pos_ - 1].end;
  std::string s(text_.substr(start, end > start ? end - start : 0));
  if (s.size() > 80) s = s.substr(0, 60) + "...";
  return s;
}

Status Parser::CheckHeight(const Expr& e) const {
  if (e.height > kMaxExprHeight) {
    return ErrorAt(e.pos, "expression nested more than {} deep", kMaxExprHeight);
  }
  return Status::OK();
}

Result<Expr> Parser::ParseChain(int depth, Level next, std::initializer_list<std::string_view> ops,
                                bool keywords) {
  const Token& first = Peek();
  ASSIGN_OR_RETURN(Expr left, (this->*next)(depth));
  while (true) {
    const Token& t = Peek();
    auto it = std::find_if(ops.begin(), ops.end(), [&](std::string_view op) {
      return keywords ? t.IsKeyword(op) : t.IsSymbol(op);
    });
    if (it == ops.end()) return left;
    Next();
    ASSIGN_OR_RETURN(Expr right, (this->*next)(depth));
    std::vector<Expr> args;
    args.push_back(std::move(left));
    args.push_back(std::move(right));
    left = Node(Expr::Kind::kBinary, first.pos, first.offset, std::string(*it), std::move(args));
    RETURN_IF_ERROR(CheckHeight(left));
  }
}

Result<Expr> Parser::ParseExpr(int depth) {
  if (depth > kMaxExprDepth) {
    return ErrorAt(Peek().pos, "expression nested more than {} deep", kMaxExprDepth);
  }
  return ParseChain(depth, &Parser::ParseAnd, {"OR"}, true);
}

Result<Expr> Parser::ParseAnd(int depth) {
  return ParseChain(depth, &Parser::ParseNot, {"AND"}, true);
}

Result<Expr> Parser::ParseNot(int depth) {
  const Token& first = Peek();
  if (!first.IsKeyword("NOT")) return ParsePredicate(depth);
  Next();
  if (depth + 1 > kMaxExprDepth) {
    return ErrorAt(first.pos, "expression nested more than {} deep", kMaxExprDepth);
  }
  ASSIGN_OR_RETURN(Expr operand, ParseNot(depth + 1));
  std::vector<Expr> args;
  args.push_back(std::move(operand));
  return Node(Expr::Kind::kUnary, first.pos, first.offset, "NOT", std::move(args));
}

Result<Expr> Parser::ParsePredicate(int depth) {
  const Token& first = Peek();
  ASSIGN_OR_RETURN(Expr left, ParseConcat(depth));
  while (true) {
    const Token& t = Peek();
    auto binary = [&](Expr::Kind kind, std::string op, std::vector<Expr> rest) -> Status {
      std::vector<Expr> args;
      args.push_back(std::move(left));
      for (Expr& r : rest) args.push_back(std::move(r));
      left = Node(kind, first.pos, first.offset, std::move(op), std::move(args));
      return CheckHeight(left);
    };
    if (t.kind == TokenKind::kSymbol && std::find(std::begin(kComparisons), std::end(kComparisons),
                                                  t.text) != std::end(kComparisons)) {
      std::string op = t.text == "!=" ? "<>" : t.text;
      Next();
      ASSIGN_OR_RETURN(Expr right, ParseConcat(depth));
      std::vector<Expr> rest;
      rest.push_back(std::move(right));
      RETURN_IF_ERROR(binary(Expr::Kind::kBinary, op, std::move(rest)));
      continue;
    }
    if (t.IsKeyword("IS")) {
      Next();
      bool negated = AcceptKeyword("NOT");
      if (Peek().IsKeyword("DISTINCT")) return NotSupportedAt(Peek().pos, "IS [NOT] DISTINCT FROM");
      RETURN_IF_ERROR(ExpectKeyword("NULL", negated ? "after IS NOT" : "after IS"));
      RETURN_IF_ERROR(binary(Expr::Kind::kIsNull, "", {}));
      left.negated = negated;
      continue;
    }
    bool negated = false;
    if (t.IsKeyword("NOT") && (Peek(1).IsKeyword("IN") || Peek(1).IsKeyword("BETWEEN") ||
                               Peek(1).IsKeyword("LIKE") || Peek(1).IsKeyword("ILIKE"))) {
      Next();
      negated = true;
    }
    if (AcceptKeyword("IN")) {
      RETURN_IF_ERROR(ExpectSymbol("(", "after IN"));
      if (Peek().IsKeyword("SELECT")) return NotSupportedAt(Peek().pos, "a subquery");
      std::vector<Expr> items;
      do {
        ASSIGN_OR_RETURN(Expr item, ParseExpr(depth + 1));
        items.push_back(std::move(item));
      } while (AcceptSymbol(","));
      RETURN_IF_ERROR(ExpectSymbol(")", "after the IN list"));
      RETURN_IF_ERROR(binary(Expr::Kind::kIn, "", std::move(items)));
      left.negated = negated;
      continue;
    }
    if (AcceptKeyword("BETWEEN")) {
      if (Peek().IsKeyword("SYMMETRIC")) return NotSupportedAt(Peek().pos, "BETWEEN SYMMETRIC");
      std::vector<Expr> bounds;
      ASSIGN_OR_RETURN(Expr low, ParseConcat(depth));
      bounds.push_back(std::move(low));
      RETURN_IF_ERROR(ExpectKeyword("AND", "between the BETWEEN bounds"));
      ASSIGN_OR_RETURN(Expr high, ParseConcat(depth));
      bounds.push_back(std::move(high));
      RETURN_IF_ERROR(binary(Expr::Kind::kBetween, "", std::move(bounds)));
      left.negated = negated;
      continue;
    }
    if (Peek().IsKeyword("ILIKE")) return NotSupportedAt(Peek().pos, "ILIKE (use lower(x) LIKE)");
    if (AcceptKeyword("LIKE")) {
      std::vector<Expr> rest;
      ASSIGN_OR_RETURN(Expr pattern, ParseConcat(depth));
      rest.push_back(std::move(pattern));
      if (AcceptKeyword("ESCAPE")) {
        ASSIGN_OR_RETURN(Expr escape, ParseConcat(depth));
        rest.push_back(std::move(escape));
      }
      RETURN_IF_ERROR(binary(Expr::Kind::kLike, "", std::move(rest)));
      left.negated = negated;
      continue;
    }
    return left;
  }
}

Result<Expr> Parser::ParseConcat(int depth) {
  return ParseChain(depth, &Parser::ParseAdditive, {"||"}, false);
}

Result<Expr> Parser::ParseAdditive(int depth) {
  return ParseChain(depth, &Parser::ParseMultiplicative, {"+", "-"}, false);
}

Result<Expr> Parser::ParseMultiplicative(int depth) {
  return ParseChain(depth, &Parser::ParseUnary, {"*", "/", "%"}, false);
}

Result<Expr> Parser::ParseUnary(int depth) {
  const Token& t = Peek();
  if (t.IsSymbol("-") && Peek(1).kind == TokenKind::kNumber) {
    // A negative literal (so that -2147483648 is an INT).
    Next();
    Expr expr;
    expr.pos = t.pos;
    expr.literal = Literal{Literal::Kind::kNumber, "-" + Next().text};
    expr.text = Span(t.offset);
    return expr;
  }
  if (t.IsSymbol("-") || t.IsSymbol("+")) {
    Next();
    if (depth + 1 > kMaxExprDepth) {
      return ErrorAt(t.pos, "expression nested more than {} deep", kMaxExprDepth);
    }
    ASSIGN_OR_RETURN(Expr operand, ParseUnary(depth + 1));
    if (t.IsSymbol("+")) return operand;
    std::vector<Expr> args;
    args.push_back(std::move(operand));
    return Node(Expr::Kind::kUnary, t.pos, t.offset, "-", std::move(args));
  }
  return ParsePrimary(depth);
}

Result<Expr> Parser::ParsePrimary(int depth) {
  const Token& t = Peek();
  Expr expr;
  expr.pos = t.pos;
  size_t start = t.offset;
  if (t.kind == TokenKind::kNumber) {
    expr.literal = Literal{Literal::Kind::kNumber, Next().text};
    expr.text = Span(start);
    return expr;
  }
  if (t.kind == TokenKind::kString) {
    expr.literal = Literal{Literal::Kind::kString, Next().text};
    expr.text = Span(start);
    return expr;
  }
  if (AcceptKeyword("NULL")) {
    expr.text = "NULL";
    return expr;
  }
  if (t.IsKeyword("TRUE") || t.IsKeyword("FALSE")) {
    expr.literal = Literal{Literal::Kind::kBoolean, t.IsKeyword("TRUE") ? "true" : "false"};
    Next();
    expr.text = Span(start);
    return expr;
  }
  if (AcceptSymbol("(")) {
    if (Peek().IsKeyword("SELECT")) return NotSupportedAt(Peek().pos, "a subquery");
    ASSIGN_OR_RETURN(Expr inner, ParseExpr(depth + 1));
    RETURN_IF_ERROR(ExpectSymbol(")", "to close the parenthesis"));
    return inner;
  }
  if ((t.IsKeyword("CAST") || t.IsKeyword("TRY_CAST")) && Peek(1).IsSymbol("(")) {
    expr.try_cast = t.IsKeyword("TRY_CAST");
    Next();
    Next();
    expr.kind = Expr::Kind::kCast;
    ASSIGN_OR_RETURN(Expr operand, ParseExpr(depth + 1));
    expr.height = operand.height + 1;
    expr.operand = std::make_unique<Expr>(std::move(operand));
    RETURN_IF_ERROR(ExpectKeyword("AS", "after the CAST operand"));
    ASSIGN_OR_RETURN(expr.cast_type, ParseType(&expr.cast_type_text));
    RETURN_IF_ERROR(ExpectSymbol(")", "after the CAST type"));
    expr.text = Span(start);
    return expr;
  }
  if (t.IsKeyword("CASE")) return ParseCase(depth);
  if (t.IsKeyword("INTERVAL") && Peek(1).kind == TokenKind::kString) return ParseInterval();
  if ((t.kind == TokenKind::kIdentifier && !IsReservedWord(t)) ||
      t.kind == TokenKind::kQuotedIdentifier) {
    if (t.kind == TokenKind::kIdentifier && Peek(1).IsSymbol("(")) return ParseFunction(depth);
    expr.kind = Expr::Kind::kColumn;
    ASSIGN_OR_RETURN(expr.column, ParseQualifiedName("a column name"));
    expr.text = Span(start);
    return expr;
  }
  return Expected("an expression");
}

Result<Expr> Parser::ParseCase(int depth) {
  const Token& first = Next();  // CASE
  std::vector<Expr> args;
  bool has_operand = !Peek().IsKeyword("WHEN");
  if (has_operand) {
    ASSIGN_OR_RETURN(Expr operand, ParseExpr(depth + 1));
    args.push_back(std::move(operand));
  }
  if (!Peek().IsKeyword("WHEN")) return Expected("WHEN in CASE");
  while (AcceptKeyword("WHEN")) {
    ASSIGN_OR_RETURN(Expr when, ParseExpr(depth + 1));
    RETURN_IF_ERROR(ExpectKeyword("THEN", "after the WHEN condition"));
    ASSIGN_OR_RETURN(Expr then, ParseExpr(depth + 1));
    args.push_back(std::move(when));
    args.push_back(std::move(then));
  }
  bool has_else = AcceptKeyword("ELSE");
  if (has_else) {
    ASSIGN_OR_RETURN(Expr otherwise, ParseExpr(depth + 1));
    args.push_back(std::move(otherwise));
  }
  RETURN_IF_ERROR(ExpectKeyword("END", "to close CASE"));
  Expr e = Node(Expr::Kind::kCase, first.pos, first.offset, "", std::move(args));
  e.case_operand = has_operand;
  e.case_else = has_else;
  RETURN_IF_ERROR(CheckHeight(e));
  return e;
}

Result<Expr> Parser::ParseInterval() {
  const Token& first = Next();  // INTERVAL
  Expr e;
  e.kind = Expr::Kind::kInterval;
  e.pos = first.pos;
  e.literal = Literal{Literal::Kind::kString, Next().text};
  const Token& unit = Peek();
  if (unit.kind == TokenKind::kIdentifier) {
    std::string u = AsciiUpper(unit.text);
    if (std::find(std::begin(kIntervalUnits), std::end(kIntervalUnits), u) !=
        std::end(kIntervalUnits)) {
      Next();
      if (u.back() == 'S') u.pop_back();
      e.op = u;
      if (Peek().IsKeyword("TO")) return NotSupportedAt(Peek().pos, "INTERVAL ... TO ...");
      if (AcceptSymbol("(")) {  // Flink: INTERVAL '10' SECOND(3)
        if (Peek().kind != TokenKind::kNumber) return Expected("a precision");
        Next();
        RETURN_IF_ERROR(ExpectSymbol(")", "after the interval precision"));
      }
    }
  }
  e.text = Span(first.offset);
  return e;
}

Result<Expr> Parser::ParseFunction(int depth) {
  const Token& name = Next();
  Next();  // (
  std::string fn = AsciiLower(name.text);
  std::vector<Expr> args;
  bool distinct = false;
  if (fn == "extract") {
    // extract(unit FROM x): the unit as a string literal argument.
    const Token& unit = Peek();
    if (unit.kind != TokenKind::kIdentifier && unit.kind != TokenKind::kString) {
      return Expected("a field name (YEAR, MONTH, DAY, HOUR, ...) in extract");
    }
    Expr u;
    u.pos = unit.pos;
    u.literal = Literal{Literal::Kind::kString, AsciiLower(Next().text)};
    u.text = unit.text;
    args.push_back(std::move(u));
    RETURN_IF_ERROR(ExpectKeyword("FROM", "after the extract field"));
    ASSIGN_OR_RETURN(Expr x, ParseExpr(depth + 1));
    args.push_back(std::move(x));
  } else if (AcceptSymbol("*")) {
    Expr star;
    star.kind = Expr::Kind::kStar;
    star.pos = name.pos;
    star.text = "*";
    args.push_back(std::move(star));
  } else if (!Peek().IsSymbol(")")) {
    distinct = AcceptKeyword("DISTINCT");
    ASSIGN_OR_RETURN(Expr a, ParseExpr(depth + 1));
    args.push_back(std::move(a));
    if (fn == "substring" && AcceptKeyword("FROM")) {  // substring(s FROM a [FOR b])
      ASSIGN_OR_RETURN(Expr from, ParseExpr(depth + 1));
      args.push_back(std::move(from));
      if (AcceptKeyword("FOR")) {
        ASSIGN_OR_RETURN(Expr len, ParseExpr(depth + 1));
        args.push_back(std::move(len));
      }
    } else {
      while (AcceptSymbol(",")) {
        ASSIGN_OR_RETURN(Expr more, ParseExpr(depth + 1));
        args.push_back(std::move(more));
      }
    }
  }
  RETURN_IF_ERROR(ExpectSymbol(")", fmt::format("to close {}(", name.text)));
  if (Peek().IsKeyword("OVER")) return NotSupportedAt(Peek().pos, "OVER (window functions)");
  if (Peek().IsKeyword("FILTER")) return NotSupportedAt(Peek().pos, "FILTER (WHERE ...)");
  Expr e = Node(Expr::Kind::kFunction, name.pos, name.offset, fn, std::move(args));
  e.distinct = distinct;
  RETURN_IF_ERROR(CheckHeight(e));
  return e;
}

}  // namespace sluice::sql::internal
