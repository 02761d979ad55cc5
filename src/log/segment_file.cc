#include "log/segment_file.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "io/posix.h"

namespace sluice::log {
namespace {

class PosixSegmentFile final : public SegmentFile {
 public:
  PosixSegmentFile(std::string path, int fd, int64_t size)
      : path_(std::move(path)), fd_(fd), size_(size) {}
  ~PosixSegmentFile() override { ::close(fd_); }

  const std::string& path() const override { return path_; }
  int64_t size() const override { return size_.load(std::memory_order_acquire); }

  Status Append(std::string_view data) override {
    int64_t pos = size_.load(std::memory_order_relaxed);
    size_t done = 0;
    while (done < data.size()) {
      ssize_t n = ::pwrite(fd_, data.data() + done, data.size() - done,
                           static_cast<off_t>(pos + static_cast<int64_t>(done)));
      if (n < 0) {
        if (errno == EINTR) continue;
        return ErrnoStatus("write", path_);
      }
      done += static_cast<size_t>(n);
    }
    size_.store(pos + static_cast<int64_t>(data.size()), std::memory_order_release);
    return Status::OK();
  }

  Status Sync() override {
    if (::fdatasync(fd_) != 0) return ErrnoStatus("fdatasync", path_);
    return Status::OK();
  }

  Status ReadAt(int64_t offset, int64_t length, std::string* out) const override {
    int64_t size = this->size();
    if (offset < 0 || length < 0 || offset > size || length > size - offset) {
      return Status::Corruption("file {}: read of {} bytes at offset {} is past its end ({} bytes)",
                                path_, length, offset, size);
    }
    return PreadFully(fd_, path_, offset, length, out);
  }

  Status Truncate(int64_t size) override {
    if (::ftruncate(fd_, static_cast<off_t>(size)) != 0) return ErrnoStatus("truncate", path_);
    if (::fsync(fd_) != 0) return ErrnoStatus("fsync", path_);
    size_.store(size, std::memory_order_release);
    return Status::OK();
  }

 private:
  std::string path_;
  int fd_;
  std::atomic<int64_t> size_;
};

class LocalLogStorage final : public LogStorage {
 public:
  Status CreateDir(const std::string& dir) override {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) return Status::IOError("create directory {}: {}", dir, ec.message());
    return Status::OK();
  }

  Result<std::unique_ptr<SegmentFile>> Open(const std::string& path, bool create) override {
    int flags = O_RDWR | O_CLOEXEC | (create ? O_CREAT : 0);
    int fd = ::open(path.c_str(), flags, 0644);
    if (fd < 0) return ErrnoStatus("open", path);
    struct stat st;
    if (::fstat(fd, &st) != 0) {
      Status s = ErrnoStatus("stat", path);
      ::close(fd);
      return s;
    }
    return std::unique_ptr<SegmentFile>(new PosixSegmentFile(path, fd, st.st_size));
  }

  Result<std::vector<std::string>> ListNames(const std::string& dir) override {
    DIR* d = ::opendir(dir.c_str());
    if (d == nullptr) return ErrnoStatus("list", dir);
    std::vector<std::string> names;
    while (struct dirent* e = ::readdir(d)) {
      std::string name = e->d_name;
      if (name != "." && name != "..") names.push_back(std::move(name));
    }
    ::closedir(d);
    return names;
  }

  Status Remove(const std::string& path) override {
    if (::unlink(path.c_str()) != 0) return ErrnoStatus("remove", path);
    return Status::OK();
  }

  Status SyncDir(const std::string& dir) override { return SyncDirectory(dir); }
};

}  // namespace

LogStorage* PosixLogStorage() {
  static LocalLogStorage* storage = new LocalLogStorage();
  return storage;
}

}  // namespace sluice::log
