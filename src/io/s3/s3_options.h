// S3Options: where and as whom sluice reaches S3, and how patiently.
//
// FromEnvironment reads what the AWS SDKs and CLI read, in their order:
// - credentials: AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY / AWS_SESSION_TOKEN,
//   else the profile (AWS_PROFILE, else "default") of the shared credentials file
//   (AWS_SHARED_CREDENTIALS_FILE, else ~/.aws/credentials), else that profile in
//   the config file (AWS_CONFIG_FILE, else ~/.aws/config; sections "[default]" and
//   "[profile NAME]");
// - region: AWS_REGION, AWS_DEFAULT_REGION, the profile's `region`, else us-east-1;
// - endpoint: AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL, the profile's `endpoint_url`
//   (or `endpoint_url` under its `s3 =` block), else AWS's regional endpoint.
//   A custom endpoint (an S3-compatible store) is addressed path-style
//   (http://host/bucket/key); AWS is addressed virtual-hosted
//   (https://bucket.s3.REGION.amazonaws.com/key). The profile's `s3 =` block's
//   `addressing_style = path|virtual` overrides either.
// - SLUICE_S3_MAX_ATTEMPTS, SLUICE_S3_CONNECT_TIMEOUT_MS, SLUICE_S3_REQUEST_TIMEOUT_MS,
//   SLUICE_S3_PART_SIZE (bytes) tune the client (defaults below).
// Missing credentials are an error naming every place looked at: sluice never
// sends unsigned requests.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "common/status.h"
#include "io/s3/sigv4.h"

namespace sluice::s3 {

struct S3Options {
  std::string endpoint;  // scheme://host[:port], no trailing slash; empty: AWS
  std::string region = "us-east-1";
  bool path_style = false;
  Credentials credentials;

  int max_attempts = 8;        // per request, the first included
  int64_t retry_base_ms = 50;  // backoff: random in [0, min(max, base * 2^attempt)]
  int64_t retry_max_ms = 5000;
  int64_t connect_timeout_ms = 5000;
  int64_t request_timeout_ms = 120000;  // a whole request, transfer included
  int64_t part_size = 16 << 20;         // multipart upload part (S3's minimum is 5 MiB)

  // The base URL requests go to for `bucket` (no trailing slash): the endpoint
  // plus "/bucket" path-style, or the bucket's virtual host.
  std::string BucketUrl(std::string_view bucket) const;
};

// Looks up an environment variable (tests pass their own).
using Getenv = std::function<std::optional<std::string>(std::string_view name)>;
Getenv ProcessEnvironment();

Result<S3Options> OptionsFromEnvironment(const Getenv& env = ProcessEnvironment());

}  // namespace sluice::s3
