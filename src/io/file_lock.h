// FileLock: an exclusive lock on a lock file, held by this process until the
// FileLock is destroyed. It guards what one process must own alone: a stream log
// (two appenders would overwrite each other's acknowledged records) and a
// pipeline's staged-file journal (two recoveries would delete each other's files).
//
// Contract:
// - Acquire() never waits: when another holder has the lock it fails at once with
//   kConflict (not retryable), naming the holder as the lock file describes it
//   ("pid 4242 on host h since 2026-12-01T08:00:00Z: sluice run events.sql").
// - The lock is flock(2) on an open file description: a second Acquire of the same
//   path fails even inside one process, and the kernel drops the lock when the
//   holder exits, kill -9 included, so there is never a stale lock to clean up.
// - The file itself stays (it holds only the holder's description); deleting it
//   by hand while held would let a second process lock a new file of that name:
//   don't.
// - Local file systems only (flock is not reliable over NFS).
//
// Thread-safety: a FileLock is immutable after Acquire.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "common/status.h"

namespace sluice {

class FileLock {
 public:
  // Locks `path` (created if missing, with its folder); `what` names the thing the
  // lock guards in the error ("log /w/_sluice/streams/events_in").
  static Result<std::unique_ptr<FileLock>> Acquire(const std::string& path, std::string_view what);
  ~FileLock();
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

  const std::string& path() const { return path_; }

 private:
  FileLock(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}

  std::string path_;
  int fd_;
};

// How this process describes itself in a lock file: pid, host, start time (UTC)
// and command line (passwords in URIs and "password=" masked as ***).
std::string LockHolderDescription();
// `text` with the password of "scheme://user:password@host" and of "password=..."
// replaced by ***.
std::string MaskCredentials(std::string_view text);

}  // namespace sluice
