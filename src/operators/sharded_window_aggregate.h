// ShardedWindowAggregate: one WindowAggregate per shard, a group key always in
// the same shard (by a hash of its key), the shards run at once on
// a TaskPool (docs/pipelines.md "Parallelism"). It behaves as one
// WindowAggregate over the same rows and watermarks: the same late rows (in
// row order), the same window rows in the same order of window ends (the keys
// of one window in shard order), and the same state.
//
// Emit gives its rows in chunks (window_aggregate.h): each shard emits a chunk
// at once, and the chunks are merged as they come, so a window of millions of
// keys is never held whole. A chunk that is one run of the merge (a shard's
// rows of one window, the common case) is given alone and as it is, not
// copied: a batch may hold fewer than `max_rows` rows before `done`.
//
// State: one state file holds every shard's records (WindowAggregate::
// WriteState); restoring, every shard reads the whole file and keeps its own
// keys, so a state taken with any number of shards restores into any other.
// Files of the earlier container ("SLSH", one snapshot per shard) restore too.
// The memory budget is split evenly over the shards, each spilling to a
// folder of its own under `spill_dir`.
//
// Thread-safety: one thread calls it (AssignShards excepted); it runs its
// shards on the pool.
#pragma once

#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "common/task_pool.h"
#include "operators/key_table.h"
#include "operators/window_aggregate.h"

namespace sluice::operators {

class ShardedWindowAggregate {
 public:
  // `shards` (at most pool->threads()) shards; `pool` must outlive the operator.
  static Result<std::unique_ptr<ShardedWindowAggregate>> Make(WindowAggregateOptions options,
                                                              TaskPool* pool, int shards);

  // The shard of each of rows [begin, end) of `rows` (the operator's input
  // columns) into shard[begin, end). It reads only what Make fixed, so the
  // threads that decode rows may call it at once, for their own rows.
  using ShardIds = std::vector<uint16_t>;
  void AssignShards(const Batch& rows, int64_t begin, int64_t end, ShardIds* shard) const;
  // The shard of a group key (the key columns' AppendValueKey bytes): a
  // row's, as AssignShards gives it, and a restored key's.
  int ShardOf(std::string_view key) const { return ShardOfHash(SeededHash(kShardSeed, key)); }
  // `shard`: every row's, from AssignShards (nullptr: assigned here, on the
  // pool).
  Status Add(const Batch& rows, const std::vector<int64_t>& watermarks, std::vector<LateRow>* late,
             const ShardIds* shard = nullptr);
  // Batches one after another, as Add of each in turn, with the shards
  // running once: parts[p]'s rows, each row's watermark and shard (from
  // AssignShards); (*late)[p] gets its late rows, in row order.
  struct Part {
    const Batch* rows = nullptr;
    const std::vector<int64_t>* watermarks = nullptr;
    const ShardIds* shard = nullptr;
  };
  Status AddParts(std::span<const Part> parts, std::vector<std::vector<LateRow>>* late);
  // Up to `max_rows` rows of the windows closed at `watermark`, ordered by
  // window end, then start (then shard); called again with the same
  // watermark until `done` (an earlier batch may be short, even empty).
  Result<Batch> Emit(int64_t watermark, std::vector<FailedGroup>* failed, int64_t max_rows,
                     bool* done);
  Result<Batch> Emit(int64_t watermark, std::vector<FailedGroup>* failed);  // all at once
  // GLOBAL (GROUP BY without a window): the rows of the groups changed since
  // the last state file, the shards' one after another (each in key order).
  Result<Batch> EmitChanged(std::vector<FailedGroup>* failed, Batch* gone = nullptr);

  int shards() const { return static_cast<int>(shards_.size()); }
  int64_t groups() const;
  int64_t emitted_below() const;
  int64_t MemoryUsage() const;
  int64_t spills() const;

  // A state file, whole or of what changed since the last one.
  Status WriteState(bool full, StateWriter* out);
  Result<std::string> Snapshot();
  Result<std::string> SnapshotChanged();
  // `open` gives a reader of the state file from its start (called once per
  // shard, on the calling thread).
  using Opener = std::function<Result<std::unique_ptr<StateReader>>()>;
  Status Restore(const Opener& open);
  Status Restore(std::string_view bytes);

 private:
  // The hash's high half scaled to the shards (no division). Within a run
  // only: a state file holds every shard's keys, so restoring shards them
  // again. Its seed is a constant, and each shard's group tables hash with
  // seeds of their own, so a shard's keys spread over its tables' slots.
  static constexpr uint64_t kShardSeed = 0x736c7569636533ull;
  int ShardOfHash(uint64_t hash) const {
    return static_cast<int>(((hash >> 32) * shards_.size()) >> 32);
  }
  ShardedWindowAggregate(WindowAggregateOptions options, TaskPool* pool)
      : options_(std::move(options)), pool_(pool) {}
  Status RestoreShardContainer(std::string_view bytes);  // "SLSH"

  WindowAggregateOptions options_;
  TaskPool* pool_;
  std::vector<std::unique_ptr<WindowAggregate>> shards_;
  // Emit: each shard's chunk being merged (kept while not done).
  struct Chunk {
    Batch rows;
    int64_t pos = 0;
    bool done = false;
  };
  std::vector<Chunk> chunks_;
};

}  // namespace sluice::operators
