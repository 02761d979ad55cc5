// StateWriter / StateReader: a state file written and read in chunks, so that
// a state larger than memory is never held whole (docs/state.md).
//
// StateWriter: records are appended to buffer(); MaybeFlush hands the buffer
// to the sink once it holds a chunk (1 MiB), Flush at the end.
// StateReader: Next(parse) calls `parse` on the unread bytes; parse consumes
// one record from the front of its view, or answers Short() when the view
// ends before the record does, or fails. Short while the file has unread
// bytes reads another chunk and calls parse again on the longer view (so a
// record may be of any size, and parse must keep nothing from a short
// attempt); Short at the end of the file is a truncated file (kCorruption).
// Any other failure is the answer at once, without reading further.
//
// Thread-safety: one thread each.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "common/status.h"

namespace sluice::state {

class StateWriter {
 public:
  using Sink = std::function<Status(std::string_view chunk)>;
  static constexpr size_t kChunk = 1 << 20;

  explicit StateWriter(Sink sink) : sink_(std::move(sink)) {}
  std::string* buffer() { return &buffer_; }
  Status MaybeFlush() { return buffer_.size() >= kChunk ? Flush() : Status::OK(); }
  Status Flush() {
    if (buffer_.empty()) return Status::OK();
    Status st = sink_(buffer_);
    written_ += static_cast<int64_t>(buffer_.size());
    buffer_.clear();
    return st;
  }
  int64_t written() const { return written_ + static_cast<int64_t>(buffer_.size()); }

 private:
  Sink sink_;
  std::string buffer_;
  int64_t written_ = 0;
};

// A whole state file, written by `write`, as a string (tests, small states).
inline Result<std::string> WriteToString(const std::function<Status(StateWriter*)>& write) {
  std::string bytes;
  StateWriter out([&bytes](std::string_view chunk) {
    bytes.append(chunk);
    return Status::OK();
  });
  RETURN_IF_ERROR(write(&out));
  return bytes;
}

class StateReader {
 public:
  // Reads `length` bytes at `offset` into `out` (replacing it).
  using Source = std::function<Status(int64_t offset, int64_t length, std::string* out)>;
  static constexpr int64_t kChunk = 1 << 20;

  StateReader(Source source, int64_t size) : source_(std::move(source)), size_(size) {}
  // Over bytes that outlive the reader.
  static StateReader Of(std::string_view bytes) {
    return StateReader(
        [bytes](int64_t offset, int64_t length, std::string* out) {
          out->assign(bytes.substr(static_cast<size_t>(offset), static_cast<size_t>(length)));
          return Status::OK();
        },
        static_cast<int64_t>(bytes.size()));
  }

  // What parse answers when the view ends before the record does.
  template <typename... Args>
  static Status Short(fmt::format_string<Args...> f, Args&&... args) {
    return Status::OutOfRange(f, std::forward<Args>(args)...);
  }

  Status Next(const std::function<Status(std::string_view* in)>& parse) {
    for (;;) {
      std::string_view view(buffer_.data() + pos_, buffer_.size() - pos_);
      size_t before = view.size();
      Status st = parse(&view);
      if (st.ok()) {
        pos_ += before - view.size();
        return st;
      }
      if (st.code() != StatusCode::kOutOfRange) return st;
      if (loaded_ >= size_) return Status::Corruption("{}: the file is truncated", st.message());
      RETURN_IF_ERROR(Load(std::max<int64_t>(kChunk, static_cast<int64_t>(buffer_.size() - pos_))));
    }
  }
  // No unread byte is left.
  bool AtEnd() const { return loaded_ >= size_ && pos_ == buffer_.size(); }
  int64_t unread() const { return size_ - loaded_ + static_cast<int64_t>(buffer_.size() - pos_); }
  // The whole file, whatever was read (for formats read at once).
  Status ReadAll(std::string* out) { return source_(0, size_, out); }

 private:
  Status Load(int64_t want) {
    buffer_.erase(0, pos_);
    pos_ = 0;
    std::string chunk;
    int64_t n = std::min(want, size_ - loaded_);
    RETURN_IF_ERROR(source_(loaded_, n, &chunk));
    if (static_cast<int64_t>(chunk.size()) != n) {
      return Status::IOError("state file: read {} bytes at {}, wanted {}", chunk.size(), loaded_,
                             n);
    }
    buffer_ += chunk;
    loaded_ += n;
    return Status::OK();
  }

  Source source_;
  int64_t size_;
  int64_t loaded_ = 0;
  std::string buffer_;
  size_t pos_ = 0;
};

}  // namespace sluice::state
