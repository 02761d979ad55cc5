// RequestParser: an incremental, strict HTTP/1.1 request parser (RFC 9112 framing).
// Bytes go in as they arrive; the parser stops after the header section so the
// server can decide before reading a body (authentication, size, 100-continue),
// then reads the body (Content-Length or chunked) and stops after the request, so a
// pipelined next request stays unread.
//
// Strict where leniency lets two parsers disagree (request smuggling):
// - lines end in CRLF; a bare CR or LF, a NUL or other control byte, obs-fold
//   (a field line starting with whitespace), whitespace before a field's colon: 400;
// - Content-Length is 1*DIGIT; several differing values, or Content-Length together
//   with Transfer-Encoding: 400; a valid length over the body limit: 413;
// - Transfer-Encoding must end in "chunked" (else 400) and, as sluice decodes no
//   other transfer coding, be exactly "chunked" (else 501); names compare
//   case-insensitively; Transfer-Encoding on HTTP/1.0: 400;
// - a chunk size is 1*HEXDIG (no "0x", no sign, no whitespace before it), at most
//   16 digits; chunk data must be followed by CRLF;
// - HTTP/1.1 needs exactly one Host; a version other than 1.0/1.1: 505; an Expect
//   other than 100-continue: 417; limits on the request line (414), the header
//   section and its field count (431), the body (413).
// After an error the parser is stuck: the connection must answer error() and close,
// never read on (what follows may be a body it could not frame).
//
// Not thread-safe; one parser per connection, reused with Reset().
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "server/http_message.h"

namespace sluice::server {

struct ParserLimits {
  size_t max_request_line = 8 << 10;   // request line, in bytes (414 beyond)
  size_t max_header_bytes = 64 << 10;  // request line and fields (431 beyond)
  size_t max_fields = 100;             // field lines (431 beyond)
  int64_t max_body_bytes = 16 << 20;   // body after de-chunking (413 beyond)
  size_t max_chunk_line = 4 << 10;     // a chunk-size line with extensions (400 beyond)
  size_t max_leading_empty_lines = 8;  // CRLFs tolerated before a request line
};

struct ParseError {
  int status = 0;  // 400, 413, 414, 417, 431, 501, 505
  std::string message;
};

class RequestParser {
 public:
  enum class State {
    kHead,      // reading the request line and fields
    kHeadDone,  // header section parsed: call BeginBody() (or answer and close)
    kBody,      // reading the body
    kComplete,  // request() is whole; Reset() for the next one
    kError,     // error() says why; the connection must close
  };

  explicit RequestParser(ParserLimits limits = {}) : limits_(limits) {}

  // Consumes bytes of `data` and returns how many; stops early on a state change
  // to kHeadDone, kComplete or kError (the rest is for later or for nobody).
  size_t Feed(std::string_view data);
  // After kHeadDone: go on to the body (or straight to kComplete without one).
  void BeginBody();
  // Forget the request, ready for the next one on the connection.
  void Reset();

  State state() const { return state_; }
  bool started() const { return started_; }  // a byte of this request arrived
  const HttpRequest& request() const { return request_; }
  HttpRequest& request() { return request_; }
  const ParseError& error() const { return error_; }
  // Body bytes announced but not read yet (Content-Length framing), or -1 for chunked.
  int64_t remaining_body() const { return chunked_ ? -1 : remaining_; }

 private:
  enum class BodyPart { kLength, kChunkSize, kChunkData, kChunkDataEnd, kTrailers };

  size_t FeedHead(std::string_view data);
  size_t FeedBody(std::string_view data);
  size_t FeedLine(std::string_view data, size_t max, bool* done);  // into line_
  bool ParseHead();
  bool ParseRequestLine(std::string_view line);
  bool ParseField(std::string_view line, HttpHeaders* into);
  bool DecideFraming();
  bool ParseChunkSize(std::string_view line);
  bool Fail(int status, std::string message);

  const ParserLimits limits_;
  State state_ = State::kHead;
  bool started_ = false;
  size_t empty_lines_ = 0;
  bool pending_cr_ = false;  // a CR of an empty line before the request line
  std::string head_;         // the header section so far
  size_t scanned_ = 0;       // head_ bytes already searched for the blank line
  HttpRequest request_;
  ParseError error_;
  BodyPart part_ = BodyPart::kLength;
  bool chunked_ = false;
  int64_t remaining_ = 0;  // of Content-Length, or of the current chunk
  std::string line_;       // a chunk-size or trailer line so far
  size_t trailer_bytes_ = 0;
};

}  // namespace sluice::server
