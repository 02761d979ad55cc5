// POSIX helpers shared by the modules that use file descriptors directly
// (local FileIO, the stream log, the staged-file journal): errno as a
// Status, a full pread and write, and a folder's fsync.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"

namespace sluice {

// The current errno as a Status: "<what> <path>: <strerror>"; ENOENT is
// kNotFound, EINTR/EAGAIN are retryable kIOError, the rest (EIO too) kIOError.
Status ErrnoStatus(std::string_view what, const std::string& path);

// Reads exactly `length` bytes at `offset` of `fd` (already bounds-checked by
// the caller); a short file is kCorruption naming `path`.
Status PreadFully(int fd, const std::string& path, int64_t offset, int64_t length,
                  std::string* out);

// Writes all of `data` at `fd`'s position (retrying short writes and EINTR);
// an error names `path`.
Status WriteFully(int fd, const std::string& path, std::string_view data);

// fsyncs the folder `dir` ("" is the current one), so that a file created,
// renamed or removed in it stays so after a crash.
Status SyncDirectory(const std::string& dir);

}  // namespace sluice
