#include "sources/file_lines.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string_view>

namespace sluice::sources {
namespace {

// Editors on Windows start UTF-8 files with one; it is not part of the line.
constexpr std::string_view kUtf8Bom = "\xEF\xBB\xBF";
constexpr size_t kNone = static_cast<size_t>(-1);

}  // namespace

std::optional<LineValue> LineValueOf(const char* line, size_t size, bool at_file_start) {
  LineValue v{0, size};
  if (v.end > 0 && line[v.end - 1] == '\r') --v.end;
  if (at_file_start && std::string_view(line, v.end).starts_with(kUtf8Bom)) {
    v.begin = kUtf8Bom.size();
  }
  for (size_t i = v.begin; i < v.end; ++i) {
    if (line[i] != ' ' && line[i] != '\t') return v;
  }
  return std::nullopt;  // blank
}

Result<std::shared_ptr<const OpenFile>> OpenFile::Open(std::string path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int e = errno;
    return Status(e == ENOENT ? StatusCode::kNotFound : StatusCode::kIOError,
                  fmt::format("open {}: {}", path, std::strerror(e)));
  }
  return std::shared_ptr<const OpenFile>(new OpenFile(fd, std::move(path)));
}

OpenFile::~OpenFile() { ::close(fd_); }

int DeferredLines::Plan(const RawBatch& batch, int64_t part_bytes) {
  size_t n = 0;
  for (size_t r = 0; r < batch.deferred.size(); ++r) {
    const DeferredRange& d = batch.deferred[r];
    for (int64_t at = d.offset, end = d.offset + d.size; at < end; at += part_bytes, ++n) {
      if (parts_.size() <= n) parts_.emplace_back();
      Part& p = parts_[n];
      p.range = r;
      p.begin = at;
      p.end = std::min(end, at + part_bytes);
    }
  }
  parts_.resize(n);
  next_.store(0, std::memory_order_relaxed);
  return static_cast<int>(n);
}

bool DeferredLines::ReadNext(RawBatch& batch) {
  const size_t part = static_cast<size_t>(next_.fetch_add(1, std::memory_order_relaxed));
  if (part >= parts_.size()) return false;
  ReadPart(batch, parts_[part]);
  return true;
}

int DeferredLines::Unclaimed() const {
  return std::max(0, static_cast<int>(parts_.size()) - next_.load(std::memory_order_relaxed));
}

void DeferredLines::ReadPart(RawBatch& batch, Part& p) {
  const DeferredRange& d = batch.deferred[p.range];
  p.records.clear();
  p.first_newline = p.last_newline = kNone;
  p.status = Status::OK();
  // The part's bytes go where the range put them (raw is not resized
  // meanwhile: its data pointer stays).
  const size_t begin = d.raw_begin + static_cast<size_t>(p.begin - d.offset);
  const size_t size = static_cast<size_t>(p.end - p.begin);
  char* raw = batch.raw.data();
  for (size_t done = 0; done < size;) {
    ssize_t n = ::pread(d.file->fd(), raw + begin + done, size - done,
                        p.begin + static_cast<int64_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      p.status =
          n == 0 ? Status::OutOfRange(
                       "file source {}: file {} ended at offset {} while its lines up to {} were "
                       "being read (truncated or replaced): it cannot be resumed exactly-once",
                       d.source, d.file->path(), p.begin + static_cast<int64_t>(done), p.end)
                 : Status::IOError("file source {}: reading {} at offset {}: {}", d.source,
                                   d.file->path(), p.begin + static_cast<int64_t>(done),
                                   std::strerror(errno));
      return;
    }
    done += static_cast<size_t>(n);
  }
  // The lines that start after one of the part's line ends and end at the
  // next (the line before its first line end is Finish's to stitch).
  const char* at = raw + begin;
  const char* const end = at + size;
  while (const void* found = std::memchr(at, '\n', static_cast<size_t>(end - at))) {
    const size_t newline = static_cast<size_t>(static_cast<const char*>(found) - raw);
    if (p.first_newline != kNone) {
      const size_t line = p.last_newline + 1;
      if (std::optional<LineValue> v = LineValueOf(raw + line, newline - line, false)) {
        const int64_t offset = d.offset + static_cast<int64_t>(line - d.raw_begin);
        p.records.push_back(
            {line + v->begin, v->end - v->begin, {d.partition, offset, d.timestamp_ms}});
      }
    } else {
      p.first_newline = newline;
    }
    p.last_newline = newline;
    at = raw + newline + 1;
  }
}

Status DeferredLines::Finish(RawBatch& batch) {
  Status st;
  for (const Part& p : parts_) {
    if (!p.status.ok()) {
      st = p.status;
      break;
    }
  }
  size_t records = batch.records.size();
  for (const Part& p : parts_) records += p.records.size() + 1;
  // (An eighth more when it grows: the next batch's records, a few more or
  // fewer, then fit, not grown again by a new block and a copy.)
  if (st.ok() && batch.records.capacity() < records) batch.records.reserve(records + records / 8);
  const char* raw = batch.raw.data();
  size_t part = 0;
  for (size_t r = 0; r < batch.deferred.size() && st.ok(); ++r) {
    const DeferredRange& d = batch.deferred[r];
    size_t line = d.raw_begin;  // the next line's start
    for (; part < parts_.size() && parts_[part].range == r; ++part) {
      const Part& p = parts_[part];
      if (p.first_newline == kNone) continue;  // a line that goes on
      const int64_t offset = d.offset + static_cast<int64_t>(line - d.raw_begin);
      if (std::optional<LineValue> v =
              LineValueOf(raw + line, p.first_newline - line, offset == 0)) {
        batch.records.push_back(
            {line + v->begin, v->end - v->begin, {d.partition, offset, d.timestamp_ms}});
      }
      batch.records.insert(batch.records.end(), p.records.begin(), p.records.end());
      line = p.last_newline + 1;
    }
    if (line != d.raw_begin + static_cast<size_t>(d.size)) {
      // The source found a line end where the range ends; the bytes read
      // now have none there.
      st = Status::OutOfRange(
          "file source {}: file {} changed while its bytes {}..{} were read (no line end before "
          "offset {} any more): it cannot be resumed exactly-once",
          d.source, d.file->path(), d.offset, d.offset + d.size, d.offset + d.size);
    }
  }
  batch.deferred.clear();
  return st;
}

}  // namespace sluice::sources
