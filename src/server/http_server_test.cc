// End-to-end tests of the ingest server: a real server on a free port, real stream
// logs in a scratch directory, and a real HTTP client.
#include "server/http_server.h"

#include <gtest/gtest.h>
#include <httplib.h>
#include <sys/socket.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "common/testing.h"
#include "log/test_util.h"
#include "server/dashboard.h"
#include "server/metrics.h"
#include "server/test_util.h"

namespace sluice::server {
namespace {

using log::testing::ReadAll;
using log::testing::ScratchDir;
using nlohmann::json;

using testing::Connect;
using testing::ReadResponse;
using testing::ReadUntilClose;
using testing::SendAll;
using testing::TestTarget;

class HttpServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK_AND_ASSIGN(target_.logs["events_in"], log::StreamLog::Open(dir_.Sub("events_in")));
    log::LogOptions failing;
    failing.storage = &storage_;
    ASSERT_OK_AND_ASSIGN(target_.logs["fragile"],
                         log::StreamLog::Open(dir_.Sub("fragile"), failing));
  }

  void StartServer(HttpServerOptions options = {}) {
    options.registry = &target_.registry;
    ASSERT_OK_AND_ASSIGN(server_, HttpServer::Make(options, &target_));
    ASSERT_OK(server_->Start());
    ASSERT_GT(server_->port(), 0);
  }

  httplib::Client Client() {
    httplib::Client cli("127.0.0.1", server_->port());
    cli.set_read_timeout(10);
    cli.set_tcp_nodelay(true);  // else each POST waits ~40 ms (Nagle + delayed ACK)
    return cli;
  }

  httplib::Result Post(const std::string& body, const std::string& content_type,
                       const httplib::Headers& headers = {},
                       const std::string& stream = "events_in") {
    return Client().Post("/v1/streams/" + stream + "/records", headers, body, content_type);
  }

  std::vector<std::string> Payloads(const std::string& stream) {
    auto all = ReadAll(*target_.logs[stream]);
    EXPECT_TRUE(all.ok()) << all.status().ToString();
    std::vector<std::string> out;
    if (all.ok()) {
      for (const auto& r : *all) out.push_back(r.value);
    }
    return out;
  }

  ScratchDir dir_;
  log::FaultInjectingLogStorage storage_;  // "fragile" fails its syncs on demand
  TestTarget target_;
  std::unique_ptr<HttpServer> server_;  // destroyed (stopped) before the target
};

json Body(const httplib::Result& r) { return json::parse(r->body); }

// A raw HTTP/1.1 exchange for what httplib::Client cannot do (Expect: 100-continue):
// sends `head` (request line and headers, without the blank line), reads the first
// answer; if it is "100 Continue", sends `body` and appends the final answer.
std::string ExpectContinueExchange(int port, const std::string& head, const std::string& body) {
  int fd = Connect(port);
  if (fd < 0) return "connect failed";
  SendAll(fd, head + fmt::format("Content-Length: {}\r\nExpect: 100-continue\r\n"
                                 "Connection: close\r\n\r\n",
                                 body.size()));
  std::string buffer;
  std::string answer = ReadResponse(fd, &buffer);
  if (answer.starts_with("HTTP/1.1 100")) SendAll(fd, body);
  answer += buffer + ReadUntilClose(fd);  // the server closes after its final answer
  ::close(fd);
  return answer;
}

TEST_F(HttpServerTest, NdjsonRecordsAreAppendedAndAcknowledgedWithTheirOffsets) {
  StartServer();
  auto r = Post("{\"id\":1}\n\n{\"id\":2, \"s\":\"a b\"}\r\n[3]\n", "application/x-ndjson");
  ASSERT_TRUE(r) << httplib::to_string(r.error());
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(r->get_header_value("Content-Type"), "application/json");
  EXPECT_EQ(Body(r), json::parse(R"({"stream":"events_in","first_offset":0,"last_offset":2,
                                    "records":3,"duplicate":false})"));
  auto r2 = Post("\"x\"", "text/plain");  // any content type is NDJSON
  ASSERT_EQ(r2->status, 200) << r2->body;
  EXPECT_EQ(Body(r2)["first_offset"], 3);
  EXPECT_EQ(Body(r2)["last_offset"], 3);
  EXPECT_EQ(Payloads("events_in"),
            (std::vector<std::string>{"{\"id\":1}", "{\"id\":2, \"s\":\"a b\"}", "[3]", "\"x\""}));
  std::lock_guard<std::mutex> lock(target_.mu);
  EXPECT_EQ(target_.appended_records["events_in"], 4);
  EXPECT_EQ(target_.appended_bytes["events_in"], 8 + 19 + 3 + 3);
}

TEST_F(HttpServerTest, JsonArrayElementsBecomeMinifiedRecords) {
  StartServer();
  auto r = Post("[\n  {\"id\": 1, \"v\": 1.50},\n  {\"id\": 2, \"tags\": [\"a\", \"b c\"]}\n]",
                "application/json; charset=utf-8");
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(Body(r)["records"], 2);
  EXPECT_EQ(
      Payloads("events_in"),
      (std::vector<std::string>{"{\"id\":1,\"v\":1.50}", "{\"id\":2,\"tags\":[\"a\",\"b c\"]}"}));
  // The same bytes sent as NDJSON are one record per line: the lines are not JSON.
  auto nd = Post("[\n  {\"id\": 1},\n]", "application/x-ndjson");
  EXPECT_EQ(nd->status, 400);
  EXPECT_EQ(Body(nd)["line"], 1);
}

TEST_F(HttpServerTest, RetryWithTheSameIdempotencyKeyIsNotAppendedTwice) {
  StartServer();
  httplib::Headers key = {{"Idempotency-Key", "batch-7f3a"}};
  auto first = Post("{\"a\":1}\n{\"a\":2}\n", "application/x-ndjson", key);
  ASSERT_EQ(first->status, 200) << first->body;
  EXPECT_EQ(Body(first)["duplicate"], false);
  auto retry = Post("{\"a\":1}\n{\"a\":2}\n", "application/x-ndjson", key);
  ASSERT_EQ(retry->status, 200) << retry->body;
  EXPECT_EQ(Body(retry)["duplicate"], true);
  EXPECT_EQ(Body(retry)["first_offset"], Body(first)["first_offset"]);
  EXPECT_EQ(Body(retry)["last_offset"], Body(first)["last_offset"]);
  EXPECT_EQ(Body(retry)["records"], 2);
  auto other = Post("{\"a\":3}\n", "application/x-ndjson", {{"Idempotency-Key", "batch-7f3b"}});
  ASSERT_EQ(other->status, 200);
  EXPECT_EQ(Body(other)["first_offset"], 2);
  EXPECT_EQ(Payloads("events_in"),
            (std::vector<std::string>{"{\"a\":1}", "{\"a\":2}", "{\"a\":3}"}));
  std::lock_guard<std::mutex> lock(target_.mu);
  EXPECT_EQ(target_.appended_records["events_in"], 3);  // duplicates are not counted
}

TEST_F(HttpServerTest, NumberedProducersDeduplicateBySequence) {
  StartServer();
  auto seq = [&](const std::string& s) {
    return Post("1\n", "", {{"Sluice-Producer-Id", "12"}, {"Sluice-Sequence", s}});
  };
  EXPECT_EQ(Body(seq("0"))["first_offset"], 0);
  EXPECT_EQ(Body(seq("1"))["first_offset"], 1);
  auto again = seq("0");
  EXPECT_EQ(Body(again)["duplicate"], true);
  EXPECT_EQ(Body(again)["first_offset"], 0);
  EXPECT_EQ(target_.logs["events_in"]->end_offset(), 2);

  auto missing = Post("1\n", "", {{"Sluice-Producer-Id", "12"}});
  EXPECT_EQ(missing->status, 400);
  auto both = Post(
      "1\n", "", {{"Idempotency-Key", "k"}, {"Sluice-Producer-Id", "1"}, {"Sluice-Sequence", "1"}});
  EXPECT_EQ(both->status, 400);
  auto negative = Post("1\n", "", {{"Sluice-Producer-Id", "-1"}, {"Sluice-Sequence", "1"}});
  EXPECT_EQ(negative->status, 400);
  auto long_key = Post("1\n", "", {{"Idempotency-Key", std::string(201, 'k')}});
  EXPECT_EQ(long_key->status, 400);
  EXPECT_NE(Body(long_key)["error"].get<std::string>().find("Idempotency-Key"), std::string::npos);
  EXPECT_EQ(target_.logs["events_in"]->end_offset(), 2);
}

TEST_F(HttpServerTest, IdempotencyProducerIdIsStableAndNonNegative) {
  // FNV-1a 64 reference values ("" is the offset basis; "a" from the published table),
  // with the top bit cleared.
  EXPECT_EQ(IdempotencyProducerId(""), 0x4bf29ce484222325LL);
  EXPECT_EQ(IdempotencyProducerId("a"), 0x2f63dc4c8601ec8cLL);
  EXPECT_NE(IdempotencyProducerId("batch-1"), IdempotencyProducerId("batch-2"));
  EXPECT_GE(IdempotencyProducerId("\xff\xff"), 0);
}

TEST_F(HttpServerTest, BadRecordIsRefusedNamingItsLineAndNothingIsAppended) {
  StartServer();
  auto r = Post("{\"a\":1}\n{\"a\":2}\n{\"a\":\n{\"a\":4}\n", "application/x-ndjson");
  ASSERT_EQ(r->status, 400) << r->body;
  json body = Body(r);
  EXPECT_EQ(body["line"], 3);
  EXPECT_NE(body["error"].get<std::string>().find("line 3"), std::string::npos) << r->body;
  auto a = Post("[{\"a\":1}, {\"a\":nul}]", "application/json");
  ASSERT_EQ(a->status, 400) << a->body;
  EXPECT_EQ(Body(a)["index"], 1);
  EXPECT_NE(Body(a)["error"].get<std::string>().find("index 1"), std::string::npos) << a->body;
  EXPECT_EQ(target_.logs["events_in"]->end_offset(), 0);

  auto empty = Post("\n\n", "application/x-ndjson");
  EXPECT_EQ(empty->status, 400);
  EXPECT_NE(Body(empty)["error"].get<std::string>().find("no records"), std::string::npos);
  auto empty_array = Post("[]", "application/json");
  EXPECT_EQ(empty_array->status, 400);
  EXPECT_EQ(target_.logs["events_in"]->end_offset(), 0);
}

TEST_F(HttpServerTest, OversizedBodyIs413WithLengthOrChunked) {
  HttpServerOptions options;
  options.max_body_bytes = 1000;
  StartServer(options);
  std::string big;
  while (big.size() <= 1000) big += "{\"pad\":\"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"}\n";
  auto r = Post(big, "application/x-ndjson");
  ASSERT_TRUE(r) << httplib::to_string(r.error());
  EXPECT_EQ(r->status, 413) << r->body;

  // Chunked (no Content-Length): the server counts while reading.
  auto cli = Client();
  size_t sent = 0;
  auto chunked = cli.Post(
      "/v1/streams/events_in/records",
      [&](size_t, httplib::DataSink& sink) {
        if (sent >= big.size() * 3) {
          sink.done();
          return true;
        }
        sink.write(big.data(), big.size());
        sent += big.size();
        return true;
      },
      "application/x-ndjson");
  if (chunked) {  // (or the server hung up while the client was still sending)
    EXPECT_EQ(chunked->status, 413) << chunked->body;
  }

  // Just under the limit is accepted.
  std::string fits = big.substr(0, 999);
  fits = fits.substr(0, fits.rfind('\n') + 1);
  auto ok = Post(fits, "application/x-ndjson");
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 200) << ok->body;
  EXPECT_EQ(target_.logs["events_in"]->end_offset(), Body(ok)["records"].get<int64_t>());
}

std::string Gzip(const std::string& data) {
  z_stream z{};
  EXPECT_EQ(deflateInit2(&z, Z_BEST_COMPRESSION, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY), Z_OK);
  std::string out(deflateBound(&z, data.size()) + 32, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = static_cast<uInt>(data.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&z, Z_FINISH), Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

TEST_F(HttpServerTest, GzipBodiesAreDecompressedAndTheLimitAppliesAfterwards) {
  HttpServerOptions options;
  options.max_body_bytes = 4000;
  StartServer(options);
  httplib::Headers gzip = {{"Content-Encoding", "gzip"}};
  auto r = Post(Gzip("{\"z\":1}\n{\"z\":2}\n"), "application/x-ndjson", gzip);
  ASSERT_TRUE(r) << httplib::to_string(r.error());
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(Payloads("events_in"), (std::vector<std::string>{"{\"z\":1}", "{\"z\":2}"}));
  // Compresses to far less than the limit, but decompresses to more.
  std::string bomb;
  while (bomb.size() <= 8000) bomb += "{\"zzzzzzzzzzzzzzzzzzzzzzzzzzzzzz\":1}\n";
  std::string compressed = Gzip(bomb);
  ASSERT_LT(compressed.size(), 4000u);
  auto big = Post(compressed, "application/x-ndjson", gzip);
  ASSERT_TRUE(big) << httplib::to_string(big.error());
  EXPECT_EQ(big->status, 413) << big->body;
  EXPECT_EQ(target_.logs["events_in"]->end_offset(), 2);
}

TEST_F(HttpServerTest, BearerTokenIsRequiredExceptForHealthz) {
  HttpServerOptions options;
  options.bearer_token = "s3cret";
  StartServer(options);
  auto none = Post("1\n", "");
  EXPECT_EQ(none->status, 401);
  EXPECT_EQ(none->get_header_value("WWW-Authenticate"), "Bearer realm=\"sluice\"");
  auto wrong = Post("1\n", "", {{"Authorization", "Bearer s3cre"}});
  EXPECT_EQ(wrong->status, 401);
  EXPECT_EQ(target_.logs["events_in"]->end_offset(), 0);
  auto longer = Post("1\n", "", {{"Authorization", "Bearer s3cret2"}});
  EXPECT_EQ(longer->status, 401);
  EXPECT_EQ(target_.logs["events_in"]->end_offset(), 0);
  auto right = Post("1\n", "", {{"Authorization", "Bearer s3cret"}});
  EXPECT_EQ(right->status, 200) << right->body;
  auto scheme_case = Post("1\n", "", {{"Authorization", "bearer s3cret"}});
  EXPECT_EQ(scheme_case->status, 200) << scheme_case->body;

  auto cli = Client();
  EXPECT_EQ(cli.Get("/metrics")->status, 401);
  EXPECT_EQ(cli.Get("/v1/status")->status, 401);
  auto health = cli.Get("/healthz");
  EXPECT_EQ(health->status, 200);
  EXPECT_EQ(health->body, "ok");
  EXPECT_EQ(health->get_header_value("X-Sluice-Auth"), "bearer");  // the dashboard asks first
  cli.set_bearer_token_auth("s3cret");
  EXPECT_EQ(cli.Get("/metrics")->status, 200);
}

TEST_F(HttpServerTest, TheDashboardsAssetsAreServedWithoutATokenUnderAStrictPolicy) {
  HttpServerOptions options;
  options.bearer_token = "s3cret";
  StartServer(options);
  auto cli = Client();
  struct Want {
    const char* path;
    const char* type;
    const char* contains;
  };
  for (const Want& w : {Want{"/", "text/html; charset=utf-8", "<script src=\"/dashboard.js\""},
                        Want{"/dashboard.js", "text/javascript; charset=utf-8", "/v1/status"},
                        Want{"/dashboard.css", "text/css; charset=utf-8", ".card"}}) {
    auto res = cli.Get(w.path);
    ASSERT_TRUE(res) << w.path;
    EXPECT_EQ(res->status, 200) << w.path;
    EXPECT_EQ(res->get_header_value("Content-Type"), w.type) << w.path;
    EXPECT_NE(res->body.find(w.contains), std::string::npos) << w.path;
    EXPECT_EQ(res->get_header_value("Content-Security-Policy"), std::string(kDashboardCsp));
    EXPECT_EQ(res->get_header_value("X-Content-Type-Options"), "nosniff");
  }
  EXPECT_EQ(cli.Get("/v1/status")->status, 401);      // the data still needs the token
  EXPECT_EQ(cli.Get("/dashboard.map")->status, 401);  // only the assets go without a token
  EXPECT_EQ(cli.Post("/", "", "text/plain")->status, 401);
  cli.set_bearer_token_auth("s3cret");
  EXPECT_EQ(cli.Get("/dashboard.map")->status, 404);
  EXPECT_EQ(cli.Post("/", "", "text/plain")->status, 405);
  server_.reset();
  StartServer();  // no token: /healthz says none is needed
  EXPECT_EQ(Client().Get("/healthz")->get_header_value("X-Sluice-Auth"), "");
}

TEST_F(HttpServerTest, ExpectContinueIsRefusedOrGrantedFromTheHeaders) {
  HttpServerOptions options;
  options.bearer_token = "t";
  options.max_body_bytes = 100;
  StartServer(options);
  const std::string auth = "Authorization: Bearer t\r\n";
  auto exchange = [&](const std::string& stream, const std::string& headers,
                      const std::string& body) {
    return ExpectContinueExchange(
        server_->port(),
        "POST /v1/streams/" + stream + "/records HTTP/1.1\r\nHost: x\r\n" + headers, body);
  };
  // Refused before the body is sent: the first answer is final.
  EXPECT_TRUE(exchange("nope", auth, "1\n").starts_with("HTTP/1.1 404"))
      << exchange("nope", auth, "1\n");
  EXPECT_TRUE(exchange("events_in", "", "1\n").starts_with("HTTP/1.1 401"));
  EXPECT_TRUE(exchange("events_in", auth, std::string(101, '1')).starts_with("HTTP/1.1 413"));
  {
    std::lock_guard<std::mutex> lock(target_.mu);
    target_.backpressure = Backpressure{Backpressure::Kind::kBehind, 3, "behind"};
  }
  std::string behind = exchange("events_in", auth, "1\n");
  EXPECT_TRUE(behind.starts_with("HTTP/1.1 429")) << behind;
  EXPECT_NE(behind.find("Retry-After: 3\r\n"), std::string::npos) << behind;
  {
    std::lock_guard<std::mutex> lock(target_.mu);
    target_.backpressure.reset();
  }
  EXPECT_EQ(target_.logs["events_in"]->end_offset(), 0);
  // Granted: 100 Continue, then the final answer.
  std::string ok = exchange("events_in", auth, "{\"a\":1}\n");
  EXPECT_TRUE(ok.starts_with("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200")) << ok;
  EXPECT_EQ(Payloads("events_in"), std::vector<std::string>{"{\"a\":1}"});
}

TEST_F(HttpServerTest, PostWithoutLengthHasNoBody) {
  StartServer();
  int fd = Connect(server_->port());
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(SendAll(
      fd, "POST /v1/streams/events_in/records HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"));
  std::string answer = ReadUntilClose(fd);
  ::close(fd);
  // Answered at once (not after the read timeout): an empty batch.
  EXPECT_TRUE(answer.starts_with("HTTP/1.1 400")) << answer;
  EXPECT_NE(answer.find("no records"), std::string::npos) << answer;
}

TEST_F(HttpServerTest, UnknownStreamIs404) {
  StartServer();
  auto r = Post("1\n", "", {}, "nope");
  EXPECT_EQ(r->status, 404);
  EXPECT_NE(Body(r)["error"].get<std::string>().find("'nope'"), std::string::npos) << r->body;
  auto route = Client().Get("/v1/nothing");
  EXPECT_EQ(route->status, 404);
  EXPECT_EQ(route->get_header_value("Content-Type"), "application/json");
}

TEST_F(HttpServerTest, BackpressureAnswers429Or503WithRetryAfter) {
  StartServer();
  {
    std::lock_guard<std::mutex> lock(target_.mu);
    target_.backpressure = Backpressure{Backpressure::Kind::kBehind, 7, "lag 5000000 records"};
  }
  auto behind = Post("1\n", "");
  EXPECT_EQ(behind->status, 429);
  EXPECT_EQ(behind->get_header_value("Retry-After"), "7");
  EXPECT_NE(Body(behind)["error"].get<std::string>().find("lag 5000000"), std::string::npos);
  {
    std::lock_guard<std::mutex> lock(target_.mu);
    target_.backpressure = Backpressure{Backpressure::Kind::kUnavailable, 0, ""};
  }
  auto down = Post("1\n", "");
  EXPECT_EQ(down->status, 503);
  EXPECT_EQ(down->get_header_value("Retry-After"), "1");  // at least 1
  EXPECT_EQ(target_.logs["events_in"]->end_offset(), 0);
  {
    std::lock_guard<std::mutex> lock(target_.mu);
    target_.backpressure.reset();
  }
  EXPECT_EQ(Post("1\n", "")->status, 200);
}

TEST_F(HttpServerTest, AppendErrorIs500WithTheMessageButNoServerPath) {
  StartServer();
  storage_.FailAll(log::LogOp::kSync);
  auto r = Post("1\n", "", {}, "fragile");
  EXPECT_EQ(r->status, 500);
  std::string error = Body(r)["error"].get<std::string>();
  EXPECT_NE(error.find("fsync …/00000000000000000000.log: No space left on device (injected)"),
            std::string::npos)
      << error;
  // The server's folders stay in its log, not in the answer.
  EXPECT_EQ(error.find(dir_.path()), std::string::npos) << error;
  EXPECT_EQ(error.find("/tmp"), std::string::npos) << error;
}

// A log that cannot append makes /healthz say so (503), and it recovers by itself
// once the storage works again: no restart, nothing acknowledged lost.
TEST_F(HttpServerTest, HealthzIs503WhileALogCannotAppendAndRecovers) {
  StartServer();
  ASSERT_EQ(Post("1\n", "", {}, "fragile")->status, 200);
  storage_.FailAll(log::LogOp::kSync);
  EXPECT_EQ(Post("2\n", "", {}, "fragile")->status, 500);
  auto sick = Client().Get("/healthz");
  EXPECT_EQ(sick->status, 503);
  EXPECT_NE(sick->body.find("stream 'fragile': its log cannot append"), std::string::npos)
      << sick->body;
  storage_.Heal();
  int status = 0;
  for (int i = 0; i < 50 && status != 200; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    status = Client().Get("/healthz")->status;
  }
  EXPECT_EQ(status, 200);
  auto again = Post("3\n", "", {}, "fragile");
  ASSERT_EQ(again->status, 200) << again->body;
  EXPECT_EQ(Body(again)["first_offset"].get<int64_t>(), 1);
  EXPECT_EQ(Payloads("fragile"), (std::vector<std::string>{"1", "3"}));
}

TEST_F(HttpServerTest, ConcurrentClientsGetDisjointOffsets) {
  HttpServerOptions options;
  options.worker_threads = 4;
  StartServer(options);
  constexpr int kThreads = 6, kRequests = 15, kRecords = 4;
  std::mutex mu;
  std::vector<std::pair<int64_t, std::string>> acked;  // first offset, first payload
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      auto cli = Client();
      cli.set_keep_alive(t % 2 == 0);  // both fresh and reused connections
      for (int i = 0; i < kRequests; ++i) {
        std::string body;
        for (int k = 0; k < kRecords; ++k)
          body += fmt::format("{{\"t\":{},\"i\":{},\"k\":{}}}\n", t, i, k);
        auto r = cli.Post("/v1/streams/events_in/records", body, "application/x-ndjson");
        if (!r || r->status != 200) {
          ++failures;
          continue;
        }
        json b = json::parse(r->body);
        if (b["last_offset"].get<int64_t>() - b["first_offset"].get<int64_t>() != kRecords - 1) {
          ++failures;
        }
        std::lock_guard<std::mutex> lock(mu);
        acked.emplace_back(b["first_offset"].get<int64_t>(),
                           fmt::format("{{\"t\":{},\"i\":{},\"k\":0}}", t, i));
      }
    });
  }
  for (auto& th : threads) th.join();
  ASSERT_EQ(failures.load(), 0);
  ASSERT_EQ(acked.size(), static_cast<size_t>(kThreads * kRequests));
  std::sort(acked.begin(), acked.end());
  std::vector<std::string> payloads = Payloads("events_in");
  ASSERT_EQ(payloads.size(), static_cast<size_t>(kThreads * kRequests * kRecords));
  for (size_t i = 0; i < acked.size(); ++i) {
    // Batches tile the log: each starts where the previous one ended.
    EXPECT_EQ(acked[i].first, static_cast<int64_t>(i) * kRecords);
    // The acknowledged offsets hold this request's records.
    EXPECT_EQ(payloads[acked[i].first], acked[i].second);
  }
}

TEST_F(HttpServerTest, MetricsAndStatusComeFromTheTarget) {
  StartServer();
  ASSERT_EQ(Post("1\n", "")->status, 200);
  auto cli = Client();
  auto status = cli.Get("/v1/status");
  ASSERT_EQ(status->status, 200);
  EXPECT_EQ(status->body, "{\"streams\":[\"events_in\"]}");
  EXPECT_EQ(status->get_header_value("Content-Type"), "application/json");
  auto metrics = cli.Get("/metrics");
  ASSERT_EQ(metrics->status, 200);
  EXPECT_EQ(metrics->get_header_value("Content-Type"), "text/plain; version=0.0.4");
  // The server counted its own requests in the registry the target renders.
  EXPECT_NE(metrics->body.find("sluice_http_requests_total{route=\"records\",code=\"200\"} 1\n"),
            std::string::npos)
      << metrics->body;
  EXPECT_NE(metrics->body.find("sluice_http_request_duration_seconds_count{route=\"records\"} 1\n"),
            std::string::npos);
  // Only series that happened are exported.
  EXPECT_EQ(metrics->body.find("code=\"413\""), std::string::npos) << metrics->body;
  EXPECT_EQ(metrics->body.find("route=\"healthz\""), std::string::npos) << metrics->body;
  if (testing::HavePromtool()) {
    auto [code, output] = testing::Promtool(metrics->body);
    EXPECT_EQ(code, 0) << output << metrics->body;
  }
}

TEST_F(HttpServerTest, SequenceBelowTheRememberedWindowIs409) {
  StartServer();
  auto seq = [&](int s) {
    return Post("1\n", "", {{"Sluice-Producer-Id", "5"}, {"Sluice-Sequence", std::to_string(s)}});
  };
  for (int s = 0; s <= 10; ++s) ASSERT_EQ(seq(s)->status, 200);
  auto stale = seq(0);  // the log remembers only the last few sequences of a producer
  EXPECT_EQ(stale->status, 409) << stale->body;
  EXPECT_NE(Body(stale)["error"].get<std::string>().find("sequence 0"), std::string::npos)
      << stale->body;
  EXPECT_EQ(target_.logs["events_in"]->end_offset(), 11);
}

TEST_F(HttpServerTest, MultipartBodiesAre415) {
  StartServer();
  auto r = Post("--b\r\n\r\n1\r\n--b--\r\n", "multipart/form-data; boundary=b");
  EXPECT_EQ(r->status, 415) << r->body;
  EXPECT_EQ(target_.logs["events_in"]->end_offset(), 0);
}

TEST_F(HttpServerTest, MakeAndStartCheckTheirInputs) {
  HttpServerOptions options;
  options.worker_threads = 0;
  ASSERT_ERROR(HttpServer::Make(options, &target_), StatusCode::kInvalidArgument, "worker_threads");
  options = {};
  options.max_body_bytes = 0;
  ASSERT_ERROR(HttpServer::Make(options, &target_), StatusCode::kInvalidArgument, "max_body_bytes");
  options = {};
  options.port = 70000;
  ASSERT_ERROR(HttpServer::Make(options, &target_), StatusCode::kInvalidArgument, "70000");
  ASSERT_ERROR(HttpServer::Make({}, nullptr), StatusCode::kInvalidArgument, "target");
  options = {};
  options.host = "256.1.1.1";
  ASSERT_OK_AND_ASSIGN(auto bad_host, HttpServer::Make(options, &target_));
  ASSERT_ERROR(bad_host->Start(), StatusCode::kIOError, "256.1.1.1");
  StartServer();
  ASSERT_ERROR(server_->Start(), StatusCode::kInvalidArgument, "already started");
  EXPECT_EQ(Client().Get("/healthz")->status, 200);
}

TEST_F(HttpServerTest, TakenPortIsAnError) {
  StartServer();
  HttpServerOptions options;
  options.port = server_->port();
  ASSERT_OK_AND_ASSIGN(auto second, HttpServer::Make(options, &target_));
  ASSERT_ERROR(second->Start(), StatusCode::kIOError, std::to_string(server_->port()));
  // The first one still answers.
  EXPECT_EQ(Client().Get("/healthz")->status, 200);
}

TEST_F(HttpServerTest, StopLetsInFlightRequestsFinish) {
  StartServer();
  target_.check_delay_ms = 300;
  int status = 0;
  std::string error;
  std::thread client([&] {
    auto r = Post("1\n", "");
    if (r) {
      status = r->status;
    } else {
      error = httplib::to_string(r.error());
    }
  });
  // Stop while the request is being checked (the check takes 300 ms).
  for (int i = 0; i < 1000 && target_.checks.load() == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  server_->Stop();
  client.join();
  EXPECT_EQ(status, 200) << error;
  EXPECT_EQ(target_.logs["events_in"]->end_offset(), 1);
  // Stopped: nothing listens any more.
  httplib::Client cli("127.0.0.1", server_->port());
  cli.set_connection_timeout(1);
  EXPECT_FALSE(cli.Get("/healthz"));
  server_->Stop();  // idempotent
}

}  // namespace
}  // namespace sluice::server
