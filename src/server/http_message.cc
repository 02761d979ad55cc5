#include "server/http_message.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "common/ascii.h"

namespace sluice::server {
const std::string* HttpRequest::Find(std::string_view lower_name) const {
  for (const auto& [name, value] : headers) {
    if (name == lower_name) return &value;
  }
  return nullptr;
}

std::string HttpRequest::Get(std::string_view lower_name) const {
  const std::string* v = Find(lower_name);
  return v == nullptr ? std::string() : *v;
}

std::string HttpRequest::BearerToken() const {
  std::string given = Get("authorization");
  constexpr std::string_view kScheme = "bearer ";
  if (given.size() <= kScheme.size()) return "";
  for (size_t i = 0; i < kScheme.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(given[i])) != kScheme[i]) return "";
  }
  return given.substr(kScheme.size());
}

int HttpRequest::Count(std::string_view lower_name) const {
  return static_cast<int>(std::count_if(headers.begin(), headers.end(),
                                        [&](const auto& h) { return h.first == lower_name; }));
}

namespace {
int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}
}  // namespace

std::optional<std::string> PercentDecode(std::string_view s, bool plus_is_space) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%') {
      if (i + 2 >= s.size()) return std::nullopt;
      int hi = HexValue(s[i + 1]);
      int lo = HexValue(s[i + 2]);
      if (hi < 0 || lo < 0) return std::nullopt;
      out.push_back(static_cast<char>(hi * 16 + lo));
      i += 2;
    } else if (plus_is_space && s[i] == '+') {
      out.push_back(' ');
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

std::optional<std::string> FormValue(std::string_view form, std::string_view name) {
  size_t at = 0;
  while (at <= form.size()) {
    size_t end = form.find('&', at);
    if (end == std::string_view::npos) end = form.size();
    std::string_view pair = form.substr(at, end - at);
    size_t eq = pair.find('=');
    if (pair.substr(0, eq) == name) {
      return PercentDecode(eq == std::string_view::npos ? "" : pair.substr(eq + 1), true);
    }
    at = end + 1;
  }
  return std::nullopt;
}

void HttpResponse::Set(std::string name, std::string value) {
  for (auto& [n, v] : headers) {
    if (EqualsIgnoreCase(n, name)) {
      v = std::move(value);
      return;
    }
  }
  headers.emplace_back(std::move(name), std::move(value));
}

std::string HttpResponse::Get(std::string_view name) const {
  if (EqualsIgnoreCase(name, "Content-Type")) return content_type;
  for (const auto& [n, v] : headers) {
    if (EqualsIgnoreCase(n, name)) return v;
  }
  return {};
}

std::string_view ReasonPhrase(int status) {
  switch (status) {
    case 100: return "Continue";
    case 200: return "OK";
    case 204: return "No Content";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 409: return "Conflict";
    case 413: return "Content Too Large";
    case 414: return "URI Too Long";
    case 415: return "Unsupported Media Type";
    case 417: return "Expectation Failed";
    case 429: return "Too Many Requests";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 503: return "Service Unavailable";
    case 505: return "HTTP Version Not Supported";
    default: return "Unknown";
  }
}

std::string SerializeResponse(const HttpResponse& r, bool head_only, bool http10_keep_alive) {
  std::string out = fmt::format("HTTP/1.1 {} {}\r\n", r.status, ReasonPhrase(r.status));
  for (const auto& [name, value] : r.headers) out += fmt::format("{}: {}\r\n", name, value);
  if (!r.content_type.empty()) out += fmt::format("Content-Type: {}\r\n", r.content_type);
  out += fmt::format("Content-Length: {}\r\n", r.body.size());
  if (r.close) {
    out += "Connection: close\r\n";
  } else if (http10_keep_alive) {
    out += "Connection: keep-alive\r\n";
  }
  out += "\r\n";
  if (!head_only) out += r.body;
  return out;
}

}  // namespace sluice::server
