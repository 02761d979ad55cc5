// IdempotencyKeys: the REST spec's optional Idempotency-Key header on
// mutations, so that a client whose answer was lost (a timeout, a proxy's
// 502 after the commit landed) can send the same request again and learn
// its outcome instead of applying it twice.
//
// Contract:
// - A key is a UUID in its 36-character text form (the spec asks for UUIDv7;
//   any version is taken); another shape is refused (400) before anything runs.
// - Keys are scoped by caller (the authenticated principal's name): one
//   client's key never replays another's answer.
// - The first request under a key runs. Its answer is final, stored and
//   replayed to every later request with that key for `lifetime` from its
//   first arrival, when it is below 500 but 401, 403, 408 and 429; a 5xx
//   (or one of those) is not final: the key is released and a retry runs
//   again. A replay carries the header `Idempotent-Replayed: true` (sluice's
//   client tells a replay from a fresh answer by it).
// - A request under a known key must be the same request (method, path,
//   query and body); another is refused (422 UnprocessableEntityException)
//   and runs nothing.
// - A request arriving while the first under its key still runs waits for
//   that one's answer (up to `wait_ms`; then 503, which is not final) and is
//   answered with it: a retried commit never races its original.
// - Stored answers take at most `max_bytes` (bodies and keys): past it the
//   oldest go before their lifetime ends (a retry of theirs runs again).
//   Answers past their lifetime are forgotten. Kept in memory: a restart of
//   the server forgets them (docs/serving.md).
// - Thread-safe.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>

#include "server/http_message.h"

namespace sluice::rest {

struct IdempotencyOptions {
  int64_t lifetime_ms = 30 * 60 * 1000;  // advertised as idempotency-key-lifetime
  int64_t max_bytes = int64_t{256} << 20;
  int64_t wait_ms = 60 * 1000;
  std::function<int64_t()> now_ms;  // default: the wall clock
};

class IdempotencyKeys {
 public:
  explicit IdempotencyKeys(IdempotencyOptions options = {});

  // The answer to `req` (a mutation) by `principal`: run() when its
  // Idempotency-Key is new (or absent: then always), else the stored one.
  server::HttpResponse Run(const std::string& principal, const server::HttpRequest& req,
                           const std::function<server::HttpResponse()>& run);

  // The lifetime as an ISO-8601 duration ("PT30M"), for GET /v1/config.
  std::string LifetimeText() const;
  int64_t stored() const;  // answers kept now

 private:
  struct Entry {
    std::string fingerprint;  // method, path, query and the body's SHA-256
    int64_t first_ms = 0;
    bool done = false;
    server::HttpResponse answer;
    int64_t bytes = 0;
  };
  using Key = std::pair<std::string, std::string>;  // principal, key

  static bool IsFinal(int status);
  int64_t Now() const;
  void EvictLocked(int64_t now);

  const IdempotencyOptions options_;
  mutable std::mutex mu_;
  std::condition_variable finished_;
  std::map<Key, Entry> entries_;
  std::deque<std::pair<int64_t, Key>> arrivals_;  // (first_ms, key), oldest first
  int64_t bytes_ = 0;
};

// Whether `text` is a UUID in its canonical text form (8-4-4-4-12 hex digits).
bool IsUuidText(std::string_view text);

}  // namespace sluice::rest
