// LogStorage: the small file interface under the stream log, so that tests can
// substitute a fault-injecting version (FileIO has no append/fsync/truncate).
//
// SegmentFile is an append-only file that can also be read at any offset and cut
// back (Truncate) during recovery. One writer at a time (the log's commit leader);
// ReadAt may run concurrently with Append from other threads (pread semantics).
// MakePosixLogStorage() returns the local-disk version; it is thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace sluice::log {

class SegmentFile {
 public:
  virtual ~SegmentFile() = default;
  virtual const std::string& path() const = 0;
  virtual int64_t size() const = 0;  // bytes appended so far (or found at open)
  virtual Status Append(std::string_view data) = 0;
  virtual Status Sync() = 0;  // fdatasync: data durable before it returns
  // Reads exactly `length` bytes at `offset`; reading past size() is kCorruption.
  virtual Status ReadAt(int64_t offset, int64_t length, std::string* out) const = 0;
  virtual Status Truncate(int64_t size) = 0;  // cuts the file to `size` and syncs it
};

class LogStorage {
 public:
  virtual ~LogStorage() = default;
  virtual Status CreateDir(const std::string& dir) = 0;  // like mkdir -p
  // Opens `path` for append and reads; creates it (empty) if `create`.
  virtual Result<std::unique_ptr<SegmentFile>> Open(const std::string& path, bool create) = 0;
  virtual Result<std::vector<std::string>> ListNames(const std::string& dir) = 0;
  virtual Status Remove(const std::string& path) = 0;
  virtual Status SyncDir(const std::string& dir) = 0;  // makes creates/removes durable
};

// The process-wide local-disk storage (never null, not owned by the caller).
LogStorage* PosixLogStorage();

}  // namespace sluice::log
