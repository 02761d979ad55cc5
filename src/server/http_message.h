// HttpRequest and HttpResponse: one HTTP/1.1 exchange as sluice's server sees it,
// after framing (RFC 9112) is removed and before any route looks at it. Pure data;
// the parser (http_parser.h) fills requests, the connection code writes responses.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sluice::server {

using HttpHeaders = std::vector<std::pair<std::string, std::string>>;

struct HttpRequest {
  std::string method;     // as sent (methods are case-sensitive)
  std::string target;     // the request-target as sent
  std::string path;       // of the target, before '?', not percent-decoded
  std::string query;      // after '?', without it
  int minor_version = 1;  // HTTP/1.<minor_version>
  // Field names lowercased, values without surrounding whitespace, in arrival order
  // (a field sent twice appears twice).
  HttpHeaders headers;
  std::string body;              // transfer coding (chunked) removed; content coding still applied
  bool keep_alive = true;        // the connection may carry another request after this one
  bool expect_continue = false;  // "Expect: 100-continue" on HTTP/1.1

  // The first value of field `lower_name`, or null.
  const std::string* Find(std::string_view lower_name) const;
  bool Has(std::string_view lower_name) const { return Find(lower_name) != nullptr; }
  std::string Get(std::string_view lower_name) const;  // "" when absent
  // The token of "Authorization: Bearer <token>" (the scheme in any case), or
  // "" when the request carries none.
  std::string BearerToken() const;
  int Count(std::string_view lower_name) const;
  // True when the request announced a body (Content-Length > 0 or chunked).
  bool announces_body = false;
};

struct HttpResponse {
  int status = 200;
  HttpHeaders headers;  // besides Content-Type, Content-Length and Connection
  std::string content_type;
  std::string body;
  bool close = false;  // answer with "Connection: close" and close afterwards

  void Set(std::string name, std::string value);  // replaces a header of that name
  std::string Get(std::string_view name) const;   // case-insensitive; "" when absent
  void SetContent(std::string content, std::string type) {
    body = std::move(content);
    content_type = std::move(type);
  }
};

// Percent-decodes a path segment, or a query or form value when `plus_is_space`
// ('+' is a space there); nullopt for a bad escape.
std::optional<std::string> PercentDecode(std::string_view s, bool plus_is_space);
// The decoded value of `name` in a query string or an
// application/x-www-form-urlencoded body ("a=1&b=x+y"); nullopt when absent or
// badly escaped.
std::optional<std::string> FormValue(std::string_view form, std::string_view name);

// The reason phrase of a status code ("Not Found"), "Unknown" for others.
std::string_view ReasonPhrase(int status);

// The response as bytes on the wire. `head_only` (a HEAD request) sends the headers,
// Content-Length included, without the body; `http10_keep_alive` adds
// "Connection: keep-alive" (HTTP/1.0 clients need it to keep the connection).
std::string SerializeResponse(const HttpResponse& response, bool head_only, bool http10_keep_alive);

}  // namespace sluice::server
