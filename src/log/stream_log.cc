// StreamLog: group-committed appends, reads through the sparse index, retention.
#include <algorithm>

#include "log/batch.h"
#include "log/stream_log_internal.h"

namespace sluice::log {

StreamLog::~StreamLog() { (void)Close(); }

Status StreamLog::Close() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    closed_ = true;
  }
  return Sync();
}

int64_t StreamLog::next_offset() const {
  std::lock_guard<std::mutex> lock(mu_);
  return next_offset_;
}

int64_t StreamLog::end_offset() const {
  // Without mu_: callers on an event loop must not wait behind a repair's fsync.
  return end_offset_.load(std::memory_order_acquire);
}

int64_t StreamLog::start_offset() const {
  std::lock_guard<std::mutex> lock(mu_);
  return segments_.begin()->first;
}

size_t StreamLog::segment_count() const {
  std::lock_guard<std::mutex> lock(mu_);
  return segments_.size();
}

Status StreamLog::Sync() {
  std::shared_ptr<SegmentFile> file;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (segments_.empty()) return Status::OK();  // an Open that failed before recovery
    file = segments_.rbegin()->second->file;
  }
  RETURN_IF_ERROR_CTX(file->Sync(), "log {}", dir_);
  ++sync_count_;
  return Status::OK();
}

Result<AppendResult> StreamLog::Append(const std::vector<std::string>& records,
                                       std::optional<IdempotencyKey> key) {
  std::vector<std::string_view> views(records.begin(), records.end());
  return Append(std::span<const std::string_view>(views), key);
}

Result<AppendResult> StreamLog::Append(std::span<const std::string_view> records,
                                       std::optional<IdempotencyKey> key) {
  if (records.empty()) return Status::Invalid("log {}: append of an empty batch", dir_);
  int64_t payload = 0;
  for (const auto& r : records) payload += 4 + static_cast<int64_t>(r.size());
  if (payload > options_.max_batch_bytes || records.size() > UINT32_MAX) {
    return Status::Invalid("log {}: batch of {} records and {} bytes exceeds max_batch_bytes {}",
                           dir_, records.size(), payload, options_.max_batch_bytes);
  }
  if (key && (key->producer_id < 0 || key->sequence < 0)) {
    return Status::Invalid(
        "log {}: idempotency key needs a producer id and sequence >= 0, got {}/{}", dir_,
        key->producer_id, key->sequence);
  }
  Writer w;
  w.records = records;
  w.key = key;
  std::unique_lock<std::mutex> lock(mu_);
  if (closed_) return Status::Invalid("log {}: append after Close", dir_);
  queue_.push_back(&w);
  while (!w.done && queue_.front() != &w) w.cv.wait(lock);
  if (!w.done) LeadGroup(lock);
  if (!w.status.ok()) return w.status;
  return w.result;
}

// The front writer of queue_ leads: it takes a prefix of the queue as its group,
// assigns offsets under mu_, writes and syncs outside mu_, then publishes the
// offsets, acknowledges every writer of the group and hands over to the next front.
void StreamLog::LeadGroup(std::unique_lock<std::mutex>& lock) {
  struct Planned {
    Writer* writer;
    bool write = false;  // false: a duplicate or a refused batch
    std::string bytes;
    int64_t size = 0;  // of the encoded batch
    int64_t position = 0;
    Segment* segment = nullptr;
  };
  std::vector<Planned> group;
  int64_t group_bytes = 0;
  if (!append_error_.ok() && RepairLocked().ok()) append_error_ = Status::OK();
  for (Writer* w : queue_) {
    if (!group.empty() && (options_.fsync_policy == FsyncPolicy::kEveryBatch ||
                           group_bytes >= options_.max_group_bytes)) {
      break;
    }
    group.emplace_back();
    group.back().writer = w;
    if (!append_error_.ok()) {
      w->status = append_error_;
      continue;
    }
    if (w->key) {
      if (auto held = producers_.Find(w->key->producer_id, w->key->sequence)) {
        w->result = AppendResult{held->first_offset, held->last_offset, true};
        continue;
      }
      auto last = producers_.LastSequence(w->key->producer_id);
      if (last && w->key->sequence < *last) {
        w->status = Status::OutOfRange(
            "log {}: producer {} sequence {} is older than its last sequence {} and no longer "
            "remembered",
            dir_, w->key->producer_id, w->key->sequence, *last);
        continue;
      }
    }
    int64_t first = next_offset_;
    int64_t count = static_cast<int64_t>(w->records.size());
    next_offset_ += count;
    w->result = AppendResult{first, first + count - 1, false};
    if (w->key) {
      producers_.Record(w->key->producer_id,
                        ProducerEntry{w->key->sequence, first, first + count - 1});
    }
    group.back().write = true;  // encoded below, outside the mutex
    group_bytes += kBatchHeaderSize + 4 * count;
    for (const auto& r : w->records) group_bytes += static_cast<int64_t>(r.size());
  }
  Segment* active = segments_.rbegin()->second.get();
  lock.unlock();

  // Only this leader appends to or rolls the log until it hands over.
  Status status;
  std::string buffer;
  int64_t now = WallMillis();
  auto sync = [&]() -> Status {
    RETURN_IF_ERROR(active->file->Sync());
    ++sync_count_;
    return Status::OK();
  };
  auto flush = [&]() -> Status {
    if (buffer.empty()) return Status::OK();
    Status s = active->file->Append(buffer);
    buffer.clear();
    return s;
  };
  for (Planned& p : group) {
    if (!p.write || !status.ok()) continue;
    const Writer& w = *p.writer;
    EncodeBatch(w.result.first_offset, now, w.key ? w.key->producer_id : kNoProducer,
                w.key ? w.key->sequence : -1, w.records, &p.bytes);
    int64_t written = active->file->size() + static_cast<int64_t>(buffer.size());
    if (written > 0 && written + static_cast<int64_t>(p.bytes.size()) > options_.segment_bytes) {
      // Roll. The old segment is always synced first, whatever the policy, so that
      // only the last segment can ever have a torn tail.
      status = flush();
      if (status.ok()) status = sync();
      if (status.ok()) {
        lock.lock();
        status = CreateSegment(w.result.first_offset);
        if (status.ok()) active = segments_.rbegin()->second.get();
        lock.unlock();
      }
      if (!status.ok()) continue;
    }
    p.segment = active;
    p.position = active->file->size() + static_cast<int64_t>(buffer.size());
    p.size = static_cast<int64_t>(p.bytes.size());
    buffer.append(p.bytes);
    std::string().swap(p.bytes);
  }
  if (status.ok()) status = flush();
  bool wrote = std::any_of(group.begin(), group.end(),
                           [](const Planned& p) { return p.segment != nullptr; });
  if (status.ok() && wrote) {
    if (options_.fsync_policy != FsyncPolicy::kInterval ||
        now - last_sync_ms_ >= options_.fsync_interval_ms) {
      status = sync();
      last_sync_ms_ = now;
    }
  }

  lock.lock();
  if (!status.ok()) {
    append_error_ = status.WithContextF(
        "log {}: append failed (the failed batches are cut off and appends retried once the "
        "storage works again)",
        dir_);
  }
  for (Planned& p : group) {
    Writer* w = p.writer;
    if (!status.ok()) {
      // Nothing of this group is acknowledged: its keys must not answer retries.
      if (p.write && w->key) producers_.Forget(w->key->producer_id, w->key->sequence);
      if (w->status.ok()) w->status = append_error_;
    } else if (p.segment != nullptr) {
      p.segment->AddIndex(w->result.first_offset, p.position, options_.index_interval_bytes);
      p.segment->end_offset = w->result.last_offset + 1;
      p.segment->acked_bytes = p.position + p.size;
      readable_end_ = w->result.last_offset + 1;
      end_offset_.store(readable_end_, std::memory_order_release);
    }
  }
  for (size_t i = 0; i < group.size(); ++i) {
    Writer* w = queue_.front();
    queue_.pop_front();
    w->done = true;
    w->cv.notify_one();
  }
  if (!queue_.empty()) queue_.front()->cv.notify_one();
}

// After a failed append the files may hold bytes of batches nobody was told about
// (a write that got half through, a batch written before a failed sync, a segment
// created by a roll). Cut them: trailing segments that start past the readable end
// go, every segment is truncated to its acknowledged bytes (Truncate syncs), and
// offsets continue at the readable end. Acknowledged data is not touched. Requires
// mu_ and no group in flight (the caller leads, or the queue is empty).
Status StreamLog::RepairLocked() {
  last_repair_ms_ = WallMillis();
  while (segments_.size() > 1 && segments_.rbegin()->first > readable_end_) {
    auto last = std::prev(segments_.end());
    RETURN_IF_ERROR(storage_->Remove(last->second->file->path()));
    segments_.erase(last);
  }
  for (auto& [base, segment] : segments_) {
    if (segment->file->size() != segment->acked_bytes) {
      RETURN_IF_ERROR(segment->file->Truncate(segment->acked_bytes));
    }
  }
  RETURN_IF_ERROR(segments_.rbegin()->second->file->Sync());
  RETURN_IF_ERROR(storage_->SyncDir(dir_));  // a segment kept may not be durable yet
  next_offset_ = readable_end_;
  return Status::OK();
}

Status StreamLog::Health() {
  std::lock_guard<std::mutex> lock(mu_);
  if (append_error_.ok()) return Status::OK();
  // Probes may come often: repair at most every 200 ms, and never under a leader.
  if (queue_.empty() && WallMillis() - last_repair_ms_ >= 200 && RepairLocked().ok()) {
    append_error_ = Status::OK();
  }
  return append_error_;
}

Result<ReadResult> StreamLog::Read(int64_t offset, int64_t max_bytes) const {
  ReadResult out;
  ASSIGN_OR_RETURN(
      out.next_offset,
      ReadEach(offset, max_bytes, [&](int64_t at, int64_t timestamp_ms, std::string_view value) {
        out.records.push_back(LogRecord{at, timestamp_ms, std::string(value)});
      }));
  return out;
}

Result<int64_t> StreamLog::ReadEach(int64_t offset, int64_t max_bytes,
                                    const RecordVisitor& fn) const {
  int64_t next_offset = offset;
  int64_t delivered = 0;
  std::shared_ptr<SegmentFile> file;
  int64_t position = 0;
  int64_t expected = 0;
  int64_t limit = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    int64_t start = segments_.begin()->first;
    if (offset < start || offset > readable_end_) {
      return Status::OutOfRange("log {}: read at offset {} outside the retained range [{}, {}]",
                                dir_, offset, start, readable_end_);
    }
    if (offset == readable_end_) return next_offset;
    auto seg_it = std::prev(segments_.upper_bound(offset));
    const Segment& segment = *seg_it->second;
    auto idx = std::upper_bound(segment.index.begin(), segment.index.end(),
                                std::make_pair(offset, INT64_MAX));
    if (idx == segment.index.begin()) {
      return Status::Internal("log {}: no index entry for offset {}", dir_, offset);
    }
    --idx;
    expected = idx->first;
    position = idx->second;
    limit = std::min(segment.end_offset, readable_end_);
    file = segment.file;
  }
  std::string header_bytes;
  std::string payload;
  std::vector<std::string_view> records;
  int64_t bytes = 0;
  while (expected < limit) {
    BatchHeader header;
    Status s = [&]() -> Status {
      int64_t available = file->size() - position;
      RETURN_IF_ERROR(file->ReadAt(position, std::min(available, kBatchHeaderSize), &header_bytes));
      RETURN_IF_ERROR(DecodeBatchHeader(header_bytes, available, &header));
      if (header.base_offset != expected) {
        return Status::Corruption("base offset {}, expected {}", header.base_offset, expected);
      }
      if (header.end_offset() <= offset) return Status::OK();  // skipped without reading
      RETURN_IF_ERROR(
          file->ReadAt(position + header.header_length, header.payload_length, &payload));
      RETURN_IF_ERROR(VerifyBatchCrc(header, header_bytes, payload));
      return DecodeBatchRecords(header, payload, &records);
    }();
    RETURN_IF_ERROR_CTX(s, "log segment {}: batch at byte {}", file->path(), position);
    if (header.end_offset() > offset) {
      for (size_t i = 0; i < records.size(); ++i) {
        int64_t record_offset = header.base_offset + static_cast<int64_t>(i);
        if (record_offset < offset) continue;
        if (delivered > 0 && bytes + static_cast<int64_t>(records[i].size()) > max_bytes) {
          return next_offset;
        }
        bytes += static_cast<int64_t>(records[i].size());
        fn(record_offset, header.timestamp_ms, records[i]);
        ++delivered;
        next_offset = record_offset + 1;
      }
    }
    expected = header.end_offset();
    position += header.total_size();
    if (bytes >= max_bytes && delivered > 0) break;
  }
  return next_offset;
}

Result<int> StreamLog::DeleteSegmentsBefore(int64_t offset) {
  std::lock_guard<std::mutex> lock(mu_);
  int removed = 0;
  // A segment goes only once every record it can ever hold lies below
  // `offset` and is published: the next segment's base offset (fixed when it
  // was created) bounds the segment's records, and a group leader may still be
  // writing into it (its end_offset not yet advanced) until readable_end_
  // passes that base.
  while (segments_.size() > 1) {
    auto it = segments_.begin();
    int64_t next_base = std::next(it)->first;
    if (next_base > offset || next_base > readable_end_) break;
    RETURN_IF_ERROR_CTX(storage_->Remove(it->second->file->path()), "log {}: retention", dir_);
    segments_.erase(it);
    ++removed;
  }
  if (removed > 0) RETURN_IF_ERROR_CTX(storage_->SyncDir(dir_), "log {}: retention", dir_);
  return removed;
}

}  // namespace sluice::log
