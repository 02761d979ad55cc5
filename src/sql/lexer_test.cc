#include "sql/lexer.h"

#include <gtest/gtest.h>

#include "common/testing.h"

namespace sluice::sql {
namespace {

TEST(LexerTest, KindsTextAndPositions) {
  ASSERT_OK_AND_ASSIGN(auto tokens, Tokenize("select \"My Col\", 'it''s'\n  1.5e3,x<=y -- c\n;"));
  struct Want {
    TokenKind kind;
    std::string text;
    int line, column;
  };
  std::vector<Want> want = {
      {TokenKind::kIdentifier, "select", 1, 1},
      {TokenKind::kQuotedIdentifier, "My Col", 1, 8},
      {TokenKind::kSymbol, ",", 1, 16},
      {TokenKind::kString, "it's", 1, 18},
      {TokenKind::kNumber, "1.5e3", 2, 3},
      {TokenKind::kSymbol, ",", 2, 8},
      {TokenKind::kIdentifier, "x", 2, 9},
      {TokenKind::kSymbol, "<=", 2, 10},
      {TokenKind::kIdentifier, "y", 2, 12},
      {TokenKind::kSymbol, ";", 3, 1},
      {TokenKind::kEnd, "", 3, 2},
  };
  ASSERT_EQ(tokens.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(tokens[i].kind, want[i].kind);
    EXPECT_EQ(tokens[i].text, want[i].text);
    EXPECT_EQ(tokens[i].pos.line, want[i].line);
    EXPECT_EQ(tokens[i].pos.column, want[i].column);
  }
}

TEST(LexerTest, KeywordsAreCaseInsensitiveQuotedAreNot) {
  ASSERT_OK_AND_ASSIGN(auto tokens, Tokenize("SeLeCt \"SELECT\" `a``b`"));
  EXPECT_TRUE(tokens[0].IsKeyword("SELECT"));
  EXPECT_FALSE(tokens[1].IsKeyword("SELECT"));
  EXPECT_EQ(tokens[1].text, "SELECT");
  EXPECT_EQ(tokens[2].kind, TokenKind::kQuotedIdentifier);
  EXPECT_EQ(tokens[2].text, "a`b");
}

TEST(LexerTest, BlockCommentsSpanLines) {
  ASSERT_OK_AND_ASSIGN(auto tokens, Tokenize("a /* one\n two */ b\n'x\ny' c"));
  ASSERT_EQ(tokens.size(), 5u);
  EXPECT_EQ(tokens[1].text, "b");
  EXPECT_EQ(tokens[1].pos, (SourcePos{2, 9}));
  EXPECT_EQ(tokens[2].text, "x\ny");
  EXPECT_EQ(tokens[3].pos, (SourcePos{4, 4}));
}

TEST(LexerTest, NumbersAndSymbols) {
  ASSERT_OK_AND_ASSIGN(auto tokens, Tokenize(".5 7e 16,-3 a.b"));
  std::vector<std::string> texts;
  for (const auto& t : tokens) texts.push_back(t.text);
  // "7e" is the number 7 followed by the identifier e: an exponent needs digits.
  EXPECT_EQ(texts,
            (std::vector<std::string>{".5", "7", "e", "16", ",", "-", "3", "a", ".", "b", ""}));
}

TEST(LexerTest, Errors) {
  ASSERT_ERROR(Tokenize("a\n  'abc"), StatusCode::kInvalidArgument,
               "line 2, column 3: unterminated string literal");
  ASSERT_ERROR(Tokenize("x /* never\nclosed"), StatusCode::kInvalidArgument,
               "line 1, column 3: unterminated /* comment");
  ASSERT_ERROR(Tokenize("\"abc"), StatusCode::kInvalidArgument,
               "line 1, column 1: unterminated quoted identifier");
  ASSERT_ERROR(Tokenize("a\n\nb # c"), StatusCode::kInvalidArgument,
               "line 3, column 3: unexpected character '#'");
  ASSERT_ERROR(Tokenize("\"\""), StatusCode::kInvalidArgument,
               "line 1, column 1: empty quoted identifier");
}

TEST(LexerTest, Describe) {
  ASSERT_OK_AND_ASSIGN(auto tokens, Tokenize("FROM 'x' \"Y\""));
  EXPECT_EQ(tokens[0].Describe(), "'FROM'");
  EXPECT_EQ(tokens[1].Describe(), "string 'x'");
  EXPECT_EQ(tokens[2].Describe(), "\"Y\"");
  EXPECT_EQ(tokens[3].Describe(), "end of input");
}

}  // namespace
}  // namespace sluice::sql
