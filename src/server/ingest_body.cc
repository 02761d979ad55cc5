#include "server/ingest_body.h"

#include <fmt/format.h>
#include <simdjson.h>

#include <algorithm>
#include <cctype>

namespace sluice::server {

namespace {

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

std::string_view Trim(std::string_view s) {
  while (!s.empty() && IsSpace(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsSpace(s.back())) s.remove_suffix(1);
  return s;
}

// Empty when `text` is exactly one valid JSON value, else the reason.
std::string CheckJson(simdjson::dom::parser& parser, std::string_view text) {
  simdjson::dom::element element;
  auto error = parser.parse(text.data(), text.size()).get(element);
  if (error == simdjson::SUCCESS) return "";
  return simdjson::error_message(error);
}

ParsedBody Fail(std::string message, int64_t line, int64_t index) {
  ParsedBody out;
  out.ok = false;
  out.error = BodyError{std::move(message), line, index};
  return out;
}

}  // namespace

bool IsJsonArrayBody(std::string_view content_type, std::string_view body) {
  std::string_view media = Trim(content_type.substr(0, content_type.find(';')));
  constexpr std::string_view kJson = "application/json";
  if (media.size() != kJson.size()) return false;
  for (size_t i = 0; i < media.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(media[i])) != kJson[i]) return false;
  }
  std::string_view trimmed = Trim(body);
  return !trimmed.empty() && trimmed.front() == '[';
}

// One non-blank line of an NDJSON body.
struct Line {
  std::string_view text;  // trimmed, a view into the body
  int64_t number;         // 1-based
};

// Validates a whole NDJSON body in one simdjson pass (much cheaper than a parse
// per line). True only when the body holds one JSON value per non-blank line
// and nothing else: the i-th value parsed must lie exactly within the i-th
// line. Anything else (two values on a line, a value across lines, an error)
// is false, and the per-line pass decides and names the bad line.
bool WholeBodyIsValid(std::string_view body, const std::vector<Line>& lines) {
  simdjson::padded_string padded(body);
  // One parser per server thread, reused (its buffers stay allocated). The
  // default 1 MiB batches are the fastest; a record larger than a batch fails
  // here and is checked by the per-line pass.
  thread_local simdjson::dom::parser parser;
  simdjson::dom::document_stream docs;
  if (parser.parse_many(padded, simdjson::dom::DEFAULT_BATCH_SIZE).get(docs) != simdjson::SUCCESS) {
    return false;
  }
  size_t i = 0;
  for (auto it = docs.begin(); it != docs.end(); ++it) {
    if ((*it).error() != simdjson::SUCCESS || i >= lines.size()) return false;
    // Positions relative to the body: the value's text must be the line's.
    size_t start = it.current_index();
    std::string_view value = it.source();
    std::string_view value_text(body.data() + start, value.size());
    while (!value_text.empty() && (value_text.back() == ' ' || value_text.back() == '\t' ||
                                   value_text.back() == '\r' || value_text.back() == '\n')) {
      value_text.remove_suffix(1);
    }
    if (value_text.data() != lines[i].text.data() || value_text.size() != lines[i].text.size()) {
      return false;
    }
    ++i;
  }
  return i == lines.size() && docs.truncated_bytes() == 0;
}

ParsedBody ParseNdjsonBody(std::string_view body) {
  std::vector<Line> lines;
  int64_t line_no = 0;
  size_t pos = 0;
  while (pos < body.size()) {
    size_t end = body.find('\n', pos);
    if (end == std::string_view::npos) end = body.size();
    ++line_no;
    std::string_view line = Trim(body.substr(pos, end - pos));
    pos = end + 1;
    if (!line.empty()) lines.push_back({line, line_no});
  }
  if (!lines.empty() && !WholeBodyIsValid(body, lines)) {
    simdjson::dom::parser parser;
    for (const Line& l : lines) {
      std::string reason = CheckJson(parser, l.text);
      if (!reason.empty()) {
        return Fail(fmt::format("line {}: invalid JSON: {}", l.number, reason), l.number, -1);
      }
    }
  }
  ParsedBody out;
  out.records.reserve(lines.size());
  for (const Line& l : lines) {
    out.record_bytes += static_cast<int64_t>(l.text.size());
    out.records.emplace_back(l.text);
  }
  return out;
}

ParsedBody ParseJsonArrayBody(std::string_view body) {
  ParsedBody out;
  out.owned = std::make_unique<std::vector<std::string>>();
  simdjson::dom::parser parser;
  size_t pos = 0;
  auto skip_space = [&] {
    while (pos < body.size() && IsSpace(body[pos])) ++pos;
  };
  skip_space();
  if (pos >= body.size() || body[pos] != '[') {
    return Fail(fmt::format("byte {}: a JSON array body must start with '['", pos), -1, -1);
  }
  ++pos;
  skip_space();
  bool closed = false;
  if (pos < body.size() && body[pos] == ']') {
    ++pos;
    closed = true;
  }
  int64_t index = 0;
  while (!closed) {
    // One element: up to a ',' or ']' at depth 0. `element` is its copy without the
    // whitespace outside strings, stored once the raw text has been validated (in
    // valid JSON, whitespace never separates two tokens that would merge).
    size_t start = pos;
    size_t end = pos;
    std::string element;
    int depth = 0;
    bool in_string = false;
    bool escaped = false;
    bool ended = false;
    for (; pos < body.size(); ++pos) {
      char c = body[pos];
      if (in_string) {
        element += c;
        if (escaped) {
          escaped = false;
        } else if (c == '\\') {
          escaped = true;
        } else if (c == '"') {
          in_string = false;
        }
        continue;
      }
      if (depth == 0 && (c == ',' || c == ']')) {
        end = pos;
        ended = true;
        closed = c == ']';
        ++pos;
        break;
      }
      if (IsSpace(c)) continue;
      if (c == '"') in_string = true;
      if (c == '[' || c == '{') ++depth;
      if ((c == ']' || c == '}') && depth > 0) --depth;
      element += c;
    }
    if (!ended) {
      return Fail(fmt::format("index {}: the array is not closed (missing ']' or unterminated "
                              "string or object)",
                              index),
                  -1, index);
    }
    if (element.empty()) {
      return Fail(fmt::format("index {}: missing value", index), -1, index);
    }
    std::string reason = CheckJson(parser, Trim(body.substr(start, end - start)));
    if (!reason.empty()) {
      return Fail(fmt::format("index {}: invalid JSON: {}", index, reason), -1, index);
    }
    out.record_bytes += static_cast<int64_t>(element.size());
    out.owned->push_back(std::move(element));
    ++index;
  }
  skip_space();
  if (pos < body.size()) {
    return Fail(fmt::format("byte {}: unexpected content after the array", pos), -1, -1);
  }
  // Views once `owned` is complete (it does not grow any more).
  out.records.assign(out.owned->begin(), out.owned->end());
  return out;
}

}  // namespace sluice::server
