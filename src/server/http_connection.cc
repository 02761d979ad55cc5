// The connection state machine of HttpServer's event loop: reading and parsing,
// the decision after the header section, dispatch to a worker, writing, draining,
// deadlines, closing. Runs on the loop thread only. Design: http_loop.h.
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "server/http_loop.h"

namespace sluice::server {

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

}  // namespace sluice::server
