#include "io/file_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <regex>

#include "io/posix.h"

namespace sluice {
namespace {

constexpr size_t kMaxDescriptionBytes = 512;

// The command line, with passwords masked: a lock file is world-readable and its
// text goes into other processes' error messages, and a catalog URI on the command
// line may carry credentials ("postgresql://user:secret@host/db", "password=secret").
std::string CommandLine() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::string raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::string out;
  for (char c : raw) out += c == '\0' ? ' ' : c;
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return MaskCredentials(out);
}

std::string StartTime() {
  static const std::string kStarted = [] {
    std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
    std::tm tm{};
    gmtime_r(&now, &tm);
    char buf[32];
    std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
    return std::string(buf);
  }();
  return kStarted;
}

// The holder's description as the lock file holds it (printable, one line, bounded).
std::string ReadDescription(int fd) {
  std::string text(kMaxDescriptionBytes, '\0');
  ssize_t n = ::pread(fd, text.data(), text.size(), 0);
  text.resize(n > 0 ? static_cast<size_t>(n) : 0);
  for (char& c : text) {
    if (static_cast<unsigned char>(c) < 0x20) c = ' ';
  }
  while (!text.empty() && text.back() == ' ') text.pop_back();
  return text.empty() ? "a process that has not described itself yet" : text;
}

}  // namespace

std::string MaskCredentials(std::string_view text) {
  static const std::regex kUserInfo(R"((://[^/\s:@]*):[^@\s/]*@)");
  static const std::regex kPassword(R"((password=)[^\s&;']*)", std::regex::icase);
  std::string out = std::regex_replace(std::string(text), kUserInfo, "$1:***@");
  return std::regex_replace(out, kPassword, "$1***");
}

std::string LockHolderDescription() {
  char host[256] = {};
  if (::gethostname(host, sizeof(host) - 1) != 0) host[0] = '\0';
  std::string d =
      fmt::format("pid {} on host {} since {}: {}", ::getpid(), host, StartTime(), CommandLine());
  if (d.size() > kMaxDescriptionBytes - 1) d.resize(kMaxDescriptionBytes - 1);
  return d;
}

Result<std::unique_ptr<FileLock>> FileLock::Acquire(const std::string& path,
                                                    std::string_view what) {
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
  if (ec) return Status::IOError("{}: create folder of lock file {}: {}", what, path, ec.message());
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoStatus(fmt::format("{}: open lock file", what), path);
  while (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    if (errno == EINTR) continue;
    if (errno == EWOULDBLOCK) {
      std::string holder = ReadDescription(fd);
      ::close(fd);
      return Status(
          StatusCode::kConflict,
          fmt::format("{} is in use by another process ({}); lock file {}", what, holder, path),
          /*retryable=*/false);
    }
    Status st = ErrnoStatus(fmt::format("{}: lock", what), path);
    ::close(fd);
    return st;
  }
  std::string description = LockHolderDescription() + "\n";
  if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, description.data(), description.size(), 0) !=
                                     static_cast<ssize_t>(description.size())) {
    Status st = ErrnoStatus(fmt::format("{}: write lock file", what), path);
    ::close(fd);
    return st;
  }
  return std::unique_ptr<FileLock>(new FileLock(path, fd));
}

FileLock::~FileLock() { ::close(fd_); }  // releases the lock

}  // namespace sluice
