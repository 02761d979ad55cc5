// Private parts of StreamLog shared by stream_log.cc (append, read, retention)
// and stream_log_recovery.cc (open, scan, truncate).
#pragma once

#include <chrono>
#include <condition_variable>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "log/segment_file.h"
#include "log/stream_log.h"

namespace sluice::log {

struct StreamLog::Segment {
  int64_t base_offset = 0;
  int64_t end_offset = 0;             // one past the last acknowledged record in this segment
  int64_t acked_bytes = 0;            // file bytes of acknowledged batches; beyond: a failed write
  std::shared_ptr<SegmentFile> file;  // shared so a Read survives a concurrent delete
  // Sparse index: (batch base offset, byte position) ascending; the first batch
  // always has an entry, then one at least every index_interval_bytes.
  std::vector<std::pair<int64_t, int64_t>> index;

  void AddIndex(int64_t offset, int64_t position, int64_t interval) {
    if (index.empty() || position - index.back().second >= interval) {
      index.emplace_back(offset, position);
    }
  }
};

// One caller of Append waiting in the group-commit queue.
struct StreamLog::Writer {
  std::span<const std::string_view> records;
  std::optional<IdempotencyKey> key;
  bool done = false;
  Status status;
  AppendResult result;
  std::condition_variable cv;
};

}  // namespace sluice::log
