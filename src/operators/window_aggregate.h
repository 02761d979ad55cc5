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
//   - GLOBAL (GROUP BY without a window): one group per key that never closes
//     and ignores the event time (column 0 is not read) and the watermarks. Its
//     rows are not emitted by Emit but by EmitChanged: the current values of
//     the groups changed since the last snapshot (WriteState, Snapshot*), which
//     the pipeline takes just before each checkpoint's snapshot, so that every
//     checkpoint commits the new values of exactly the groups it changed. Its
//     window_start and window_end are INT64_MIN and INT64_MAX. With
//     `retracting` (an aggregate over a changelog), the input's last column is
//     a BOOLEAN: true takes the row back out of its group (Accumulator::
//     Retract), and a group whose row count (the aggregate `rows_agg`, a
//     count(*)) falls to 0 is gone: EmitChanged gives it apart and forgets it.
// A window is closed once watermark >= window_end + allowed_lateness. A row
// whose windows are all closed under its watermark is late: it is left out
// and returned (the pipeline dead-letters it with the reason "late"); a row
// with some open windows counts in those.
//
// Emit(watermark) returns the rows of every window closed at `watermark`
// (output: window_start, window_end, keys..., aggregates...), each window
// once, and forgets them; it gives them in chunks of at most `max_rows`
// (called again with the same watermark until `done`). Snapshots give the
// open state for checkpoints: whole, or only the groups changed since the
// last snapshot (incremental checkpoints, docs/state.md); Restore applies a
// base then deltas in order. Both stream through StateWriter/StateReader.
// A state is written after the Emit of every window closed so far: HOP takes
// a window as a row's watermark closes it, and a state written while such a
// window waits for Emit is refused (kInternal) rather than saying it emitted.
//
// Beyond memory (`memory_budget`): the groups live in an in-memory front
// (every group a checkpoint changes passes through it, pre-aggregated there);
// the front is a map of windows in order, each hashing its groups by key
// (group_table.h) and sorted only when read in order. Once the front holds
// more than the budget it is spilled whole to a SpillStore (RocksDB in
// `spill_dir`), and a group the front lacks is looked up there. Windows are read in order from both
// tiers, the front's version winning. The store is a cache rebuilt from the state files at restore.
// SESSION keeps its index of open sessions per key in memory (start, end).
// Spilling needs what a pipeline's watermarks give: a row's watermark is
// never below the watermark of an earlier Emit (windows taken from the store
// are below a floor that later scans start at).
//
// Thread-safety: one thread.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "columnar/column.h"
#include "common/status.h"
#include "operators/aggregate.h"
#include "operators/group_table.h"
#include "state/spill_store.h"
#include "state/state_stream.h"

namespace sluice::operators {

using state::SpillStore;
using state::StateReader;
using state::StateWriter;

struct WindowSpec {
  enum class Kind : uint8_t { kTumble, kHop, kSession, kGlobal };
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
  // Bytes of groups held in memory before they spill to `spill_dir` (0: no
  // limit, never spills).
  int64_t memory_budget = 0;
  std::string spill_dir;
  // GLOBAL only: rows may be retracted (see above); `rows_agg` is then the
  // index of a count(*) among `aggs`.
  bool retracting = false;
  int rows_agg = -1;
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
  // `only`: the rows to take, in order (nullptr: all). Late rows are named by
  // their row in `rows`, with the rows not taken for another reason (a NULL
  // event time; a time whose window would end beyond the int64 range).
  // Fails only when spilling fails.
  Status Add(const Batch& rows, const std::vector<int64_t>& watermarks, std::vector<LateRow>* late,
             const std::vector<uint32_t>* only = nullptr);
  // Up to `max_rows` rows of the windows closed at `watermark`, in window-end
  // order; `done` once every such window was given. Failed rows (a sum beyond
  // its type) are described in `failed` and left out.
  Result<Batch> Emit(int64_t watermark, std::vector<FailedGroup>* failed, int64_t max_rows,
                     bool* done);
  // All of them at once.
  Result<Batch> Emit(int64_t watermark, std::vector<FailedGroup>* failed);
  // GLOBAL: the rows of the groups changed since the last snapshot, in key
  // order (both tiers); they stay open. Failed rows as in Emit. Retracting,
  // the groups left without rows are appended to `gone` (their keys; the
  // aggregates NULL) instead, and forgotten (the next state delta says so).
  Result<Batch> EmitChanged(std::vector<FailedGroup>* failed, Batch* gone = nullptr);

  // Open groups and windows (both tiers).
  int64_t groups() const { return groups_; }
  // Every window closed at this watermark has been emitted. After Emit(INT64_MAX)
  // (the end of a bounded input) it is the last emitted window's end plus the
  // lateness, so that windows opened later are not taken for emitted ones.
  int64_t emitted_below() const { return emitted_below_; }
  // Bytes of the in-memory front.
  int64_t MemoryUsage() const { return memory_; }
  // Times the front spilled to the store.
  int64_t spills() const { return spills_; }

  // One state file of `parts` (the shards of one operator, or one): a header
  // (kind, the highest "emitted below"), each part's records, an end mark.
  // Whole, or what changed since each part's last snapshot.
  static Status WriteState(const std::vector<WindowAggregate*>& parts, bool full, StateWriter* out);
  Result<std::string> Snapshot();
  Result<std::string> SnapshotChanged();
  // Applies a state file (and, in order, the deltas after it). `keep` (when
  // set) restores only the groups of the keys it accepts (a shard of the
  // state, sharded_window_aggregate.h). Files of the earlier formats (one
  // "SLST" snapshot) are read at once; `clear_on_full` false adds such a full
  // snapshot to what is there (the parts of one earlier sharded file).
  using KeyFilter = std::function<bool(std::string_view key)>;
  Status Restore(StateReader* in, const KeyFilter& keep = nullptr, bool clear_on_full = true);
  Status Restore(std::string_view bytes, const KeyFilter& keep = nullptr,
                 bool clear_on_full = true);
  // Forgets every group and what was emitted (HOP windows taken for the next
  // Emit too): a full state restored after it replaces this operator's.
  Status Clear();

 private:
  struct Group {
    std::vector<Accumulator> accs;
    bool stored = false;   // loaded from the store, which still holds a copy
    bool changed = false;  // on its window's changed list (FrontWindow::changed)
  };
  // A window: (end, start) orders windows by when they close.
  struct WindowId {
    int64_t end, start;
    auto operator<=>(const WindowId&) const = default;
  };
  // One window of one key: (end, start, key).
  struct WindowKey {
    int64_t end, start;
    std::string key;
    bool operator<(const WindowKey& o) const {
      if (end != o.end) return end < o.end;
      if (start != o.start) return start < o.start;
      return key < o.key;
    }
  };

  using Groups = GroupTable<Group>;
  using GroupEntry = Groups::Entry;
  // A window of the front: its groups by key, and those marked changed (an
  // entry may be listed twice, or erased or reused since: a listed entry
  // counts while it is live and marked).
  // Its groups in key order, as the last scan sorted them, are kept while no
  // group is added (`ordered`); those before `order_from` were taken.
  struct FrontWindow {
    Groups groups;
    std::vector<GroupEntry*> changed;
    std::vector<GroupEntry*> order;
    size_t order_from = 0;
    bool ordered = false;
  };
  using Windows = std::map<WindowId, FrontWindow>;

  class Scan;  // both tiers in order (window_internal.h)

  explicit WindowAggregate(WindowAggregateOptions options)
      : options_(std::move(options)),
        sizes_fixed_(std::all_of(options_.aggs.begin(), options_.aggs.end(),
                                 [](const AggSpec& a) { return Accumulator::SizeIsFixed(a); })) {}
  Group NewGroup() const;
  // Bytes the front holds for a group of this key (beside its window's).
  int64_t GroupBytes(std::string_view key, const Group& g) const;
  // The group of (window, key) in the front, or loaded into it from the
  // store, or null (`window` is then unset); FindOrAdd creates it, and marks
  // it changed.
  struct Found {
    FrontWindow* window = nullptr;
    GroupEntry* entry = nullptr;
  };
  Result<Found> Load(WindowId id, std::string_view key);
  Result<Group*> FindOrAdd(WindowId id, std::string_view key);
  // Puts a group that is not in the front there (its window created when new).
  Found AddToFront(WindowId id, std::string_view key, Group g);
  GroupEntry* FindInFront(const WindowKey& k);
  // Erases a window of the front (its groups' bytes already taken off).
  void EraseWindow(Windows::iterator it);
  // Erases a group of the front (not the store's copy).
  void EraseFromFront(FrontWindow* window, std::string_view key);
  void MarkChanged(FrontWindow* window, GroupEntry* e);
  // The live, marked entries of a window's changed list, once each, in key order.
  static std::vector<GroupEntry*> ChangedInOrder(FrontWindow& window);
  // No group of the front marked changed any more.
  void ForgetFrontChanges();
  // Forgets one group (in both tiers).
  Status Erase(const WindowKey& k);
  // Takes windows from the front of the order while `take` says so (it may
  // read the group through the scan), forgetting them in both tiers; windows
  // ending after `max_end` are not looked at.
  using TakeFn = std::function<Result<bool>(const WindowKey& k, Scan& scan)>;
  Status TakePrefix(int64_t max_end, const TakeFn& take);
  // Its scan: `n` windows taken, the last one `last`.
  Status TakeFromScan(int64_t max_end, const TakeFn& take, int64_t* n, WindowKey* last);
  // Forgets the store's keys of changes (after a snapshot or a restore).
  Status ForgetStoredChanges();
  void ForgetSession(const WindowKey& k);  // SESSION: drops it from sessions_
  // Moves the front into the store once it holds more than the budget.
  Status MaybeSpill();
  Status Spill();
  // Adds row `row` to the group's accumulators (or takes it back: `retract`).
  void AddToGroup(Group* g, const Batch& rows, int64_t row, bool retract = false);
  // SESSION: adds the row to the session of `key` holding t (extending and
  // merging sessions); false when that session is closed at `watermark` (late).
  Result<bool> AddToSession(const std::string& key, int64_t t, int64_t watermark, const Batch& rows,
                            int64_t row);
  Status AddRow(const Batch& rows, int64_t r, int64_t watermark, std::string* key,
                std::vector<LateRow>* late);
  // The window of event time t: TUMBLE's [start, end); HOP's pane start and
  // the end of the last window holding it; SESSION's t and t + gap. False
  // when a window holding t, or its end plus the allowed lateness, would
  // reach beyond the int64 microseconds (about 292,000 years from 1970),
  // which the arithmetic on windows must not meet.
  bool WindowOf(int64_t t, int64_t* start, int64_t* end) const;
  bool Closed(int64_t window_end, int64_t watermark) const;
  // The latest window end that `watermark` closes (INT64_MIN when none): a
  // bound for scans, Closed deciding each window.
  int64_t ClosedThrough(int64_t watermark) const;
  // HOP keeps panes of `slide` per key; a window is the merge of its panes,
  // taken (into pending_) once the watermark closes it.
  Status FinalizeHop(int64_t watermark);
  // The next window to take: its end, from the oldest pane's end.
  int64_t NextHopWindowEnd(int64_t oldest_pane_end) const;
  // Takes the next window the watermark closed, if any (its end into `end`):
  // its panes merged into one row per key, appended to pending_. From both
  // tiers (a Scan, the keys merged in a table and sorted), or, with nothing
  // spilled, from the front alone (each pane's key order merged).
  Result<bool> TakeHopWindowFromBothTiers(int64_t watermark, int64_t* end);
  Result<bool> TakeHopWindowFromFront(int64_t watermark, int64_t* end);
  Result<Batch> EmitHop(int64_t watermark, std::vector<FailedGroup>* failed, int64_t max_rows,
                        bool* done);
  Status AppendWindowRow(int64_t start, int64_t end, const std::string& key, const Group& g,
                         Batch* out, std::vector<FailedGroup>* failed);
  void EncodeAccs(const Group& g, std::string* out) const;
  // (A spill store's values and "SLS3" files are compact.)
  Status DecodeAccs(std::string_view* in, Group* g,
                    AccEncoding encoding = AccEncoding::kCompact) const;
  // This part's records of a state file.
  Status WriteRecords(bool full, StateWriter* out);
  Status WriteChanged(StateWriter* out);
  // Calls `fn` with each group changed since the last snapshot, in key order:
  // the front's version (`group`), or else the store's bytes (`stored`).
  using ChangedFn =
      std::function<Status(const WindowKey& k, const Group* group, std::string_view stored)>;
  Status ForEachChanged(const ChangedFn& fn);
  // Restore's steps: a restored group or tombstone, then what every restore
  // ends with (windows the restored watermark closed are dropped).
  Status RestoreGroup(WindowKey k, Group g, bool known_new);
  Status RestoreTombstone(const WindowKey& k);
  Status FinishRestore(int64_t emitted);
  Status RestoreLegacy(std::string_view in, const KeyFilter& keep, bool clear_on_full);

  WindowAggregateOptions options_;
  // No accumulator's size changes as rows come (Accumulator::SizeIsFixed).
  const bool sizes_fixed_;
  // The front: every group changed since the last spill (all, when none
  // spilled), by window; no window is empty.
  Windows windows_;
  std::unique_ptr<SpillStore> store_;
  bool spilled_ = false;  // the store may hold groups
  // Every stored window key below this one was taken (its deletion is left
  // in the store until compaction: scans seek past them).
  std::string store_floor_;
  // The store's keys of changes are "c" + this generation + the window's key;
  // a snapshot moves to the next, so scans skip the deletions of the last.
  uint32_t changed_generation_ = 0;
  std::string ChangedKey(const WindowKey& k) const;
  int64_t spills_ = 0;
  // SESSION: the open sessions of each key (start -> end), to find and merge them.
  std::unordered_map<std::string, std::map<int64_t, int64_t>> sessions_;
  // Changed since the last snapshot: the front's groups marked changed
  // (FrontWindow::changed); the store keeps the keys of those spilled since.
  // Removed since the last snapshot: sessions merged away, global groups gone.
  std::vector<WindowKey> merged_away_;
  int64_t emitted_below_ = INT64_MIN;  // every window closed at this watermark was emitted
  int64_t last_emitted_end_ = INT64_MIN;
  // HOP: the end of the last window taken, and the windows taken since the last Emit.
  int64_t finalized_end_ = INT64_MIN;
  std::unique_ptr<Batch> pending_;
  int64_t pending_pos_ = 0;
  std::vector<FailedGroup> pending_failed_;
  int64_t groups_ = 0;
  int64_t memory_ = 0;
};

}  // namespace sluice::operators
