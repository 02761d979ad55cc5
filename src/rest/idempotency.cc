#include "rest/idempotency.h"

#include <fmt/format.h>

#include <chrono>

#include "common/ascii.h"
#include "common/clock.h"
#include "common/digest.h"
#include "rest/rest_answers.h"

namespace sluice::rest {

using server::HttpRequest;
using server::HttpResponse;

bool IsUuidText(std::string_view text) {
  if (text.size() != 36) return false;
  for (size_t i = 0; i < text.size(); ++i) {
    bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    char c = text[i];
    bool hex = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
    if (dash ? c != '-' : !hex) return false;
  }
  return true;
}

// Whether an answer is final, kept and replayed: a success or the client's
// error, but for those that may change without the request changing (the
// caller's credentials or grants, a timeout, throttling).
bool IdempotencyKeys::IsFinal(int status) {
  if (status >= 500) return false;
  return status != 401 && status != 403 && status != 408 && status != 429;
}

IdempotencyKeys::IdempotencyKeys(IdempotencyOptions options) : options_(std::move(options)) {}

int64_t IdempotencyKeys::Now() const {
  if (options_.now_ms) return options_.now_ms();
  return WallMillis();
}

std::string IdempotencyKeys::LifetimeText() const {
  int64_t ms = options_.lifetime_ms;
  if (ms % 60000 == 0) return fmt::format("PT{}M", ms / 60000);
  return fmt::format("PT{}.{:03}S", ms / 1000, ms % 1000);
}

int64_t IdempotencyKeys::stored() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int64_t>(entries_.size());
}

// Forgets answers past their lifetime, then the oldest while over the byte
// budget. Only stored answers are queued (a running request's key stays
// until it finishes); the queue is in the order they were stored, so one
// expired behind a younger front waits for the lookup's own check.
void IdempotencyKeys::EvictLocked(int64_t now) {
  while (!arrivals_.empty()) {
    const auto& [first_ms, key] = arrivals_.front();
    auto it = entries_.find(key);
    if (it == entries_.end() || it->second.first_ms != first_ms) {  // released or re-run
      arrivals_.pop_front();
      continue;
    }
    bool expired = now - first_ms > options_.lifetime_ms;
    if (!expired && bytes_ <= options_.max_bytes) break;
    bytes_ -= it->second.bytes;
    entries_.erase(it);
    arrivals_.pop_front();
  }
}

HttpResponse IdempotencyKeys::Run(const std::string& principal, const HttpRequest& req,
                                  const std::function<HttpResponse()>& run) {
  const std::string* given = req.Find("idempotency-key");
  if (given == nullptr) return run();
  if (!IsUuidText(*given)) {
    return internal::Error(400, "BadRequestException",
                           "Idempotency-Key must be a UUID (36 characters, 8-4-4-4-12 hex digits)");
  }
  const Key key{principal, AsciiLower(*given)};
  const std::string fingerprint =
      fmt::format("{} {}?{}\n{}", req.method, req.path, req.query, Sha256Hex(req.body));
  std::unique_lock<std::mutex> lock(mu_);
  EvictLocked(Now());
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(options_.wait_ms);
  while (true) {
    auto it = entries_.find(key);
    if (it != entries_.end() && it->second.done &&
        Now() - it->second.first_ms > options_.lifetime_ms) {
      // Past its lifetime (and not yet evicted: an older request still
      // runs): forgotten.
      bytes_ -= it->second.bytes;
      entries_.erase(it);
      it = entries_.end();
    }
    if (it == entries_.end()) break;  // new, or released by a 5xx: this request runs
    if (it->second.fingerprint != fingerprint) {
      return internal::Error(
          422, "UnprocessableEntityException",
          fmt::format("Idempotency-Key {} was first used for another request; a new operation "
                      "needs a new key",
                      key.second));
    }
    if (it->second.done) {
      HttpResponse replay = it->second.answer;
      replay.Set("Idempotent-Replayed", "true");
      return replay;
    }
    if (finished_.wait_until(lock, deadline) == std::cv_status::timeout) {
      return internal::Error(503, "ServiceUnavailableException",
                             fmt::format("the first request with Idempotency-Key {} is still "
                                         "running; retry with the same key",
                                         key.second));
    }
  }
  const int64_t now = Now();  // (after any wait)
  entries_[key] = Entry{fingerprint, now, false, {}, 0};
  lock.unlock();

  HttpResponse answer;
  try {
    answer = run();
  } catch (...) {  // not final: the key is released for a retry
    lock.lock();
    entries_.erase(key);
    finished_.notify_all();
    throw;
  }
  lock.lock();
  auto it = entries_.find(key);
  if (!IsFinal(answer.status)) {
    entries_.erase(it);
  } else {
    it->second.done = true;
    it->second.answer = answer;
    it->second.bytes = static_cast<int64_t>(answer.body.size() + fingerprint.size() +
                                            key.first.size() + key.second.size() + 64);
    bytes_ += it->second.bytes;
    // Queued once stored, so that the queue's front is always a stored
    // answer and the budget holds while long requests run.
    arrivals_.emplace_back(now, key);
    EvictLocked(Now());
  }
  finished_.notify_all();
  return answer;
}

}  // namespace sluice::rest
