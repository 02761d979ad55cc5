// The SQL lexer: script text → tokens, each with its 1-based line and column.
//
//   identifiers   [A-Za-z_][A-Za-z0-9_]* (bytes >= 0x80 allowed, for UTF-8);
//                 keywords are bare identifiers compared case-insensitively
//   quoted ids    "Name" or `Name` ("" / `` escape the quote); keep their case
//   strings       'it''s' ('' escapes a quote; may span lines)
//   numbers       12, 1.5, .5, 1e-3 (no sign: '-' is a symbol)
//   symbols       ( ) , ; . = < > : * + - / % and <= >= <> != ||
//   comments      -- to the end of the line, /* ... */ (not nested)
// Errors (kInvalidArgument) read "line L, column C: ..." and name the offending
// character: an unterminated string, quoted identifier or comment (at its
// start), an unexpected character. The token list always ends with kEnd.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "sql/ast.h"

namespace sluice::sql {

enum class TokenKind { kIdentifier, kQuotedIdentifier, kString, kNumber, kSymbol, kEnd };

struct Token {
  TokenKind kind = TokenKind::kEnd;
  // kIdentifier: as written; kQuotedIdentifier / kString: the unescaped value;
  // kNumber, kSymbol: as written.
  std::string text;
  SourcePos pos;
  size_t offset = 0;  // byte range [offset, end) in the script
  size_t end = 0;

  // A bare identifier equal to `upper_keyword` ignoring case ("SELECT").
  bool IsKeyword(std::string_view upper_keyword) const;
  bool IsSymbol(std::string_view symbol) const {
    return kind == TokenKind::kSymbol && text == symbol;
  }
  // For messages: 'FROM', "Name", string 'abc', or end of input.
  std::string Describe() const;
};

Result<std::vector<Token>> Tokenize(std::string_view text);

// "line L, column C: " + message.
template <typename... Args>
Status ErrorAt(SourcePos pos, fmt::format_string<Args...> f, Args&&... args) {
  return Status::Invalid("line {}, column {}: {}", pos.line, pos.column,
                         fmt::format(f, std::forward<Args>(args)...));
}
// The same with kNotImplemented, for valid SQL that sluice does not run yet.
template <typename... Args>
Status NotSupportedAt(SourcePos pos, fmt::format_string<Args...> f, Args&&... args) {
  return Status::NotImplemented("line {}, column {}: {} is not supported yet", pos.line, pos.column,
                                fmt::format(f, std::forward<Args>(args)...));
}

}  // namespace sluice::sql
