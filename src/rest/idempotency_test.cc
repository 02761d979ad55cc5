// IdempotencyKeys on its own, with an injected clock: a keyed request runs
// once and its retries get its answer, a 5xx or an exception is not final, a
// key names one request of one caller, and answers go after their lifetime
// or past the byte budget.
#include "rest/idempotency.h"

#include <gtest/gtest.h>

#include <cctype>
#include <future>
#include <thread>

#include "common/uuid.h"

namespace sluice::rest {
namespace {

using server::HttpRequest;
using server::HttpResponse;

HttpRequest Post(const std::string& key, const std::string& body = "{}",
                 const std::string& path = "/v1/namespaces") {
  HttpRequest req;
  req.method = "POST";
  req.path = path;
  req.body = body;
  if (!key.empty()) req.headers.emplace_back("idempotency-key", key);
  return req;
}

HttpResponse Answer(int status, const std::string& body) {
  HttpResponse res;
  res.status = status;
  res.SetContent(body, "application/json");
  return res;
}

// A request under `key` whose run() blocks (on another thread) until
// Finish(): the first of its key, still running.
class Running {
 public:
  Running(IdempotencyKeys& keys, const std::string& key, std::string body = "{}") {
    std::shared_future<void> go = release_.get_future().share();
    std::promise<void> started;
    std::future<void> up = started.get_future();
    thread_ = std::thread([&keys, key, body, go, started = std::move(started)]() mutable {
      keys.Run("alice", Post(key), [&] {
        started.set_value();
        go.wait();
        return Answer(200, body);
      });
    });
    up.wait();
  }
  ~Running() { Finish(); }
  void Finish() {
    if (!thread_.joinable()) return;
    release_.set_value();
    thread_.join();
  }

 private:
  std::promise<void> release_;
  std::thread thread_;
};

class IdempotencyTest : public ::testing::Test {
 protected:
  IdempotencyOptions Options() {
    IdempotencyOptions o;
    o.now_ms = [this] { return now_ms_; };
    return o;
  }
  // Runs `req` as `who`; the answer run() would give is `status` with a body
  // numbering the run.
  HttpResponse Run(IdempotencyKeys& keys, const HttpRequest& req, int status = 200,
                   const std::string& who = "alice") {
    return keys.Run(who, req, [&] {
      ++runs_;
      return Answer(status, "{\"run\": " + std::to_string(runs_) + "}");
    });
  }
  int64_t now_ms_ = 1'000'000;
  int runs_ = 0;
};

TEST_F(IdempotencyTest, AKeyedRequestRunsOnceAndItsRetriesGetTheFirstAnswer) {
  IdempotencyKeys keys(Options());
  const std::string key = NewUuidV7();
  HttpResponse first = Run(keys, Post(key), 409);  // a terminal 4xx is final too
  EXPECT_EQ(first.Get("Idempotent-Replayed"), "");
  for (int i = 0; i < 3; ++i) {
    HttpResponse again = Run(keys, Post(key), 200);
    EXPECT_EQ(again.status, 409);
    EXPECT_EQ(again.body, first.body);
    EXPECT_EQ(again.Get("Idempotent-Replayed"), "true");
  }
  EXPECT_EQ(runs_, 1);
  // Keys are case-insensitive hex.
  std::string upper = key;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  EXPECT_EQ(Run(keys, Post(upper)).body, first.body);
  EXPECT_EQ(runs_, 1);
  EXPECT_EQ(keys.stored(), 1);
}

TEST_F(IdempotencyTest, RequestsWithoutAKeyAlwaysRun) {
  IdempotencyKeys keys(Options());
  Run(keys, Post(""));
  Run(keys, Post(""));
  EXPECT_EQ(runs_, 2);
  EXPECT_EQ(keys.stored(), 0);
}

TEST_F(IdempotencyTest, AKeyThatIsNoUuidIsRefusedBeforeAnythingRuns) {
  IdempotencyKeys keys(Options());
  for (std::string bad :
       {"abc", "0190f2a4-7b3c-7def-8123-456789abcde", "0190f2a4-7b3c-7def-8123-456789abcdeg",
        "0190f2a4x7b3c-7def-8123-456789abcdef"}) {
    HttpResponse r = Run(keys, Post(bad));
    EXPECT_EQ(r.status, 400) << bad;
    EXPECT_NE(r.body.find("Idempotency-Key must be a UUID"), std::string::npos) << r.body;
  }
  EXPECT_EQ(runs_, 0);
}

TEST_F(IdempotencyTest, AKeyUsedAgainForAnotherRequestIsRefused) {
  IdempotencyKeys keys(Options());
  const std::string key = NewUuidV7();
  Run(keys, Post(key, "{\"a\": 1}"));
  for (const HttpRequest& other :
       {Post(key, "{\"a\": 2}"), Post(key, "{\"a\": 1}", "/v1/tables/rename")}) {
    HttpResponse r = Run(keys, other);
    EXPECT_EQ(r.status, 422);
    EXPECT_NE(r.body.find("first used for another request"), std::string::npos) << r.body;
  }
  EXPECT_EQ(runs_, 1);
}

TEST_F(IdempotencyTest, AServerErrorOrAnExceptionIsNotFinal) {
  IdempotencyKeys keys(Options());
  const std::string key = NewUuidV7();
  EXPECT_EQ(Run(keys, Post(key), 503).status, 503);
  EXPECT_EQ(keys.stored(), 0);
  EXPECT_THROW(
      keys.Run("alice", Post(key), []() -> HttpResponse { throw std::runtime_error("x"); }),
      std::runtime_error);
  EXPECT_EQ(keys.stored(), 0);
  EXPECT_EQ(Run(keys, Post(key), 200).body, "{\"run\": 2}");
  EXPECT_EQ(Run(keys, Post(key), 200).body, "{\"run\": 2}");
  EXPECT_EQ(runs_, 2);
}

// Answers that depend on the caller's credentials or the moment, not on the
// request, are not kept: a retry runs again.
TEST_F(IdempotencyTest, AnswersOfCredentialsTimeoutsAndThrottlingAreNotFinal) {
  IdempotencyKeys keys(Options());
  const std::string key = NewUuidV7();
  for (int status : {401, 403, 408, 429}) EXPECT_EQ(Run(keys, Post(key), status).status, status);
  EXPECT_EQ(keys.stored(), 0);
  EXPECT_EQ(Run(keys, Post(key), 404).body, "{\"run\": 5}");
  EXPECT_EQ(Run(keys, Post(key), 200).body, "{\"run\": 5}") << "a 404 is final";
}

TEST_F(IdempotencyTest, KeysAreScopedByCaller) {
  IdempotencyKeys keys(Options());
  const std::string key = NewUuidV7();
  EXPECT_EQ(Run(keys, Post(key), 200, "alice").body, "{\"run\": 1}");
  EXPECT_EQ(Run(keys, Post(key), 200, "bob").body, "{\"run\": 2}");
  EXPECT_EQ(Run(keys, Post(key), 200, "alice").body, "{\"run\": 1}");
}

TEST_F(IdempotencyTest, AnAnswerIsForgottenAfterTheLifetime) {
  IdempotencyKeys keys(Options());
  const std::string key = NewUuidV7();
  Run(keys, Post(key));
  now_ms_ += 30 * 60 * 1000;  // exactly the lifetime: still kept
  EXPECT_EQ(Run(keys, Post(key)).body, "{\"run\": 1}");
  now_ms_ += 1;
  Run(keys, Post(NewUuidV7()));  // a new key's arrival evicts the old one
  EXPECT_EQ(Run(keys, Post(key)).body, "{\"run\": 3}");
  EXPECT_EQ(keys.LifetimeText(), "PT30M");
}

// An answer past its lifetime is forgotten even while an older request
// still runs (eviction waits for that one, the lookup does not).
TEST_F(IdempotencyTest, AnAnswerPastItsLifetimeIsForgottenBehindARunningRequest) {
  IdempotencyKeys keys(Options());
  Running slow(keys, NewUuidV7());
  const std::string key = NewUuidV7();
  Run(keys, Post(key));
  now_ms_ += 30 * 60 * 1000 + 1;
  EXPECT_EQ(Run(keys, Post(key)).body, "{\"run\": 2}");
}

TEST_F(IdempotencyTest, TheOldestAnswersGoPastTheByteBudget) {
  IdempotencyOptions o = Options();
  o.max_bytes = 1500;  // two of the answers below, not three
  IdempotencyKeys keys(o);
  const std::string big(400, 'x');
  std::vector<std::string> ids;
  for (int i = 0; i < 3; ++i) {
    ids.push_back(NewUuidV7());
    keys.Run("alice", Post(ids.back()), [&] { return Answer(200, big); });
  }
  EXPECT_EQ(keys.stored(), 2);
  int ran = 0;
  keys.Run("alice", Post(ids[0]), [&] {
    ++ran;
    return Answer(200, "{}");
  });
  EXPECT_EQ(ran, 1) << "the oldest answer went";
  HttpResponse kept = keys.Run("alice", Post(ids[2]), [&] {
    ++ran;
    return Answer(200, "{}");
  });
  EXPECT_EQ(ran, 1);
  EXPECT_EQ(kept.body, big);
}

// A retry arriving while its original still runs (a client that timed out)
// waits for it and gets its answer: the operation runs once.
TEST_F(IdempotencyTest, ARetryWhileTheFirstRunsWaitsForItsAnswer) {
  IdempotencyKeys keys(Options());
  const std::string key = NewUuidV7();
  Running first(keys, key, "{\"first\": true}");
  std::future<HttpResponse> retry = std::async(std::launch::async, [&] {
    return keys.Run("alice", Post(key), [] { return Answer(200, "{\"second\": true}"); });
  });
  EXPECT_EQ(retry.wait_for(std::chrono::milliseconds(200)), std::future_status::timeout)
      << "the retry waits";
  first.Finish();
  HttpResponse r = retry.get();
  EXPECT_EQ(r.body, "{\"first\": true}");
  EXPECT_EQ(r.Get("Idempotent-Replayed"), "true");
}

TEST_F(IdempotencyTest, ARetryWaitingTooLongIsToldToRetry) {
  IdempotencyOptions o = Options();
  o.wait_ms = 50;
  IdempotencyKeys keys(o);
  const std::string key = NewUuidV7();
  Running first(keys, key);
  HttpResponse r = keys.Run("alice", Post(key), [] { return Answer(200, "{\"ran\": 2}"); });
  EXPECT_EQ(r.status, 503);
  EXPECT_NE(r.body.find("still running"), std::string::npos) << r.body;
}

TEST(UuidTest, VersionSevenUuidsAreTimeOrderedAndWellFormed) {
  std::string a = NewUuidV7();
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  std::string b = NewUuidV7();
  EXPECT_TRUE(IsUuidText(a)) << a;
  EXPECT_EQ(a[14], '7') << a;
  EXPECT_TRUE(std::string("89ab").find(a[19]) != std::string::npos) << a;
  EXPECT_LT(a.substr(0, 13), b.substr(0, 13)) << "the millisecond prefix sorts";
}

}  // namespace
}  // namespace sluice::rest
