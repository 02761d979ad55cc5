#include "server/ingest_body.h"

#include <gtest/gtest.h>

namespace sluice::server {
namespace {

using Records = std::vector<std::string_view>;

TEST(IngestBody, NdjsonSkipsBlankLinesAndTrimsCarriageReturns) {
  ParsedBody p = ParseNdjsonBody("{\"a\":1}\r\n\n  \n [1, 2] \n\"s\"\n42");
  ASSERT_TRUE(p.ok) << p.error.message;
  EXPECT_EQ(p.records, (Records{"{\"a\":1}", "[1, 2]", "\"s\"", "42"}));
  EXPECT_EQ(p.record_bytes, 7 + 6 + 3 + 2);
}

TEST(IngestBody, NdjsonNamesTheBadLine) {
  ParsedBody p = ParseNdjsonBody("{\"a\":1}\n\n{\"a\":}\n{\"b\":2}\n");
  ASSERT_FALSE(p.ok);
  EXPECT_TRUE(p.records.empty());
  EXPECT_EQ(p.error.line, 3);
  EXPECT_EQ(p.error.index, -1);
  EXPECT_NE(p.error.message.find("line 3: invalid JSON"), std::string::npos) << p.error.message;
  // Two values on one line are not one record.
  ParsedBody two = ParseNdjsonBody("{\"a\":1} {\"b\":2}\n");
  ASSERT_FALSE(two.ok);
  EXPECT_EQ(two.error.line, 1);
  // Values spread over lines so that the counts match are still refused, at
  // the first line that is not one value.
  for (const char* body : {"{\"a\":1} [\n2]\n", "[\n1] 2\n", "{\"a\":\n1}\n{\"b\":2}\n"}) {
    ParsedBody spread = ParseNdjsonBody(body);
    ASSERT_FALSE(spread.ok) << body;
    EXPECT_EQ(spread.error.line, 1) << body;
  }
  // A large valid body (the one-pass path) keeps every record, in order.
  std::string big;
  for (int i = 0; i < 5000; ++i) big += "{\"id\":" + std::to_string(i) + "}\r\n  \n";
  ParsedBody many = ParseNdjsonBody(big);
  ASSERT_TRUE(many.ok) << many.error.message;
  ASSERT_EQ(many.records.size(), 5000u);
  EXPECT_EQ(many.records[4999], "{\"id\":4999}");
  // Invalid UTF-8 inside a string.
  ParsedBody utf8 = ParseNdjsonBody("1\n\"\xff\"\n");
  ASSERT_FALSE(utf8.ok);
  EXPECT_EQ(utf8.error.line, 2);
}

TEST(IngestBody, NdjsonOfOnlyBlankLinesIsEmpty) {
  ParsedBody p = ParseNdjsonBody("\n \r\n\n");
  ASSERT_TRUE(p.ok);
  EXPECT_TRUE(p.records.empty());
}

TEST(IngestBody, ArrayElementsAreMinifiedKeepingTokens) {
  ParsedBody p = ParseJsonArrayBody(
      " [ {\"a\" : 1.50, \"s\": \"x, ] y \\\" }\"},\n  [ 1 , {\"b\":[]} ],\n\"q\" , 1e3, null ] "
      "\n");
  ASSERT_TRUE(p.ok) << p.error.message;
  EXPECT_EQ(p.records, (Records{"{\"a\":1.50,\"s\":\"x, ] y \\\" }\"}", "[1,{\"b\":[]}]", "\"q\"",
                                "1e3", "null"}));
  ParsedBody empty = ParseJsonArrayBody("[ ]");
  ASSERT_TRUE(empty.ok);
  EXPECT_TRUE(empty.records.empty());
}

TEST(IngestBody, ArrayNamesTheBadIndex) {
  struct Case {
    const char* body;
    int64_t index;
    const char* message;
  };
  for (const Case& c : {
           Case{"[1, {\"a\":tru}, 3]", 1, "index 1: invalid JSON"},
           Case{"[1, 2,, 3]", 2, "index 2: missing value"},
           Case{"[1, 2,]", 2, "index 2: missing value"},
           Case{"[1, {\"a\":[1}]]", 1, "index 1: invalid JSON"},
           Case{"[1, 2", 1, "not closed"},
           Case{"[\"abc", 0, "not closed"},
           Case{"[1 2]", 0, "index 0: invalid JSON"},
       }) {
    ParsedBody p = ParseJsonArrayBody(c.body);
    ASSERT_FALSE(p.ok) << c.body;
    EXPECT_TRUE(p.records.empty());
    EXPECT_EQ(p.error.index, c.index) << c.body << ": " << p.error.message;
    EXPECT_EQ(p.error.line, -1);
    EXPECT_NE(p.error.message.find(c.message), std::string::npos) << p.error.message;
  }
  ParsedBody trailing = ParseJsonArrayBody("[1] x");
  ASSERT_FALSE(trailing.ok);
  EXPECT_NE(trailing.error.message.find("after the array"), std::string::npos);
}

TEST(IngestBody, ArrayDetectionNeedsJsonContentTypeAndBracket) {
  EXPECT_TRUE(IsJsonArrayBody("application/json", " \n[1]"));
  EXPECT_TRUE(IsJsonArrayBody("Application/JSON; charset=utf-8", "[1]"));
  EXPECT_FALSE(IsJsonArrayBody("application/json", "{\"a\":1}"));
  EXPECT_FALSE(IsJsonArrayBody("application/x-ndjson", "[1]"));
  EXPECT_FALSE(IsJsonArrayBody("", "[1]"));
  EXPECT_FALSE(IsJsonArrayBody("application/jsonl", "[1]"));
}

}  // namespace
}  // namespace sluice::server
