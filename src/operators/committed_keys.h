// CommittedKeys: the committed layer of the primary-key index (key -> the
// location of its live row) within a memory budget (docs/state.md "The key
// index", beyond memory).
//
// In memory, a KeyTable holds every key until its next growth (its slots
// doubling, its key arena reallocated) would take it past half the budget.
// Then its entries are written to an on-disk store
// (state::SpillStore, a cache given the other half: RocksDB with bloom
// filters) and the table becomes a front: the keys changed or fetched since
// the last spill. Each front entry is a location or "gone" (the key was
// erased), and says whether the store holds the key, so that:
// - a key's value is its front entry, else the store's, else none;
// - a change of a key the front lacks reads the store once (a new key's miss
//   is a bloom filter probe) and keeps the key in the front;
// - size() is exact: a change knows whether the key was live before;
// - a spill writes the front's live entries and deletes the store's copies
//   of its gone ones, in key order: as one sorted run (a table file the
//   store takes in whole), or for a few hundred keys in write batches; then
//   it empties the front.
// A budget the keys fit in never opens a store: the table is the whole
// layer, as fast as it was before the budget.
//
// Errors of the store (kIOError, kCorruption) are returned by every call
// that may read or spill. A failed read changes nothing; after a failed
// spill every call fails until Clear (the caller rebuilds the index).
//
// File ids of locations must be below kMaxFile (the front marks entries in
// the top bit). Not thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "operators/key_table.h"
#include "state/spill_store.h"

namespace sluice::operators {

class CommittedKeys {
 public:
  static constexpr uint32_t kMaxFile = 0x7FFFFFFE;

  // `memory_bytes`: the budget (<= 0: unbounded, never spills); `spill_dir`:
  // where the store goes (wiped when it opens, removed with it).
  CommittedKeys(int64_t memory_bytes, std::string spill_dir);
  CommittedKeys() : CommittedKeys(0, {}) {}
  ~CommittedKeys();
  CommittedKeys(const CommittedKeys&) = delete;
  CommittedKeys& operator=(const CommittedKeys&) = delete;

  // Hash a key first to prefetch its front slot (ForEachPrefetching); every
  // call below takes the hash HashOf gave.
  uint64_t HashOf(std::string_view key) const { return front_.HashOf(key); }
  void Prefetch(uint64_t hash) const { front_.Prefetch(hash); }
  // How many keys ahead a loop over many keys prefetches their front slots
  // (enough to overlap the misses, few enough to stay in the cache).
  static constexpr size_t kPrefetchAhead = 16;

  // The key's location. Fetch keeps a key read from the store in the front
  // (a change of it follows); Find does not.
  Result<std::optional<RowLocation>> Find(std::string_view key, uint64_t hash) const;
  Result<std::optional<RowLocation>> Fetch(std::string_view key, uint64_t hash);
  // Find of each of `keys` (distinct, in byte order; hashes[i] is
  // HashOf(keys[i])): fn(i, location of keys[i]), once for each i, in no
  // order. The front's slots are prefetched a few keys ahead. Keys the front
  // lacks are read from the store in order: when they are dense among its
  // keys (one in 4 or more), by a cursor stepping from key to key (each
  // block of each of its runs read once); else by point reads in batches
  // (each run's filters probed and each block read once for a batch).
  Status FindSorted(const std::vector<std::string_view>& keys, const std::vector<uint64_t>& hashes,
                    const std::function<void(size_t, std::optional<RowLocation>)>& fn) const;
  // The same for keys the caller holds elsewhere: key_at(i) for i below
  // hashes.size() (a plan need not copy its keys into a vector of their own).
  using KeyAt = std::function<std::string_view(size_t)>;
  Status FindSorted(const KeyAt& key_at, const std::vector<uint64_t>& hashes,
                    const std::function<void(size_t, std::optional<RowLocation>)>& fn) const;
  // Makes `to` the key's location (none: removes the key), for a key the
  // caller found (`was_live`: it had a location) and has not changed since
  // (version() says whether anything changed): reads no store.
  Status Put(std::string_view key, uint64_t hash, std::optional<RowLocation> to, bool was_live);
  // Changes with every call that may change a key's location (not with
  // reads, nor with spills, which move keys but change none).
  uint64_t version() const { return version_; }
  // Assign, AddNew and Erase set `*was` (when given) to the location they
  // replaced (none: the key had none), which they read anyway.
  //
  // Makes `at` the key's location.
  Status Assign(std::string_view key, uint64_t hash, RowLocation at,
                std::optional<RowLocation>* was = nullptr);
  // Adds the key at `at` unless it has a location: true when added, else
  // false and `*existing` (when given) its location.
  Result<bool> Add(std::string_view key, uint64_t hash, RowLocation at,
                   RowLocation* existing = nullptr);
  // Add for a key the caller knows has no location (restoring a base, whose
  // keys are distinct, into an empty layer): reads no store. A key the front
  // holds is assigned instead; one only the store holds would be counted
  // twice and its stored row outlive an erase, so the promise must hold.
  Status AddNew(std::string_view key, uint64_t hash, RowLocation at,
                std::optional<RowLocation>* was = nullptr);
  // Removes the key (nothing when it has no location).
  Status Erase(std::string_view key, uint64_t hash, std::optional<RowLocation>* was = nullptr);

  // fn(std::string_view key, RowLocation at) for every key, in no order; fn
  // must not change the layer.
  template <typename Fn>
  Status ForEach(Fn&& fn) const;

  // Empties the layer (and removes the store).
  void Clear();
  // ---- kept across a clean restart (docs/state.md "The key index")
  // Writes the front to the store and closes it, leaving it in spill_dir for
  // the next run's Reopen, and sets `*identity` to the store's (RocksDB's
  // id of that database): false (nothing kept, nothing changed) when the
  // layer never spilled. Otherwise the layer is empty afterwards (as after
  // Clear), and a store that failed to be kept is removed.
  Result<bool> Keep(std::string* identity);
  // Takes the store a Keep left in spill_dir as the layer, of `size` keys
  // (which the keeper recorded): reads nothing of it. kNotFound when no
  // store is there; kCorruption when the store there is not the one of
  // `identity` (a store made since); RocksDB's errors for one it cannot open.
  Status Reopen(size_t size, std::string_view identity);
  // Room in the front for `keys` more keys of about `key_bytes` bytes each
  // (before a load, or a commit of many changes), or for as many as fit its
  // half of the budget with what it holds; never past it.
  void Reserve(size_t keys, int64_t key_bytes = 16);
  size_t size() const { return size_; }
  int64_t memory_bytes() const { return memory_bytes_; }
  bool spilled() const { return store_ != nullptr; }
  // How many times the front was written to the store.
  int64_t spills() const { return spills_; }
  // Bytes in memory: the front, and the store's budget once it is open.
  int64_t bytes() const;

 private:
  // Front entries: a location whose file id carries kStored when the store
  // holds the key; the file id kGone for an erased key.
  static constexpr uint32_t kStored = 0x80000000u, kFileBits = 0x7FFFFFFFu;
  static constexpr uint32_t kGone = kFileBits;
  static bool Live(RowLocation e) { return (e.file & kFileBits) != kGone; }
  static bool Stored(RowLocation e) { return (e.file & kStored) != 0; }
  static RowLocation Plain(RowLocation e) { return {e.file & kFileBits, e.pos}; }

  // A location as the store holds it: u32 file id, i64 position.
  static std::string Encode(RowLocation at);
  Status Decode(std::string_view value, RowLocation* at) const;
  // The store's location of the key, if any (none without a store).
  Result<std::optional<RowLocation>> StoreGet(std::string_view key) const;
  // The key's front entry, read from the store into the front when missing
  // (a gone entry when the key has no location).
  Result<RowLocation*> Entry(std::string_view key, uint64_t hash);
  // The location a front entry says.
  static std::optional<RowLocation> Location(RowLocation e) {
    return Live(e) ? std::optional<RowLocation>(Plain(e)) : std::nullopt;
  }
  // FindSorted of keys that are few among the store's.
  Status FindSparse(const KeyAt& key_at, const std::vector<uint64_t>& hashes,
                    const std::function<void(size_t, std::optional<RowLocation>)>& fn) const;
  // The front's entry of key_at(i), prefetching the slot kPrefetchAhead keys
  // on.
  const RowLocation* FrontFind(std::string_view key, const std::vector<uint64_t>& hashes,
                               size_t i) const;
  // Spills the front when one more key of `key_bytes` would take it past
  // its half of the budget (its slots and arena growing). A failed spill
  // breaks the layer until Clear.
  Status MakeRoom(size_t key_bytes);
  bool NeedsRoom(size_t key_bytes) const;
  Status Spill();

  KeyTable front_;
  std::unique_ptr<state::SpillStore> store_;
  int64_t memory_bytes_;
  int64_t front_limit_;
  std::string spill_dir_;
  size_t size_ = 0;
  int64_t spills_ = 0;
  uint64_t version_ = 0;
  Status broken_;  // why a spill failed
};

template <typename Fn>
Status CommittedKeys::ForEach(Fn&& fn) const {
  RETURN_IF_ERROR(broken_);
  if (store_) {
    // The store's keys the front lacks (the front's are newer), their front
    // slots prefetched a batch at a time (a probe of a large front is a
    // cache miss, and a store holds millions of keys).
    PrefetchingBatch batch(front_, [&](std::string_view key, RowLocation at, uint64_t hash) {
      if (front_.Find(key, hash) == nullptr) fn(key, at);
    });
    auto cursor = store_->Scan(std::string(), std::string());
    for (; cursor->Valid(); cursor->Next()) {
      RowLocation at;
      RETURN_IF_ERROR(Decode(cursor->value(), &at));
      if (front_.empty()) {
        fn(cursor->key(), at);  // (the front stays empty: fn changes nothing)
      } else {
        batch.Add(cursor->key(), at);
      }
    }
    RETURN_IF_ERROR(cursor->status());
    batch.Flush();
  }
  front_.ForEach([&](std::string_view key, const RowLocation& e) {
    if (Live(e)) fn(key, Plain(e));
  });
  return Status::OK();
}

}  // namespace sluice::operators
