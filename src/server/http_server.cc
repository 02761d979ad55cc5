// HttpServer: options, lifecycle (bind, the loop and worker threads, stop) and the
// accepting side of the event loop. The loop's design: http_loop.h.
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
#include <cerrno>
#include <cstring>

#include "common/thread_name.h"
#include "server/http_loop.h"

namespace sluice::server {

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
  for (int i = 0; i < options_.worker_threads; ++i) {
    workers_.emplace_back([this, i] {
      NameThisThread(ThreadName("http", i + 1, ""));
      Worker();
    });
  }
  loop_ = std::thread([this] {
    NameThisThread("http-loop");
    Loop();
  });
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

Status ParseListen(const std::string& listen, HttpServerOptions* options) {
  auto colon = listen.rfind(':');
  if (colon == std::string::npos) return Status::Invalid("--listen '{}' is not host:port", listen);
  char* end = nullptr;
  long port = std::strtol(listen.c_str() + colon + 1, &end, 10);
  if (colon + 1 == listen.size() || *end != '\0' || port < 0 || port > 65535) {
    return Status::Invalid("--listen '{}': bad port", listen);
  }
  options->host = listen.substr(0, colon);
  options->port = static_cast<int>(port);
  return Status::OK();
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
