// S3Client: the S3 REST calls sluice needs, over libcurl, signed with SigV4.
//
// Contract:
// - Every call is one logical request, retried on what S3 documents as transient:
//   HTTP 500/502/503/504, 429 and 503 SlowDown (throttling), 400 RequestTimeout, and
//   broken connections (refused, reset, timed out, cut mid-body). Retries wait a
//   random time in [0, min(retry_max_ms, retry_base_ms * 2^n)] ("full jitter") and
//   are signed afresh. After max_attempts the error is kIOError, retryable, naming
//   the call, the object and the last answer.
// - Answers that retrying cannot change come back at once: 404 is kNotFound, 412
//   (a create that found the object) kAlreadyExists, 403 and other 4xx kIOError,
//   not retryable, with S3's error code and message.
// - A CompleteMultipartUpload retried after a lost answer finds its upload gone
//   (NoSuchUpload); it succeeds when the object is there with the expected size.
// - Thread-safe: curl handles (and their open connections) are pooled.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "io/s3/s3_options.h"

namespace sluice::s3 {

// "s3://bucket/key" (also s3a:// and s3n://, which Hadoop-written tables use).
struct ObjectPath {
  std::string scheme;  // "s3", "s3a" or "s3n"
  std::string bucket;
  std::string key;  // may be empty (a bucket or prefix)
  std::string ToString() const { return scheme + "://" + bucket + "/" + key; }
};
bool IsS3Path(std::string_view path);
Result<ObjectPath> ParseS3Path(std::string_view path);

struct ObjectInfo {
  int64_t size = -1;
  int64_t modified_ms = -1;
  std::string etag;
};

struct ListedObject {
  std::string key;
  int64_t size = -1;
  int64_t modified_ms = -1;
};

struct ListPage {
  std::vector<ListedObject> objects;
  std::string next_token;  // empty: the last page
};

struct CompletedPart {
  int number = 0;
  std::string etag;
};

// Counters over the client's life (exported as metrics).
struct S3Counters {
  std::atomic<int64_t> requests{0};  // attempts sent, retries included
  std::atomic<int64_t> retries{0};
  std::atomic<int64_t> failures{0};  // calls that ended in an error (not 404/412 answers)
  std::atomic<int64_t> bytes_read{0};
  std::atomic<int64_t> bytes_written{0};
};

// The sums over every client of this process (for /metrics).
const S3Counters& ProcessS3Counters();

class S3Client {
 public:
  // `sleep_ms` waits between attempts (tests pass one that records).
  explicit S3Client(S3Options options, std::function<void(int64_t)> sleep_ms = nullptr);
  ~S3Client();
  S3Client(const S3Client&) = delete;
  S3Client& operator=(const S3Client&) = delete;

  const S3Options& options() const { return options_; }
  const S3Counters& counters() const { return counters_; }

  Status CreateBucket(const std::string& bucket);
  Result<ObjectInfo> Head(const std::string& bucket, const std::string& key);
  // Reads [offset, offset + length) exactly.
  Status Get(const std::string& bucket, const std::string& key, int64_t offset, int64_t length,
             std::string* out);
  // Writes the whole object. `if_none_match`: fail with kAlreadyExists when it
  // exists (stores that ignore the condition replace it).
  Status Put(const std::string& bucket, const std::string& key, std::string_view body,
             bool if_none_match);
  Status Delete(const std::string& bucket, const std::string& key);
  // Deletes up to 1000 keys in one call; returns the keys S3 failed to delete,
  // each with its reason ("key: AccessDenied ...").
  Result<std::vector<std::string>> DeleteMany(const std::string& bucket,
                                              const std::vector<std::string>& keys);
  Result<ListPage> List(const std::string& bucket, const std::string& prefix,
                        const std::string& continuation_token);

  Result<std::string> StartUpload(const std::string& bucket, const std::string& key);
  Result<std::string> UploadPart(const std::string& bucket, const std::string& key,
                                 const std::string& upload_id, int number, std::string_view body);
  Status CompleteUpload(const std::string& bucket, const std::string& key,
                        const std::string& upload_id, const std::vector<CompletedPart>& parts,
                        int64_t expected_size, bool if_none_match);
  Status AbortUpload(const std::string& bucket, const std::string& key,
                     const std::string& upload_id);

  struct Request;
  struct Response;

 private:
  // `attempts` (optional) receives how many attempts the call took.
  Result<Response> Send(const Request& request, int* attempts = nullptr);
  Result<Response> SendOnce(const Request& request, void* curl, std::string* transport_error);
  void Count(std::atomic<int64_t> S3Counters::*counter, int64_t n);
  void* Acquire();
  void Release(void* curl);

  const S3Options options_;
  std::function<void(int64_t)> sleep_ms_;
  S3Counters counters_;
  std::mutex mu_;
  std::vector<void*> idle_;  // pooled CURL* handles, guarded by mu_
};

}  // namespace sluice::s3
