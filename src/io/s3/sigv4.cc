#include "io/s3/sigv4.h"

#include <fmt/format.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>

#include <algorithm>
#include <ctime>

#include "common/ascii.h"

namespace sluice::s3 {
namespace {

std::string HmacSha256(std::string_view key, std::string_view data) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(data.data()), data.size(), out, &len);
  return std::string(reinterpret_cast<const char*>(out), len);
}

// Trims the value and folds inner runs of spaces to one (SigV4's "Trimall").
std::string TrimAll(std::string_view v) {
  std::string out;
  bool space = false;
  for (char c : v) {
    if (c == ' ' || c == '\t') {
      space = !out.empty();
      continue;
    }
    if (space) out.push_back(' ');
    space = false;
    out.push_back(c);
  }
  return out;
}

Params SortedHeaders(const Params& headers) {
  Params sorted;
  sorted.reserve(headers.size());
  for (const auto& [name, value] : headers) sorted.emplace_back(AsciiLower(name), TrimAll(value));
  std::sort(sorted.begin(), sorted.end());
  return sorted;
}

std::string SignedHeaderNames(const Params& sorted) {
  std::string out;
  for (const auto& [name, value] : sorted) {
    if (!out.empty()) out.push_back(';');
    out += name;
  }
  return out;
}

}  // namespace

std::string UriEncode(std::string_view text, bool encode_slash) {
  static constexpr char kDigits[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size());
  for (unsigned char c : text) {
    bool unreserved = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                      c == '-' || c == '.' || c == '_' || c == '~' || (c == '/' && !encode_slash);
    if (unreserved) {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kDigits[c >> 4]);
      out.push_back(kDigits[c & 15]);
    }
  }
  return out;
}

std::string AmzDate(std::chrono::system_clock::time_point time) {
  std::time_t t = std::chrono::system_clock::to_time_t(time);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y%m%dT%H%M%SZ", &tm);
  return buf;
}

std::string CanonicalQuery(const Params& query) {
  Params encoded;
  encoded.reserve(query.size());
  for (const auto& [name, value] : query) {
    encoded.emplace_back(UriEncode(name, true), UriEncode(value, true));
  }
  std::sort(encoded.begin(), encoded.end());
  std::string out;
  for (const auto& [name, value] : encoded) {
    if (!out.empty()) out.push_back('&');
    out += name;
    out.push_back('=');
    out += value;
  }
  return out;
}

std::string CanonicalRequest(const SignInput& input) {
  Params headers = SortedHeaders(input.headers);
  std::string canonical_headers;
  for (const auto& [name, value] : headers) {
    canonical_headers += fmt::format("{}:{}\n", name, value);
  }
  return fmt::format("{}\n{}\n{}\n{}\n{}\n{}", input.method, input.canonical_uri,
                     CanonicalQuery(input.query), canonical_headers, SignedHeaderNames(headers),
                     input.payload_hash);
}

std::string Authorization(const SignInput& input, const Credentials& credentials,
                          std::string_view region, std::string_view service,
                          std::string_view amz_date) {
  std::string_view date = amz_date.substr(0, 8);
  std::string scope = fmt::format("{}/{}/{}/aws4_request", date, region, service);
  std::string to_sign = fmt::format("AWS4-HMAC-SHA256\n{}\n{}\n{}", amz_date, scope,
                                    Sha256Hex(CanonicalRequest(input)));
  std::string key = HmacSha256("AWS4" + credentials.secret_access_key, date);
  key = HmacSha256(key, region);
  key = HmacSha256(key, service);
  key = HmacSha256(key, "aws4_request");
  std::string signature = HmacSha256(key, to_sign);
  return fmt::format("AWS4-HMAC-SHA256 Credential={}/{},SignedHeaders={},Signature={}",
                     credentials.access_key_id, scope,
                     SignedHeaderNames(SortedHeaders(input.headers)), HexLower(signature));
}

}  // namespace sluice::s3
