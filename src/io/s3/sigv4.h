// AWS Signature Version 4 for S3 requests (header-based signing with a signed
// payload hash), from the AWS "Signature Version 4 signing process" spec:
//
//   canonical request = METHOD \n URI \n QUERY \n HEADERS \n SIGNED-HEADERS \n PAYLOAD-HASH
//   string to sign    = "AWS4-HMAC-SHA256" \n DATE-TIME \n SCOPE \n hex(sha256(canonical))
//   signing key       = HMAC chain over "AWS4"+secret, date, region, service, "aws4_request"
//
// Contract:
// - The canonical URI is the request path as sent (each segment URI-encoded once;
//   S3 does not double-encode). Query parameters are sorted by encoded name, each
//   name and value URI-encoded with '/' encoded too; a parameter without a value
//   signs as "name=".
// - Headers are signed with lower-cased names, values trimmed and inner runs of
//   spaces folded to one, sorted by name. The caller passes exactly the headers it
//   sends and wants signed (host, x-amz-date and x-amz-content-sha256 at least).
// - Pure functions: no clock, no I/O. The time is the caller's (x-amz-date).
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/digest.h"

namespace sluice::s3 {

struct Credentials {
  std::string access_key_id;
  std::string secret_access_key;
  std::string session_token;  // temporary credentials only (x-amz-security-token)
};

using Params = std::vector<std::pair<std::string, std::string>>;

struct SignInput {
  std::string_view method;         // "GET", "PUT", ...
  std::string_view canonical_uri;  // the encoded path, starting with '/'
  Params query;                    // raw (unencoded) names and values
  Params headers;                  // the headers to sign, any case
  std::string_view payload_hash;   // hex sha256 of the body
};

// Percent-encodes all but A-Z a-z 0-9 - . _ ~ (and '/' unless `encode_slash`),
// with upper-case hex digits, as SigV4 requires.
std::string UriEncode(std::string_view text, bool encode_slash);
// "20130524T000000Z" for a point in time (UTC).
std::string AmzDate(std::chrono::system_clock::time_point time);

std::string CanonicalQuery(const Params& query);
std::string CanonicalRequest(const SignInput& input);
// The value of the Authorization header. `amz_date` is the request's x-amz-date.
std::string Authorization(const SignInput& input, const Credentials& credentials,
                          std::string_view region, std::string_view service,
                          std::string_view amz_date);

}  // namespace sluice::s3
