// StreamLog::Open: list the segments, validate every batch, truncate a torn tail
// of the last segment, rebuild offsets, the read index and the idempotency table.
#include <algorithm>
#include <cctype>

#include "log/batch.h"
#include "log/stream_log_internal.h"

namespace sluice::log {
namespace {

constexpr size_t kOffsetDigits = 20;

// "<20 digits>.log" -> base offset; anything else is not a segment.
std::optional<int64_t> ParseSegmentName(const std::string& name) {
  if (name.size() != kOffsetDigits + 4 || name.substr(kOffsetDigits) != ".log") return std::nullopt;
  uint64_t v = 0;
  for (size_t i = 0; i < kOffsetDigits; ++i) {
    if (!std::isdigit(static_cast<unsigned char>(name[i]))) return std::nullopt;
    v = v * 10 + static_cast<uint64_t>(name[i] - '0');
    if (v > static_cast<uint64_t>(INT64_MAX)) return std::nullopt;
  }
  return static_cast<int64_t>(v);
}

}  // namespace

StreamLog::StreamLog(std::string dir, LogOptions options)
    : dir_(std::move(dir)),
      options_(options),
      storage_(options.storage != nullptr ? options.storage : PosixLogStorage()),
      producers_(options.max_producers) {}

std::string StreamLog::SegmentPath(int64_t base_offset) const {
  return fmt::format("{}/{:020d}.log", dir_, base_offset);
}

Result<std::unique_ptr<StreamLog>> StreamLog::Open(const std::string& dir, LogOptions options) {
  if (options.segment_bytes <= 0 || options.max_batch_bytes <= 0 || options.max_group_bytes <= 0 ||
      options.index_interval_bytes <= 0 || options.fsync_interval_ms < 0) {
    return Status::Invalid("log {}: sizes and intervals in LogOptions must be positive", dir);
  }
  // Locked before anything is read: another process may be appending.
  ASSIGN_OR_RETURN(auto lock, FileLock::Acquire(dir + "/LOCK", "log " + dir));
  std::unique_ptr<StreamLog> log(new StreamLog(dir, options));
  log->lock_ = std::move(lock);
  RETURN_IF_ERROR_CTX(log->Recover(), "open log {}", dir);
  return log;
}

Status StreamLog::CreateSegment(int64_t base_offset) {
  std::string path = SegmentPath(base_offset);
  ASSIGN_OR_RETURN(auto file, storage_->Open(path, /*create=*/true));
  if (file->size() != 0) {
    return Status::Corruption("new log segment {} already holds {} bytes", path, file->size());
  }
  auto segment = std::make_unique<Segment>();
  segment->base_offset = base_offset;
  segment->end_offset = base_offset;
  segment->file = std::move(file);
  segments_[base_offset] = std::move(segment);
  // In the map before the folder sync: if the sync fails, the repair after the
  // failed append finds the segment (and deletes it, or syncs the folder again).
  return storage_->SyncDir(dir_);
}

Status StreamLog::Recover() {
  std::lock_guard<std::mutex> lock(mu_);
  RETURN_IF_ERROR(storage_->CreateDir(dir_));
  ASSIGN_OR_RETURN(std::vector<std::string> names, storage_->ListNames(dir_));
  std::vector<int64_t> bases;
  for (const auto& name : names) {
    if (auto base = ParseSegmentName(name)) bases.push_back(*base);
  }
  std::sort(bases.begin(), bases.end());
  for (int64_t base : bases) {
    ASSIGN_OR_RETURN(auto file, storage_->Open(SegmentPath(base), /*create=*/false));
    auto segment = std::make_unique<Segment>();
    segment->base_offset = base;
    segment->end_offset = base;
    segment->file = std::move(file);
    segments_[base] = std::move(segment);
  }
  if (segments_.empty()) RETURN_IF_ERROR(CreateSegment(0));

  int64_t expected = segments_.begin()->first;
  for (auto it = segments_.begin(); it != segments_.end(); ++it) {
    Segment* segment = it->second.get();
    if (segment->base_offset != expected) {
      return Status::Corruption("log segment {} starts at offset {} but the one before ends at {}",
                                segment->file->path(), segment->base_offset, expected);
    }
    RETURN_IF_ERROR(ScanSegment(segment, std::next(it) == segments_.end()));
    expected = segment->end_offset;
  }
  next_offset_ = expected;
  readable_end_ = expected;
  end_offset_.store(expected, std::memory_order_release);
  return Status::OK();
}

Status StreamLog::ScanSegment(Segment* segment, bool is_last) {
  SegmentFile& file = *segment->file;
  const int64_t size = file.size();
  int64_t pos = 0;
  int64_t expected = segment->base_offset;
  std::string header_bytes;
  std::string payload;
  std::vector<std::string_view> records;
  while (pos < size) {
    BatchHeader header;
    Status s = [&]() -> Status {
      int64_t available = size - pos;
      RETURN_IF_ERROR(file.ReadAt(pos, std::min(available, kBatchHeaderSize), &header_bytes));
      RETURN_IF_ERROR(DecodeBatchHeader(header_bytes, available, &header));
      RETURN_IF_ERROR(file.ReadAt(pos + header.header_length, header.payload_length, &payload));
      RETURN_IF_ERROR(VerifyBatchCrc(header, header_bytes, payload));
      return DecodeBatchRecords(header, payload, &records);
    }();
    if (!s.ok() && s.code() == StatusCode::kCorruption && is_last) {
      // A torn tail: the write of this batch (and any after it) never completed,
      // so it was never acknowledged. Cut it off and continue from here.
      RETURN_IF_ERROR_CTX(file.Truncate(pos), "truncate torn tail of {} at byte {} ({})",
                          file.path(), pos, s.message());
      break;
    }
    RETURN_IF_ERROR_CTX(s, "log segment {}: batch at byte {}", file.path(), pos);
    if (header.base_offset != expected) {
      return Status::Corruption("log segment {}: batch at byte {} has base offset {}, expected {}",
                                file.path(), pos, header.base_offset, expected);
    }
    segment->AddIndex(header.base_offset, pos, options_.index_interval_bytes);
    if (header.producer_id >= 0) {
      producers_.Record(header.producer_id, ProducerEntry{header.sequence, header.base_offset,
                                                          header.end_offset() - 1});
    }
    expected = header.end_offset();
    pos += header.total_size();
  }
  segment->end_offset = expected;
  segment->acked_bytes = pos;
  return Status::OK();
}

}  // namespace sluice::log
