#include "server/test_util.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace sluice::server::testing {

bool HavePromtool() { return std::system("promtool --version > /dev/null 2>&1") == 0; }

std::pair<int, std::string> Promtool(const std::string& text) {
  static int counter = 0;
  std::string path =
      (std::filesystem::temp_directory_path() /
       ("sluice-metrics-" + std::to_string(getpid()) + "-" + std::to_string(counter++)))
          .string();
  {
    std::ofstream out(path);
    out << text;
  }
  std::string cmd = "promtool check metrics < " + path + " 2>&1";
  std::string output;
  FILE* p = popen(cmd.c_str(), "r");
  char buf[512];
  while (p != nullptr && fgets(buf, sizeof(buf), p) != nullptr) output += buf;
  int status = p != nullptr ? pclose(p) : -1;
  std::filesystem::remove(path);
  return {status, output};
}

}  // namespace sluice::server::testing

namespace sluice::server::testing {

int Connect(int port, int timeout_s) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  timeval timeout{timeout_s, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

bool SendAll(int fd, std::string_view data) {
  for (size_t off = 0; off < data.size();) {
    ssize_t n = ::send(fd, data.data() + off, data.size() - off, MSG_NOSIGNAL);
    if (n <= 0) return false;
    off += static_cast<size_t>(n);
  }
  return true;
}

std::string ReadUntilClose(int fd) {
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = ::recv(fd, buf, sizeof(buf), 0)) > 0;) out.append(buf, n);
  return out;
}

std::string ReadResponse(int fd, std::string* buffer) {
  char buf[4096];
  for (;;) {
    size_t end = buffer->find("\r\n\r\n");
    if (end != std::string::npos) {
      std::string head = buffer->substr(0, end);
      size_t length = 0;
      size_t at = head.find("Content-Length: ");
      if (at != std::string::npos) length = std::stoul(head.substr(at + 16));
      if (buffer->size() >= end + 4 + length) {
        std::string response = buffer->substr(0, end + 4 + length);
        buffer->erase(0, end + 4 + length);
        return response;
      }
    }
    ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) return "";
    buffer->append(buf, static_cast<size_t>(n));
  }
}

int StatusOf(std::string_view response) {
  if (!response.starts_with("HTTP/1.1 ") || response.size() < 12) return 0;
  return std::atoi(std::string(response.substr(9, 3)).c_str());
}

int CountResponses(std::string_view text) {
  int n = 0;
  for (size_t at = text.find("HTTP/1.1 "); at != std::string_view::npos;
       at = text.find("HTTP/1.1 ", at + 1)) {
    if (text.substr(at, 12) != "HTTP/1.1 100") ++n;
  }
  return n;
}

}  // namespace sluice::server::testing
