// The server against clients that do not play by the rules, over raw sockets:
// smuggled requests behind refusals, idle and trickling connections, connection
// floods, bad framing, half-closed clients. Each test fails on the thread-per-
// connection server this one replaced (docs/http_api.md, "Connections").
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <thread>
#include <vector>

#include "common/testing.h"
#include "log/test_util.h"
#include "server/http_server.h"
#include "server/test_util.h"

namespace sluice::server {
namespace {

using log::testing::ScratchDir;
using testing::CountResponses;
using testing::ReadResponse;
using testing::ReadUntilClose;
using testing::SendAll;
using testing::StatusOf;
using Clock = std::chrono::steady_clock;

std::string Post(std::string_view headers, std::string_view body,
                 std::string_view stream = "events_in") {
  return fmt::format(
      "POST /v1/streams/{}/records HTTP/1.1\r\nHost: h\r\n{}Content-Length: {}\r\n\r\n{}", stream,
      headers, body.size(), body);
}

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

class HttpHostileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK_AND_ASSIGN(target_.logs["events_in"], log::StreamLog::Open(dir_.Sub("events_in")));
  }
  void StartServer(HttpServerOptions options = {}) {
    options.registry = &target_.registry;
    ASSERT_OK_AND_ASSIGN(server_, HttpServer::Make(options, &target_));
    ASSERT_OK(server_->Start());
  }
  int Connect(int timeout_s = 5) { return testing::Connect(server_->port(), timeout_s); }
  // One request on a fresh connection: everything the server sent until it closed.
  // (`timeout_s`: how long a read may wait.)
  std::string Exchange(std::string_view bytes, bool half_close = false, int timeout_s = 5) {
    int fd = Connect(timeout_s);
    EXPECT_GE(fd, 0);
    SendAll(fd, bytes);
    if (half_close) ::shutdown(fd, SHUT_WR);
    std::string answer = ReadUntilClose(fd);
    ::close(fd);
    return answer;
  }
  int64_t Appended() { return target_.logs["events_in"]->end_offset(); }
  // A normal request on a fresh connection: its status, and how long it took.
  std::pair<int, double> Probe() {
    auto start = Clock::now();
    int fd = Connect();
    std::string buffer;
    SendAll(fd, "GET /healthz HTTP/1.1\r\nHost: h\r\n\r\n");
    std::string r = ReadResponse(fd, &buffer);
    ::close(fd);
    return {StatusOf(r), SecondsSince(start)};
  }

  ScratchDir dir_;
  testing::TestTarget target_;
  std::unique_ptr<HttpServer> server_;
};

// A refusal sent before the body was read must not leave the body to be parsed as
// the next request: here the body of a 401 is a complete, authorized request.
TEST_F(HttpHostileTest, RefusedRequestsBodyIsNeverParsedAsARequest) {
  HttpServerOptions options;
  options.bearer_token = "t";
  options.max_body_bytes = 1000;
  StartServer(options);
  std::string smuggled = Post("Authorization: Bearer t\r\n", "{\"smuggled\":1}\n");
  struct Case {
    std::string name, headers;
    int status;
  };
  std::vector<Case> cases = {
      {"wrong token", "Authorization: Bearer x\r\n", 401},
      {"wrong token, expecting 100-continue", "Authorization: Bearer x\r\nExpect: 100-continue\r\n",
       401},
      {"unknown stream", "Authorization: Bearer t\r\n", 404},
  };
  for (const Case& c : cases) {
    std::string request =
        Post(c.headers, smuggled, c.name == "unknown stream" ? "nope" : "events_in");
    std::string answer = Exchange(request);
    EXPECT_EQ(StatusOf(answer), c.status) << c.name << ": " << answer;
    EXPECT_EQ(CountResponses(answer), 1) << c.name << ": " << answer;
    EXPECT_NE(answer.find("Connection: close\r\n"), std::string::npos) << c.name;
    EXPECT_NE(answer.find("Content-Length: "), std::string::npos) << c.name;
  }
  // 413 by Content-Length: the oversized body is not read either.
  std::string padded = smuggled + std::string(1200 - smuggled.size(), '\n');
  std::string too_big = Exchange(Post("Authorization: Bearer t\r\n", padded));
  EXPECT_EQ(StatusOf(too_big), 413) << too_big;
  EXPECT_EQ(CountResponses(too_big), 1) << too_big;
  EXPECT_EQ(Appended(), 0) << "a smuggled request was appended";
  // The same request, unrefused, is appended once.
  std::string ok =
      Exchange(Post("Authorization: Bearer t\r\nConnection: close\r\n", "{\"a\":1}\n"));
  EXPECT_EQ(StatusOf(ok), 200) << ok;
  EXPECT_EQ(Appended(), 1);
}

// Hundreds of idle connections and clients that trickle their headers hold no
// worker: normal requests are answered at once, and Stop() does not wait for them.
TEST_F(HttpHostileTest, IdleAndTricklingConnectionsDoNotDelayOthersOrStop) {
  HttpServerOptions options;
  options.worker_threads = 2;
  StartServer(options);
  std::vector<int> idle;
  for (int i = 0; i < 300; ++i) {
    int fd = Connect();
    ASSERT_GE(fd, 0);
    idle.push_back(fd);
  }
  std::atomic<bool> stop{false};
  std::vector<std::thread> tricklers;
  for (int i = 0; i < 8; ++i) {
    tricklers.emplace_back([&] {
      int fd = Connect();
      SendAll(fd, "POST /v1/streams/events_in/records HTTP/1.1\r\n");
      for (int line = 0; !stop.load() && line < 100; ++line) {
        SendAll(fd, fmt::format("X-Slow-{}: 1\r\n", line));
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
      ::close(fd);
    });
  }
  // Half-read bodies too: headers promise 1000 bytes, 10 arrive.
  for (int i = 0; i < 8; ++i) {
    int fd = Connect();
    SendAll(fd,
            "POST /v1/streams/events_in/records HTTP/1.1\r\nHost: h\r\nContent-Length: "
            "1000\r\n\r\n{\"a\":1}\n12");
    idle.push_back(fd);
  }
  for (int i = 0; i < 200 && server_->open_connections() < 300; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_GE(server_->open_connections(), 300);
  double worst = 0;
  for (int i = 0; i < 20; ++i) {
    auto [status, seconds] = Probe();
    ASSERT_EQ(status, 200);
    worst = std::max(worst, seconds);
  }
  // Generous (the suite runs under ASan beside another test): the old server
  // took 5 s (idle) to forever (tricklers) per request.
  EXPECT_LT(worst, 4.0) << "a normal request waited behind idle connections";
  auto start = Clock::now();
  server_->Stop();
  EXPECT_LT(SecondsSince(start), 4.0) << "Stop() waited for slow clients";
  stop = true;
  for (auto& t : tricklers) t.join();
  for (int fd : idle) ::close(fd);
  EXPECT_EQ(Appended(), 0);
}

TEST_F(HttpHostileTest, SlowHeaderOrBodyIsCutAt408AtItsDeadline) {
  HttpServerOptions options;
  options.header_timeout_s = 1;
  options.body_timeout_s = 1;
  options.keep_alive_timeout_s = 1;
  StartServer(options);
  int header = Connect();
  SendAll(header, "POST /v1/streams/events_in/records HTTP/1.1\r\nHost: h\r\n");
  int body = Connect();
  SendAll(body,
          "POST /v1/streams/events_in/records HTTP/1.1\r\nHost: h\r\nContent-Length: 100\r\n\r\n{");
  int idle = Connect();
  auto start = Clock::now();
  // The trickler keeps sending, slower than its deadline allows in total.
  std::string header_answer;
  for (int i = 0; i < 60 && header_answer.empty(); ++i) {
    SendAll(header, fmt::format("X-{}: 1\r\n", i));
    char buf[4096];
    timeval quick{0, 100000};
    ::setsockopt(header, SOL_SOCKET, SO_RCVTIMEO, &quick, sizeof(quick));
    ssize_t n = ::recv(header, buf, sizeof(buf), 0);
    if (n > 0) header_answer.assign(buf, static_cast<size_t>(n));
  }
  EXPECT_EQ(StatusOf(header_answer), 408) << header_answer;
  EXPECT_NE(header_answer.find("header section"), std::string::npos) << header_answer;
  EXPECT_LT(SecondsSince(start), 4.0);  // 1 s, plus room for a loaded machine
  std::string body_answer = ReadUntilClose(body);
  EXPECT_EQ(StatusOf(body_answer), 408) << body_answer;
  // An idle connection is closed without an answer.
  EXPECT_EQ(ReadUntilClose(idle), "");
  for (int fd : {header, body, idle}) ::close(fd);
  EXPECT_EQ(Appended(), 0);
}

TEST_F(HttpHostileTest, ConnectionsOverTheLimitAreRefusedWith503) {
  HttpServerOptions options;
  options.max_connections = 8;
  StartServer(options);
  ASSERT_EQ(server_->connection_limit(), 8);
  std::vector<int> held;
  for (int i = 0; i < 8; ++i) held.push_back(Connect());
  for (int i = 0; i < 200 && server_->open_connections() < 8; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  int extra = Connect();
  std::string refused = ReadUntilClose(extra);
  ::close(extra);
  EXPECT_EQ(StatusOf(refused), 503) << refused;
  EXPECT_NE(refused.find("too many connections (limit 8)"), std::string::npos) << refused;
  EXPECT_NE(refused.find("Retry-After: 1\r\n"), std::string::npos);
  ::close(held.back());
  held.pop_back();
  for (int i = 0; i < 200 && server_->open_connections() >= 8; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(Probe().first, 200) << "a freed slot is not reused";
  for (int fd : held) ::close(fd);
}

// RFC 9112 framing: every case gets an answer, the ambiguous ones close, and no
// chunk-size line ever becomes a record.
TEST_F(HttpHostileTest, BadFramingIsAnsweredAndNeverAppended) {
  StartServer();
  std::string head = "POST /v1/streams/events_in/records HTTP/1.1\r\nHost: h\r\n";
  struct Case {
    std::string name, bytes;
    int status;
  };
  std::vector<Case> cases = {
      {"gzip, chunked", head + "Transfer-Encoding: gzip, chunked\r\n\r\n5\r\n{\"a\":\r\n0\r\n\r\n",
       501},
      {"0x chunk size", head + "Transfer-Encoding: chunked\r\n\r\n0x9\r\n{\"a\":1}\n\r\n0\r\n\r\n",
       400},
      {"two lengths", head + "Content-Length: 8\r\nContent-Length: 9\r\n\r\n{\"a\":1}\n", 400},
      {"negative length", head + "Content-Length: -1\r\n\r\n", 400},
      {"length past 2^64", head + "Content-Length: 18446744073709551617\r\n\r\n", 413},
      {"length and chunked",
       head + "Content-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400},
      {"HTTP/1.0 chunked",
       "POST /v1/streams/events_in/records HTTP/1.0\r\nTransfer-Encoding: "
       "chunked\r\n\r\n0\r\n\r\n",
       400},
      {"obs-fold", head + "X-A: 1\r\n 2\r\nContent-Length: 0\r\n\r\n", 400},
      {"bare LF", head + "Content-Length: 8\n\r\n{\"a\":1}\n", 400},
  };
  for (const Case& c : cases) {
    std::string answer = Exchange(c.bytes);
    EXPECT_EQ(StatusOf(answer), c.status) << c.name << ": " << answer;
    EXPECT_EQ(CountResponses(answer), 1) << c.name;
    EXPECT_NE(answer.find("Connection: close"), std::string::npos) << c.name;
  }
  EXPECT_EQ(Appended(), 0);
  // "Chunked" is chunked: the body is read, not taken as empty.
  std::string mixed_case = Exchange(head +
                                    "Transfer-Encoding: Chunked\r\nConnection: close\r\n\r\n"
                                    "8\r\n{\"a\":1}\n\r\n0\r\n\r\n");
  EXPECT_EQ(StatusOf(mixed_case), 200) << mixed_case;
  EXPECT_EQ(Appended(), 1);
}

TEST_F(HttpHostileTest, HalfClosedClientStillGetsItsAnswers) {
  StartServer();
  std::string answer = Exchange(Post("", "{\"a\":1}\n{\"a\":2}\n"), /*half_close=*/true);
  EXPECT_EQ(StatusOf(answer), 200) << answer;
  EXPECT_NE(answer.find("\"records\":2"), std::string::npos) << answer;
  EXPECT_EQ(Appended(), 2);
  // Two pipelined requests, then the half-close: both are answered.
  std::string both = Exchange(Post("", "{\"a\":3}\n") + Post("", "{\"a\":4}\n"), true);
  EXPECT_EQ(CountResponses(both), 2) << both;
  EXPECT_EQ(Appended(), 4);
}

// Bodies count against max_buffered_body_bytes as they arrive, whole chunked ones
// included: past it a request is answered 503 and nothing is appended.
TEST_F(HttpHostileTest, BodiesInMemoryAreBoundedByTheBudget) {
  HttpServerOptions options;
  options.max_body_bytes = 1000;
  options.max_buffered_body_bytes = 1000;
  StartServer(options);
  int holder = Connect();  // 900 bytes of a body that never completes
  SendAll(holder,
          "POST /v1/streams/events_in/records HTTP/1.1\r\nHost: h\r\n"
          "Content-Length: 1000\r\n\r\n" +
              std::string(900, ' '));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  std::string chunk(500, ' ');
  chunk.back() = '1';
  std::string over = Exchange(
      "POST /v1/streams/events_in/records HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: "
      "chunked\r\n\r\n" +
      fmt::format("{:x}\r\n{}\r\n0\r\n\r\n", chunk.size(), chunk));
  EXPECT_EQ(StatusOf(over), 503) << over;
  EXPECT_NE(over.find("Retry-After: 1"), std::string::npos) << over;
  ::close(holder);
  for (int i = 0; i < 100 && server_->open_connections() > 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  std::string fits = Exchange(
      "POST /v1/streams/events_in/records HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: "
      "chunked\r\nConnection: close\r\n\r\n" +
      fmt::format("{:x}\r\n{}\r\n0\r\n\r\n", chunk.size(), chunk));
  EXPECT_EQ(StatusOf(fits), 200) << fits;
  EXPECT_EQ(Appended(), 1);
}

TEST_F(HttpHostileTest, PipelinedRequestsAreAnsweredInOrder) {
  StartServer();
  std::string both = Post("", "{\"a\":1}\n") + "GET /nope HTTP/1.1\r\nHost: h\r\n\r\n" +
                     Post("Connection: close\r\n", "{\"a\":2}\n");
  std::string answer = Exchange(both);
  EXPECT_EQ(CountResponses(answer), 3) << answer;
  size_t second = answer.find("HTTP/1.1 404");
  size_t third = answer.rfind("HTTP/1.1 200");
  EXPECT_TRUE(answer.starts_with("HTTP/1.1 200")) << answer;
  EXPECT_NE(second, std::string::npos);
  EXPECT_GT(third, second) << answer;
  EXPECT_EQ(Appended(), 2);
}

TEST_F(HttpHostileTest, HeaderRulesOfTheApi) {
  HttpServerOptions options;
  options.bearer_token = "t";
  StartServer(options);
  // An empty Idempotency-Key is a bad key, not a missing one.
  std::string empty_key =
      Exchange(Post("Authorization: Bearer t\r\nIdempotency-Key:\r\nConnection: close\r\n", "1\n"));
  EXPECT_EQ(StatusOf(empty_key), 400) << empty_key;
  EXPECT_NE(empty_key.find("1 to 200 characters"), std::string::npos) << empty_key;
  EXPECT_EQ(Appended(), 0);
  // HEAD /healthz needs no token, like GET; the answer has a length and no body.
  std::string head = Exchange("HEAD /healthz HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n");
  EXPECT_EQ(StatusOf(head), 200) << head;
  EXPECT_NE(head.find("Content-Length: 2\r\n"), std::string::npos) << head;
  EXPECT_TRUE(head.ends_with("\r\n\r\n")) << head;
  std::string get_with_body =
      Exchange("GET /healthz HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\nhello");
  EXPECT_EQ(StatusOf(get_with_body), 400) << get_with_body;
  std::string wrong_method = Exchange(
      "DELETE /healthz HTTP/1.1\r\nHost: h\r\nAuthorization: Bearer t\r\n"
      "Connection: close\r\n\r\n");
  EXPECT_EQ(StatusOf(wrong_method), 405) << wrong_method;
  EXPECT_NE(wrong_method.find("Allow: GET, HEAD\r\n"), std::string::npos) << wrong_method;
}

// A body within the server's limit whose records need more than the log's batch
// limit once framed (4 bytes each) is refused with 413 naming that limit.
TEST_F(HttpHostileTest, BodyOverTheLogsBatchLimitIs413WithTheLimit) {
  log::LogOptions small;
  small.max_batch_bytes = 100000;
  ASSERT_OK_AND_ASSIGN(target_.logs["small"], log::StreamLog::Open(dir_.Sub("small"), small));
  HttpServerOptions options;
  options.max_body_bytes = 1 << 20;
  StartServer(options);
  std::string tiny;
  while (tiny.size() < 60000) tiny += "1\n";  // 30000 records: 150000 bytes framed
  // (Framing 30000 records takes seconds under sanitizers on a loaded machine.)
  std::string answer =
      Exchange(Post("Connection: close\r\n", tiny, "small"), /*half_close=*/false, 60);
  EXPECT_EQ(StatusOf(answer), 413) << answer;
  EXPECT_NE(answer.find("batch limit of 100000 bytes"), std::string::npos) << answer;
  EXPECT_EQ(target_.logs["small"]->end_offset(), 0);
}

}  // namespace
}  // namespace sluice::server
