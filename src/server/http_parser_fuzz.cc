// libFuzzer target: arbitrary bytes through the HTTP request parser, whole and in
// pieces; every request it completes must have consumed no more than it was given
// and respect the limits.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "server/http_parser.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  sluice::server::ParserLimits limits;
  limits.max_body_bytes = 1 << 16;
  limits.max_header_bytes = 4096;
  for (size_t step : {size, size_t{1}, size_t{13}}) {
    if (step == 0) continue;
    sluice::server::RequestParser p(limits);
    size_t pos = 0;
    int requests = 0;
    while (requests < 64) {
      using State = sluice::server::RequestParser::State;
      if (p.state() == State::kHeadDone) {
        p.BeginBody();
        continue;
      }
      if (p.state() == State::kComplete) {
        if (p.request().body.size() > static_cast<size_t>(limits.max_body_bytes)) __builtin_trap();
        ++requests;
        p.Reset();
        continue;
      }
      if (p.state() == State::kError || pos >= bytes.size()) break;
      size_t n = p.Feed(bytes.substr(pos, std::min(step, bytes.size() - pos)));
      if (n > bytes.size() - pos) __builtin_trap();
      pos += n;
      if (n == 0 && p.state() != State::kHeadDone && p.state() != State::kComplete) break;
    }
  }
  return 0;
}
