#include "io/s3/s3_client.h"

#include <openssl/evp.h>
#include <openssl/md5.h>

#include <ctime>
#include <pugixml.hpp>

#include "io/s3/s3_request.h"

namespace sluice::s3 {
namespace {

std::string Base64Md5(std::string_view data) {
  unsigned char digest[MD5_DIGEST_LENGTH];
  EVP_Digest(data.data(), data.size(), digest, nullptr, EVP_md5(), nullptr);
  unsigned char out[32];
  int n = EVP_EncodeBlock(out, digest, sizeof(digest));
  return std::string(reinterpret_cast<const char*>(out), n);
}

std::string HexMd5(std::string_view data) {
  unsigned char digest[MD5_DIGEST_LENGTH];
  EVP_Digest(data.data(), data.size(), digest, nullptr, EVP_md5(), nullptr);
  return HexLower(std::string_view(reinterpret_cast<const char*>(digest), sizeof(digest)));
}

std::string Unquoted(std::string_view etag) {
  if (etag.size() >= 2 && etag.front() == '"' && etag.back() == '"') {
    etag = etag.substr(1, etag.size() - 2);
  }
  return std::string(etag);
}

std::string XmlEscape(std::string_view s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default: out.push_back(c);
    }
  }
  return out;
}

// "2009-10-12T17:50:30.000Z" to milliseconds since the epoch (-1: unreadable).
int64_t ParseIsoTime(std::string_view s) {
  std::tm tm{};
  int ms = 0;
  if (std::sscanf(std::string(s).c_str(), "%d-%d-%dT%d:%d:%d.%dZ", &tm.tm_year, &tm.tm_mon,
                  &tm.tm_mday, &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &ms) < 6) {
    return -1;
  }
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  return static_cast<int64_t>(timegm(&tm)) * 1000 + ms;
}

}  // namespace

bool IsS3Path(std::string_view path) {
  return path.rfind("s3://", 0) == 0 || path.rfind("s3a://", 0) == 0 ||
         path.rfind("s3n://", 0) == 0;
}

Result<ObjectPath> ParseS3Path(std::string_view path) {
  if (!IsS3Path(path)) return Status::Invalid("'{}' is not an s3:// location", path);
  size_t colon = path.find("://");
  ObjectPath p;
  p.scheme = std::string(path.substr(0, colon));
  std::string_view rest = path.substr(colon + 3);
  size_t slash = rest.find('/');
  p.bucket = std::string(rest.substr(0, slash));
  if (slash != std::string_view::npos) p.key = std::string(rest.substr(slash + 1));
  if (p.bucket.empty()) return Status::Invalid("'{}' names no bucket", path);
  return p;
}

Status S3Client::CreateBucket(const std::string& bucket) {
  Request rq = Request::Of("PUT", "CreateBucket", bucket);
  auto r = Send(rq);
  if (!r.ok() && r.status().message().find("BucketAlreadyOwnedByYou") != std::string::npos) {
    return Status::OK();
  }
  return r.status();
}

Result<ObjectInfo> S3Client::Head(const std::string& bucket, const std::string& key) {
  Request rq = Request::Of("HEAD", "HeadObject", bucket, key);
  ASSIGN_OR_RETURN(Response r, Send(rq));
  return ObjectInfo{r.content_length, r.last_modified_ms, r.etag};
}

Status S3Client::Get(const std::string& bucket, const std::string& key, int64_t offset,
                     int64_t length, std::string* out) {
  out->clear();
  if (length == 0) return Status::OK();
  Request rq = Request::Of("GET", "GetObject", bucket, key);
  rq.headers.emplace_back("range", fmt::format("bytes={}-{}", offset, offset + length - 1));
  rq.expect_bytes = static_cast<size_t>(length);
  for (int tries = 0;; ++tries) {
    ASSIGN_OR_RETURN(Response r, Send(rq));
    if (static_cast<int64_t>(r.body.size()) == length) {
      *out = std::move(r.body);
      return Status::OK();
    }
    // A short body with a complete answer: the object changed under us, or a
    // proxy cut it. Once more, then an error.
    if (tries == 1) {
      return Status::IOError("S3 GetObject s3://{}/{}: asked for {} bytes at {}, got {}", bucket,
                             key, length, offset, r.body.size());
    }
  }
}

Status S3Client::Put(const std::string& bucket, const std::string& key, std::string_view body,
                     bool if_none_match) {
  Request rq = Request::Of("PUT", "PutObject", bucket, key);
  rq.body = body;
  if (if_none_match) rq.headers.emplace_back("if-none-match", "*");
  Status st = Send(rq).status();
  if (st.code() == StatusCode::kAlreadyExists) {
    // A retry (ours, or curl's resend on a dead reused connection) of a write
    // whose answer was lost finds the object it wrote: the same bytes (a
    // single PUT's ETag is their MD5) mean it is ours.
    auto info = Head(bucket, key);
    if (info.ok() && info->size == static_cast<int64_t>(body.size()) &&
        Unquoted(info->etag) == HexMd5(body)) {
      return Status::OK();
    }
  }
  return st;
}

Status S3Client::Delete(const std::string& bucket, const std::string& key) {
  Request rq = Request::Of("DELETE", "DeleteObject", bucket, key);
  return Send(rq).status();
}

Result<std::vector<std::string>> S3Client::DeleteMany(const std::string& bucket,
                                                      const std::vector<std::string>& keys) {
  std::vector<std::string> failed;
  if (keys.empty()) return failed;
  if (keys.size() > 1000) {
    return Status::Invalid("S3 DeleteObjects: {} keys, at most 1000 per call", keys.size());
  }
  std::string body = "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Delete><Quiet>true</Quiet>";
  for (const std::string& k : keys) body += "<Object><Key>" + XmlEscape(k) + "</Key></Object>";
  body += "</Delete>";
  Request rq = Request::Of("POST", "DeleteObjects", bucket);
  rq.query = {{"delete", ""}};
  rq.body = body;
  rq.headers.emplace_back("content-md5", Base64Md5(body));
  ASSIGN_OR_RETURN(Response r, Send(rq));
  pugi::xml_document doc;
  if (!doc.load_buffer(r.body.data(), r.body.size())) {
    return Status::IOError("S3 DeleteObjects s3://{}: unreadable answer", bucket);
  }
  for (pugi::xml_node e : doc.child("DeleteResult").children("Error")) {
    failed.push_back(fmt::format("{}: {} {}", e.child_value("Key"), e.child_value("Code"),
                                 e.child_value("Message")));
  }
  return failed;
}

Result<ListPage> S3Client::List(const std::string& bucket, const std::string& prefix,
                                const std::string& continuation_token) {
  Request rq = Request::Of("GET", "ListObjectsV2", bucket);
  rq.query = {{"list-type", "2"}, {"prefix", prefix}};
  if (!continuation_token.empty()) rq.query.emplace_back("continuation-token", continuation_token);
  ASSIGN_OR_RETURN(Response r, Send(rq));
  pugi::xml_document doc;
  if (!doc.load_buffer(r.body.data(), r.body.size())) {
    return Status::IOError("S3 ListObjectsV2 s3://{}/{}: unreadable answer", bucket, prefix);
  }
  pugi::xml_node root = doc.child("ListBucketResult");
  ListPage page;
  for (pugi::xml_node c : root.children("Contents")) {
    page.objects.push_back({c.child_value("Key"), std::strtoll(c.child_value("Size"), nullptr, 10),
                            ParseIsoTime(c.child_value("LastModified"))});
  }
  if (std::string_view(root.child_value("IsTruncated")) == "true") {
    page.next_token = root.child_value("NextContinuationToken");
    if (page.next_token.empty()) {
      return Status::IOError("S3 ListObjectsV2 s3://{}/{}: truncated without a continuation",
                             bucket, prefix);
    }
  }
  return page;
}

Result<std::string> S3Client::StartUpload(const std::string& bucket, const std::string& key) {
  Request rq = Request::Of("POST", "CreateMultipartUpload", bucket, key);
  rq.query = {{"uploads", ""}};
  ASSIGN_OR_RETURN(Response r, Send(rq));
  pugi::xml_document doc;
  doc.load_buffer(r.body.data(), r.body.size());
  std::string id = doc.child("InitiateMultipartUploadResult").child_value("UploadId");
  if (id.empty()) {
    return Status::IOError("S3 CreateMultipartUpload s3://{}/{}: no upload id in the answer",
                           bucket, key);
  }
  return id;
}

Result<std::string> S3Client::UploadPart(const std::string& bucket, const std::string& key,
                                         const std::string& upload_id, int number,
                                         std::string_view body) {
  Request rq = Request::Of("PUT", fmt::format("UploadPart {}", number), bucket, key);
  rq.query = {{"partNumber", std::to_string(number)}, {"uploadId", upload_id}};
  rq.body = body;
  ASSIGN_OR_RETURN(Response r, Send(rq));
  if (r.etag.empty()) {
    return Status::IOError("S3 UploadPart {} s3://{}/{}: no ETag in the answer", number, bucket,
                           key);
  }
  return r.etag;
}

Status S3Client::CompleteUpload(const std::string& bucket, const std::string& key,
                                const std::string& upload_id,
                                const std::vector<CompletedPart>& parts, int64_t expected_size,
                                bool if_none_match) {
  std::string body = "<?xml version=\"1.0\" encoding=\"UTF-8\"?><CompleteMultipartUpload>";
  for (const CompletedPart& p : parts) {
    body += fmt::format("<Part><PartNumber>{}</PartNumber><ETag>{}</ETag></Part>", p.number,
                        XmlEscape(p.etag));
  }
  body += "</CompleteMultipartUpload>";
  Request rq = Request::Of("POST", "CompleteMultipartUpload", bucket, key);
  rq.query = {{"uploadId", upload_id}};
  rq.body = body;
  if (if_none_match) rq.headers.emplace_back("if-none-match", "*");
  auto r = Send(rq);
  if (!r.ok() && r.status().code() == StatusCode::kNotFound) {
    // An earlier attempt (ours, or curl's resend on a dead reused connection)
    // may have completed the upload and lost its answer: the object is there,
    // of this size, with a multipart ETag of this many parts ("...-N").
    auto info = Head(bucket, key);
    if (info.ok() && info->size == expected_size &&
        Unquoted(info->etag).ends_with(fmt::format("-{}", parts.size()))) {
      return Status::OK();
    }
  }
  return r.status();
}

Status S3Client::AbortUpload(const std::string& bucket, const std::string& key,
                             const std::string& upload_id) {
  Request rq = Request::Of("DELETE", "AbortMultipartUpload", bucket, key);
  rq.query = {{"uploadId", upload_id}};
  return Send(rq).status();
}

}  // namespace sluice::s3
