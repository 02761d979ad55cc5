// HttpServer: the event loop. One thread owns every connection: it accepts, reads,
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
//   draining -> after a refusal with unread bytes: writing is shut down and input
//               discarded briefly so the client sees the answer, not a reset.
// Bytes after a refusal or a framing error are never parsed as a request.
#include "server/http_server.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>
#include <vector>

#include "server/http_internal.h"
#include "server/http_parser.h"

namespace sluice::server {

namespace {

using Clock = std::chrono::steady_clock;

constexpr size_t kReadChunk = 64 << 10;
constexpr size_t kMaxReadPerEvent = 1 << 20;  // fairness between busy connections
constexpr auto kDrainTime = std::chrono::seconds(2);
constexpr size_t kMaxDrainBytes = 1 << 20;
constexpr auto kStopGrace = std::chrono::seconds(1);  // at Stop(): to finish and answer

}  // namespace

class HttpServer::Impl {
 public:
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

Result<int> HttpServer::Impl::Start() {
  if (started_) return Status::Invalid("http server: already started");
  started_ = true;
  limits_.max_body_bytes = options_.max_body_bytes;
  RaiseFileLimit();
  RETURN_IF_ERROR(Bind());
  sockaddr_storage addr{};
  socklen_t len = sizeof(addr);
  ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
  int port = addr.ss_family == AF_INET6 ? ntohs(reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port)
                                        : ntohs(reinterpret_cast<sockaddr_in*>(&addr)->sin_port);
  epoll_fd_ = ::epoll_create1(EPOLL_CLOEXEC);
  wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  spare_fd_ = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (epoll_fd_ < 0 || wake_fd_ < 0) {
    return Status::IOError("http server: epoll/eventfd: {}", std::strerror(errno));
  }
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.u64 = 0;  // the listener
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, listen_fd_, &ev);
  ev.data.u64 = UINT64_MAX;  // the wake-up eventfd
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, wake_fd_, &ev);
  for (int i = 0; i < options_.worker_threads; ++i) workers_.emplace_back([this] { Worker(); });
  loop_ = std::thread([this] { Loop(); });
  return port;
}

void HttpServer::Impl::RaiseFileLimit() {
  rlimit lim{};
  int64_t want = static_cast<int64_t>(options_.max_connections) * 2 + 256;
  if (::getrlimit(RLIMIT_NOFILE, &lim) == 0) {
    if (static_cast<int64_t>(lim.rlim_cur) < want && lim.rlim_cur < lim.rlim_max) {
      rlimit raised = lim;
      raised.rlim_cur = std::min<rlim_t>(lim.rlim_max, static_cast<rlim_t>(want));
      if (::setrlimit(RLIMIT_NOFILE, &raised) == 0) lim = raised;
    }
    int64_t half = static_cast<int64_t>(lim.rlim_cur) / 2;
    limit_ = static_cast<int>(std::clamp<int64_t>(half, 1, options_.max_connections));
  } else {
    limit_ = options_.max_connections;
  }
}

Status HttpServer::Impl::Bind() {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  std::string port = std::to_string(options_.port);
  const char* host = options_.host.empty() ? nullptr : options_.host.c_str();
  if (int rc = ::getaddrinfo(host, port.c_str(), &hints, &found); rc != 0) {
    return Status::IOError("http server: cannot listen on {}:{}: {}", options_.host, options_.port,
                           gai_strerror(rc));
  }
  std::string error = "no address";
  for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
    int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    // SO_REUSEADDR only (not SO_REUSEPORT): binding a port in use must fail.
    int yes = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
    if (::bind(fd, a->ai_addr, a->ai_addrlen) == 0 && ::listen(fd, 1024) == 0) {
      listen_fd_ = fd;
      break;
    }
    error = std::strerror(errno);
    ::close(fd);
  }
  ::freeaddrinfo(found);
  if (listen_fd_ < 0) {
    return Status::IOError("http server: cannot listen on {}:{}: {}", options_.host, options_.port,
                           error);
  }
  return Status::OK();
}

void HttpServer::Impl::Stop() {
  if (!loop_.joinable()) {  // never started, or Start() failed half-way
    for (int* fd : {&listen_fd_, &epoll_fd_, &wake_fd_, &spare_fd_}) {
      if (*fd >= 0) ::close(*fd);
      *fd = -1;
    }
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  Wake();
  loop_.join();
  {
    std::lock_guard<std::mutex> lock(mu_);
    workers_stop_ = true;
  }
  work_cv_.notify_all();
  for (auto& w : workers_) w.join();
  workers_.clear();
  for (int* fd : {&listen_fd_, &epoll_fd_, &wake_fd_, &spare_fd_}) {
    if (*fd >= 0) ::close(*fd);
    *fd = -1;
  }
}

void HttpServer::Impl::Wake() {
  uint64_t one = 1;
  (void)!::write(wake_fd_, &one, sizeof(one));
}

void HttpServer::Impl::Worker() {
  for (;;) {
    Job job;
    {
      std::unique_lock<std::mutex> lock(mu_);
      work_cv_.wait(lock, [&] { return workers_stop_ || !jobs_.empty(); });
      if (jobs_.empty()) return;
      job = std::move(jobs_.front());
      jobs_.pop_front();
    }
    HttpResponse res = router_.Handle(job.request);
    job.request = HttpRequest{};  // free the body before queueing the answer
    {
      std::lock_guard<std::mutex> lock(mu_);
      answers_.push_back(Answer{job.conn, std::move(res)});
    }
    Wake();
  }
}

void HttpServer::Impl::Loop() {
  std::vector<epoll_event> events(256);
  for (;;) {
    int n = ::epoll_wait(epoll_fd_, events.data(), static_cast<int>(events.size()), 100);
    for (int i = 0; i < n; ++i) {
      uint64_t key = events[i].data.u64;
      if (key == 0) {
        AcceptAll();
      } else if (key == UINT64_MAX) {
        uint64_t count;
        while (::read(wake_fd_, &count, sizeof(count)) > 0) {
        }
      } else if (auto it = conns_.find(key); it != conns_.end()) {
        OnEvent(*it->second, events[i].events);
      }
    }
    if (listen_paused_until_ && !stop_begun_ && Clock::now() >= *listen_paused_until_) {
      epoll_event ev{};
      ev.events = EPOLLIN;
      ev.data.u64 = 0;
      ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, listen_fd_, &ev);
      listen_paused_until_.reset();
    }
    TakeAnswers();
    while (!ready_.empty()) {
      std::vector<uint64_t> ready;
      ready.swap(ready_);
      for (uint64_t id : ready) {
        auto it = conns_.find(id);
        if (it != conns_.end() && it->second->phase == Phase::kReading) Advance(*it->second);
      }
    }
    bool stopping;
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopping = stopping_;
    }
    if (stopping && !stop_begun_) BeginStop();
    CheckDeadlines();
    if (stop_begun_ && conns_.empty()) return;
  }
}

// Stop: no new connections. Connections without a request in progress close now;
// a request already arriving, being handled or answered (and drained) may finish
// within a short grace (kStopGrace), after which whatever is not with a worker is
// closed.
void HttpServer::Impl::BeginStop() {
  stop_begun_ = true;
  stop_deadline_ = Clock::now() + kStopGrace;
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, listen_fd_, nullptr);
  ::close(listen_fd_);
  listen_fd_ = -1;
  std::vector<uint64_t> ids;
  for (auto& [id, c] : conns_) ids.push_back(id);
  for (uint64_t id : ids) {
    auto it = conns_.find(id);
    if (it == conns_.end()) continue;
    Conn& c = *it->second;
    if (c.phase == Phase::kReading) {
      ReadSome(c);  // bytes that arrived but were not read yet
      if (!conns_.contains(id)) continue;
      Advance(c);
      if (!conns_.contains(id)) continue;
    }
    bool idle = c.phase == Phase::kReading && !c.parser.started() && c.out.empty();
    if (idle) Close(id);
  }
}

void HttpServer::Impl::AcceptAll() {
  for (;;) {
    int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      if ((errno == EMFILE || errno == ENFILE) && spare_fd_ >= 0) {
        // Out of descriptors: take the spare one to accept and refuse this client,
        // rather than leaving it (and the listener's readiness) pending forever.
        ::close(spare_fd_);
        spare_fd_ = -1;
        int refused = ::accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (refused >= 0) RefuseAtAccept(refused, 503, "out of file descriptors");
        spare_fd_ = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
        continue;
      }
      if (errno != EAGAIN && errno != EWOULDBLOCK) {
        // A lasting error (ENOBUFS, out of descriptors with no spare): the listener
        // stays readable, so stop watching it for a moment instead of spinning.
        ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, listen_fd_, nullptr);
        listen_paused_until_ = Clock::now() + std::chrono::milliseconds(100);
      }
      return;
    }
    if (static_cast<int>(conns_.size()) >= limit_) {
      RefuseAtAccept(fd, 503, fmt::format("too many connections (limit {})", limit_));
      continue;
    }
    int yes = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof(yes));
    auto conn = std::make_unique<Conn>(limits_);
    conn->id = next_id_++;
    conn->fd = fd;
    conn->phase_start = Clock::now();
    Conn& c = *conn;
    conns_[c.id] = std::move(conn);
    open_.store(static_cast<int>(conns_.size()));
    Watch(c, EPOLLIN | EPOLLRDHUP);
    UpdateDeadline(c);
  }
}

void HttpServer::Impl::RefuseAtAccept(int fd, int status, std::string_view message) {
  HttpResponse res;
  internal::SetError(res, status, message);
  res.Set("Retry-After", "1");
  res.close = true;
  std::string bytes = SerializeResponse(res, false, false);
  (void)!::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  ::shutdown(fd, SHUT_WR);
  char discard[4096];  // what the client sent already: unread, close() would reset
  while (::recv(fd, discard, sizeof(discard), MSG_DONTWAIT) > 0) {
  }
  ::close(fd);
  router_.Count("", status);
}

void HttpServer::Impl::Watch(Conn& c, uint32_t events) {
  if (events == c.watched) return;
  epoll_event ev{};
  ev.events = events;
  ev.data.u64 = c.id;
  int op = c.watched == 0 ? EPOLL_CTL_ADD : events == 0 ? EPOLL_CTL_DEL : EPOLL_CTL_MOD;
  ::epoll_ctl(epoll_fd_, op, c.fd, &ev);
  c.watched = events;
}

void HttpServer::Impl::OnEvent(Conn& c, uint32_t events) {
  uint64_t id = c.id;
  if ((events & EPOLLERR) != 0) {
    Close(id);
    return;
  }
  if ((events & EPOLLOUT) != 0 && c.out_pos < c.out.size()) {
    WriteSome(c);
    if (!conns_.contains(id)) return;
  }
  if ((events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP)) == 0) return;
  if (c.phase == Phase::kReading) {
    ReadSome(c);
    if (conns_.contains(id)) Advance(c);
  } else if (c.phase == Phase::kDraining) {
    Drain(c);
  } else if ((events & EPOLLHUP) != 0) {
    Close(id);  // writing to a connection the client reset
  }
}

void HttpServer::Impl::ReadSome(Conn& c) {
  if (c.in_pos > 0 && c.in_pos == c.in.size()) {
    c.in.clear();
    if (c.in.capacity() > kReadChunk * 2) c.in.shrink_to_fit();  // idle connections stay small
    c.in_pos = 0;
  }
  size_t total = 0;
  while (total < kMaxReadPerEvent && !c.peer_closed) {
    size_t have = c.in.size();
    c.in.resize(have + kReadChunk);
    ssize_t n = ::recv(c.fd, c.in.data() + have, kReadChunk, 0);
    c.in.resize(have + static_cast<size_t>(std::max<ssize_t>(n, 0)));
    if (n > 0) {
      total += static_cast<size_t>(n);
      continue;
    }
    if (n == 0) {
      c.peer_closed = true;
    } else if (errno == EINTR) {
      continue;
    } else if (errno != EAGAIN && errno != EWOULDBLOCK) {
      Close(c.id);  // reset by the client
    }
    return;
  }
}

void HttpServer::Impl::Advance(Conn& c) {
  const uint64_t id = c.id;
  while (c.phase == Phase::kReading) {
    std::string_view pending(c.in.data() + c.in_pos, c.in.size() - c.in_pos);
    c.in_pos += c.parser.Feed(pending);
    switch (c.parser.state()) {
      case RequestParser::State::kError: {
        HttpResponse res;
        internal::SetError(res, c.parser.error().status, c.parser.error().message);
        Respond(c, std::move(res), /*drain=*/true);
        return;
      }
      case RequestParser::State::kHeadDone:
        OnHeadDone(c);
        if (!conns_.contains(id)) return;
        continue;
      case RequestParser::State::kComplete:
        if (ReserveBody(c)) Dispatch(c);
        return;
      case RequestParser::State::kHead:
      case RequestParser::State::kBody: break;
    }
    // Waiting for more bytes.
    if (!ReserveBody(c)) return;
    if (c.peer_closed) {
      // The client closed before finishing a request: nothing to answer.
      Close(c.id);
      return;
    }
    if (c.parser.started() != c.was_started) UpdateDeadline(c);
    return;
  }
}

void HttpServer::Impl::OnHeadDone(Conn& c) {
  const HttpRequest& req = c.parser.request();
  if (auto refusal = router_.OnHead(req)) {
    // The body (if any) stays unread: never parse it, close after answering.
    bool unread = req.announces_body;
    if (unread) refusal->close = true;
    Respond(c, std::move(*refusal), /*drain=*/unread);
    return;
  }
  if (req.expect_continue && req.announces_body) {
    const uint64_t id = c.id;
    c.out += "HTTP/1.1 100 Continue\r\n\r\n";
    WriteSome(c);
    if (!conns_.contains(id)) return;  // the client went away
  }
  c.parser.BeginBody();
  c.phase_start = Clock::now();  // the body deadline starts now
  UpdateDeadline(c);
}

// Body bytes count against max_buffered_body_bytes as they arrive (not as
// announced: a client must send what it holds). Past the budget: 503, close.
bool HttpServer::Impl::ReserveBody(Conn& c) {
  int64_t held = static_cast<int64_t>(c.parser.request().body.size());
  if (held <= c.reserved) return true;
  if (buffered_ + held - c.reserved > options_.max_buffered_body_bytes) {
    HttpResponse res;
    internal::SetError(res, 503, "the server holds too many request bodies; retry later");
    res.Set("Retry-After", "1");
    Respond(c, std::move(res), /*drain=*/true);
    return false;
  }
  buffered_ += held - c.reserved;
  c.reserved = held;
  return true;
}

void HttpServer::Impl::Dispatch(Conn& c) {
  c.phase = Phase::kHandling;
  Watch(c, 0);  // read nothing more until answered (pipelined bytes wait)
  UpdateDeadline(c);
  NoteRequest(c);
  {
    std::lock_guard<std::mutex> lock(mu_);
    jobs_.push_back(Job{c.id, std::move(c.parser.request())});
  }
  work_cv_.notify_one();
}

void HttpServer::Impl::TakeAnswers() {
  std::deque<Answer> answers;
  {
    std::lock_guard<std::mutex> lock(mu_);
    answers.swap(answers_);
  }
  for (Answer& a : answers) {
    auto it = conns_.find(a.conn);
    if (it == conns_.end()) continue;
    Conn& c = *it->second;
    Release(c);
    Respond(c, std::move(a.response), /*drain=*/false);
  }
}

void HttpServer::Impl::Release(Conn& c) {
  buffered_ -= c.reserved;
  c.reserved = 0;
}

// What the answer needs of the request, kept before the request moves to a worker.
void HttpServer::Impl::NoteRequest(Conn& c) {
  const HttpRequest& req = c.parser.request();
  c.head_only = req.method == "HEAD";
  c.keep_alive = req.keep_alive;
  c.http10_keep_alive = req.minor_version == 0 && req.keep_alive;
  c.path = req.path;
}

void HttpServer::Impl::Respond(Conn& c, HttpResponse res, bool drain) {
  if (c.phase != Phase::kHandling) NoteRequest(c);
  // A half-closed client still gets answers to every request it sent.
  bool more_buffered = c.in_pos < c.in.size();
  if (drain || !c.keep_alive || (c.peer_closed && !more_buffered) || stop_begun_) {
    res.close = true;
  }
  router_.Count(c.path, res.status);
  c.out += SerializeResponse(res, c.head_only, c.http10_keep_alive && !res.close);
  c.close_after = res.close;
  c.phase = Phase::kWriting;
  c.phase_start = Clock::now();
  Release(c);
  UpdateDeadline(c);
  WriteSome(c);
}

void HttpServer::Impl::WriteSome(Conn& c) {
  while (c.out_pos < c.out.size()) {
    ssize_t n = ::send(c.fd, c.out.data() + c.out_pos, c.out.size() - c.out_pos, MSG_NOSIGNAL);
    if (n > 0) {
      c.out_pos += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      Watch(c, (c.phase == Phase::kReading ? EPOLLIN | EPOLLRDHUP : 0) | EPOLLOUT);
      return;
    }
    Close(c.id);  // the client is gone
    return;
  }
  c.out.clear();
  c.out_pos = 0;
  if (c.phase == Phase::kWriting) {
    AfterWrite(c);
  } else if (c.phase == Phase::kReading) {
    Watch(c, EPOLLIN | EPOLLRDHUP);
  }
}

void HttpServer::Impl::AfterWrite(Conn& c) {
  if (c.close_after) {
    // Unread input (a pipelined request, a body never read, bytes still in
    // flight) would make close() reset the connection and could destroy the
    // answer before the client reads it: shut down writing and drain first.
    if (!c.peer_closed) {
      // Unread bytes may follow: a close now could reset the connection before the
      // client reads the answer. Stop writing, discard input for a moment, close.
      ::shutdown(c.fd, SHUT_WR);
      c.phase = Phase::kDraining;
      c.phase_start = Clock::now();
      Watch(c, EPOLLIN | EPOLLRDHUP);
      UpdateDeadline(c);
      Drain(c);
      return;
    }
    Close(c.id);
    return;
  }
  c.parser.Reset();
  c.path.clear();
  c.phase = Phase::kReading;
  c.phase_start = Clock::now();
  c.was_started = false;
  Watch(c, EPOLLIN | EPOLLRDHUP);
  UpdateDeadline(c);
  // A pipelined request may be buffered already: the loop parses it next (not from
  // here, so that many small pipelined requests do not recurse).
  if (c.in_pos < c.in.size() || c.peer_closed) ready_.push_back(c.id);
}

void HttpServer::Impl::Drain(Conn& c) {
  char buf[16 << 10];
  for (;;) {
    ssize_t n = ::recv(c.fd, buf, sizeof(buf), 0);
    if (n > 0) {
      c.drained += static_cast<size_t>(n);
      if (c.drained > kMaxDrainBytes) break;
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    break;  // EOF or error
  }
  Close(c.id);
}

void HttpServer::Impl::UpdateDeadline(Conn& c) {
  auto s = [](int seconds) { return std::chrono::seconds(seconds); };
  switch (c.phase) {
    case Phase::kReading:
      c.was_started = c.parser.started();
      if (!c.parser.started()) {
        c.deadline = c.phase_start + s(options_.keep_alive_timeout_s);
      } else if (c.parser.state() == RequestParser::State::kBody) {
        c.deadline = c.phase_start + s(options_.body_timeout_s);
      } else {
        c.phase_start = Clock::now();  // the request's first byte
        c.deadline = c.phase_start + s(options_.header_timeout_s);
      }
      break;
    case Phase::kHandling: c.deadline = Clock::time_point::max(); break;
    case Phase::kWriting:
      c.deadline = c.phase_start + (stop_begun_ ? kStopGrace : s(options_.write_timeout_s));
      break;
    case Phase::kDraining: c.deadline = c.phase_start + kDrainTime; break;
  }
}

void HttpServer::Impl::CheckDeadlines() {
  Clock::time_point now = Clock::now();
  std::vector<uint64_t> expired;
  for (auto& [id, c] : conns_) {
    bool past_stop = stop_begun_ && now > stop_deadline_ && c->phase != Phase::kHandling;
    if (now >= c->deadline || past_stop) expired.push_back(id);
  }
  for (uint64_t id : expired) {
    auto it = conns_.find(id);
    if (it == conns_.end()) continue;
    Conn& c = *it->second;
    if (c.phase == Phase::kReading && c.parser.started() && !stop_begun_) {
      HttpResponse res;
      bool body = c.parser.state() == RequestParser::State::kBody;
      internal::SetError(res, 408,
                         fmt::format("the request's {} did not arrive within {} s",
                                     body ? "body" : "header section",
                                     body ? options_.body_timeout_s : options_.header_timeout_s));
      Respond(c, std::move(res), /*drain=*/true);
    } else {
      Close(id);
    }
  }
}

void HttpServer::Impl::Close(uint64_t id) {
  auto it = conns_.find(id);
  if (it == conns_.end()) return;
  Conn& c = *it->second;
  Release(c);
  if (c.watched != 0) ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, c.fd, nullptr);
  ::close(c.fd);
  conns_.erase(it);
  open_.store(static_cast<int>(conns_.size()));
}

Result<std::unique_ptr<HttpServer>> HttpServer::Make(HttpServerOptions options,
                                                     IngestTarget* target) {
  if (target == nullptr) return Status::Invalid("http server: no ingest target");
  if (options.port < 0 || options.port > 65535) {
    return Status::Invalid("http server: port {} out of range", options.port);
  }
  if (options.worker_threads < 1) {
    return Status::Invalid("http server: worker_threads must be >= 1, got {}",
                           options.worker_threads);
  }
  if (options.max_body_bytes < 1) {
    return Status::Invalid("http server: max_body_bytes must be >= 1, got {}",
                           options.max_body_bytes);
  }
  if (options.max_connections < 1 || options.max_buffered_body_bytes < options.max_body_bytes) {
    return Status::Invalid(
        "http server: max_connections must be >= 1 and max_buffered_body_bytes >= "
        "max_body_bytes, got {} and {}",
        options.max_connections, options.max_buffered_body_bytes);
  }
  if (options.keep_alive_timeout_s < 1 || options.header_timeout_s < 1 ||
      options.body_timeout_s < 1 || options.write_timeout_s < 1) {
    return Status::Invalid(
        "http server: timeouts must be >= 1 s (keep-alive {}, header {}, body {}, write {})",
        options.keep_alive_timeout_s, options.header_timeout_s, options.body_timeout_s,
        options.write_timeout_s);
  }
  auto impl = std::make_unique<Impl>(std::move(options), target);
  RETURN_IF_ERROR(impl->Init());
  return std::unique_ptr<HttpServer>(new HttpServer(std::move(impl)));
}

HttpServer::HttpServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

HttpServer::~HttpServer() { Stop(); }

Status HttpServer::Start() {
  ASSIGN_OR_RETURN(port_, impl_->Start());
  return Status::OK();
}

void HttpServer::Stop() { impl_->Stop(); }

int HttpServer::open_connections() const { return impl_->open_connections(); }
int HttpServer::connection_limit() const { return impl_->connection_limit(); }

}  // namespace sluice::server
