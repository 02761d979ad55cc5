// Internal to io/s3: one S3 request and its answer, as the calls
// (s3_client.cc) build them and the transport (s3_transport.cc) sends them.
#pragma once

#include <string>
#include <string_view>

#include "io/s3/s3_client.h"
#include "io/s3/sigv4.h"

namespace sluice::s3 {

struct S3Client::Request {
  // A call of `method` on s3://bucket/key (key empty: the bucket).
  static Request Of(const char* method, std::string call, std::string bucket,
                    std::string key = {}) {
    Request rq;
    rq.method = method;
    rq.call = std::move(call);
    rq.bucket = std::move(bucket);
    rq.key = std::move(key);
    return rq;
  }

  const char* method = "GET";
  std::string call;  // "GetObject": for messages
  std::string bucket;
  std::string key;
  Params query;
  Params headers;  // beyond host, x-amz-date, x-amz-content-sha256, token
  std::string_view body;
  size_t expect_bytes = 0;  // a reserve for the answer's body
};

struct S3Client::Response {
  long status = 0;
  std::string body;
  std::string etag;
  int64_t content_length = -1;
  int64_t last_modified_ms = -1;
};

}  // namespace sluice::s3
