// POST /v1/streams/{stream}/records: headers and stream checks, bounded body read,
// validation, durable append, acknowledgement. Contract: docs/http_api.md.
#include <cctype>
#include <charconv>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <optional>

#include "common/ascii.h"
#include "server/content_coding.h"
#include "server/http_internal.h"
#include "server/ingest_body.h"

namespace sluice::server {

int64_t IdempotencyProducerId(std::string_view key) {
  uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a 64
  for (unsigned char c : key) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return static_cast<int64_t>(h & 0x7fffffffffffffffULL);
}

namespace internal {

namespace {

constexpr size_t kMaxIdempotencyKeyBytes = 200;

std::optional<int64_t> ParseNonNegative(const std::string& s) {
  int64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || v < 0) return std::nullopt;
  return v;
}

// The idempotency key of the request; on a bad header sets a 400 and returns false.
bool ParseKey(const HttpRequest& req, HttpResponse& res, std::optional<log::IdempotencyKey>* key) {
  bool has_key = req.Has("idempotency-key");
  bool has_producer = req.Has("sluice-producer-id");
  bool has_sequence = req.Has("sluice-sequence");
  if (req.Count("idempotency-key") > 1 || req.Count("sluice-producer-id") > 1 ||
      req.Count("sluice-sequence") > 1) {
    SetError(res, 400, "an idempotency header is sent more than once");
    return false;
  }
  if (has_key && (has_producer || has_sequence)) {
    SetError(res, 400, "use either Idempotency-Key or Sluice-Producer-Id/Sluice-Sequence");
    return false;
  }
  if (has_key) {
    std::string k = req.Get("idempotency-key");
    if (k.empty() || k.size() > kMaxIdempotencyKeyBytes) {
      SetError(res, 400,
               fmt::format("Idempotency-Key must have 1 to {} characters, got {}",
                           kMaxIdempotencyKeyBytes, k.size()));
      return false;
    }
    *key = log::IdempotencyKey{IdempotencyProducerId(k), 0};
    return true;
  }
  if (has_producer != has_sequence) {
    SetError(res, 400, "Sluice-Producer-Id and Sluice-Sequence go together");
    return false;
  }
  if (has_producer) {
    auto producer = ParseNonNegative(req.Get("sluice-producer-id"));
    auto sequence = ParseNonNegative(req.Get("sluice-sequence"));
    if (!producer || !sequence) {
      SetError(res, 400, "Sluice-Producer-Id and Sluice-Sequence must be integers >= 0");
      return false;
    }
    *key = log::IdempotencyKey{*producer, *sequence};
  }
  return true;
}

bool IsMultipart(const HttpRequest& req) {
  return AsciiLower(req.Get("content-type").substr(0, 10)) == "multipart/";
}

int StatusForAppendError(const Status& st) {
  switch (st.code()) {
    case StatusCode::kOutOfRange: return 409;       // producer sequence below its window
    case StatusCode::kInvalidArgument: return 400;  // e.g. a negative key
    default: return 500;
  }
}

}  // namespace

int PrecheckIngest(const IngestContext& ctx, const std::string& stream, const HttpRequest& req,
                   HttpResponse& res) {
  if (IsMultipart(req)) {
    SetError(res, 415, "multipart bodies are not accepted: send NDJSON or a JSON array");
    return 415;
  }
  std::optional<log::IdempotencyKey> key;
  if (!ParseKey(req, res, &key)) return 400;
  if (ctx.target->FindStream(stream) == nullptr) {
    SetError(res, 404, fmt::format("stream '{}' not found", stream));
    return 404;
  }
  if (auto bp = ctx.target->CheckBackpressure(stream)) {
    int code = bp->kind == Backpressure::Kind::kBehind ? 429 : 503;
    std::string reason = bp->reason.empty() ? "stream is not accepting records" : bp->reason;
    SetError(res, code, fmt::format("stream '{}': {}", stream, reason));
    res.Set("Retry-After", std::to_string(std::max(1, bp->retry_after_s)));
    return code;
  }
  return 0;
}

void HandleIngest(const IngestContext& ctx, const std::string& stream, const HttpRequest& req,
                  HttpResponse& res) {
  if (int code = PrecheckIngest(ctx, stream, req, res); code != 0) return;
  std::optional<log::IdempotencyKey> key;
  if (!ParseKey(req, res, &key)) return;
  // The limit applies to the decoded body too (a small gzip body can expand a lot).
  std::string decoded_storage;
  const std::string* body = &req.body;
  if (std::string encoding = req.Get("content-encoding"); !encoding.empty()) {
    auto decoded = DecodeContent(encoding, req.body, ctx.max_body_bytes);
    if (!decoded.ok()) {
      int code = decoded.status().code() == StatusCode::kOutOfRange       ? 413
                 : decoded.status().code() == StatusCode::kNotImplemented ? 415
                                                                          : 400;
      SetError(res, code, decoded.status().message());
      return;
    }
    decoded_storage = std::move(*decoded);
    body = &decoded_storage;
  }
  ParsedBody parsed = IsJsonArrayBody(req.Get("content-type"), *body) ? ParseJsonArrayBody(*body)
                                                                      : ParseNdjsonBody(*body);
  if (!parsed.ok) {
    if (parsed.error.line >= 0) {
      SetError(res, 400, parsed.error.message, "line", parsed.error.line);
    } else if (parsed.error.index >= 0) {
      SetError(res, 400, parsed.error.message, "index", parsed.error.index);
    } else {
      SetError(res, 400, parsed.error.message);
    }
    return;
  }
  if (parsed.records.empty()) {
    SetError(res, 400, "the body holds no records");
    return;
  }
  log::StreamLog* log = ctx.target->FindStream(stream);
  if (log == nullptr) {  // removed since the precheck
    SetError(res, 404, fmt::format("stream '{}' not found", stream));
    return;
  }
  // The log frames each record (4 bytes); a body within the server's limit can still
  // pass the log's batch limit, which the client cannot know: say so with 413.
  int64_t framed = parsed.record_bytes + 4 * static_cast<int64_t>(parsed.records.size());
  if (framed > log->max_batch_bytes()) {
    SetError(res, 413,
             fmt::format("stream '{}': {} records take {} bytes in the log, over its batch limit "
                         "of {} bytes: split the batch",
                         stream, parsed.records.size(), framed, log->max_batch_bytes()));
    return;
  }
  Result<log::AppendResult> appended =
      log->Append(std::span<const std::string_view>(parsed.records), key);
  if (!appended.ok()) {
    int code = StatusForAppendError(appended.status());
    if (code == 500) {  // the full message (paths included) goes to the server's log
      std::fprintf(stderr, "sluice: http: stream '%s': append failed: %s\n", stream.c_str(),
                   PrintableText(appended.status().ToString()).c_str());
    }
    SetError(res, code,
             fmt::format("stream '{}': append failed: {}", stream,
                         WithoutPaths(appended.status().ToString())));
    return;
  }
  auto count = static_cast<int64_t>(parsed.records.size());
  if (!appended->duplicate) ctx.target->OnAppended(stream, count, parsed.record_bytes);
  nlohmann::ordered_json answer;
  answer["stream"] = stream;
  answer["first_offset"] = appended->first_offset;
  answer["last_offset"] = appended->last_offset;
  answer["records"] = appended->last_offset - appended->first_offset + 1;
  answer["duplicate"] = appended->duplicate;
  res.status = 200;
  res.SetContent(answer.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
                 "application/json");
}

}  // namespace internal
}  // namespace sluice::server
