#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "io/file_io.h"
#include "io/posix.h"

namespace sluice {
namespace {

namespace fs = std::filesystem;

class LocalInputFile final : public InputFile {
 public:
  LocalInputFile(std::string path, int fd, int64_t size)
      : path_(std::move(path)), fd_(fd), size_(size) {}
  ~LocalInputFile() override { ::close(fd_); }
  const std::string& path() const override { return path_; }
  int64_t size() const override { return size_; }

  Status ReadAt(int64_t offset, int64_t length, std::string* out) const override {
    RETURN_IF_ERROR(CheckReadRange(path_, offset, length, size_));
    return PreadFully(fd_, path_, offset, length, out);
  }

 private:
  std::string path_;
  int fd_;
  int64_t size_;
};

std::string TempName(const std::string& path) {
  static std::atomic<uint64_t> counter{0};
  return fmt::format("{}.tmp-{}-{}", path, ::getpid(), counter.fetch_add(1));
}

class LocalOutputFile final : public OutputFile {
 public:
  LocalOutputFile(std::string path, std::string tmp, int fd, bool overwrite)
      : path_(std::move(path)), tmp_(std::move(tmp)), fd_(fd), overwrite_(overwrite) {}
  ~LocalOutputFile() override { Abort(); }
  const std::string& path() const override { return path_; }
  int64_t position() const override { return position_; }

  Status Append(std::string_view data) override {
    if (fd_ < 0) return Status::Internal("file {}: append after close", path_);
    // Buffer small appends; the Parquet and Avro writers append many small pieces.
    if (buffer_.size() + data.size() > kBufferSize) RETURN_IF_ERROR(Flush());
    if (data.size() >= kBufferSize) {
      RETURN_IF_ERROR(WriteAll(data));
    } else {
      buffer_.append(data);
    }
    position_ += static_cast<int64_t>(data.size());
    return Status::OK();
  }

  Status Close(bool sync) override {
    if (fd_ < 0) return Status::Internal("file {}: closed twice", path_);
    RETURN_IF_ERROR(Flush());
    if (sync && ::fsync(fd_) != 0) return ErrnoStatus("fsync", tmp_);
    ::close(fd_);
    fd_ = -1;
    if (overwrite_) {
      if (::rename(tmp_.c_str(), path_.c_str()) != 0) return ErrnoStatus("rename to", path_);
    } else {
      // link() fails if the target exists: a create that never replaces.
      if (::link(tmp_.c_str(), path_.c_str()) != 0) {
        Status st = errno == EEXIST ? Status::AlreadyExists("file {} already exists", path_)
                                    : ErrnoStatus("link to", path_);
        ::unlink(tmp_.c_str());
        return st;
      }
      ::unlink(tmp_.c_str());
    }
    if (sync) (void)SyncDirectory(fs::path(path_).parent_path().string());  // best effort
    return Status::OK();
  }

  void Abort() override {
    if (fd_ >= 0) {
      ::close(fd_);
      fd_ = -1;
      ::unlink(tmp_.c_str());
    }
  }

 private:
  static constexpr size_t kBufferSize = 1 << 20;

  Status Flush() {
    Status st = WriteAll(buffer_);
    buffer_.clear();
    return st;
  }

  Status WriteAll(std::string_view data) { return WriteFully(fd_, tmp_, data); }

  std::string path_, tmp_;
  int fd_;
  bool overwrite_;
  int64_t position_ = 0;
  std::string buffer_;
};

// "file:///a/b" and "file:/a/b" (the URI forms other Iceberg writers use)
// name the local path "/a/b".
std::string LocalPath(const std::string& p) {
  if (p.compare(0, 7, "file://") == 0) return p.substr(7);
  if (p.compare(0, 6, "file:/") == 0) return p.substr(5);
  return p;
}

class LocalFileIO final : public FileIO {
 public:
  Result<std::unique_ptr<InputFile>> OpenInput(const std::string& uri) override {
    const std::string path = LocalPath(uri);
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return ErrnoStatus("open", path);
    struct stat st;
    if (::fstat(fd, &st) != 0) {
      Status s = ErrnoStatus("stat", path);
      ::close(fd);
      return s;
    }
    if (S_ISDIR(st.st_mode)) {
      ::close(fd);
      return Status::Invalid("{} is a directory, not a file", path);
    }
    return std::unique_ptr<InputFile>(new LocalInputFile(path, fd, st.st_size));
  }

  Result<std::unique_ptr<OutputFile>> OpenOutput(const std::string& uri, bool overwrite) override {
    const std::string path = LocalPath(uri);
    if (!overwrite && ::access(path.c_str(), F_OK) == 0) {
      return Status::AlreadyExists("file {} already exists", path);
    }
    std::error_code ec;
    auto parent = fs::path(path).parent_path();
    if (!parent.empty()) fs::create_directories(parent, ec);
    std::string tmp = TempName(path);
    int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) return ErrnoStatus("create", tmp);
    return std::unique_ptr<OutputFile>(new LocalOutputFile(path, tmp, fd, overwrite));
  }

  Result<bool> Exists(const std::string& uri) override {
    const std::string path = LocalPath(uri);
    return ::access(path.c_str(), F_OK) == 0;
  }

  Status Delete(const std::string& uri) override {
    const std::string path = LocalPath(uri);
    if (::unlink(path.c_str()) != 0) return ErrnoStatus("delete", path);
    return Status::OK();
  }

  Result<std::vector<std::string>> List(const std::string& uri_prefix) override {
    const std::string prefix = LocalPath(uri_prefix);
    const std::string scheme = uri_prefix.substr(0, uri_prefix.size() - prefix.size());
    std::vector<std::string> out;
    fs::path p(prefix);
    fs::path dir = fs::is_directory(p) ? p : p.parent_path();
    if (dir.empty()) dir = ".";
    std::error_code ec;
    if (!fs::exists(dir, ec)) return out;
    for (auto it = fs::recursive_directory_iterator(dir, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
      if (!it->is_regular_file()) continue;
      std::string s = it->path().string();
      if (s.compare(0, prefix.size(), prefix) == 0) out.push_back(scheme + s);
    }
    if (ec) return Status::IOError("list {}: {}", prefix, ec.message());
    return out;
  }

  Result<std::vector<FileStatus>> ListStatus(const std::string& uri_prefix) override {
    ASSIGN_OR_RETURN(std::vector<std::string> paths, List(uri_prefix));
    std::vector<FileStatus> out;
    for (std::string& p : paths) {
      struct stat st;
      if (::stat(LocalPath(p).c_str(), &st) != 0) continue;  // gone since listed
      FileStatus f;
      f.path = std::move(p);
      f.size = static_cast<int64_t>(st.st_size);
      f.modified_ms = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000 + st.st_mtim.tv_nsec / 1000000;
      out.push_back(std::move(f));
    }
    return out;
  }
};

}  // namespace

std::unique_ptr<FileIO> MakeLocalFileIO() { return std::make_unique<LocalFileIO>(); }

Result<std::vector<FileStatus>> FileIO::ListStatus(const std::string& prefix) {
  ASSIGN_OR_RETURN(std::vector<std::string> paths, List(prefix));
  std::vector<FileStatus> out;
  for (std::string& p : paths) out.push_back(FileStatus{std::move(p), -1, -1});
  return out;
}

std::vector<std::string> FileIO::DeleteAll(const std::vector<std::string>& paths) {
  std::vector<std::string> failures;
  for (const std::string& p : paths) {
    Status st = Delete(p);
    if (!st.ok() && st.code() != StatusCode::kNotFound)
      failures.push_back(p + ": " + st.ToString());
  }
  return failures;
}

Status CheckReadRange(const std::string& path, int64_t offset, int64_t length, int64_t size) {
  if (offset < 0 || length < 0 || offset > size || length > size - offset) {
    return Status::Corruption("file {}: read of {} bytes at offset {} is past its end ({} bytes)",
                              path, length, offset, size);
  }
  return Status::OK();
}

Status FileIO::WriteFile(const std::string& path, std::string_view data, bool overwrite) {
  ASSIGN_OR_RETURN(auto out, OpenOutput(path, overwrite));
  RETURN_IF_ERROR(out->Append(data));
  return out->Close();
}

Result<std::string> FileIO::ReadFile(const std::string& path) {
  ASSIGN_OR_RETURN(auto in, OpenInput(path));
  std::string data;
  RETURN_IF_ERROR(in->ReadAll(&data));
  return data;
}

}  // namespace sluice
