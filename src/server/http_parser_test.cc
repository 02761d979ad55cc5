#include "server/http_parser.h"

#include <gtest/gtest.h>

#include <string>

namespace sluice::server {
namespace {

struct Parsed {
  RequestParser::State state;
  int status = 0;  // of the error
  std::string message;
  HttpRequest request;
  size_t consumed = 0;
};

// Feeds `bytes` in pieces of `step` bytes, going on to the body after the header
// section, until the parser stops.
Parsed Parse(std::string_view bytes, size_t step = SIZE_MAX, ParserLimits limits = {}) {
  RequestParser p(limits);
  size_t pos = 0;
  while (pos < bytes.size() || p.state() == RequestParser::State::kHeadDone) {
    if (p.state() == RequestParser::State::kHeadDone) {
      p.BeginBody();
      continue;
    }
    if (p.state() != RequestParser::State::kHead && p.state() != RequestParser::State::kBody) break;
    size_t n = p.Feed(bytes.substr(pos, std::min(step, bytes.size() - pos)));
    pos += n;
    if (n == 0 && p.state() != RequestParser::State::kHeadDone) break;
  }
  return Parsed{p.state(), p.error().status, p.error().message, p.request(), pos};
}

constexpr std::string_view kHead = "POST /v1/streams/s/records?x=1 HTTP/1.1\r\nHost: h\r\n";

TEST(HttpParserTest, ContentLengthBodyWholeOrByteByByte) {
  std::string req = std::string(kHead) + "Content-Length: 5\r\nX-A:  spaced value \t\r\n\r\nhello";
  for (size_t step : {SIZE_MAX, size_t{1}, size_t{3}}) {
    Parsed r = Parse(req, step);
    ASSERT_EQ(r.state, RequestParser::State::kComplete) << step << " " << r.message;
    EXPECT_EQ(r.request.method, "POST");
    EXPECT_EQ(r.request.path, "/v1/streams/s/records");
    EXPECT_EQ(r.request.query, "x=1");
    EXPECT_EQ(r.request.body, "hello");
    EXPECT_EQ(r.request.Get("x-a"), "spaced value");
    EXPECT_TRUE(r.request.keep_alive);
    EXPECT_EQ(r.consumed, req.size());
  }
}

TEST(HttpParserTest, ChunkedBodyWithExtensionsAndTrailers) {
  std::string req = std::string(kHead) +
                    "Transfer-Encoding: Chunked\r\n\r\n"
                    "5;name=value\r\nhello\r\nA\r\n0123456789\r\n0\r\nTrailer: t\r\n\r\n";
  for (size_t step : {SIZE_MAX, size_t{1}, size_t{7}}) {
    Parsed r = Parse(req, step);
    ASSERT_EQ(r.state, RequestParser::State::kComplete) << step << " " << r.message;
    EXPECT_EQ(r.request.body, "hello0123456789");
    EXPECT_EQ(r.consumed, req.size());
  }
}

TEST(HttpParserTest, StopsAfterOneRequestLeavingThePipelinedNextUnread) {
  std::string first = std::string(kHead) + "Content-Length: 2\r\n\r\nab";
  std::string both = first + "GET /healthz HTTP/1.1\r\nHost: h\r\n\r\n";
  Parsed r = Parse(both);
  ASSERT_EQ(r.state, RequestParser::State::kComplete);
  EXPECT_EQ(r.consumed, first.size());
}

TEST(HttpParserTest, PostWithoutFramingHasAnEmptyBody) {
  Parsed r = Parse(std::string(kHead) + "\r\n");
  ASSERT_EQ(r.state, RequestParser::State::kComplete);
  EXPECT_TRUE(r.request.body.empty());
  EXPECT_FALSE(r.request.announces_body);
}

struct Bad {
  std::string name;
  std::string head;  // fields after kHead's, then the blank line is added
  int status;
  std::string says;
};

TEST(HttpParserTest, AmbiguousOrUnsupportedFramingIsRefused) {
  std::vector<Bad> cases = {
      {"gzip then chunked", "Transfer-Encoding: gzip, chunked\r\n", 501, "not supported"},
      {"chunked split over two fields", "Transfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n",
       501, "gzip, chunked"},
      {"chunked not last", "Transfer-Encoding: chunked, gzip\r\n", 400, "does not end in chunked"},
      {"unknown coding only", "Transfer-Encoding: identity\r\n", 400, "does not end in chunked"},
      {"chunked twice", "Transfer-Encoding: chunked, chunked\r\n", 400, "more than once"},
      {"both framings", "Transfer-Encoding: chunked\r\nContent-Length: 3\r\n", 400, "both"},
      {"differing lengths", "Content-Length: 3\r\nContent-Length: 4\r\n", 400, "different"},
      {"differing lengths in a list", "Content-Length: 3, 4\r\n", 400, "different"},
      {"negative length", "Content-Length: -1\r\n", 400, "malformed Content-Length"},
      {"signed length", "Content-Length: +1\r\n", 400, "malformed Content-Length"},
      {"empty length", "Content-Length: \r\n", 400, "Content-Length"},
      {"length of commas only", "Content-Length: ,\r\n", 400, "empty Content-Length"},
      {"chunked with a parameter", "Transfer-Encoding: chunked;x=1\r\n", 400,
       "does not end in chunked"},
      {"length past 2^64", "Content-Length: 99999999999999999999999\r\n", 413, "exceeds"},
      {"length over the limit", "Content-Length: 16777217\r\n", 413, "exceeds the limit"},
      {"obs-fold", "X-A: a\r\n  folded\r\n", 400, "folding"},
      {"space before colon", "Content-Length : 3\r\n", 400, "field name"},
      {"control byte in a value", std::string("X-A: a\x01z\r\n"), 400, "control byte"},
      {"NUL in a value", std::string("X-A: a\0z\r\n", 10), 400, "control byte"},
      {"bare LF", "X-A: a\nX-B: b\r\n", 400, "bare LF"},
      {"bare CR", "X-A: a\rX-B: b\r\n", 400, "bare CR"},
      {"second Host", "Host: other\r\n", 400, "Host"},
      {"unknown expectation", "Expect: 200-ok\r\n", 417, "Expect"},
  };
  for (const Bad& c : cases) {
    Parsed r = Parse(std::string(kHead) + c.head + "\r\n1234");
    EXPECT_EQ(r.state, RequestParser::State::kError) << c.name;
    EXPECT_EQ(r.status, c.status) << c.name << ": " << r.message;
    EXPECT_NE(r.message.find(c.says), std::string::npos) << c.name << ": " << r.message;
  }
}

TEST(HttpParserTest, EqualContentLengthsAreOneLength) {
  Parsed r = Parse(std::string(kHead) + "Content-Length: 2\r\nContent-Length: 02\r\n\r\nab");
  ASSERT_EQ(r.state, RequestParser::State::kComplete) << r.message;
  EXPECT_EQ(r.request.body, "ab");
}

TEST(HttpParserTest, BadChunkFramingIsRefused) {
  std::vector<std::pair<std::string, std::string>> cases = {
      {"0x prefix", "0x9\r\n123456789\r\n0\r\n\r\n"},
      {"sign", "-5\r\nhello\r\n0\r\n\r\n"},
      {"space before size", " 5\r\nhello\r\n0\r\n\r\n"},
      {"space after size without an extension", "5 \r\nhello\r\n0\r\n\r\n"},
      {"no digits", ";x\r\nhello\r\n0\r\n\r\n"},
      {"17 digits", "00000000000000005\r\nhello\r\n0\r\n\r\n"},
      {"data longer than its size", "3\r\nhello\r\n0\r\n\r\n"},
      {"bare LF after the size", "5\nhello\r\n0\r\n\r\n"},
      {"bare LF after the data", "5\r\nhello\n0\r\n\r\n"},
  };
  for (const auto& [name, body] : cases) {
    Parsed r = Parse(std::string(kHead) + "Transfer-Encoding: chunked\r\n\r\n" + body);
    EXPECT_EQ(r.state, RequestParser::State::kError) << name;
    EXPECT_EQ(r.status, 400) << name << ": " << r.message;
  }
  ParserLimits small;
  small.max_body_bytes = 8;
  Parsed big = Parse(std::string(kHead) +
                         "Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n"
                         "5\r\nworld\r\n0\r\n\r\n",
                     SIZE_MAX, small);
  EXPECT_EQ(big.status, 413) << big.message;
  Parsed huge =
      Parse(std::string(kHead) + "Transfer-Encoding: chunked\r\n\r\nffffffffffffffff\r\n");
  EXPECT_EQ(huge.status, 413) << huge.message;
}

TEST(HttpParserTest, RequestLineAndVersionRules) {
  EXPECT_EQ(Parse("GET /a HTTP/2.0\r\nHost: h\r\n\r\n").status, 505);
  EXPECT_EQ(Parse("GET /a HTTP/1.1 x\r\nHost: h\r\n\r\n").status, 400);
  EXPECT_EQ(Parse("GET  /a HTTP/1.1\r\nHost: h\r\n\r\n").status, 400);
  EXPECT_EQ(Parse("GET /a http/1.1\r\nHost: h\r\n\r\n").status, 400);
  EXPECT_EQ(Parse("G(T /a HTTP/1.1\r\nHost: h\r\n\r\n").status, 400);
  EXPECT_EQ(Parse("GET a HTTP/1.1\r\nHost: h\r\n\r\n").status, 400);
  EXPECT_EQ(Parse("GET /a HTTP/1.1\r\n\r\n").status, 400);  // no Host
  Parsed http10 = Parse("GET /a HTTP/1.0\r\n\r\n");
  ASSERT_EQ(http10.state, RequestParser::State::kComplete);
  EXPECT_FALSE(http10.request.keep_alive);
  EXPECT_EQ(Parse("POST /a HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n").status, 400);
  Parsed absolute = Parse("GET http://h:1/healthz?q HTTP/1.1\r\nHost: h\r\n\r\n");
  ASSERT_EQ(absolute.state, RequestParser::State::kComplete) << absolute.message;
  EXPECT_EQ(absolute.request.path, "/healthz");
  Parsed leading = Parse("\r\n\r\nGET /a HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n", 1);
  ASSERT_EQ(leading.state, RequestParser::State::kComplete) << leading.message;
  EXPECT_FALSE(leading.request.keep_alive);
}

TEST(HttpParserTest, LimitsOnLinesFieldsAndHeaderBytes) {
  ParserLimits limits;
  limits.max_request_line = 100;
  limits.max_header_bytes = 1000;
  limits.max_fields = 5;
  EXPECT_EQ(Parse("GET /" + std::string(200, 'a'), SIZE_MAX, limits).status, 414);
  std::string many = "GET /a HTTP/1.1\r\nHost: h\r\n";
  for (int i = 0; i < 6; ++i) many += "X-" + std::to_string(i) + ": v\r\n";
  EXPECT_EQ(Parse(many + "\r\n", SIZE_MAX, limits).status, 431);
  std::string big = "GET /a HTTP/1.1\r\nHost: h\r\nX: " + std::string(2000, 'v');
  EXPECT_EQ(Parse(big, 1, limits).status, 431);
}

TEST(HttpParserTest, ExpectContinueAndEmptyFieldValuesAreKept) {
  Parsed r = Parse(std::string(kHead) + "Expect: 100-Continue\r\nIdempotency-Key:\r\n\r\n");
  ASSERT_EQ(r.state, RequestParser::State::kComplete) << r.message;
  EXPECT_TRUE(r.request.expect_continue);
  ASSERT_TRUE(r.request.Has("idempotency-key"));
  EXPECT_EQ(r.request.Get("idempotency-key"), "");
}

TEST(HttpParserTest, ResetReadsTheNextRequest) {
  RequestParser p;
  std::string a = "GET /a HTTP/1.1\r\nHost: h\r\n\r\n";
  ASSERT_EQ(p.Feed(a), a.size());
  ASSERT_EQ(p.state(), RequestParser::State::kHeadDone);
  p.BeginBody();
  ASSERT_EQ(p.state(), RequestParser::State::kComplete);
  p.Reset();
  EXPECT_FALSE(p.started());
  std::string b = "GET /b HTTP/1.1\r\nHost: h\r\n\r\n";
  ASSERT_EQ(p.Feed(b), b.size());
  EXPECT_EQ(p.request().path, "/b");
}

}  // namespace
}  // namespace sluice::server
