#include "io/s3/fault_proxy.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <stdexcept>

namespace sluice::s3 {
namespace {

bool SendAll(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n <= 0) return false;
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

// Reads one request (head and Content-Length body) from `fd` into `out`, after
// whatever `pending` held. False at EOF or error.
bool ReadRequest(int fd, std::string* pending, std::string* out) {
  char buf[65536];
  size_t head_end;
  while ((head_end = pending->find("\r\n\r\n")) == std::string::npos) {
    ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) return false;
    pending->append(buf, static_cast<size_t>(n));
  }
  size_t length = 0;
  std::string head = pending->substr(0, head_end);
  for (char& c : head) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  size_t at = head.find("\r\ncontent-length:");
  if (at != std::string::npos) length = std::strtoull(head.c_str() + at + 17, nullptr, 10);
  size_t total = head_end + 4 + length;
  while (pending->size() < total) {
    ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) return false;
    pending->append(buf, static_cast<size_t>(n));
  }
  *out = pending->substr(0, total);
  pending->erase(0, total);
  return true;
}

// The request with "Connection: close" (so the upstream's answer ends at EOF).
std::string WithConnectionClose(const std::string& request) {
  size_t line_end = request.find("\r\n");
  return request.substr(0, line_end) + "\r\nConnection: close" + request.substr(line_end);
}

std::string ErrorAnswer(int status, std::string_view reason, std::string_view code) {
  std::string body = "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Error><Code>" + std::string(code) +
                     "</Code><Message>injected by the test</Message></Error>";
  return "HTTP/1.1 " + std::to_string(status) + " " + std::string(reason) +
         "\r\nContent-Type: application/xml\r\nContent-Length: " + std::to_string(body.size()) +
         "\r\n\r\n" + body;
}

}  // namespace

FaultProxy::FaultProxy(const std::string& upstream) : rng_(1) {
  std::string hostport = upstream.substr(upstream.find("://") + 3);
  size_t colon = hostport.rfind(':');
  upstream_host_ = hostport.substr(0, colon);
  upstream_port_ = std::stoi(hostport.substr(colon + 1));
  listener_ = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::bind(listener_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      ::listen(listener_, 64) != 0) {
    throw std::runtime_error("FaultProxy: cannot listen");
  }
  socklen_t len = sizeof(addr);
  ::getsockname(listener_, reinterpret_cast<sockaddr*>(&addr), &len);
  port_ = ntohs(addr.sin_port);
  acceptor_ = std::thread([this] { Accept(); });
}

FaultProxy::~FaultProxy() {
  stop_ = true;
  ::shutdown(listener_, SHUT_RDWR);
  acceptor_.join();
  ::close(listener_);
  std::vector<Worker> workers;
  {
    std::lock_guard lock(mu_);
    for (int c : clients_) ::shutdown(c, SHUT_RDWR);
    workers.swap(workers_);
  }
  for (auto& w : workers) w.thread.join();
}

void FaultProxy::Fail(std::vector<Fault> faults) {
  std::lock_guard lock(mu_);
  script_.insert(script_.end(), faults.begin(), faults.end());
}

void FaultProxy::SetRandom(double rate, uint64_t seed) {
  std::lock_guard lock(mu_);
  rate_ = rate;
  rng_.seed(seed);
}

Fault FaultProxy::Next() {
  std::lock_guard lock(mu_);
  if (!script_.empty()) {
    Fault f = script_.front();
    script_.pop_front();
    return f;
  }
  if (rate_ > 0 && std::uniform_real_distribution<double>(0, 1)(rng_) < rate_) {
    return static_cast<Fault>(1 + rng_() % 4);
  }
  return Fault::kNone;
}

void FaultProxy::Accept() {
  while (!stop_) {
    int client = ::accept(listener_, nullptr, nullptr);
    if (client < 0) {
      if (stop_) return;
      continue;
    }
    std::lock_guard lock(mu_);
    std::erase_if(workers_, [](Worker& w) {
      if (!w.done->load()) return false;
      w.thread.join();
      return true;
    });
    clients_.push_back(client);
    auto done = std::make_shared<std::atomic<bool>>(false);
    workers_.push_back({std::thread([this, client, done] {
                          Serve(client);
                          *done = true;
                        }),
                        done});
  }
}

void FaultProxy::Serve(int client) {
  std::string pending, request;
  while (!stop_ && ReadRequest(client, &pending, &request)) {
    requests_++;
    Fault fault = Next();
    if (fault != Fault::kNone) faults_++;
    if (fault == Fault::kSlowDown) {
      if (!SendAll(client, ErrorAnswer(503, "Slow Down", "SlowDown"))) break;
      continue;
    }
    if (fault == Fault::kInternalError) {
      if (!SendAll(client, ErrorAnswer(500, "Internal Server Error", "InternalError"))) break;
      continue;
    }
    if (fault == Fault::kPreconditionFailed) {
      if (!SendAll(client, ErrorAnswer(412, "Precondition Failed", "PreconditionFailed"))) break;
      continue;
    }
    if (fault == Fault::kReset) {
      linger hard{1, 0};  // close with RST
      ::setsockopt(client, SOL_SOCKET, SO_LINGER, &hard, sizeof(hard));
      break;
    }
    int up = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(upstream_port_));
    ::inet_pton(AF_INET, upstream_host_.c_str(), &addr.sin_addr);
    if (::connect(up, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
        !SendAll(up, WithConnectionClose(request))) {
      ::close(up);
      break;
    }
    std::string answer;
    char buf[65536];
    ssize_t n;
    while ((n = ::recv(up, buf, sizeof(buf), 0)) > 0) answer.append(buf, static_cast<size_t>(n));
    ::close(up);
    if (fault == Fault::kCutBody) {
      size_t body = answer.find("\r\n\r\n");
      size_t keep =
          body == std::string::npos ? answer.size() / 2 : body + 4 + (answer.size() - body - 4) / 2;
      SendAll(client, std::string_view(answer).substr(0, keep));
      break;
    }
    // The upstream answered "Connection: close"; the client may keep its own.
    size_t at = answer.find("\r\nConnection: close");
    if (at == std::string::npos) at = answer.find("\r\nconnection: close");
    if (at != std::string::npos) answer.replace(at, 19, "\r\nConnection: keep-alive");
    if (!SendAll(client, answer)) break;
  }
  {
    std::lock_guard lock(mu_);
    std::erase(clients_, client);
  }
  ::close(client);
}

}  // namespace sluice::s3
