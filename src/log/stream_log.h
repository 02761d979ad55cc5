// StreamLog: the durable, append-only log of one stream inside the warehouse, the
// capture buffer between ingest (HTTP/Kafka) and the pipeline. Byte format and the
// reasons behind it: docs/log_format.md.
//
// Contract:
// - Append() assigns contiguous offsets to a batch of records and returns only
//   once the batch is durable as LogOptions::fsync_policy says. A batch carrying an
//   IdempotencyKey that the log already holds is acknowledged again with its
//   original offsets (duplicate=true) and not written twice.
// - Read() returns only acknowledged records (never data that a crash could lose
//   under the chosen policy), in offset order.
// - Open() recovers: a torn tail of the last segment is truncated; damage anywhere
//   else is kCorruption (acknowledged data is never dropped silently).
// - One process at a time: Open() locks "<dir>/LOCK" (FileLock) and fails with
//   kConflict naming the holder while another process (or another open StreamLog
//   in this one) has the log; two appenders would overwrite each other's
//   acknowledged records. The lock is held until the StreamLog is destroyed.
// - After an I/O error while appending (a full disk, EIO), the failing batches are
//   refused and the log is unhealthy. The next Append (or Health()) repairs it: the
//   bytes of unacknowledged batches are cut off and offsets continue where the
//   acknowledged ones end; if the storage works again, that append succeeds. A
//   failed batch's idempotency key is forgotten, so its retry is appended.
//
// Thread-safety: Append, Read, DeleteSegmentsBefore and the accessors may be called
// from several threads at once. Concurrent appenders are group-committed: one
// leader writes every pending batch and syncs once, then wakes the others.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "io/file_lock.h"
#include "log/producer_table.h"
#include "log/segment_file.h"

namespace sluice::log {

enum class FsyncPolicy {
  kEveryBatch,   // each batch is written and synced on its own before its ack
  kGroupCommit,  // (default) pending batches of concurrent appenders share one sync
  kInterval,     // WEAKER: acks after write(), syncs at most every fsync_interval_ms.
                 // A power loss can drop acknowledged batches. For benchmarks only.
};

struct LogOptions {
  int64_t segment_bytes = 64 << 20;  // roll to a new segment once a batch would pass this
  FsyncPolicy fsync_policy = FsyncPolicy::kGroupCommit;
  int64_t fsync_interval_ms = 100;      // kInterval only
  int64_t max_batch_bytes = 16 << 20;   // payload limit of one Append
  int64_t max_group_bytes = 4 << 20;    // a group-commit leader writes at most this much
  size_t max_producers = 10000;         // idempotency state kept (least recent evicted)
  int64_t index_interval_bytes = 4096;  // sparse offset index granularity for Read
  LogStorage* storage = nullptr;        // null: local disk (PosixLogStorage())
};

struct IdempotencyKey {
  int64_t producer_id = 0;  // >= 0
  int64_t sequence = 0;     // >= 0, increasing per producer
};

struct AppendResult {
  int64_t first_offset = 0;
  int64_t last_offset = 0;  // inclusive
  bool duplicate = false;   // a retry of a batch the log already held
};

struct LogRecord {
  int64_t offset = 0;
  int64_t timestamp_ms = 0;  // when the log appended its batch
  std::string value;
};

struct ReadResult {
  std::vector<LogRecord> records;
  int64_t next_offset = 0;  // where the next Read should start
};

class StreamLog {
 public:
  // Opens (creating if needed) the log in directory `dir` and recovers it.
  static Result<std::unique_ptr<StreamLog>> Open(const std::string& dir, LogOptions options = {});
  ~StreamLog();  // syncs the active segment (errors are ignored; call Close to see them)
  StreamLog(const StreamLog&) = delete;
  StreamLog& operator=(const StreamLog&) = delete;

  // Appends `records` (at least one) as one batch; see the contract above.
  // kInvalidArgument for an empty or oversized batch or a negative key; kOutOfRange
  // for a key whose sequence is below the producer's last one and no longer remembered.
  Result<AppendResult> Append(const std::vector<std::string>& records,
                              std::optional<IdempotencyKey> key = std::nullopt);
  // The same without owning the records (they must stay valid during the call).
  Result<AppendResult> Append(std::span<const std::string_view> records,
                              std::optional<IdempotencyKey> key = std::nullopt);

  // Records from `offset` on, from one segment, stopping once `max_bytes` of record
  // values are returned (at least one record is returned if any is readable).
  // Reading at next_offset() returns nothing; kOutOfRange below start_offset()
  // (deleted by retention) or above next_offset().
  Result<ReadResult> Read(int64_t offset, int64_t max_bytes) const;
  // Read without copying: fn(offset, timestamp_ms, value) for each record, its
  // value valid during the call only; returns where the next read starts.
  using RecordVisitor =
      std::function<void(int64_t offset, int64_t timestamp_ms, std::string_view value)>;
  Result<int64_t> ReadEach(int64_t offset, int64_t max_bytes, const RecordVisitor& fn) const;

  // Retention: deletes every segment whose records all lie below `offset`, never
  // the active (last) segment. Returns how many segments were removed.
  Result<int> DeleteSegmentsBefore(int64_t offset);

  // Syncs the active segment now (useful with kInterval).
  Status Sync();
  // OK, or the error that makes appends fail right now; tries the repair described
  // above first (at most every 200 ms). For health checks.
  Status Health();
  // Syncs and stops accepting appends.
  Status Close();

  int64_t next_offset() const;   // offset the next appended record will get
  int64_t end_offset() const;    // one past the last acknowledged (readable) record; lock-free
  int64_t start_offset() const;  // first offset still retained
  int64_t sync_count() const { return sync_count_.load(); }  // syncs of segment data
  size_t segment_count() const;
  int64_t max_batch_bytes() const { return options_.max_batch_bytes; }
  const std::string& dir() const { return dir_; }

 private:
  struct Segment;
  struct Writer;

  StreamLog(std::string dir, LogOptions options);
  Status Recover();
  Status ScanSegment(Segment* segment, bool is_last);
  Status CreateSegment(int64_t base_offset);  // requires mu_
  Status RepairLocked();                      // requires mu_, no group in flight
  void LeadGroup(std::unique_lock<std::mutex>& lock);
  std::string SegmentPath(int64_t base_offset) const;

  const std::string dir_;
  const LogOptions options_;
  std::unique_ptr<FileLock> lock_;  // set by Open, before recovery
  LogStorage* const storage_;

  mutable std::mutex mu_;
  // Guarded by mu_: the segment map (the active segment is the last), its offsets
  // and indexes, the idempotency table, the queue of waiting appenders and the
  // readable end. The active segment's file is appended to only by the group
  // leader (the front of queue_), outside mu_.
  std::map<int64_t, std::unique_ptr<Segment>> segments_;
  ProducerTable producers_;
  std::deque<Writer*> queue_;
  int64_t next_offset_ = 0;   // assigned to the next batch (may be in flight)
  int64_t readable_end_ = 0;  // all offsets below are acknowledged and readable
  Status append_error_;       // after a failed write/sync, until a repair succeeds
  int64_t last_repair_ms_ = 0;
  bool closed_ = false;
  int64_t last_sync_ms_ = 0;  // kInterval bookkeeping (leader only)

  std::atomic<int64_t> sync_count_{0};
  std::atomic<int64_t> end_offset_{0};  // readable_end_, readable without mu_
};

}  // namespace sluice::log
