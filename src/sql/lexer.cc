#include "sql/lexer.h"

#include <cctype>

namespace sluice::sql {
namespace {

bool IsIdentStart(char c) {
  unsigned char u = static_cast<unsigned char>(c);
  return std::isalpha(u) || c == '_' || u >= 0x80;
}
bool IsIdentChar(char c) { return IsIdentStart(c) || std::isdigit(static_cast<unsigned char>(c)); }
bool IsDigit(char c) { return std::isdigit(static_cast<unsigned char>(c)); }

class Lexer {
 public:
  explicit Lexer(std::string_view s) : s_(s) {}

  Result<std::vector<Token>> Run() {
    std::vector<Token> out;
    while (true) {
      RETURN_IF_ERROR(SkipSpaceAndComments());
      Token t;
      t.pos = Here();
      t.offset = pos_;
      if (pos_ == s_.size()) {
        t.end = pos_;
        out.push_back(std::move(t));
        return out;
      }
      char c = s_[pos_];
      if (IsIdentStart(c)) {
        t.kind = TokenKind::kIdentifier;
        while (pos_ < s_.size() && IsIdentChar(s_[pos_])) Advance();
        t.text = std::string(s_.substr(t.offset, pos_ - t.offset));
      } else if (c == '"' || c == '`') {
        t.kind = TokenKind::kQuotedIdentifier;
        ASSIGN_OR_RETURN(t.text, Quoted(c, "quoted identifier"));
        if (t.text.empty()) return ErrorAt(t.pos, "empty quoted identifier");
      } else if (c == '\'') {
        t.kind = TokenKind::kString;
        ASSIGN_OR_RETURN(t.text, Quoted(c, "string literal"));
      } else if (IsDigit(c) || (c == '.' && pos_ + 1 < s_.size() && IsDigit(s_[pos_ + 1]))) {
        t.kind = TokenKind::kNumber;
        Number();
        t.text = std::string(s_.substr(t.offset, pos_ - t.offset));
      } else {
        t.kind = TokenKind::kSymbol;
        std::string_view two = s_.substr(pos_, 2);
        if (two == "<=" || two == ">=" || two == "<>" || two == "!=" || two == "||") {
          Advance();
          Advance();
        } else if (std::string_view("(),;.=<>:*+-/%").find(c) != std::string_view::npos) {
          Advance();
        } else {
          std::string shown = std::isprint(static_cast<unsigned char>(c))
                                  ? std::string(1, c)
                                  : fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
          return ErrorAt(t.pos, "unexpected character '{}'", shown);
        }
        t.text = std::string(s_.substr(t.offset, pos_ - t.offset));
      }
      t.end = pos_;
      out.push_back(std::move(t));
    }
  }

 private:
  SourcePos Here() const { return SourcePos{line_, column_}; }

  void Advance() {
    if (s_[pos_] == '\n') {
      ++line_;
      column_ = 1;
    } else {
      ++column_;
    }
    ++pos_;
  }

  Status SkipSpaceAndComments() {
    while (pos_ < s_.size()) {
      char c = s_[pos_];
      if (std::isspace(static_cast<unsigned char>(c))) {
        Advance();
      } else if (s_.substr(pos_, 2) == "--") {
        while (pos_ < s_.size() && s_[pos_] != '\n') Advance();
      } else if (s_.substr(pos_, 2) == "/*") {
        SourcePos start = Here();
        size_t close = s_.find("*/", pos_ + 2);
        if (close == std::string_view::npos) {
          return ErrorAt(start, "unterminated /* comment");
        }
        while (pos_ < close + 2) Advance();
      } else {
        break;
      }
    }
    return Status::OK();
  }

  // A quoted run starting at s_[pos_] == q; a doubled quote stands for one.
  Result<std::string> Quoted(char q, std::string_view what) {
    SourcePos start = Here();
    Advance();
    std::string value;
    while (true) {
      if (pos_ == s_.size()) return ErrorAt(start, "unterminated {}", what);
      char c = s_[pos_];
      Advance();
      if (c != q) {
        value += c;
      } else if (pos_ < s_.size() && s_[pos_] == q) {
        value += q;
        Advance();
      } else {
        return value;
      }
    }
  }

  void Number() {
    while (pos_ < s_.size() && IsDigit(s_[pos_])) Advance();
    if (pos_ < s_.size() && s_[pos_] == '.') {
      Advance();
      while (pos_ < s_.size() && IsDigit(s_[pos_])) Advance();
    }
    if (pos_ < s_.size() && (s_[pos_] == 'e' || s_[pos_] == 'E')) {
      size_t digits = pos_ + 1;
      if (digits < s_.size() && (s_[digits] == '+' || s_[digits] == '-')) ++digits;
      if (digits < s_.size() && IsDigit(s_[digits])) {
        while (pos_ < digits) Advance();
        while (pos_ < s_.size() && IsDigit(s_[pos_])) Advance();
      }
    }
  }

  std::string_view s_;
  size_t pos_ = 0;
  int line_ = 1;
  int column_ = 1;
};

}  // namespace

bool Token::IsKeyword(std::string_view upper_keyword) const {
  if (kind != TokenKind::kIdentifier || text.size() != upper_keyword.size()) return false;
  for (size_t i = 0; i < text.size(); ++i) {
    if (std::toupper(static_cast<unsigned char>(text[i])) != upper_keyword[i]) return false;
  }
  return true;
}

std::string Token::Describe() const {
  switch (kind) {
    case TokenKind::kEnd: return "end of input";
    case TokenKind::kQuotedIdentifier: return fmt::format("\"{}\"", text);
    case TokenKind::kString: return fmt::format("string '{}'", text);
    default: return fmt::format("'{}'", text);
  }
}

Result<std::vector<Token>> Tokenize(std::string_view text) { return Lexer(text).Run(); }

}  // namespace sluice::sql
