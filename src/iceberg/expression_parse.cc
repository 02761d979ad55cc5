// ParseFilter: the SQL-like filter text to an unbound Expr.
#include <cctype>
#include <cstring>

#include "iceberg/expression_internal.h"

namespace sluice::iceberg {

using Kind = Expr::Kind;
using Op = Expr::Op;
using internal::MakeConst;
using internal::MakeExpr;

namespace {

struct Token {
  enum Type { kEnd, kIdent, kString, kNumber, kOp, kLParen, kRParen, kComma } type = kEnd;
  std::string text;
  size_t pos = 0;
};

class Parser {
 public:
  explicit Parser(std::string_view s) : s_(s) {}

  Result<ExprPtr> Parse() {
    RETURN_IF_ERROR(Advance());
    ASSIGN_OR_RETURN(ExprPtr e, ParseOr());
    if (tok_.type != Token::kEnd) return Error("unexpected text");
    return e;
  }

 private:
  Status Error(std::string_view what) const {
    return Status::Invalid("filter at character {}{}: {}", tok_.pos + 1,
                           tok_.type == Token::kEnd ? " (end)" : " ('" + tok_.text + "')", what);
  }

  bool IsKeyword(const char* kw) const {
    if (tok_.type != Token::kIdent || quoted_) return false;
    if (tok_.text.size() != std::strlen(kw)) return false;
    for (size_t i = 0; i < tok_.text.size(); ++i) {
      if (std::toupper(static_cast<unsigned char>(tok_.text[i])) != kw[i]) return false;
    }
    return true;
  }

  Status Advance() {
    while (p_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[p_]))) ++p_;
    tok_ = Token{};
    tok_.pos = p_;
    quoted_ = false;
    if (p_ >= s_.size()) return Status::OK();
    char c = s_[p_];
    if (c == '(') {
      tok_.type = Token::kLParen;
      tok_.text = "(";
      ++p_;
    } else if (c == ')') {
      tok_.type = Token::kRParen;
      tok_.text = ")";
      ++p_;
    } else if (c == ',') {
      tok_.type = Token::kComma;
      tok_.text = ",";
      ++p_;
    } else if (c == '\'') {
      tok_.type = Token::kString;
      ++p_;
      while (true) {
        if (p_ >= s_.size())
          return Status::Invalid("filter: unterminated string at character {}", tok_.pos + 1);
        if (s_[p_] == '\'') {
          if (p_ + 1 < s_.size() && s_[p_ + 1] == '\'') {  // '' escapes a quote
            tok_.text.push_back('\'');
            p_ += 2;
            continue;
          }
          ++p_;
          break;
        }
        tok_.text.push_back(s_[p_++]);
      }
    } else if (c == '"' || c == '`') {
      size_t end = s_.find(c, p_ + 1);
      if (end == std::string_view::npos) {
        return Status::Invalid("filter: unterminated identifier at character {}", tok_.pos + 1);
      }
      tok_.type = Token::kIdent;
      tok_.text = std::string(s_.substr(p_ + 1, end - p_ - 1));
      quoted_ = true;
      p_ = end + 1;
    } else if (std::isdigit(static_cast<unsigned char>(c)) || c == '-' || c == '+' || c == '.') {
      tok_.type = Token::kNumber;
      size_t start = p_++;
      while (p_ < s_.size() &&
             (std::isalnum(static_cast<unsigned char>(s_[p_])) || s_[p_] == '.' ||
              ((s_[p_] == '-' || s_[p_] == '+') && (s_[p_ - 1] == 'e' || s_[p_ - 1] == 'E')))) {
        ++p_;
      }
      tok_.text = std::string(s_.substr(start, p_ - start));
    } else if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      tok_.type = Token::kIdent;
      size_t start = p_;
      while (p_ < s_.size() &&
             (std::isalnum(static_cast<unsigned char>(s_[p_])) || s_[p_] == '_' || s_[p_] == '.')) {
        ++p_;
      }
      tok_.text = std::string(s_.substr(start, p_ - start));
    } else if (c == '=' || c == '<' || c == '>' || c == '!') {
      tok_.type = Token::kOp;
      size_t start = p_++;
      if (p_ < s_.size() && (s_[p_] == '=' || (c == '<' && s_[p_] == '>'))) ++p_;
      tok_.text = std::string(s_.substr(start, p_ - start));
      if (tok_.text == "!") return Error("expected '!='");
    } else {
      return Status::Invalid("filter at character {}: unexpected '{}'", p_ + 1, c);
    }
    return Status::OK();
  }

  Result<ExprPtr> ParseOr() {
    ASSIGN_OR_RETURN(ExprPtr left, ParseAnd());
    while (IsKeyword("OR")) {
      RETURN_IF_ERROR(Advance());
      ASSIGN_OR_RETURN(ExprPtr right, ParseAnd());
      Expr e;
      e.kind = Kind::kOr;
      e.children = {left, right};
      left = MakeExpr(std::move(e));
    }
    return left;
  }

  Result<ExprPtr> ParseAnd() {
    ASSIGN_OR_RETURN(ExprPtr left, ParseNot());
    while (IsKeyword("AND")) {
      RETURN_IF_ERROR(Advance());
      ASSIGN_OR_RETURN(ExprPtr right, ParseNot());
      Expr e;
      e.kind = Kind::kAnd;
      e.children = {left, right};
      left = MakeExpr(std::move(e));
    }
    return left;
  }

  Result<ExprPtr> ParseNot() {
    if (IsKeyword("NOT")) {
      RETURN_IF_ERROR(Advance());
      ASSIGN_OR_RETURN(ExprPtr inner, ParseNot());
      Expr e;
      e.kind = Kind::kNot;
      e.children = {inner};
      return MakeExpr(std::move(e));
    }
    return ParsePrimary();
  }

  Result<std::pair<std::string, bool>> Literal() {
    if (tok_.type == Token::kString) {
      std::string t = tok_.text;
      RETURN_IF_ERROR(Advance());
      return std::make_pair(t, true);
    }
    if (tok_.type == Token::kNumber || IsKeyword("TRUE") || IsKeyword("FALSE")) {
      std::string t = tok_.text;
      RETURN_IF_ERROR(Advance());
      return std::make_pair(t, false);
    }
    return Error("expected a literal ('text', a number, TRUE or FALSE)");
  }

  static Op Flip(Op op) {
    switch (op) {
      case Op::kLt: return Op::kGt;
      case Op::kLe: return Op::kGe;
      case Op::kGt: return Op::kLt;
      case Op::kGe: return Op::kLe;
      default: return op;
    }
  }

  Result<Op> ParseOp() {
    const std::string& t = tok_.text;
    Op op;
    if (t == "=" || t == "==") {
      op = Op::kEq;
    } else if (t == "!=" || t == "<>") {
      op = Op::kNe;
    } else if (t == "<") {
      op = Op::kLt;
    } else if (t == "<=") {
      op = Op::kLe;
    } else if (t == ">") {
      op = Op::kGt;
    } else if (t == ">=") {
      op = Op::kGe;
    } else {
      return Error("expected a comparison operator");
    }
    RETURN_IF_ERROR(Advance());
    return op;
  }

  Result<ExprPtr> ParsePrimary() {
    if (tok_.type == Token::kLParen) {
      RETURN_IF_ERROR(Advance());
      ASSIGN_OR_RETURN(ExprPtr e, ParseOr());
      if (tok_.type != Token::kRParen) return Error("expected ')'");
      RETURN_IF_ERROR(Advance());
      return e;
    }
    if (IsKeyword("TRUE") || IsKeyword("FALSE")) {
      bool v = IsKeyword("TRUE");
      RETURN_IF_ERROR(Advance());
      return MakeConst(v);
    }
    Expr e;
    if (tok_.type == Token::kString || tok_.type == Token::kNumber) {
      // literal op column
      ASSIGN_OR_RETURN(auto lit, Literal());
      if (tok_.type != Token::kOp) return Error("expected a comparison operator");
      ASSIGN_OR_RETURN(Op op, ParseOp());
      if (tok_.type != Token::kIdent) return Error("expected a column name");
      e.column = tok_.text;
      RETURN_IF_ERROR(Advance());
      e.kind = Kind::kCompare;
      e.op = Flip(op);
      e.literal_texts = {lit.first};
      e.literal_is_string = {lit.second};
      return MakeExpr(std::move(e));
    }
    if (tok_.type != Token::kIdent) return Error("expected a column name, a literal or '('");
    e.column = tok_.text;
    RETURN_IF_ERROR(Advance());
    if (IsKeyword("IS")) {
      RETURN_IF_ERROR(Advance());
      bool negated = false;
      if (IsKeyword("NOT")) {
        negated = true;
        RETURN_IF_ERROR(Advance());
      }
      if (!IsKeyword("NULL")) return Error("expected NULL after IS");
      RETURN_IF_ERROR(Advance());
      e.kind = negated ? Kind::kNotNull : Kind::kIsNull;
      return MakeExpr(std::move(e));
    }
    bool not_in = false;
    if (IsKeyword("NOT")) {
      RETURN_IF_ERROR(Advance());
      if (!IsKeyword("IN")) return Error("expected IN after NOT");
      not_in = true;
    }
    if (IsKeyword("IN")) {
      RETURN_IF_ERROR(Advance());
      if (tok_.type != Token::kLParen) return Error("expected '(' after IN");
      RETURN_IF_ERROR(Advance());
      while (true) {
        ASSIGN_OR_RETURN(auto lit, Literal());
        e.literal_texts.push_back(lit.first);
        e.literal_is_string.push_back(lit.second);
        if (tok_.type == Token::kComma) {
          RETURN_IF_ERROR(Advance());
          continue;
        }
        if (tok_.type != Token::kRParen) return Error("expected ',' or ')' in the IN list");
        RETURN_IF_ERROR(Advance());
        break;
      }
      e.kind = not_in ? Kind::kNotIn : Kind::kIn;
      return MakeExpr(std::move(e));
    }
    if (tok_.type != Token::kOp) return Error("expected an operator, IN or IS after the column");
    ASSIGN_OR_RETURN(e.op, ParseOp());
    ASSIGN_OR_RETURN(auto lit, Literal());
    e.kind = Kind::kCompare;
    e.literal_texts = {lit.first};
    e.literal_is_string = {lit.second};
    return MakeExpr(std::move(e));
  }

  std::string_view s_;
  size_t p_ = 0;
  Token tok_;
  bool quoted_ = false;
};

}  // namespace

Result<ExprPtr> ParseFilter(std::string_view text) {
  Parser p(text);
  return p.Parse();
}

}  // namespace sluice::iceberg
