#include "server/content_coding.h"

#include <brotli/decode.h>
#include <zlib.h>

#include <algorithm>
#include <vector>

#include "common/ascii.h"

namespace sluice::server {
namespace {

constexpr size_t kOutChunk = 64 << 10;

// window_bits: 16 + 15 gzip, 15 zlib, -15 raw deflate.
Result<std::string> Inflate(std::string_view in, int window_bits, int64_t max_bytes,
                            std::string_view name) {
  z_stream z{};
  if (inflateInit2(&z, window_bits) != Z_OK) return Status::Internal("inflateInit2 failed");
  std::string out;
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.avail_in = static_cast<uInt>(in.size());
  int rc = Z_OK;
  while (rc != Z_STREAM_END) {
    size_t have = out.size();
    out.resize(have + kOutChunk);
    z.next_out = reinterpret_cast<Bytef*>(out.data() + have);
    z.avail_out = static_cast<uInt>(kOutChunk);
    rc = inflate(&z, Z_NO_FLUSH);
    out.resize(have + kOutChunk - z.avail_out);
    if (static_cast<int64_t>(out.size()) > max_bytes) {
      inflateEnd(&z);
      return Status::OutOfRange("decoded body exceeds {} bytes", max_bytes);
    }
    if (rc == Z_STREAM_END) break;
    if (rc != Z_OK || (z.avail_in == 0 && z.avail_out != 0)) {
      inflateEnd(&z);
      return Status::Invalid("corrupt {} body{}", name,
                             rc == Z_OK || rc == Z_BUF_ERROR ? " (truncated)" : "");
    }
  }
  bool trailing = z.avail_in != 0;
  inflateEnd(&z);
  if (trailing) return Status::Invalid("corrupt {} body (bytes after its end)", name);
  return out;
}

Result<std::string> Brotli(std::string_view in, int64_t max_bytes) {
  BrotliDecoderState* s = BrotliDecoderCreateInstance(nullptr, nullptr, nullptr);
  if (s == nullptr) return Status::Internal("brotli decoder allocation failed");
  std::string out;
  const uint8_t* next_in = reinterpret_cast<const uint8_t*>(in.data());
  size_t avail_in = in.size();
  BrotliDecoderResult rc = BROTLI_DECODER_RESULT_NEEDS_MORE_OUTPUT;
  while (rc == BROTLI_DECODER_RESULT_NEEDS_MORE_OUTPUT) {
    size_t have = out.size();
    out.resize(have + kOutChunk);
    uint8_t* next_out = reinterpret_cast<uint8_t*>(out.data() + have);
    size_t avail_out = kOutChunk;
    rc = BrotliDecoderDecompressStream(s, &avail_in, &next_in, &avail_out, &next_out, nullptr);
    out.resize(have + kOutChunk - avail_out);
    if (static_cast<int64_t>(out.size()) > max_bytes) {
      BrotliDecoderDestroyInstance(s);
      return Status::OutOfRange("decoded body exceeds {} bytes", max_bytes);
    }
  }
  BrotliDecoderDestroyInstance(s);
  if (rc != BROTLI_DECODER_RESULT_SUCCESS || avail_in != 0) {
    return Status::Invalid("corrupt br body{}",
                           rc == BROTLI_DECODER_RESULT_NEEDS_MORE_INPUT ? " (truncated)" : "");
  }
  return out;
}

}  // namespace

Result<std::string> DecodeContent(std::string_view encoding, std::string body, int64_t max_bytes) {
  std::vector<std::string> codings;
  while (!encoding.empty()) {
    size_t comma = encoding.find(',');
    std::string c(encoding.substr(0, comma));
    c.erase(0, c.find_first_not_of(" \t"));
    c.erase(c.find_last_not_of(" \t") + 1);
    c = AsciiLower(c);
    if (!c.empty() && c != "identity") codings.push_back(c);
    if (comma == std::string_view::npos) break;
    encoding.remove_prefix(comma + 1);
  }
  // The codings were applied in the order listed: undo them from the last.
  for (auto it = codings.rbegin(); it != codings.rend(); ++it) {
    const std::string& c = *it;
    if (c == "gzip" || c == "x-gzip") {
      ASSIGN_OR_RETURN(body, Inflate(body, 16 + 15, max_bytes, "gzip"));
    } else if (c == "deflate") {
      // RFC 9110 says zlib format; some clients send raw deflate. A zlib stream
      // starts with a header whose 16-bit value is a multiple of 31.
      bool zlib =
          body.size() >= 2 && (static_cast<unsigned char>(body[0]) & 0x0f) == 8 &&
          ((static_cast<unsigned char>(body[0]) << 8) | static_cast<unsigned char>(body[1])) % 31 ==
              0;
      ASSIGN_OR_RETURN(body, Inflate(body, zlib ? 15 : -15, max_bytes, "deflate"));
    } else if (c == "br") {
      ASSIGN_OR_RETURN(body, Brotli(body, max_bytes));
    } else {
      return Status::NotImplemented(
          "Content-Encoding '{}' is not supported (gzip, deflate, br are)", c);
    }
  }
  if (static_cast<int64_t>(body.size()) > max_bytes) {
    return Status::OutOfRange("body exceeds {} bytes", max_bytes);
  }
  return body;
}

}  // namespace sluice::server
