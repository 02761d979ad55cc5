// WindowAggregate: GROUP BY window, keys over event time, emitting each
// window's rows once the watermark passes its end (docs/sql.md "Windows").
//
// Input rows (Add) carry: the event time (µs since the epoch, column 0), the
// group keys (columns 1..k), then one column per aggregate argument (none for
// count(*)); each row also carries the watermark that held *before* it (the
// caller tracks watermarks per source partition, operators/watermark.h).
//   - TUMBLE(size): one window [floor(t / size) * size, + size).
//   - HOP(slide, size): every window of length `size` starting at a multiple of
//     `slide` that holds t (size / slide of them). A row counts once, into its
//     pane (the slide-long slice holding t); a window's values are the merge of
//     its panes, taken when the watermark closes it (before any later row can
//     count in a pane it shares with open windows).
//   - SESSION(gap): per key, a window from its first to its last event + gap;
//     an event within `gap` of a session extends it, and sessions it bridges
//     merge.
// A window is closed once watermark >= window_end + allowed_lateness. A row
// whose windows are all closed under its watermark is late: it is left out
// and returned (the pipeline dead-letters it with the reason "late"); a row
// with some open windows counts in those.
//
// Emit(watermark) returns the rows of every window closed at `watermark`
// (output: window_start, window_end, keys..., aggregates...), each window
// once, and forgets them. Snapshot/Restore give the open state as bytes for
// checkpoints; SnapshotChanged gives only the groups changed since the last
// snapshot (incremental checkpoints, state/README.md), Restore applies a base
// then deltas in order.
//
// Thread-safety: one thread.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "columnar/column.h"
#include "common/status.h"
#include "operators/aggregate.h"

namespace sluice::operators {

struct WindowSpec {
  enum class Kind : uint8_t { kTumble, kHop, kSession };
  Kind kind = Kind::kTumble;
  int64_t size_us = 0;   // tumble, hop
  int64_t slide_us = 0;  // hop
  int64_t gap_us = 0;    // session
};

struct WindowAggregateOptions {
  WindowSpec window;
  std::vector<TypePtr> key_types;
  std::vector<AggSpec> aggs;
  int64_t allowed_lateness_us = 0;
  // window_start, window_end (the time column's type), keys, aggregates.
  std::shared_ptr<const Schema> output_schema;
};

// A row left out of the windows.
struct LateRow {
  int64_t row = 0;  // in the batch given to Add
  std::string reason;
};

// A window row that could not be finished (a sum beyond its type): left out
// of Emit's batch.
struct FailedGroup {
  std::string payload;  // the row as JSON, the failed aggregate NULL
  std::string reason;   // "integer overflow in sum(x)"
};

class WindowAggregate {
 public:
  static Result<std::unique_ptr<WindowAggregate>> Make(WindowAggregateOptions options);

  // `watermarks[i]`: the watermark before row i (INT64_MIN: none yet).
  void Add(const Batch& rows, const std::vector<int64_t>& watermarks, std::vector<LateRow>* late);
  // The rows of the windows closed at `watermark`; failed rows (a sum beyond
  // its type) are described in `failed` and left out.
  Result<Batch> Emit(int64_t watermark, std::vector<FailedGroup>* failed);

  // Open groups and windows.
  int64_t groups() const { return groups_; }
  // Every window closed at this watermark has been emitted. After Emit(INT64_MAX)
  // (the end of a bounded input) it is the last emitted window's end plus the
  // lateness, so that windows opened later are not taken for emitted ones.
  int64_t emitted_below() const { return emitted_below_; }
  int64_t MemoryUsage() const { return memory_; }

  // The whole open state, or the groups changed since the last Snapshot*
  // call (and the windows emitted since, as one "emitted below" watermark).
  std::string Snapshot();
  std::string SnapshotChanged();
  // Applies a Snapshot and then SnapshotChanged outputs, in the order taken.
  // `keep` (when set) restores only the groups of the keys it accepts (a
  // shard of the state, sharded_window_aggregate.h); `clear_on_full` false
  // adds a full snapshot to what is there (the shards of one full state).
  using KeyFilter = std::function<bool(std::string_view key)>;
  Status Restore(std::string_view bytes, const KeyFilter& keep = nullptr,
                 bool clear_on_full = true);
  void Clear();

 private:
  struct Group {
    std::vector<Accumulator> accs;
  };
  // One window of one key: (end, start, key) orders windows by when they close.
  struct WindowKey {
    int64_t end, start;
    std::string key;
    bool operator<(const WindowKey& o) const {
      if (end != o.end) return end < o.end;
      if (start != o.start) return start < o.start;
      return key < o.key;
    }
  };

  explicit WindowAggregate(WindowAggregateOptions options) : options_(std::move(options)) {}
  Group NewGroup() const;
  Group* FindOrAdd(const WindowKey& k);
  void AddToGroup(Group* g, const Batch& rows, int64_t row);
  // SESSION: adds the row to the session of `key` holding t (extending and
  // merging sessions); false when that session is closed at `watermark` (late).
  bool AddToSession(const std::string& key, int64_t t, int64_t watermark, const Batch& rows,
                    int64_t row);
  bool Closed(int64_t window_end, int64_t watermark) const;
  // HOP keeps panes of `slide` per key; a window is the merge of its panes,
  // taken (into pending_) once the watermark closes it.
  void FinalizeHop(int64_t watermark);
  Status AppendWindowRow(int64_t start, int64_t end, const std::string& key, const Group& g,
                         Batch* out, std::vector<FailedGroup>* failed);
  void EncodeGroup(const WindowKey& k, const Group& g, std::string* out) const;

  WindowAggregateOptions options_;
  std::map<WindowKey, Group> windows_;
  // SESSION: the open sessions of each key (start -> end), to find and merge them.
  std::unordered_map<std::string, std::map<int64_t, int64_t>> sessions_;
  std::set<WindowKey> changed_;         // since the last snapshot
  std::vector<WindowKey> merged_away_;  // sessions removed by merging, since the last snapshot
  int64_t emitted_below_ = INT64_MIN;   // every window closed at this watermark was emitted
  int64_t last_emitted_end_ = INT64_MIN;
  // HOP: the end of the last window taken, and the windows taken since the last Emit.
  int64_t finalized_end_ = INT64_MIN;
  std::unique_ptr<Batch> pending_;
  std::vector<FailedGroup> pending_failed_;
  Status hop_error_;  // a key that did not decode while taking windows (reported by Emit)
  int64_t groups_ = 0;
  int64_t memory_ = 0;
};

}  // namespace sluice::operators
