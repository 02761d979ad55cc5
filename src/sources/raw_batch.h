// RawBatch: records polled from a source and not decoded yet, as they came
// (values and message keys in one buffer), with where each came from.
//
// A source appends to one in Source::PollInto: a copy of each record it
// delivers (Add), or, for a source that reads bytes it can hand over as they
// are (a file's lines), those bytes read straight into the buffer (Extend,
// AddInPlace, Truncate), or left to be read there later (AddDeferred, when
// `defer_reads`). A pipeline's thread fills one while its lanes decode
// another; a windowed pipeline's window stage keeps a batch's records for the
// dead letters of its late rows (pipeline/pipeline.h).
//
// A record's value is followed by its message key, then by a line end ('\n',
// or a file's "\r\n") and at least ByteBuffer::kPadding readable bytes (other
// records', or the padding, which the pipeline zeroes before its lanes
// decode the batch), so a JSON value is parsed where it lies
// (JsonDecoder::DecodeLine's `padded`). Bytes of no record (line ends, a
// file's blank lines) lie between records. Not thread-safe.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/byte_buffer.h"
#include "common/huge_pages.h"
#include "common/status.h"

namespace sluice::sources {

// Where a record (and the row decoded from it) came from, for its dead letter.
struct RowOrigin {
  uint32_t partition;  // index into its RawBatch's partitions
  int64_t offset;
  int64_t timestamp_ms;
};

// A record polled but not yet decoded: its value is raw[begin, begin + size).
struct RawRecord {
  size_t begin, size;
  RowOrigin origin;
  uint32_t key_size = 0;  // the message key follows the value in raw
  bool has_value = true;  // false: a tombstone
};

// A file opened for reading, closed when the last range holding it is done.
class OpenFile {
 public:
  // kNotFound when the file does not exist, kIOError when it cannot be
  // opened; both name it.
  static Result<std::shared_ptr<const OpenFile>> Open(std::string path);
  ~OpenFile();
  OpenFile(const OpenFile&) = delete;
  OpenFile& operator=(const OpenFile&) = delete;

  int fd() const { return fd_; }
  const std::string& path() const { return path_; }

 private:
  OpenFile(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  int fd_;
  std::string path_;
};

// The most ranges a batch defers (each holds its file open until read).
constexpr size_t kMaxDeferredRanges = 16;

// A file's bytes [offset, offset + size), whole lines, that a source left
// to be read into raw[raw_begin, raw_begin + size) later, in parts on
// several threads (sources/file_lines.h).
struct DeferredRange {
  std::shared_ptr<const OpenFile> file;
  std::string source;  // the SQL source's name (for messages)
  uint32_t partition;  // index into the batch's partitions
  int64_t offset = 0, size = 0;
  int64_t timestamp_ms = 0;  // its records' timestamp (the file's mtime)
  size_t raw_begin = 0;
};

struct RawBatch {
  ByteBuffer raw;
  // (Megabytes a batch, kept from batch to batch: huge pages, one page fault
  // for 2 MiB where 4 KiB pages took 512 at first touch, common/huge_pages.h.)
  std::vector<RawRecord, HugePageAllocator<RawRecord>> records;
  std::vector<std::string> partitions;  // names, indexed by RowOrigin::partition
  uint32_t last_partition = 0;
  // Whether message keys are kept (change formats need them; JSON does not).
  bool keys = true;
  // Whether a source may leave byte ranges to be read later (`deferred`),
  // which DeferredLines then reads in parts on several threads, instead of
  // reading them into records itself. Set by a pipeline that does.
  bool defer_reads = false;
  std::vector<DeferredRange> deferred;  // in the order their bytes lie in raw
  // Set by a source that ended a poll early because lines it reads itself
  // would follow the deferred ranges (which it would have to read first).
  bool lines_wait = false;

  void Clear() {
    raw.clear();
    records.clear();
    partitions.clear();
    deferred.clear();
    lines_wait = false;
  }
  // Reserves `size` unread bytes at the end of raw for a file's range.
  void AddDeferred(const std::string& partition, std::shared_ptr<const OpenFile> file,
                   std::string source, int64_t offset, int64_t size, int64_t timestamp_ms) {
    size_t begin = raw.size();
    raw.Extend(static_cast<size_t>(size));
    deferred.push_back({std::move(file), std::move(source), PartitionIndex(partition), offset, size,
                        timestamp_ms, begin});
  }
  // Bytes of the deferred ranges (not read yet).
  int64_t DeferredBytes() const {
    int64_t n = 0;
    for (const DeferredRange& d : deferred) n += d.size;
    return n;
  }
  // Appends a copy of a record (its key too when `keys`).
  void Add(const std::string& partition, int64_t offset, int64_t timestamp_ms,
           std::string_view value, std::string_view key, bool has_value) {
    if (!keys) key = {};
    size_t begin = raw.size();
    raw.Append(value);
    raw.Append(key);
    raw.Append("\n");
    records.push_back({begin,
                       value.size(),
                       {PartitionIndex(partition), offset, timestamp_ms},
                       static_cast<uint32_t>(key.size()),
                       has_value});
  }
  // Appends a record whose value the source wrote into raw[begin, begin +
  // size) (Extend), without a key, followed by a line end.
  void AddInPlace(const std::string& partition, int64_t offset, int64_t timestamp_ms, size_t begin,
                  size_t size) {
    records.push_back({begin, size, {PartitionIndex(partition), offset, timestamp_ms}});
  }

  // Record i's value and message key (their bytes in raw).
  std::string_view Value(size_t i) const {
    return std::string_view(raw.data() + records[i].begin, records[i].size);
  }
  std::string_view Key(size_t i) const {
    const RawRecord& r = records[i];
    return std::string_view(raw.data() + r.begin + r.size, r.key_size);
  }
  // The bytes of records [begin, end) (values and keys, and the bytes between
  // but the last line end).
  int64_t Bytes(size_t begin, size_t end) const {
    if (begin >= end) return 0;
    const RawRecord& last = records[end - 1];
    return static_cast<int64_t>(last.begin + last.size + last.key_size - records[begin].begin);
  }

 private:
  uint32_t PartitionIndex(const std::string& partition) {
    if (partitions.empty() || partitions[last_partition] != partition) {
      auto it = std::find(partitions.begin(), partitions.end(), partition);
      last_partition = static_cast<uint32_t>(it - partitions.begin());
      if (it == partitions.end()) partitions.push_back(partition);
    }
    return last_partition;
  }
};

}  // namespace sluice::sources
