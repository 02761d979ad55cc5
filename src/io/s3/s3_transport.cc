// S3Client's transport: signing, sending over pooled curl handles, retrying.
#include <curl/curl.h>

#include <chrono>
#include <cstring>
#include <ctime>
#include <mutex>
#include <pugixml.hpp>
#include <random>
#include <thread>

#include "io/s3/s3_request.h"

namespace sluice::s3 {

namespace {

constexpr std::string_view kEmptySha256 =
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

void GlobalInit() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

// S3's <Error><Code>..</Code><Message>..</Message></Error>, when the body is one.
struct S3Error {
  std::string code;
  std::string message;
};
S3Error ParseError(const std::string& body) {
  pugi::xml_document doc;
  if (body.empty() || !doc.load_buffer(body.data(), body.size())) return {};
  pugi::xml_node e = doc.child("Error");
  return {e.child_value("Code"), e.child_value("Message")};
}

bool RetryableHttp(long status, const S3Error& e) {
  return status == 500 || status == 502 || status == 503 || status == 504 || status == 429 ||
         (status == 400 && e.code == "RequestTimeout") || e.code == "SlowDown" ||
         e.code == "InternalError";
}

bool RetryableCurl(CURLcode code) {
  switch (code) {
    case CURLE_COULDNT_CONNECT:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE:
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM: return true;
    default: return false;
  }
}

struct Upload {
  std::string_view data;
  size_t offset = 0;
};

size_t ReadBody(char* buffer, size_t size, size_t n, void* user) {
  auto* up = static_cast<Upload*>(user);
  size_t take = std::min(size * n, up->data.size() - up->offset);
  std::memcpy(buffer, up->data.data() + up->offset, take);
  up->offset += take;
  return take;
}

// curl rewinds an upload to resend it on a fresh connection when a reused one
// turned out dead.
int SeekBody(void* user, curl_off_t offset, int origin) {
  auto* up = static_cast<Upload*>(user);
  if (origin != SEEK_SET || offset < 0 || static_cast<size_t>(offset) > up->data.size()) {
    return CURL_SEEKFUNC_CANTSEEK;
  }
  up->offset = static_cast<size_t>(offset);
  return CURL_SEEKFUNC_OK;
}

size_t WriteBody(char* data, size_t size, size_t n, void* user) {
  static_cast<std::string*>(user)->append(data, size * n);
  return size * n;
}

bool HeaderIs(std::string_view line, std::string_view name) {
  if (line.size() <= name.size() || line[name.size()] != ':') return false;
  for (size_t i = 0; i < name.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(line[i])) != name[i]) return false;
  }
  return true;
}

std::string HeaderValue(std::string_view line, size_t name_size) {
  std::string_view v = line.substr(name_size + 1);
  while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
  while (!v.empty() && (v.back() == '\r' || v.back() == '\n' || v.back() == ' ')) {
    v.remove_suffix(1);
  }
  return std::string(v);
}

size_t ReadHeader(char* data, size_t size, size_t n, void* user) {
  auto* r = static_cast<S3Client::Response*>(user);
  std::string_view line(data, size * n);
  if (HeaderIs(line, "etag")) {
    r->etag = HeaderValue(line, 4);
  } else if (HeaderIs(line, "content-length")) {
    r->content_length = std::strtoll(HeaderValue(line, 14).c_str(), nullptr, 10);
  } else if (HeaderIs(line, "last-modified")) {
    time_t t = curl_getdate(HeaderValue(line, 13).c_str(), nullptr);
    r->last_modified_ms = t < 0 ? -1 : static_cast<int64_t>(t) * 1000;
  }
  return size * n;
}

// The host a URL names (for the signed host header): "127.0.0.1:4568".
std::string_view UrlHost(std::string_view url) {
  size_t start = url.find("://");
  start = start == std::string_view::npos ? 0 : start + 3;
  size_t end = url.find('/', start);
  return url.substr(start, end == std::string_view::npos ? url.size() - start : end - start);
}

std::string_view UrlPath(std::string_view url) {
  size_t start = url.find("://");
  start = start == std::string_view::npos ? 0 : start + 3;
  size_t slash = url.find('/', start);
  return slash == std::string_view::npos ? std::string_view() : url.substr(slash);
}

}  // namespace

S3Counters& MutableProcessCounters() {
  static S3Counters counters;
  return counters;
}
const S3Counters& ProcessS3Counters() { return MutableProcessCounters(); }

S3Client::S3Client(S3Options options, std::function<void(int64_t)> sleep_ms)
    : options_(std::move(options)), sleep_ms_(std::move(sleep_ms)) {
  GlobalInit();
  if (!sleep_ms_) {
    sleep_ms_ = [](int64_t ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); };
  }
}

S3Client::~S3Client() {
  for (void* c : idle_) curl_easy_cleanup(static_cast<CURL*>(c));
}

void S3Client::Count(std::atomic<int64_t> S3Counters::*counter, int64_t n) {
  (counters_.*counter) += n;
  (MutableProcessCounters().*counter) += n;
}

void* S3Client::Acquire() {
  {
    std::lock_guard lock(mu_);
    if (!idle_.empty()) {
      void* c = idle_.back();
      idle_.pop_back();
      return c;
    }
  }
  CURL* curl = curl_easy_init();
  if (curl == nullptr) std::abort();  // out of memory in libcurl: nothing sensible left to do
  return curl;
}

void S3Client::Release(void* curl) {
  std::lock_guard lock(mu_);
  idle_.push_back(curl);
}

Result<S3Client::Response> S3Client::SendOnce(const Request& rq, void* handle,
                                              std::string* transport_error) {
  CURL* curl = static_cast<CURL*>(handle);
  curl_easy_reset(curl);
  std::string url = options_.BucketUrl(rq.bucket);
  if (!rq.key.empty()) url += "/" + UriEncode(rq.key, false);
  if (rq.key.empty() && !options_.path_style) url += "/";
  std::string canonical_uri(UrlPath(url));
  if (canonical_uri.empty()) canonical_uri = "/";
  if (!rq.query.empty()) {
    url.push_back('?');
    bool first = true;
    for (const auto& [name, value] : rq.query) {
      if (!first) url.push_back('&');
      first = false;
      url += UriEncode(name, true);
      if (!value.empty()) url += "=" + UriEncode(value, true);
    }
  }

  std::string payload_hash = rq.body.empty() ? std::string(kEmptySha256) : Sha256Hex(rq.body);
  std::string amz_date = AmzDate(std::chrono::system_clock::now());
  Params signed_headers = rq.headers;
  signed_headers.emplace_back("host", std::string(UrlHost(url)));
  signed_headers.emplace_back("x-amz-content-sha256", payload_hash);
  signed_headers.emplace_back("x-amz-date", amz_date);
  if (!options_.credentials.session_token.empty()) {
    signed_headers.emplace_back("x-amz-security-token", options_.credentials.session_token);
  }
  SignInput sign{rq.method, canonical_uri, rq.query, signed_headers, payload_hash};
  std::string authorization =
      Authorization(sign, options_.credentials, options_.region, "s3", amz_date);

  curl_slist* headers = nullptr;
  for (const auto& [name, value] : signed_headers) {
    if (name == "host") continue;  // curl sends it from the URL
    headers = curl_slist_append(headers, (name + ": " + value).c_str());
  }
  headers = curl_slist_append(headers, ("Authorization: " + authorization).c_str());
  headers = curl_slist_append(headers, "Expect:");
  headers = curl_slist_append(headers, "Content-Type:");
  headers = curl_slist_append(headers, "Accept:");

  Response response;
  response.body.reserve(rq.expect_bytes);
  Upload upload{rq.body};
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_PATH_AS_IS, 1L);  // keys may hold "/./" or "/../": send as signed
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(options_.connect_timeout_ms));
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(options_.request_timeout_ms));
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, WriteBody);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &response.body);
  curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, ReadHeader);
  curl_easy_setopt(curl, CURLOPT_HEADERDATA, &response);
  std::string_view method = rq.method;
  if (method == "HEAD") {
    curl_easy_setopt(curl, CURLOPT_NOBODY, 1L);
  } else if (method == "PUT" || method == "POST") {
    curl_easy_setopt(curl, CURLOPT_UPLOAD, 1L);
    curl_easy_setopt(curl, CURLOPT_READFUNCTION, ReadBody);
    curl_easy_setopt(curl, CURLOPT_READDATA, &upload);
    curl_easy_setopt(curl, CURLOPT_SEEKFUNCTION, SeekBody);
    curl_easy_setopt(curl, CURLOPT_SEEKDATA, &upload);
    curl_easy_setopt(curl, CURLOPT_INFILESIZE_LARGE, static_cast<curl_off_t>(rq.body.size()));
    curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, rq.method);
  } else if (method != "GET") {
    curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, rq.method);
  }
  Count(&S3Counters::requests, 1);
  CURLcode code = curl_easy_perform(curl);
  curl_slist_free_all(headers);
  if (code != CURLE_OK) {
    *transport_error = curl_easy_strerror(code);
    return Status(StatusCode::kIOError, *transport_error, RetryableCurl(code));
  }
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &response.status);
  Count(&S3Counters::bytes_read, static_cast<int64_t>(response.body.size()));
  Count(&S3Counters::bytes_written, static_cast<int64_t>(rq.body.size()));
  return response;
}

Result<S3Client::Response> S3Client::Send(const Request& rq, int* attempts) {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  std::string what = fmt::format("S3 {} s3://{}/{}", rq.call, rq.bucket, rq.key);
  std::string last;
  for (int attempt = 1;; ++attempt) {
    if (attempts != nullptr) *attempts = attempt;
    void* curl = Acquire();
    std::string transport_error;
    Result<Response> r = SendOnce(rq, curl, &transport_error);
    Release(curl);
    bool retry = false;
    if (!r.ok()) {
      retry = r.status().retryable();
      last = transport_error;
    } else if (r->status >= 300 || (rq.call == "CompleteMultipartUpload" &&
                                    r->body.find("<Error>") != std::string::npos)) {
      // (CompleteMultipartUpload may answer 200 and report an error in the body.)
      S3Error e = ParseError(r->body);
      long status = r->status >= 300 ? r->status : 500;
      last = e.code.empty() ? fmt::format("HTTP {}", status)
                            : fmt::format("HTTP {} {}: {}", status, e.code, e.message);
      retry = RetryableHttp(status, e);
      if (!retry) {
        if (status != 404 && status != 412) Count(&S3Counters::failures, 1);
        if (status == 404) {
          return Status(StatusCode::kNotFound,
                        fmt::format("{}: not found ({})", what, e.code.empty() ? "404" : e.code));
        }
        if (status == 412) {
          return Status::AlreadyExists("{}: already exists ({})", what, last);
        }
        return Status::IOError("{}: {}", what, last);
      }
    } else {
      return r;
    }
    if (!retry || attempt >= options_.max_attempts) {
      Count(&S3Counters::failures, 1);
      return Status(
          StatusCode::kIOError,
          fmt::format("{}: {} (after {} attempt{})", what, last, attempt, attempt == 1 ? "" : "s"),
          retry);
    }
    Count(&S3Counters::retries, 1);
    int64_t cap = options_.retry_base_ms << std::min(attempt - 1, 20);
    cap = std::min(cap, options_.retry_max_ms);
    sleep_ms_(std::uniform_int_distribution<int64_t>(0, cap)(rng));
  }
}

}  // namespace sluice::s3
