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
    const int64_t before = delivered;
    // next_ follows each record delivered, so that a read failing halfway
    // leaves it past exactly those.
    Result<int64_t> next =
        log_->ReadEach(next_, max_bytes - bytes,
                       [&](int64_t offset, int64_t timestamp_ms, std::string_view value) {
                         sink(SourceRecord{kPartition, offset, timestamp_ms, value});
                         bytes += static_cast<int64_t>(value.size());
                         ++delivered;
                         next_ = offset + 1;
                       });
    RETURN_IF_ERROR(next.status());
    if (delivered == before) break;
    next_ = *next;
  }
  return delivered;
}

}  // namespace sluice::sources
