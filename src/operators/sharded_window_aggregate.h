// ShardedWindowAggregate: one WindowAggregate per shard, a group key always in
// the same shard (its StableHash modulo the shards), the shards run at once on
// a TaskPool (docs/pipelines.md "Parallelism"). It behaves as one
// WindowAggregate over the same rows and watermarks: the same late rows (in
// row order), the same window rows in the same order of window ends (the keys
// of one window in shard order), and the same state.
//
// State: Snapshot/SnapshotChanged give a container of the shards' own
// snapshots; Restore routes every group of every shard snapshot (and a plain
// WindowAggregate snapshot, of one shard) to the shard its key hashes to now,
// so a state taken with any number of shards restores into any other.
//
// Thread-safety: one thread calls it; it runs its shards on the pool.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "common/task_pool.h"
#include "operators/window_aggregate.h"

namespace sluice::operators {

class ShardedWindowAggregate {
 public:
  // `shards` (at most pool->threads()) shards; `pool` must outlive the operator.
  static Result<std::unique_ptr<ShardedWindowAggregate>> Make(WindowAggregateOptions options,
                                                              TaskPool* pool, int shards);

  void Add(const Batch& rows, const std::vector<int64_t>& watermarks, std::vector<LateRow>* late);
  // The windows closed at `watermark`, ordered by window end, then start.
  Result<Batch> Emit(int64_t watermark, std::vector<FailedGroup>* failed);

  int shards() const { return static_cast<int>(shards_.size()); }
  int64_t groups() const;
  int64_t emitted_below() const;
  int64_t MemoryUsage() const;

  std::string Snapshot();
  std::string SnapshotChanged();
  Status Restore(std::string_view bytes);

 private:
  ShardedWindowAggregate(WindowAggregateOptions options, TaskPool* pool)
      : options_(std::move(options)), pool_(pool) {}
  int ShardOf(std::string_view key) const;
  std::string Container(bool full);

  WindowAggregateOptions options_;
  TaskPool* pool_;
  std::vector<std::unique_ptr<WindowAggregate>> shards_;
};

}  // namespace sluice::operators
