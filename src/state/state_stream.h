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
// Records (the framing every state file uses): `u8 tag`, then, but for tag 0
// (the end), `u32 length` and a body of that many bytes. BeginRecord /
// EndRecord write one (the length set once the body is there); NextRecord
// reads one, so that a reader knows how much of the file a record needs
// before it parses it: a short read is a truncated file, and once the whole
// record is at hand any failure is a corrupt record.
//
// Thread-safety: one thread each.
#pragma once

#include <cstdint>
#include <cstring>
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

constexpr uint8_t kEndTag = 0;
// A record's body may not claim more than this (a corrupt length must not
// make a reader take the rest of the file).
constexpr uint32_t kMaxRecordBytes = 1u << 30;

// Writes a record's tag and a length to be set by EndRecord(out, returned).
inline size_t BeginRecord(std::string* out, uint8_t tag) {
  out->push_back(static_cast<char>(tag));
  size_t at = out->size();
  out->append(sizeof(uint32_t), '\0');
  return at;
}
inline void EndRecord(std::string* out, size_t at) {
  uint32_t length = static_cast<uint32_t>(out->size() - at - sizeof(uint32_t));
  std::memcpy(out->data() + at, &length, sizeof(length));
}
inline void PutEnd(std::string* out) { out->push_back(static_cast<char>(kEndTag)); }

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
  // Reads record `index` of a file of kind `what` (for messages): its tag
  // into `*tag` and, unless it is the end, its whole body to `parse` (which
  // answers kCorruption for bytes it cannot account for). Tags above
  // `max_tag` are corruption.
  Status NextRecord(std::string_view what, int64_t index, uint8_t max_tag, uint8_t* tag,
                    const std::function<Status(std::string_view body)>& parse) {
    return Next([&](std::string_view* v) -> Status {
      if (v->empty()) return Short("{}: after record {}", what, index);
      *tag = static_cast<uint8_t>((*v)[0]);
      if (*tag == kEndTag) {
        v->remove_prefix(1);
        return Status::OK();
      }
      if (*tag > max_tag) {
        return Status::Corruption("{}: record {} has an unknown tag {}", what, index, *tag);
      }
      uint32_t length = 0;
      if (v->size() < 1 + sizeof(length)) return Short("{}: record {}", what, index);
      std::memcpy(&length, v->data() + 1, sizeof(length));
      if (length > kMaxRecordBytes) {
        return Status::Corruption("{}: record {} claims {} bytes", what, index, length);
      }
      if (v->size() < 1 + sizeof(length) + length) return Short("{}: record {}", what, index);
      std::string_view body = v->substr(1 + sizeof(length), length);
      v->remove_prefix(1 + sizeof(length) + length);
      // The whole record is at hand: from here a failure is corruption.
      Status st = parse(body);
      if (st.code() == StatusCode::kOutOfRange) st = Status::Corruption("{}", st.message());
      return st.WithContextF("{}: record {}", what, index);
    });
  }
  // After the end record: bytes after it are corruption.
  Status ExpectEnd(std::string_view what) const {
    if (AtEnd()) return Status::OK();
    return Status::Corruption("{}: {} bytes after the end", what, unread());
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
