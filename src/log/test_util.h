// Helpers for the log tests: a scratch directory removed at the end, and
// shorthands to build record batches and read a whole log.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "log/stream_log.h"

namespace sluice::log::testing {

// A fresh directory under $TMPDIR (or /tmp), deleted recursively on destruction.
class ScratchDir {
 public:
  ScratchDir();
  ~ScratchDir();
  const std::string& path() const { return path_; }
  std::string Sub(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// `n` records "<prefix>-<i>".
std::vector<std::string> Records(const std::string& prefix, int n);

// Every record from start_offset() to end_offset(), read in small steps.
Result<std::vector<LogRecord>> ReadAll(const StreamLog& log, int64_t max_bytes = 100);

// The segment files of `dir`, sorted, with their sizes.
std::vector<std::pair<std::string, int64_t>> SegmentFiles(const std::string& dir);

}  // namespace sluice::log::testing
