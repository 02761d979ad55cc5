// SpillStore: the on-disk tier of an operator's state (a window operator's
// groups, a primary-key index's keys), a RocksDB database in a local folder
// (docs/state.md "Beyond memory", "The key index").
//
// It is a cache, never the record: the checkpointed state is the state files
// in the warehouse, and a store is rebuilt from them at a start. Open
// therefore wipes the folder, and the destructor removes it. The one
// exception is a store kept by a clean stop (Keep) for the next run to
// Reopen: whoever keeps it also records what it holds, and must make sure a
// store changed since is never taken for a kept one (docs/state.md "The key
// index", kept across a clean restart).
//
// Keys are ordered bytewise. Writes are buffered (Put, Delete, DeleteRange)
// and applied at once by Flush, without a write-ahead log (nothing in it must
// survive a crash), or written as a sorted run (WriteSorted); reads (Get,
// Scan) see only flushed writes.
//
// Memory: `memory_bytes` bounds RocksDB's buffers — two write buffers of a
// quarter each and a block cache of half — plus its index and filter blocks
// (about 1.5 bytes a key, kept in memory so that a miss reads no disk).
//
// Thread-safety: one thread.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace sluice::state {

class SpillStore {
 public:
  static Result<std::unique_ptr<SpillStore>> Open(const std::string& dir, int64_t memory_bytes);
  // Opens the store a Keep left in `dir`, as it was (kNotFound: no folder;
  // RocksDB's errors for a folder that holds no store, or a broken one).
  static Result<std::unique_ptr<SpillStore>> Reopen(const std::string& dir, int64_t memory_bytes);
  // Writes buffered writes and the memtables to table files (synced), closes
  // the store and leaves its folder for Reopen. On an error the store is
  // closed and its folder removed.
  static Status Keep(std::unique_ptr<SpillStore> store);
  // The database's identity: made when the store is created (Open), the
  // same after Reopen, so it tells a kept store from one made since.
  Result<std::string> Identity() const;
  ~SpillStore();
  SpillStore(const SpillStore&) = delete;
  SpillStore& operator=(const SpillStore&) = delete;

  void Put(std::string_view key, std::string_view value);
  void Delete(std::string_view key);
  void DeleteRange(std::string_view begin, std::string_view end);  // [begin, end)
  Status Flush();

  // One entry of a sorted run: a key and its value, or no value (a delete).
  struct SortedEntry {
    std::string_view key;
    std::optional<std::string_view> value;
  };
  // Writes `n` entries, in strictly increasing key order, as one table file
  // that the store then takes in whole (RocksDB's ingestion): no memtable
  // inserts and no flush, for a large run of sorted keys (a spill of many
  // thousands). entry(i, buffer) gives the i-th; a value it returns may
  // point into `buffer`, valid until the next call. Buffered writes are
  // flushed first. Each run costs a file: a few hundred keys are cheaper
  // written by Put and Delete. Keys out of order are an error, and then
  // nothing of the run is written.
  Status WriteSorted(size_t n, const std::function<SortedEntry(size_t, std::string*)>& entry);

  // False when the key is not there.
  Result<bool> Get(std::string_view key, std::string* value) const;
  // Get of each of `keys` (in byte order) in one batch, which probes each
  // run's filters and reads each block once for all of them: fn(i, value of
  // keys[i], or null when it is not there); the first error fn returns
  // stops the calls and is returned.
  Status GetSorted(const std::vector<std::string_view>& keys,
                   const std::function<Status(size_t, const std::string_view*)>& fn) const;

  // The keys in [lower, upper) in order (an empty `upper`: to the last key),
  // as the store held them when the cursor was made (later writes are not
  // seen). A cursor must go before its store.
  class Cursor {
   public:
    virtual ~Cursor() = default;
    virtual bool Valid() const = 0;
    virtual std::string_view key() const = 0;
    virtual std::string_view value() const = 0;
    virtual void Next() = 0;
    // To the first key at or past `target` (not before `lower`).
    virtual void Seek(std::string_view target) = 0;
    virtual Status status() const = 0;
  };
  std::unique_ptr<Cursor> Scan(std::string lower, std::string upper) const;

  const std::string& dir() const { return dir_; }

 private:
  struct Impl;
  SpillStore(std::string dir, std::unique_ptr<Impl> impl);
  // `fresh`: creates the store in an empty folder; else opens the one there.
  static Result<std::unique_ptr<SpillStore>> OpenDb(const std::string& dir, int64_t memory_bytes,
                                                    bool fresh);
  std::string dir_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace sluice::state
