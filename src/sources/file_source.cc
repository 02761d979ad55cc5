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

// Reads take at most this much, and at least kMinRead.
constexpr size_t kChunk = size_t{1} << 20;
constexpr int64_t kMinRead = int64_t{64} << 10;
// Poll's buffer (a poll's records) is kept for the next one up to this size,
// or twice the poll's budget.
constexpr size_t kRetainedBuffer = 4 * kChunk;
// A deferred range ends at the last line end in its last this many bytes;
// a file whose bytes there hold none is read line by line instead.
constexpr int64_t kProbeBytes = int64_t{64} << 10;
// Fewer bytes than this are read at once, line by line (a part of their own
// would cost more than it saves).
constexpr int64_t kMinDeferredBytes = int64_t{64} << 10;

int64_t MtimeMs(const struct stat& st) {
  int64_t ms = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000 + st.st_mtim.tv_nsec / 1'000'000;
  return ms > 0 ? ms : WallMillis();
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
  scratch_.Clear();
  Result<int64_t> delivered = PollInto(max_bytes, timeout_ms, &scratch_);
  for (size_t i = 0; i < scratch_.records.size(); ++i) {
    const RawRecord& r = scratch_.records[i];
    sink(SourceRecord{scratch_.partitions[r.origin.partition], r.origin.offset,
                      r.origin.timestamp_ms, scratch_.Value(i)});
  }
  if (scratch_.raw.capacity() >
      std::max(kRetainedBuffer, 2 * static_cast<size_t>(std::max<int64_t>(max_bytes, 0)))) {
    scratch_ = RawBatch();  // grown for a long line
  }
  return delivered;
}

Result<int64_t> FileSource::PollInto(int64_t max_bytes, int timeout_ms, RawBatch* out) {
  auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  auto scan_interval = std::chrono::milliseconds(options_.scan_interval_ms);
  // A busy source rescans too, less often: appends to files it has finished
  // and Lag() stay current while other files keep it busy.
  if (Clock::now() - last_scan_ >= 5 * scan_interval) RETURN_IF_ERROR(Rescan());
  Result<int64_t> delivered = int64_t{0};
  bool just_scanned = false;
  while (true) {
    delivered = ReadAvailable(max_bytes, out);
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
  if (delivered.ok() && *delivered > 0) drained_ = false;
  return delivered;
}

Result<int64_t> FileSource::ReadAvailable(int64_t max_bytes, RawBatch* out) {
  int64_t delivered = 0, bytes = 0;
  for (auto& [name, f] : files_) {
    if (bytes > 0 && bytes >= max_bytes) break;
    if (f.size <= f.next || f.size == f.stalled_size) continue;
    if (out->defer_reads) {
      ASSIGN_OR_RETURN(int64_t deferred, DeferFile(name, f, max_bytes, &bytes, out));
      if (deferred > 0) {
        delivered += deferred;
        continue;
      }
    }
    if (!out->deferred.empty()) {
      // ReadFile appends its records now, after the batch's ranges, which are
      // therefore read first. Once this poll has delivered something, it ends
      // here instead and says why (lines_wait): the pipeline has the ranges
      // read at once, on its lanes' threads, and the next poll a batch
      // without them. A poll that would deliver nothing reads them here, on
      // this thread, so that the batch holds every record in file order.
      if (delivered > 0) {
        out->lines_wait = true;
        break;
      }
      read_now_.Plan(*out);
      while (read_now_.ReadNext(*out)) {
      }
      RETURN_IF_ERROR(read_now_.Finish(*out));
    }
    ASSIGN_OR_RETURN(int64_t n, ReadFile(name, f, max_bytes, &bytes, out));
    delivered += n;
  }
  return delivered;
}

// The file's bytes from its position (a line start) to the last line end the
// budget reaches become a range of the batch, read later (file_lines.h). 0
// when there is none to defer: fewer than kMinDeferredBytes unread, the
// batch's kMaxDeferredRanges taken, no line end in the last kProbeBytes of
// what the budget reaches (a long or partial line), or a range that could
// hold a line longer than max_line_bytes. A range that the budget cuts
// short of the file's end ends the poll: the line it cut is the next poll's
// (a line-by-line poll would read it now, and later files after it).
Result<int64_t> FileSource::DeferFile(const std::string& file, FileState& f, int64_t max_bytes,
                                      int64_t* bytes, RawBatch* out) {
  if (f.size - f.next < kMinDeferredBytes || out->deferred.size() >= kMaxDeferredRanges) {
    return int64_t{0};
  }
  Result<std::shared_ptr<const OpenFile>> opened = OpenFile::Open(PathOf(file));
  if (!opened.ok()) return int64_t{0};  // ReadFile names what is wrong
  const OpenFile& open = **opened;
  struct stat st;
  if (::fstat(open.fd(), &st) != 0 || st.st_size < f.next) return int64_t{0};
  const int64_t budget = std::max(max_bytes - *bytes, kMinRead);
  const int64_t reach = std::min<int64_t>(st.st_size, f.next + budget);
  if (reach - f.next > options_.max_line_bytes || reach == f.next) return int64_t{0};
  // The last line end before `reach`.
  const int64_t probe_at = std::max(f.next, reach - kProbeBytes);
  probe_.resize(static_cast<size_t>(reach - probe_at));
  ssize_t n = ::pread(open.fd(), probe_.data(), probe_.size(), probe_at);
  if (n != static_cast<ssize_t>(probe_.size())) return int64_t{0};
  const void* newline = ::memrchr(probe_.data(), '\n', probe_.size());
  if (newline == nullptr) return int64_t{0};
  const int64_t end = probe_at + (static_cast<const char*>(newline) - probe_.data()) + 1;
  f.mtime_ms = MtimeMs(st);
  out->AddDeferred(file, *std::move(opened), options_.name, f.next, end - f.next, f.mtime_ms);
  *bytes += end - f.next;
  f.next = end;
  f.size = std::max<int64_t>(f.size, st.st_size);
  if (reach < st.st_size) {
    *bytes = std::max(*bytes, max_bytes);  // the file goes on: the poll ends here
    f.stalled_size = -1;
  } else {
    // Only a partial line is left, if anything (ReadFile would have found it so).
    f.stalled_size = end < st.st_size ? f.size : -1;
  }
  return int64_t{1};
}

// The file's bytes from its position (a line start) on are read to the end
// of out->raw. Its lines are records where they lie; the bytes after the last
// record's line are dropped again (the next read starts at the line after the
// last one handled).
Result<int64_t> FileSource::ReadFile(const std::string& file, FileState& f, int64_t max_bytes,
                                     int64_t* bytes, RawBatch* out) {
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

  ByteBuffer& raw = out->raw;
  const size_t base = raw.size();
  int64_t pos = f.next;  // the file offset of raw[base]
  // raw[base, base + len) holds what was read; raw[base + line] starts the
  // next line (at pos + line in the file); no '\n' in raw[base + line, base +
  // scanned); raw[base, base + keep) ends with the line end of the last
  // record delivered.
  size_t len = 0, line = 0, scanned = 0, keep = 0;
  auto budget_left = [&] { return *bytes < max_bytes || *bytes == 0; };
  // Blank lines after the last record are dropped once they pile up (they
  // count against no budget: a run of them must not grow the batch).
  auto drop_blanks = [&] {
    if (line - keep < static_cast<size_t>(kMinRead)) return;
    size_t drop = line - keep;
    std::memmove(raw.data() + base + keep, raw.data() + base + line, len - line);
    raw.Truncate(base + len - drop);
    pos += static_cast<int64_t>(drop);
    len -= drop;
    scanned -= drop;
    line = keep;
  };
  int64_t delivered = 0;
  bool eof = false;
  Status status;
  while (!eof && budget_left()) {
    if (static_cast<int64_t>(len - line) > options_.max_line_bytes) {
      if (*bytes > 0) break;  // deliver what was read; the next Poll fails
      status = Status::OutOfRange(
          "file source {}: line at offset {} of file {} is longer than {} bytes", options_.name,
          pos + static_cast<int64_t>(line), path, options_.max_line_bytes);
      break;
    }
    // What the budget has left (a line crossing its end completes in reads
    // of kMinRead), or more for a long line.
    size_t want = static_cast<size_t>(
        std::clamp<int64_t>(max_bytes - *bytes, kMinRead, static_cast<int64_t>(kChunk)));
    want = std::max(want, std::min(len - line, kChunk));
    ssize_t n = ::pread(fd, raw.Extend(want), want, pos + static_cast<int64_t>(len));
    raw.Truncate(base + len + static_cast<size_t>(std::max<ssize_t>(n, 0)));
    if (n < 0) {
      if (errno == EINTR) continue;
      status = Status::IOError("file source {}: reading {} at offset {}: {}", options_.name, path,
                               pos + static_cast<int64_t>(len), std::strerror(errno));
      break;
    }
    eof = n == 0;
    len += static_cast<size_t>(n);
    const char* at = raw.data() + base;
    while (budget_left()) {
      drop_blanks();
      const void* nl = std::memchr(at + scanned, '\n', len - scanned);
      if (nl == nullptr) {
        scanned = len;
        break;
      }
      size_t end = static_cast<const char*>(nl) - at;
      if (std::optional<LineValue> v =
              LineValueOf(at + line, end - line, pos + static_cast<int64_t>(line) == 0)) {
        out->AddInPlace(file, pos + static_cast<int64_t>(line), f.mtime_ms, base + line + v->begin,
                        v->end - v->begin);
        ++delivered;
        *bytes += static_cast<int64_t>(v->end - v->begin);
        keep = end + 1;
      }
      line = scanned = end + 1;
      f.next = pos + static_cast<int64_t>(line);
    }
    drop_blanks();
  }
  raw.Truncate(base + keep);  // what follows is read again (or was blank)
  f.size = std::max<int64_t>(f.size, pos + static_cast<int64_t>(len));
  if (eof && len > line) f.stalled_size = f.size;  // only a partial line is left
  RETURN_IF_ERROR(status);
  return delivered;
}

}  // namespace sluice::sources
