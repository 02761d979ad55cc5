#include "log/test_util.h"

#include <stdlib.h>

#include <algorithm>
#include <filesystem>

namespace sluice::log::testing {

ScratchDir::ScratchDir() {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp != nullptr ? tmp : "/tmp") + "/sluice-log-XXXXXX";
  char* made = ::mkdtemp(pattern.data());
  path_ = made != nullptr ? made : "";
}

ScratchDir::~ScratchDir() {
  std::error_code ec;
  if (!path_.empty()) std::filesystem::remove_all(path_, ec);
}

std::vector<std::string> Records(const std::string& prefix, int n) {
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i) out.push_back(prefix + "-" + std::to_string(i));
  return out;
}

Result<std::vector<LogRecord>> ReadAll(const StreamLog& log, int64_t max_bytes) {
  std::vector<LogRecord> out;
  int64_t offset = log.start_offset();
  int64_t end = log.end_offset();
  while (offset < end) {
    ASSIGN_OR_RETURN(ReadResult r, log.Read(offset, max_bytes));
    if (r.records.empty() || r.next_offset <= offset) {
      return Status::Internal("read at {} made no progress (end {})", offset, end);
    }
    for (auto& rec : r.records) out.push_back(std::move(rec));
    offset = r.next_offset;
  }
  return out;
}

std::vector<std::pair<std::string, int64_t>> SegmentFiles(const std::string& dir) {
  std::vector<std::pair<std::string, int64_t>> out;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.path().extension() == ".log") {
      out.emplace_back(e.path().string(), static_cast<int64_t>(e.file_size()));
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace sluice::log::testing
