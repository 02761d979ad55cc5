// Private to src/server: HttpServer::Impl, the event loop, shared by its lifecycle
// (http_server.cc: bind, threads, accept, stop) and its connection state machine
// (http_connection.cc: read, parse, dispatch, write, drain, deadlines).
//
// The event loop: one thread owns every connection: it accepts, reads,
// parses (RequestParser), enforces deadlines and limits, writes answers. Whole
// requests go to a pool of workers (Router::Handle); their answers come back through
// a queue and an eventfd. A connection is in one phase at a time:
//   reading  -> the parser is fed; after the header section the router may refuse
//               (the body is then never read: answer, close, drain) or grant
//               100-continue; a complete request moves to
//   handling -> on a worker; the socket is out of the epoll set (nothing is read,
//               so a pipelined next request waits in the kernel), then
//   writing  -> the answer is written; keep-alive goes back to reading (pipelined
//               bytes already read are parsed first), else
//   draining -> after an answer that closes: writing is shut down and input
//               discarded briefly (unread bytes would make close() a reset that can
//               destroy the answer), then closed.
// Bytes after a refusal or a framing error are never parsed as a request.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "server/http_internal.h"
#include "server/http_parser.h"
#include "server/http_server.h"

namespace sluice::server {

class HttpServer::Impl {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr size_t kReadChunk = 64 << 10;
  static constexpr size_t kMaxReadPerEvent = 1 << 20;  // fairness between busy connections
  static constexpr auto kDrainTime = std::chrono::seconds(2);
  static constexpr size_t kMaxDrainBytes = 1 << 20;
  static constexpr auto kStopGrace = std::chrono::seconds(1);  // at Stop(): to finish, answer

  Impl(HttpServerOptions options, IngestTarget* target)
      : options_(std::move(options)), router_(options_, target) {}
  ~Impl() { Stop(); }

  Status Init() { return router_.Init(); }
  Result<int> Start();
  void Stop();
  int open_connections() const { return open_.load(); }
  int connection_limit() const { return limit_; }

 private:
  enum class Phase { kReading, kHandling, kWriting, kDraining };

  struct Conn {
    uint64_t id = 0;
    int fd = -1;
    Phase phase = Phase::kReading;
    RequestParser parser;
    std::string in;  // read but not yet parsed (pipelined requests)
    size_t in_pos = 0;
    std::string out;  // to write (an interim 100 Continue, or the answer)
    size_t out_pos = 0;
    uint32_t watched = 0;      // epoll interest; 0: not in the epoll set
    bool peer_closed = false;  // read returned 0 (the client half-closed)
    bool close_after = false;  // close once `out` is written
    bool head_only = false;    // the answer is to a HEAD request
    bool http10_keep_alive = false;
    bool keep_alive = true;    // the request allows another one on the connection
    bool was_started = false;  // parser.started() at the last deadline update
    int64_t reserved = 0;      // of max_buffered_body_bytes
    size_t drained = 0;
    std::string path;  // of the request being answered (metrics)
    Clock::time_point deadline = Clock::time_point::max();
    Clock::time_point phase_start;
    explicit Conn(ParserLimits limits) : parser(limits) {}
  };

  struct Job {
    uint64_t conn;
    HttpRequest request;
  };
  struct Answer {
    uint64_t conn;
    HttpResponse response;
  };

  Status Bind();
  void RaiseFileLimit();
  void Loop();
  void Worker();
  void Wake();
  void AcceptAll();
  void RefuseAtAccept(int fd, int status, std::string_view message);
  void OnEvent(Conn& c, uint32_t events);
  void ReadSome(Conn& c);
  void Advance(Conn& c);
  void OnHeadDone(Conn& c);
  bool ReserveBody(Conn& c);
  void Dispatch(Conn& c);
  void NoteRequest(Conn& c);
  void Respond(Conn& c, HttpResponse res, bool drain);
  void WriteSome(Conn& c);
  void AfterWrite(Conn& c);
  void Drain(Conn& c);
  void Watch(Conn& c, uint32_t events);
  void UpdateDeadline(Conn& c);
  void CheckDeadlines();
  void TakeAnswers();
  void BeginStop();
  void Release(Conn& c);
  void Close(uint64_t id);

  const HttpServerOptions options_;
  internal::Router router_;
  ParserLimits limits_;
  int limit_ = 0;

  int listen_fd_ = -1, epoll_fd_ = -1, wake_fd_ = -1;
  int spare_fd_ = -1;  // closed to accept-and-close one client when out of descriptors
  std::thread loop_;
  std::vector<std::thread> workers_;
  bool started_ = false;

  // Event loop thread only.
  std::unordered_map<uint64_t, std::unique_ptr<Conn>> conns_;
  uint64_t next_id_ = 1;
  std::vector<uint64_t> ready_;  // reading connections with buffered bytes to parse
  int64_t buffered_ = 0;         // reserved body bytes, over all connections
  bool stop_begun_ = false;
  std::optional<Clock::time_point> listen_paused_until_;
  Clock::time_point stop_deadline_;
  std::atomic<int> open_{0};

  std::mutex mu_;
  std::condition_variable work_cv_;
  std::deque<Job> jobs_;        // guarded by mu_
  std::deque<Answer> answers_;  // guarded by mu_
  bool stopping_ = false;       // guarded by mu_
  bool workers_stop_ = false;   // guarded by mu_
};

}  // namespace sluice::server
