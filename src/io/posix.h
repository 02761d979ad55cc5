// POSIX helpers shared by the modules that use file descriptors directly
// (local FileIO, the stream log): errno as a Status, and a full pread.
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

}  // namespace sluice
