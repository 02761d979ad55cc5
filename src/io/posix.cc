#include "io/posix.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace sluice {

Status ErrnoStatus(std::string_view what, const std::string& path) {
  int e = errno;
  std::string msg = fmt::format("{} {}: {}", what, path, std::strerror(e));
  if (e == ENOENT) return Status(StatusCode::kNotFound, msg);
  // EIO is not retryable: after a failed write or fsync the data may be gone.
  return Status(StatusCode::kIOError, msg, e == EINTR || e == EAGAIN);
}

Status PreadFully(int fd, const std::string& path, int64_t offset, int64_t length,
                  std::string* out) {
  out->resize(static_cast<size_t>(length));
  int64_t done = 0;
  while (done < length) {
    ssize_t n = ::pread(fd, out->data() + done, static_cast<size_t>(length - done),
                        static_cast<off_t>(offset + done));
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus("read", path);
    }
    if (n == 0) return Status::Corruption("file {}: unexpected end at {}", path, offset + done);
    done += n;
  }
  return Status::OK();
}

Status WriteFully(int fd, const std::string& path, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus("write", path);
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
  return Status::OK();
}

Status SyncDirectory(const std::string& dir) {
  const std::string d = dir.empty() ? "." : dir;
  int fd = ::open(d.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus("open directory", d);
  Status st = ::fsync(fd) == 0 ? Status::OK() : ErrnoStatus("fsync directory", d);
  ::close(fd);
  return st;
}

}  // namespace sluice
