// libFuzzer target: an arbitrary request body is split into records both as NDJSON
// and as a JSON array. Neither may crash; every record accepted must be one valid
// JSON value, and an array element must come out minified on one line.
// Build with -DSLUICE_FUZZ=ON (clang).
#include <simdjson.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "server/ingest_body.h"

namespace {

void CheckRecords(const sluice::server::ParsedBody& parsed, bool array) {
  if (!parsed.ok) {
    if (!parsed.records.empty() || parsed.error.message.empty()) std::abort();
    return;
  }
  simdjson::dom::parser parser;
  int64_t bytes = 0;
  for (const auto& record : parsed.records) {
    simdjson::dom::element element;
    if (record.empty() ||
        parser.parse(record.data(), record.size()).get(element) != simdjson::SUCCESS)
      std::abort();
    if (array && record.find_first_of("\n\r\t") != std::string::npos) std::abort();
    bytes += static_cast<int64_t>(record.size());
  }
  if (bytes != parsed.record_bytes) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view body(reinterpret_cast<const char*>(data), size);
  CheckRecords(sluice::server::ParseNdjsonBody(body), false);
  CheckRecords(sluice::server::ParseJsonArrayBody(body), true);
  return 0;
}
