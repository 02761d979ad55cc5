// Splitting an ingest request body into records: the pure part of
// POST /v1/streams/{stream}/records (no sockets, no log), so it is tested on its own.
//
// Two body forms (docs/http_api.md):
// - NDJSON: one JSON value per line; blank lines are skipped; each record is its line
//   without surrounding whitespace (a trailing '\r' included).
// - A JSON array of values (chosen by the caller: Content-Type application/json and a
//   body starting with '['): each element is a record, stored minified (whitespace
//   outside strings removed; every token, numbers included, kept byte for byte).
// Every record is checked to be one syntactically valid JSON value (simdjson DOM).
// On the first bad record the whole body is refused: the error names the NDJSON line
// (1-based) or the array index (0-based) and the reason; no record is returned.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace sluice::server {

struct BodyError {
  std::string message;  // e.g. "line 3: invalid JSON: ..." (includes the position)
  int64_t line = -1;    // NDJSON: 1-based line of the bad record, else -1
  int64_t index = -1;   // array: 0-based index of the bad element, else -1
};

struct ParsedBody {
  // The records: views into the body given to the parser (NDJSON), or into
  // `owned` (array elements, minified). Valid while that body lives.
  std::vector<std::string_view> records;
  std::unique_ptr<std::vector<std::string>> owned;  // on the heap: moves keep the views valid
  int64_t record_bytes = 0;                         // sum of record sizes
  bool ok = true;
  BodyError error;  // when !ok
};

// True when a body with this Content-Type header value and contents is a JSON array
// of records: media type application/json (parameters and case ignored) and the first
// non-whitespace byte is '['.
bool IsJsonArrayBody(std::string_view content_type, std::string_view body);

ParsedBody ParseNdjsonBody(std::string_view body);
ParsedBody ParseJsonArrayBody(std::string_view body);

}  // namespace sluice::server
