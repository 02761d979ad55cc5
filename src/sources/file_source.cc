#include "sources/file_source.h"

#include <fcntl.h>
#include <fnmatch.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <thread>

#include "common/clock.h"

namespace sluice::sources {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr size_t kChunk = size_t{1} << 20;
// A buffer grown beyond this for a long line is released after the Poll.
constexpr size_t kRetainedBuffer = 4 * kChunk;
// Editors on Windows start UTF-8 files with one; it is not part of the line.
constexpr std::string_view kUtf8Bom = "\xEF\xBB\xBF";

int64_t MtimeMs(const struct stat& st) {
  int64_t ms = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000 + st.st_mtim.tv_nsec / 1'000'000;
  return ms > 0 ? ms : WallMillis();
}

// Blank: nothing but spaces and tabs ('\r' is already stripped).
bool IsBlank(const char* p, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    if (p[i] != ' ' && p[i] != '\t') return false;
  }
  return true;
}

bool IsPlainFileName(const std::string& name) {
  return !name.empty() && name != "." && name != ".." && name.find('/') == std::string::npos;
}

Status TruncatedError(const std::string& source, const std::string& path, int64_t size,
                      int64_t position) {
  return Status::OutOfRange(
      "file source {}: file {} is {} bytes, shorter than its position {} (truncated or "
      "replaced): it cannot be resumed exactly-once",
      source, path, size, position);
}

class FdCloser {
 public:
  explicit FdCloser(int fd) : fd_(fd) {}
  ~FdCloser() { ::close(fd_); }
  FdCloser(const FdCloser&) = delete;
  FdCloser& operator=(const FdCloser&) = delete;

 private:
  int fd_;
};

}  // namespace

Result<std::unique_ptr<FileSource>> FileSource::Open(FileSourceOptions options) {
  std::error_code ec;
  if (!fs::is_directory(options.dir, ec)) {
    return Status::NotFound("file source {}: folder {} does not exist", options.name, options.dir);
  }
  if (options.pattern.empty()) {
    return Status::Invalid("file source {}: empty file name pattern", options.name);
  }
  if (options.max_line_bytes <= 0 || options.scan_interval_ms < 0) {
    return Status::Invalid(
        "file source {}: max_line_bytes must be positive and "
        "scan_interval_ms not negative",
        options.name);
  }
  while (options.dir.size() > 1 && options.dir.back() == '/') options.dir.pop_back();
  std::unique_ptr<FileSource> source(new FileSource(std::move(options)));
  RETURN_IF_ERROR(source->Rescan());
  return source;
}

Result<FileSource::Files> FileSource::List() const {
  Files found;
  std::error_code ec;
  fs::directory_iterator it(options_.dir, ec);
  for (; !ec && it != fs::directory_iterator(); it.increment(ec)) {
    std::string name = it->path().filename().string();
    if (::fnmatch(options_.pattern.c_str(), name.c_str(), FNM_PERIOD) != 0) continue;
    struct stat st;
    if (::stat(PathOf(name).c_str(), &st) != 0) {
      if (errno == ENOENT) continue;  // deleted while listing
      return Status::IOError("file source {}: stat {}: {}", options_.name, PathOf(name),
                             std::strerror(errno));
    }
    if (!S_ISREG(st.st_mode)) continue;
    FileState& f = found[name];
    f.size = st.st_size;
    f.mtime_ms = MtimeMs(st);
  }
  if (ec) {
    return Status(
        ec == std::errc::no_such_file_or_directory ? StatusCode::kNotFound : StatusCode::kIOError,
        fmt::format("file source {}: listing folder {}: {}", options_.name, options_.dir,
                    ec.message()));
  }
  return found;
}

Status FileSource::StatTracked(const std::string& file, FileState& state) const {
  struct stat st;
  if (::stat(PathOf(file).c_str(), &st) != 0) {
    if (errno == ENOENT) {
      return Status::OutOfRange(
          "file source {}: file {} (position {}) no longer exists in {}: it cannot be resumed "
          "exactly-once",
          options_.name, file, state.next, options_.dir);
    }
    return Status::IOError("file source {}: stat {}: {}", options_.name, PathOf(file),
                           std::strerror(errno));
  }
  if (st.st_size < state.next) {
    return TruncatedError(options_.name, PathOf(file), st.st_size, state.next);
  }
  state.size = st.st_size;
  state.mtime_ms = MtimeMs(st);
  return Status::OK();
}

Status FileSource::Rescan() {
  last_scan_ = Clock::now();
  ASSIGN_OR_RETURN(Files found, List());
  for (auto& [name, f] : files_) {
    auto it = found.find(name);
    if (it == found.end() || it->second.size < f.next) {
      // Not listed (gone, or named by a Seek without matching the pattern) or
      // shrunk: look again, failing when it really is gone or truncated.
      RETURN_IF_ERROR(StatTracked(name, f));
      continue;
    }
    f.size = it->second.size;
    f.mtime_ms = it->second.mtime_ms;
  }
  for (auto& [name, f] : found) files_.try_emplace(name, f);
  return Status::OK();
}

Status FileSource::Seek(const Positions& positions) {
  ASSIGN_OR_RETURN(Files files, List());
  for (const auto& [name, offset] : positions) {
    if (!IsPlainFileName(name)) {
      return Status::Invalid("file source {}: resume position names '{}', not a file name in {}",
                             options_.name, name, options_.dir);
    }
    FileState& f = files[name];
    f.next = offset;
    if (offset < 0) {
      return Status::OutOfRange("file source {}: negative resume offset {} for file {}",
                                options_.name, offset, PathOf(name));
    }
    RETURN_IF_ERROR(StatTracked(name, f));
    if (offset == 0) continue;
    // The byte before a resume offset ends a line; anything else means the
    // file was rewritten since the checkpoint.
    int fd = ::open(PathOf(name).c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      return Status::IOError("file source {}: open {}: {}", options_.name, PathOf(name),
                             std::strerror(errno));
    }
    FdCloser closer(fd);
    char c = 0;
    if (::pread(fd, &c, 1, offset - 1) != 1 || c != '\n') {
      return Status::OutOfRange(
          "file source {}: resume offset {} of file {} is not at a line start (the file was "
          "rewritten): it cannot be resumed exactly-once",
          options_.name, offset, PathOf(name));
    }
  }
  files_ = std::move(files);
  last_scan_ = Clock::now();
  return Status::OK();
}

Positions FileSource::CurrentPositions() const {
  Positions p;
  for (const auto& [name, f] : files_) p.emplace(name, f.next);
  return p;
}

Positions FileSource::Lag() const {
  Positions p;
  for (const auto& [name, f] : files_) p.emplace(name, std::max<int64_t>(0, f.size - f.next));
  return p;
}

Result<int64_t> FileSource::Poll(int64_t max_bytes, int timeout_ms,
                                 const std::function<void(const SourceRecord&)>& sink) {
  auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  auto scan_interval = std::chrono::milliseconds(options_.scan_interval_ms);
  // A busy source rescans too, less often: appends to files it has finished
  // and Lag() stay current while other files keep it busy.
  if (Clock::now() - last_scan_ >= 5 * scan_interval) RETURN_IF_ERROR(Rescan());
  Result<int64_t> delivered = int64_t{0};
  bool just_scanned = false;
  while (true) {
    delivered = ReadAvailable(max_bytes, sink);
    if (!delivered.ok() || *delivered > 0) break;
    if (just_scanned) {
      drained_ = true;
      if (options_.bounded) break;  // the end: nothing to wait for
    }
    Clock::time_point now = Clock::now();
    if (!just_scanned && (options_.bounded || now - last_scan_ >= scan_interval)) {
      RETURN_IF_ERROR(Rescan());
      just_scanned = true;
      continue;  // read what the rescan found before waiting
    }
    just_scanned = false;
    if (now >= deadline) break;
    auto step = std::min<Clock::duration>(std::chrono::milliseconds(5), deadline - now);
    std::this_thread::sleep_for(step);
  }
  if (buf_.size() > kRetainedBuffer) std::string().swap(buf_);
  if (delivered.ok() && *delivered > 0) drained_ = false;
  return delivered;
}

Result<int64_t> FileSource::ReadAvailable(int64_t max_bytes,
                                          const std::function<void(const SourceRecord&)>& sink) {
  int64_t delivered = 0, bytes = 0;
  for (auto& [name, f] : files_) {
    if (bytes > 0 && bytes >= max_bytes) break;
    if (f.size <= f.next || f.size == f.stalled_size) continue;
    ASSIGN_OR_RETURN(int64_t n, ReadFile(name, f, max_bytes, &bytes, sink));
    delivered += n;
  }
  return delivered;
}

// buf_[0, len) holds the file's bytes from `pos` (a line start) on; bytes
// before `scanned` hold no '\n'.
Result<int64_t> FileSource::ReadFile(const std::string& file, FileState& f, int64_t max_bytes,
                                     int64_t* bytes,
                                     const std::function<void(const SourceRecord&)>& sink) {
  std::string path = PathOf(file);
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) {
      RETURN_IF_ERROR(StatTracked(file, f));  // names the vanished file
      return int64_t{0};                      // it came back: read it next time
    }
    return Status::IOError("file source {}: open {}: {}", options_.name, path,
                           std::strerror(errno));
  }
  FdCloser closer(fd);
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    return Status::IOError("file source {}: stat {}: {}", options_.name, path,
                           std::strerror(errno));
  }
  if (st.st_size < f.next) {
    return TruncatedError(options_.name, path, st.st_size, f.next);
  }
  f.mtime_ms = MtimeMs(st);
  f.stalled_size = -1;

  auto budget_left = [&] { return *bytes < max_bytes || *bytes == 0; };
  int64_t delivered = 0;
  int64_t pos = f.next;
  size_t len = 0, scanned = 0;
  bool eof = false;
  while (!eof && budget_left()) {
    if (len == buf_.size()) {
      if (static_cast<int64_t>(len) > options_.max_line_bytes) {
        if (*bytes > 0) break;  // deliver what was read; the next Poll fails
        return Status::OutOfRange(
            "file source {}: line at offset {} of file {} is longer than {} bytes", options_.name,
            pos, path, options_.max_line_bytes);
      }
      buf_.resize(std::max(kChunk, buf_.size() * 2));
    }
    ssize_t n = ::pread(fd, buf_.data() + len, buf_.size() - len, pos + static_cast<int64_t>(len));
    if (n < 0) {
      if (errno == EINTR) continue;
      return Status::IOError("file source {}: reading {} at offset {}: {}", options_.name, path,
                             pos + static_cast<int64_t>(len), std::strerror(errno));
    }
    eof = n == 0;
    len += static_cast<size_t>(n);
    size_t start = 0;
    while (budget_left()) {
      const char* base = buf_.data();
      const void* nl = std::memchr(base + scanned, '\n', len - scanned);
      if (nl == nullptr) {
        scanned = len;
        break;
      }
      size_t end = static_cast<const char*>(nl) - base;
      size_t value_begin = start, value_end = end;
      if (value_end > start && base[value_end - 1] == '\r') --value_end;
      if (pos + static_cast<int64_t>(start) == 0 &&
          std::string_view(base, value_end).starts_with(kUtf8Bom)) {
        value_begin += kUtf8Bom.size();
      }
      if (!IsBlank(base + value_begin, value_end - value_begin)) {
        sink(SourceRecord{file, pos + static_cast<int64_t>(start), f.mtime_ms,
                          std::string_view(base + value_begin, value_end - value_begin)});
        ++delivered;
        *bytes += static_cast<int64_t>(value_end - value_begin);
      }
      start = scanned = end + 1;
      f.next = pos + static_cast<int64_t>(start);
    }
    if (start > 0) {
      std::memmove(buf_.data(), buf_.data() + start, len - start);
      len -= start;
      scanned -= start;
      pos += static_cast<int64_t>(start);
    }
  }
  f.size = std::max<int64_t>(f.size, pos + static_cast<int64_t>(len));
  if (eof && len > 0) f.stalled_size = f.size;  // only a partial line is left
  return delivered;
}

}  // namespace sluice::sources
