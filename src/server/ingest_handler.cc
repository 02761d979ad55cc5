// POST /v1/streams/{stream}/records: headers and stream checks, bounded body read,
// validation, durable append, acknowledgement. Contract: docs/http_api.md.
#include <cctype>
#include <charconv>
#include <nlohmann/json.hpp>
#include <optional>

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

std::string StreamOf(const httplib::Request& req) {
  return req.matches.size() > 1 ? std::string(req.matches[1]) : std::string();
}

std::optional<int64_t> ParseNonNegative(const std::string& s) {
  int64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || v < 0) return std::nullopt;
  return v;
}

// The idempotency key of the request; on a bad header sets a 400 and returns false.
bool ParseKey(const httplib::Request& req, httplib::Response& res,
              std::optional<log::IdempotencyKey>* key) {
  bool has_key = req.has_header("Idempotency-Key");
  bool has_producer = req.has_header("Sluice-Producer-Id");
  bool has_sequence = req.has_header("Sluice-Sequence");
  if (has_key && (has_producer || has_sequence)) {
    SetError(res, 400, "use either Idempotency-Key or Sluice-Producer-Id/Sluice-Sequence");
    return false;
  }
  if (has_key) {
    std::string k = req.get_header_value("Idempotency-Key");
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
    auto producer = ParseNonNegative(req.get_header_value("Sluice-Producer-Id"));
    auto sequence = ParseNonNegative(req.get_header_value("Sluice-Sequence"));
    if (!producer || !sequence) {
      SetError(res, 400, "Sluice-Producer-Id and Sluice-Sequence must be integers >= 0");
      return false;
    }
    *key = log::IdempotencyKey{*producer, *sequence};
  }
  return true;
}

bool IsMultipart(const httplib::Request& req) {
  std::string type = req.get_header_value("Content-Type").substr(0, 10);
  for (char& c : type) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return type == "multipart/";
}

int StatusForAppendError(const Status& st) {
  switch (st.code()) {
    case StatusCode::kOutOfRange: return 409;       // producer sequence below its window
    case StatusCode::kInvalidArgument: return 400;  // e.g. batch over the log's limit
    default: return 500;
  }
}

}  // namespace

int PrecheckIngest(const IngestContext& ctx, const std::string& stream, const httplib::Request& req,
                   httplib::Response& res) {
  if (req.has_header("Content-Length") && req.get_header_value<uint64_t>("Content-Length") >
                                              static_cast<uint64_t>(ctx.max_body_bytes)) {
    SetError(res, 413, fmt::format("body exceeds {} bytes", ctx.max_body_bytes));
    return 413;
  }
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
    res.set_header("Retry-After", std::to_string(std::max(1, bp->retry_after_s)));
    return code;
  }
  return 0;
}

void HandleIngest(const IngestContext& ctx, const httplib::Request& req, httplib::Response& res,
                  const httplib::ContentReader& content_reader) {
  // Read the (bounded) body first, so the connection stays usable whatever the answer.
  // Without Content-Length or chunked encoding a request has no body (httplib would
  // read until the client closes).
  std::string body;
  bool too_big = false;
  bool read_ok = true;
  if (IsMultipart(req)) {  // httplib would run its form parser on it: refuse unread
    PrecheckIngest(ctx, StreamOf(req), req, res);
    res.set_header("Connection", "close");
    return;
  }
  if (HasBody(req)) {
    read_ok = content_reader([&](const char* data, size_t n) {
      if (body.size() + n > static_cast<size_t>(ctx.max_body_bytes)) {
        too_big = true;
        return false;
      }
      body.append(data, n);
      return true;
    });
  }
  if (!read_ok || too_big) {
    // Content-Length over the limit (already skipped by httplib: 413), a chunked body
    // over the limit (unread chunks remain: close), or a broken body.
    if (too_big || res.status == 413) {
      SetError(res, 413, fmt::format("body exceeds {} bytes", ctx.max_body_bytes));
    } else {
      SetError(res, 400, "could not read the request body");
    }
    res.set_header("Connection", "close");
    return;
  }
  std::string stream = StreamOf(req);
  if (int code = PrecheckIngest(ctx, stream, req, res); code != 0) return;

  std::optional<log::IdempotencyKey> key;
  if (!ParseKey(req, res, &key)) return;
  ParsedBody parsed = IsJsonArrayBody(req.get_header_value("Content-Type"), body)
                          ? ParseJsonArrayBody(body)
                          : ParseNdjsonBody(body);
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
  Result<log::AppendResult> appended =
      log->Append(std::span<const std::string_view>(parsed.records), key);
  if (!appended.ok()) {
    SetError(res, StatusForAppendError(appended.status()),
             fmt::format("stream '{}': append failed: {}", stream, appended.status().ToString()));
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
  res.set_content(answer.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
                  "application/json");
}

}  // namespace internal
}  // namespace sluice::server
