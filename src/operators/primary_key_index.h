// PrimaryKeyIndex: where the live row of each key of a primary-key table is,
// and the changes of the checkpoint being taken (docs/upserts.md).
//
// Two layers:
// - committed: key -> the row's location (data file, position) in the table's
//   snapshot the index was built from or last committed. A table written by
//   another engine may hold a key twice; the second row loaded is kept as a
//   duplicate of the key, so that the key's next change deletes both.
// - pending: the checkpoint's changes in source order. Upsert(key, at) makes
//   `at` (a row just written) the key's row; Delete(key) removes the key. A key
//   changed twice keeps its last change, and the row the first change wrote is
//   superseded (deleted by the same commit).
//
// A commit deletes, for every pending key, its committed row and duplicates
// (Deletes()), plus the superseded rows; CommitPending() then moves the
// pending rows into the committed layer. The committed layer may be rebuilt
// (ClearCommitted + Load) while changes are pending: Deletes() is always
// computed against the committed layer as it is at that moment.
//
// Checkpointed: WriteState writes the index as the commit of the pending
// changes leaves it, whole (a base) or only the keys changed since the last
// state written (a delta); Restore applies such files to the committed
// layer (docs/state.md "The key index"). A delta cannot follow a rebuild:
// after ClearCommitted the next state is a base.
//
// Beyond memory: the committed layer keeps within `memory_bytes`, spilling
// to an on-disk store past it (operators/committed_keys.h); the pending
// changes (one checkpoint's) stay in memory. Calls that may read or spill
// the store return its errors; the caller then rebuilds the index
// (ClearCommitted and Load, or Restore).
//
// Keys are the key columns' values as operators::AppendValueKey encodes them
// (AppendKey). Data files are interned: a location holds a file id below
// CommittedKeys::kMaxFile. Not thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "columnar/column.h"
#include "common/status.h"
#include "operators/committed_keys.h"
#include "operators/key_table.h"
#include "state/state_stream.h"

namespace sluice::operators {

// Appends the key of row `row` (the columns `key_columns` of `batch`) to
// `out`; false (and `out` unchanged) when a key column is null.
bool AppendKey(const Batch& batch, const std::vector<int>& key_columns, int64_t row,
               std::string* out);

class PrimaryKeyIndex {
 public:
  // `memory_bytes` bounds the committed layer (<= 0: unbounded), which
  // spills to a store in `spill_dir` past it.
  explicit PrimaryKeyIndex(int64_t memory_bytes = 0, std::string spill_dir = {})
      : committed_(memory_bytes, std::move(spill_dir)) {}

  uint32_t InternFile(const std::string& path);
  const std::string& FilePath(uint32_t file) const { return files_[file]; }

  // ---- committed layer
  // A live row of the table (building the index from a scan).
  Status Load(std::string_view key, RowLocation at);
  // Room for about `keys` more committed keys (before a load: no rehashing),
  // within the budget.
  void Reserve(size_t keys) { committed_.Reserve(keys); }
  // Empties the committed layer (before it is loaded again); file ids that
  // pending changes use stay valid.
  void ClearCommitted();
  Result<std::optional<RowLocation>> Find(std::string_view key) const {
    return committed_.Find(key, committed_.HashOf(key));
  }
  // ---- following a compaction (rows moved, none changed)
  // The id of an interned file, if it is.
  std::optional<uint32_t> FileId(const std::string& path) const;
  // `files[id]`: whether file id is one of a set (ids past its end are not).
  // Committed keys whose row is in one of `files`: from counts of rows by
  // file that every change of the committed layer keeps (no scan; a
  // duplicate row is not counted).
  size_t CountIn(const std::vector<bool>& files) const;
  // Moves the committed row of each of `keys` (rows a compaction wrote) to
  // `to[i]`: the number moved. Each key must be a committed key whose row is
  // in one of `files` (the compaction's inputs). An index in memory checks
  // that; a spilled one does not read its store to (a compaction moves most
  // of a table's rows: a random read of the store each), and trusts the
  // caller, whose check is that the rows moved number CountIn(files) taken
  // before. Stops at a key
  // that is unknown, named twice (a spilled index: twice in one call) or
  // whose row is elsewhere, and sets `*missed`; the caller then loads the
  // index again, as it does when the count differs.
  // The rows moved are counted in their new files at once, and still in
  // `files` (a spilled index does not know which of them each row left)
  // until Vacated(files): the caller's check passed, every committed row of
  // `files` moved, their counts are 0. Any other end (a miss, a count that
  // differs, an error) rebuilds the index.
  Result<size_t> Relocate(const std::vector<std::string_view>& keys,
                          const std::vector<RowLocation>& to, const std::vector<bool>& files,
                          bool* missed);
  void Vacated(const std::vector<bool>& files);
  // fn(key, at) for every committed row: each key's row and each extra row
  // of a key loaded twice, in no order.
  Status ForEachRow(const std::function<void(std::string_view key, RowLocation at)>& fn) const;
  size_t size() const { return committed_.size(); }
  bool spilled() const { return committed_.spilled(); }
  int64_t spills() const { return committed_.spills(); }
  size_t duplicates() const { return duplicates_.size(); }

  // ---- pending changes
  void Upsert(std::string_view key, RowLocation at);
  // Starts reading where `key`'s pending change goes (a loop of changes
  // calls it a few changes ahead, so that their memory reads overlap).
  void PrefetchPending(std::string_view key) const { pending_.Prefetch(pending_.HashOf(key)); }
  void Delete(std::string_view key);
  // A row written this checkpoint that no key takes (a change skipped as a
  // replay after its row was written): the commit deletes it.
  void Discard(RowLocation at) { superseded_.push_back(at); }
  size_t pending() const { return pending_.size(); }
  // Bytes the pending changes need in memory (the changed keys and their new
  // rows, and the superseded rows; not the room kept after a commit, so
  // this is 0 once they are committed). Checkpoint planning takes about
  // twice as much again (Deletes, and the position deletes written from it).
  int64_t PendingBytes() const {
    return pending_.used_bytes() + static_cast<int64_t>(superseded_.size() * sizeof(RowLocation));
  }
  // Every row the pending changes delete: committed rows (and duplicates) of
  // changed keys, and rows written this checkpoint that a later change of the
  // same key superseded. (A spilled index keeps the changed keys in byte
  // order, 17 bytes a key, and whether each had a row, so that
  // CommitPending reads no store unless the committed layer changed since.)
  Result<std::vector<RowLocation>> Deletes();
  // Moves the pending changes into the committed layer; `state_saved`: the
  // state written for this commit holds them (as MarkSaved after it).
  Status CommitPending(bool state_saved = false);
  void DiscardPending();

  // ---- checkpointed state
  // Writes the index as committing the pending changes leaves it: every
  // key (`full`), or the keys changed since MarkSaved and the pending ones.
  Status WriteState(bool full, state::StateWriter* out) const;
  // Only a full state describes the index (it was rebuilt since the last).
  bool needs_full_state() const { return unsaved_all_; }
  // Keys a delta would hold (committed ones changed since the last save,
  // and pending ones).
  size_t unsaved() const { return unsaved_.size() + pending_.size(); }
  // The state last written is now the record (its commit succeeded, and
  // CommitPending ran): the next delta starts from here.
  void MarkSaved();
  // Applies one state file to the committed layer: a base replaces it, a
  // delta changes it; `base` says which it must be (a chain is a base, then
  // deltas). A truncated or corrupt file, or the other kind, is kCorruption.
  Status Restore(state::StateReader* in, bool base);

  // ---- kept across a clean restart (docs/state.md "The key index")
  // A spilled index that is the state last saved (no pending change, none
  // since MarkSaved) keeps its store for the next run: its front is written
  // to the store, which is closed and left in the spill folder, and
  // `*manifest` gets what Reopen needs beside it (the store's identity, the
  // files a committed row or duplicate is in with their ids and the rows
  // counted in each, the duplicates), and the committed layer is empty
  // afterwards (ClearCommitted). Any other index keeps nothing and is left
  // as it was: false; so is one of more than 4,096 file ids of which fewer
  // than a quarter hold a row (ids are kept as they are, and the files of
  // rows compacted away would accumulate). A store's error leaves the layer
  // empty, its store removed.
  // Whoever keeps the store must make sure the next run reopens it only for
  // that same saved state, and never after the store changed.
  Result<bool> Keep(std::string* manifest);
  // Takes the store Keep left in the spill folder and its manifest as the
  // committed layer, and the state last saved (MarkSaved), reading nothing of
  // the store. Pending changes are dropped. File ids keep their numbers: an
  // id the manifest does not name is a gap (FilePath ""; FileId finds no
  // path there), and files interned later get ids past the last. An
  // unreadable manifest, or a store in the folder that is not the one Keep
  // left (another identity), is kCorruption; a store that is not there
  // kNotFound; RocksDB's errors for one it cannot open. After a failure the
  // committed layer is empty.
  Status Reopen(std::string_view manifest);

  // Bytes the index holds in memory (approximate: keys, locations, hash
  // nodes, and the store's budget once it spilled).
  int64_t ApproxBytes() const;

 private:
  // A pending delete's location.
  static constexpr RowLocation kGone{UINT32_MAX, -1};
  // Records a pending change (`at`, or kGone): a key changed twice
  // supersedes the row its first change wrote.
  void Change(std::string_view key, RowLocation at);
  // The pending changes (key, row or kGone) in byte order of their keys
  // (the order of the store's keys), paired with their keys' prefixes.
  struct PendingChange {
    std::string_view key;
    RowLocation at;
  };
  Prefixed<PendingChange> SortedPending() const;
  // CommitPending's work, which may fail part of the way.
  Status ApplyPending(bool state_saved);
  // The pending keys' mean size (what the committed layer reserves for).
  int64_t MeanPendingKeyBytes() const;
  // Records that a committed key changed since the last state saved.
  void Unsaved(std::string_view key);
  // Counts a committed key's row moving from file `was` to file `now`
  // (kNoFile: no row).
  static constexpr uint32_t kNoFile = UINT32_MAX;
  static uint32_t FileOf(const std::optional<RowLocation>& at) { return at ? at->file : kNoFile; }
  void Recount(uint32_t was, uint32_t now);
  // Restore's rows of a state file, a batch at a time.
  struct RestoredRows {
    struct Row {
      uint8_t tag;
      RowLocation at;
      size_t key_end;  // in keys, after the previous row's key
      int64_t record;
    };
    std::vector<Row> rows;
    std::string keys;
    std::string_view key(size_t i) const;
  };
  // Rows of a delta restored into a spilled index at a time (sorted, and
  // their rows read from the store in one pass).
  static constexpr size_t kSortedBatch = size_t{256} << 10;
  // Applies restored rows in their order (`base`: of a base, into an
  // emptied index).
  Status ApplyRestored(const RestoredRows& rows, bool base);
  // Applies a delta's rows in key order (a spilled index).
  Status ApplyRestoredInKeyOrder(const RestoredRows& rows);

  std::vector<std::string> files_;
  std::unordered_map<std::string, uint32_t> file_ids_;
  CommittedKeys committed_;
  // Committed keys' rows by file id (ids past its end: none).
  std::vector<int64_t> rows_in_file_;
  std::unordered_multimap<std::string, RowLocation> duplicates_;
  // A pending key's row, or kGone when its last change deleted it.
  KeyTable pending_;
  std::vector<RowLocation> superseded_;
  // What Deletes found of a spilled index: the pending changes in byte order
  // of their keys (SortedPending), their keys' hashes in the committed layer,
  // the file of each one's committed row (kNoFile: none), and the committed
  // layer's version then (CommitPending uses it while the version holds).
  struct Plan {
    Prefixed<PendingChange> changes;
    std::string_view key(size_t i) const { return changes[i].second.key; }
    std::vector<uint64_t> hashes;
    std::vector<uint32_t> was_file;
    uint64_t version = 0;
  };
  std::optional<Plan> plan_;
  // Committed keys changed since the last state saved (unless every key is).
  std::unordered_set<std::string> unsaved_;
  bool unsaved_all_ = true;
};

}  // namespace sluice::operators
