#include "server/http_parser.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

#include "common/ascii.h"

namespace sluice::server {
namespace {

bool IsTchar(unsigned char c) {
  if (c >= '0' && c <= '9') return true;
  if ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') return true;
  return std::string_view("!#$%&'*+-.^_`|~").find(static_cast<char>(c)) != std::string_view::npos;
}

bool IsToken(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return IsTchar(c); });
}

// A field value byte (RFC 9110 field-content: VCHAR, obs-text, SP, HTAB).
bool IsFieldByte(unsigned char c) { return c == '\t' || (c >= 0x20 && c != 0x7f); }

std::string_view TrimOws(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// Shows a client's bytes in an error message: printable, bounded.
std::string Shown(std::string_view s) {
  std::string out;
  for (unsigned char c : s.substr(0, 64)) {
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      out += fmt::format("\\x{:02x}", c);
    }
  }
  if (s.size() > 64) out += "...";
  return out;
}

// Calls fn(element) for each non-empty element of a comma-separated field list.
template <typename Fn>
void ForEachElement(std::string_view value, Fn fn) {
  while (!value.empty()) {
    size_t comma = value.find(',');
    std::string_view e = TrimOws(value.substr(0, comma));
    if (!e.empty()) fn(e);
    if (comma == std::string_view::npos) break;
    value.remove_prefix(comma + 1);
  }
}

}  // namespace

bool RequestParser::Fail(int status, std::string message) {
  state_ = State::kError;
  error_ = ParseError{status, std::move(message)};
  return false;
}

void RequestParser::Reset() {
  state_ = State::kHead;
  started_ = false;
  empty_lines_ = 0;
  pending_cr_ = false;
  head_.clear();
  if (head_.capacity() > (64 << 10)) head_.shrink_to_fit();
  scanned_ = 0;
  request_ = HttpRequest{};
  error_ = ParseError{};
  part_ = BodyPart::kLength;
  chunked_ = false;
  remaining_ = 0;
  line_.clear();
  trailer_bytes_ = 0;
}

size_t RequestParser::Feed(std::string_view data) {
  if (!data.empty()) started_ = true;
  switch (state_) {
    case State::kHead: return FeedHead(data);
    case State::kBody: return FeedBody(data);
    default: return 0;
  }
}

size_t RequestParser::FeedHead(std::string_view data) {
  size_t consumed = 0;
  // Empty lines before a request line are tolerated (RFC 9112 section 2.2), a few.
  while (head_.empty() && !data.empty()) {
    if (pending_cr_) {
      if (data[0] != '\n') return Fail(400, "bare CR before the request line"), consumed;
      pending_cr_ = false;
      data.remove_prefix(1);
      ++consumed;
      if (++empty_lines_ > limits_.max_leading_empty_lines) {
        return Fail(400, "too many empty lines before the request line"), consumed;
      }
    } else if (data[0] == '\r') {
      pending_cr_ = true;
      data.remove_prefix(1);
      ++consumed;
    } else if (data[0] == '\n') {
      return Fail(400, "bare LF before the request line"), consumed + 1;
    } else {
      break;
    }
  }
  if (data.empty()) return consumed;
  size_t before = head_.size();
  size_t room = limits_.max_header_bytes + 4 - std::min(before, limits_.max_header_bytes + 4);
  size_t take = std::min(data.size(), room);
  head_.append(data.substr(0, take));
  // Every LF must end a CRLF, every CR start one (a bare one anywhere: 400).
  size_t from = scanned_;
  for (size_t i = from; i < head_.size(); ++i) {
    char c = head_[i];
    if (c == '\n' && (i == 0 || head_[i - 1] != '\r')) {
      return Fail(400, "bare LF in the header section"), consumed + take;
    }
    if (c == '\r' && i + 1 < head_.size() && head_[i + 1] != '\n') {
      return Fail(400, "bare CR in the header section"), consumed + take;
    }
    if (c == '\n' && i >= 3 && head_.compare(i - 3, 4, "\r\n\r\n") == 0) {
      size_t end = i + 1;
      size_t give_back = head_.size() - end;
      head_.resize(end);
      consumed += take - give_back;
      if (ParseHead()) state_ = State::kHeadDone;
      return consumed;
    }
  }
  scanned_ = head_.size() > 0 && head_.back() == '\r' ? head_.size() - 1 : head_.size();
  consumed += take;
  size_t first_line = head_.find("\r\n");
  if ((first_line == std::string::npos ? head_.size() : first_line) > limits_.max_request_line) {
    return Fail(414, fmt::format("request line longer than {} bytes", limits_.max_request_line)),
           consumed;
  }
  if (head_.size() > limits_.max_header_bytes) {
    return Fail(431, fmt::format("header section larger than {} bytes", limits_.max_header_bytes)),
           consumed;
  }
  return consumed;
}

bool RequestParser::ParseHead() {
  std::string_view head(head_);
  head.remove_suffix(2);  // the blank line's CRLF; every line below ends in CRLF
  size_t eol = head.find("\r\n");
  if (!ParseRequestLine(head.substr(0, eol))) return false;
  head.remove_prefix(eol + 2);
  while (!head.empty()) {
    eol = head.find("\r\n");
    if (request_.headers.size() >= limits_.max_fields) {
      return Fail(431, fmt::format("more than {} header fields", limits_.max_fields));
    }
    if (!ParseField(head.substr(0, eol), &request_.headers)) return false;
    head.remove_prefix(eol + 2);
  }
  return DecideFraming();
}

bool RequestParser::ParseRequestLine(std::string_view line) {
  if (line.size() > limits_.max_request_line) {
    return Fail(414, fmt::format("request line longer than {} bytes", limits_.max_request_line));
  }
  size_t sp1 = line.find(' ');
  size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos || line.find(' ', sp2 + 1) != std::string_view::npos) {
    return Fail(400, fmt::format("malformed request line '{}'", Shown(line)));
  }
  std::string_view method = line.substr(0, sp1);
  std::string_view target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  std::string_view version = line.substr(sp2 + 1);
  if (!IsToken(method)) return Fail(400, fmt::format("malformed method '{}'", Shown(method)));
  bool visible = !target.empty() && std::all_of(target.begin(), target.end(), [](char c) {
    return static_cast<unsigned char>(c) > 0x20 && static_cast<unsigned char>(c) < 0x7f;
  });
  if (!visible || target.find('#') != std::string_view::npos) {
    return Fail(400, fmt::format("malformed request target '{}'", Shown(target)));
  }
  if (version == "HTTP/1.1") {
    request_.minor_version = 1;
  } else if (version == "HTTP/1.0") {
    request_.minor_version = 0;
  } else if (version.size() == 8 && version.starts_with("HTTP/") && std::isdigit(version[5]) &&
             version[6] == '.' && std::isdigit(version[7])) {
    return Fail(505, fmt::format("HTTP version {} is not supported (1.0 and 1.1 are)", version));
  } else {
    return Fail(400, fmt::format("malformed HTTP version '{}'", Shown(version)));
  }
  std::string_view path = target;
  if (target.front() != '/') {
    std::string scheme = AsciiLower(target.substr(0, target.find("://")));
    if (target == "*" && method == "OPTIONS") {
      path = "*";
    } else if ((scheme == "http" || scheme == "https") &&
               target.find("://") != std::string_view::npos) {
      std::string_view rest = target.substr(target.find("://") + 3);
      size_t slash = rest.find_first_of("/?");
      path = slash == std::string_view::npos ? "/" : rest.substr(slash);
      if (path.front() == '?') return Fail(400, "absolute-form target without a path");
    } else {
      return Fail(400, fmt::format("request target '{}' is neither a path nor an absolute URI",
                                   Shown(target)));
    }
  }
  request_.method = std::string(method);
  request_.target = std::string(target);
  size_t q = path.find('?');
  request_.path = std::string(path.substr(0, q));
  if (q != std::string_view::npos) request_.query = std::string(path.substr(q + 1));
  return true;
}

bool RequestParser::ParseField(std::string_view line, HttpHeaders* into) {
  if (line.empty()) return Fail(400, "empty header field line");
  if (line.front() == ' ' || line.front() == '\t') {
    return Fail(400, "obsolete line folding in a header field");
  }
  size_t colon = line.find(':');
  std::string_view name = line.substr(0, colon);
  if (colon == std::string_view::npos || !IsToken(name)) {
    return Fail(400, fmt::format("malformed header field name in '{}'", Shown(line)));
  }
  std::string_view value = TrimOws(line.substr(colon + 1));
  for (unsigned char c : value) {
    if (!IsFieldByte(c)) {
      return Fail(400, fmt::format("control byte 0x{:02x} in header field {}", c, name));
    }
  }
  into->emplace_back(AsciiLower(name), std::string(value));
  return true;
}

bool RequestParser::DecideFraming() {
  HttpRequest& r = request_;
  int hosts = r.Count("host");
  if ((r.minor_version == 1 && hosts != 1) || hosts > 1) {
    return Fail(400, fmt::format("the request has {} Host fields, needs exactly one", hosts));
  }
  bool close = false, keep_alive = false;
  for (const auto& [name, value] : r.headers) {
    if (name != "connection") continue;
    ForEachElement(value, [&](std::string_view e) {
      std::string token = AsciiLower(e);
      close |= token == "close";
      keep_alive |= token == "keep-alive";
    });
  }
  r.keep_alive = r.minor_version == 1 ? !close : keep_alive && !close;
  if (const std::string* expect = r.Find("expect")) {
    if (AsciiLower(*expect) != "100-continue" || r.Count("expect") > 1) {
      return Fail(417,
                  fmt::format("Expect '{}' is not supported (only 100-continue)", Shown(*expect)));
    }
    r.expect_continue = r.minor_version == 1;
  }

  bool has_te = r.Has("transfer-encoding");
  bool has_length = r.Has("content-length");
  if (has_te) {
    if (r.minor_version == 0) return Fail(400, "Transfer-Encoding in an HTTP/1.0 request");
    if (has_length) return Fail(400, "both Transfer-Encoding and Content-Length");
    std::vector<std::string> codings;
    std::string all;
    for (const auto& [name, value] : r.headers) {
      if (name != "transfer-encoding") continue;
      ForEachElement(value, [&](std::string_view e) {
        // Parameters are not defined for chunked; keep them in the name so that
        // "chunked;x=1" is not taken for chunked.
        codings.push_back(AsciiLower(e));
        all += (all.empty() ? "" : ", ") + codings.back();
      });
    }
    if (codings.empty() || codings.back() != "chunked") {
      return Fail(400, fmt::format("Transfer-Encoding '{}' does not end in chunked: the body "
                                   "cannot be framed",
                                   Shown(all)));
    }
    if (std::count(codings.begin(), codings.end(), "chunked") > 1) {
      return Fail(400, "chunked is applied more than once");
    }
    if (codings.size() > 1) {
      return Fail(501, fmt::format("Transfer-Encoding '{}' is not supported: only chunked (to "
                                   "compress, use Content-Encoding)",
                                   Shown(all)));
    }
    chunked_ = true;
    r.announces_body = true;
    return true;
  }
  if (has_length) {
    std::string_view first;
    for (const auto& field : r.headers) {
      if (field.first != "content-length") continue;
      const std::string& value = field.second;  // (a structured binding cannot be captured)
      bool ok = true;
      ForEachElement(value, [&](std::string_view e) {
        // Leading zeros do not make a different length.
        std::string_view digits = e;
        while (digits.size() > 1 && digits.front() == '0') digits.remove_prefix(1);
        if (!std::all_of(e.begin(), e.end(), [](char c) { return c >= '0' && c <= '9'; })) {
          ok = Fail(400, fmt::format("malformed Content-Length '{}'", Shown(value)));
        } else if (first.empty()) {
          first = digits;
        } else if (first != digits && ok) {
          ok = Fail(400, fmt::format("different Content-Length values {} and {}", Shown(first),
                                     Shown(digits)));
        }
      });
      if (!ok) return false;
      bool any = false;
      ForEachElement(value, [&](std::string_view) { any = true; });
      if (!any) return Fail(400, fmt::format("empty Content-Length '{}'", Shown(value)));
    }
    uint64_t length = 0;
    bool huge = first.size() > 18;
    if (!huge) std::from_chars(first.data(), first.data() + first.size(), length);
    if (huge || length > static_cast<uint64_t>(limits_.max_body_bytes)) {
      return Fail(413, fmt::format("body of {} bytes exceeds the limit of {} bytes", Shown(first),
                                   limits_.max_body_bytes));
    }
    remaining_ = static_cast<int64_t>(length);
    r.announces_body = length > 0;
  }
  return true;
}

void RequestParser::BeginBody() {
  if (state_ != State::kHeadDone) return;
  if (chunked_) {
    part_ = BodyPart::kChunkSize;
    state_ = State::kBody;
  } else if (remaining_ > 0) {
    part_ = BodyPart::kLength;
    // Grows as bytes arrive: an announced length alone must not allocate much.
    request_.body.reserve(static_cast<size_t>(std::min<int64_t>(remaining_, 256 << 10)));
    state_ = State::kBody;
  } else {
    state_ = State::kComplete;
  }
}

size_t RequestParser::FeedLine(std::string_view data, size_t max, bool* done) {
  *done = false;
  size_t i = 0;
  for (; i < data.size(); ++i) {
    char c = data[i];
    if (c == '\n') {
      if (line_.empty() || line_.back() != '\r')
        return Fail(400, "bare LF in chunked framing"), i + 1;
      line_.pop_back();
      *done = true;
      return i + 1;
    }
    if (!line_.empty() && line_.back() == '\r')
      return Fail(400, "bare CR in chunked framing"), i + 1;
    line_ += c;
    if (line_.size() > max + 1) {
      return Fail(400, fmt::format("chunked framing line longer than {} bytes", max)), i + 1;
    }
  }
  return i;
}

bool RequestParser::ParseChunkSize(std::string_view line) {
  size_t digits = 0;
  while (digits < line.size() && std::isxdigit(static_cast<unsigned char>(line[digits]))) ++digits;
  if (digits == 0 || digits > 16) {
    return Fail(400, fmt::format("malformed chunk size '{}'", Shown(line)));
  }
  std::string_view ext = line.substr(digits);
  bool space = false;
  while (!ext.empty() && (ext.front() == ' ' || ext.front() == '\t')) {
    ext.remove_prefix(1);
    space = true;
  }
  if ((!ext.empty() && ext.front() != ';') || (space && ext.empty())) {
    return Fail(400, fmt::format("malformed chunk size '{}'", Shown(line)));
  }
  for (unsigned char c : ext) {
    if (!IsFieldByte(c)) return Fail(400, "control byte in a chunk extension");
  }
  uint64_t size = 0;
  std::from_chars(line.data(), line.data() + digits, size, 16);
  uint64_t room = static_cast<uint64_t>(limits_.max_body_bytes) - request_.body.size();
  if (size > room) {
    return Fail(413,
                fmt::format("chunked body exceeds the limit of {} bytes", limits_.max_body_bytes));
  }
  remaining_ = static_cast<int64_t>(size);
  return true;
}

size_t RequestParser::FeedBody(std::string_view data) {
  size_t pos = 0;
  while (state_ == State::kBody && pos < data.size()) {
    std::string_view rest = data.substr(pos);
    bool done = false;
    switch (part_) {
      case BodyPart::kLength:
      case BodyPart::kChunkData: {
        size_t n = std::min(rest.size(), static_cast<size_t>(remaining_));
        request_.body.append(rest.substr(0, n));
        remaining_ -= static_cast<int64_t>(n);
        pos += n;
        if (remaining_ == 0) {
          if (part_ == BodyPart::kLength) {
            state_ = State::kComplete;
          } else {
            part_ = BodyPart::kChunkDataEnd;
          }
        }
        break;
      }
      case BodyPart::kChunkSize:
        pos += FeedLine(rest, limits_.max_chunk_line, &done);
        if (!done) break;
        if (!ParseChunkSize(line_)) break;
        line_.clear();
        part_ = remaining_ == 0 ? BodyPart::kTrailers : BodyPart::kChunkData;
        break;
      case BodyPart::kChunkDataEnd:
        pos += FeedLine(rest, 0, &done);
        if (!done) break;
        if (!line_.empty()) {
          Fail(400, "chunk data not followed by CRLF");
          break;
        }
        part_ = BodyPart::kChunkSize;
        break;
      case BodyPart::kTrailers: {
        size_t n = FeedLine(rest, limits_.max_header_bytes, &done);
        pos += n;
        trailer_bytes_ += n;
        if (state_ == State::kError || !done) break;
        if (trailer_bytes_ > limits_.max_header_bytes) {
          Fail(431, fmt::format("trailer section larger than {} bytes", limits_.max_header_bytes));
          break;
        }
        if (line_.empty()) {
          state_ = State::kComplete;
          break;
        }
        HttpHeaders ignored;  // trailers are read and dropped
        if (!ParseField(line_, &ignored)) break;
        line_.clear();
        break;
      }
    }
  }
  return pos;
}

}  // namespace sluice::server
