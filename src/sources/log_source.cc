#include "sources/log_source.h"

#include <chrono>
#include <thread>

namespace sluice::sources {

Status LogSource::Seek(const Positions& positions) {
  auto it = positions.find(kPartition);
  int64_t next = it == positions.end() ? log_->start_offset() : it->second;
  if (next < log_->start_offset()) {
    return Status::OutOfRange(
        "source {}: resume offset {} is below the log's first retained offset {} (records "
        "deleted by retention were never committed)",
        name_, next, log_->start_offset());
  }
  if (next > log_->end_offset()) {
    return Status::OutOfRange("source {}: resume offset {} is past the log's end {}", name_, next,
                              log_->end_offset());
  }
  next_ = next;
  return Status::OK();
}

Result<int64_t> LogSource::Poll(int64_t max_bytes, int timeout_ms,
                                const std::function<void(const SourceRecord&)>& sink) {
  // The log has no reader wake-up; poll it in short sleeps until the deadline.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (log_->end_offset() <= next_) {
    if (std::chrono::steady_clock::now() >= deadline) return int64_t{0};
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  int64_t delivered = 0, bytes = 0;
  while (bytes < max_bytes && next_ < log_->end_offset()) {
    ASSIGN_OR_RETURN(log::ReadResult r, log_->Read(next_, max_bytes - bytes));
    if (r.records.empty()) break;
    for (const log::LogRecord& rec : r.records) {
      sink(SourceRecord{kPartition, rec.offset, rec.timestamp_ms, rec.value});
      bytes += static_cast<int64_t>(rec.value.size());
      ++delivered;
    }
    next_ = r.next_offset;
  }
  return delivered;
}

}  // namespace sluice::sources
