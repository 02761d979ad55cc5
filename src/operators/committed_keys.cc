#include "operators/committed_keys.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <vector>

namespace sluice::operators {

namespace {
// A spill of at least this many keys is written as a sorted run (a table
// file the store takes in: no memtable inserts, no flush); a smaller one in
// write batches.
constexpr size_t kSortedRun = 256;
// FindSorted reads the store in order when it holds at most this many keys
// for each key asked for; its cursor steps up to kSteps keys to the next
// key asked for, and seeks past that. (Sparser keys cost a cursor more
// steps and seeks in every run than batched point reads cost: one in 50
// keys read 5-20 % faster by point reads, bench/README.md "Upserts".)
constexpr size_t kDenseRatio = 4;
constexpr int kSteps = 16;
// Keys read from the store in one batch of point reads.
constexpr size_t kGetBatch = 256;
}  // namespace

CommittedKeys::CommittedKeys(int64_t memory_bytes, std::string spill_dir)
    : memory_bytes_(memory_bytes),
      front_limit_(memory_bytes > 0 ? memory_bytes / 2 : std::numeric_limits<int64_t>::max()),
      spill_dir_(std::move(spill_dir)) {}

CommittedKeys::~CommittedKeys() = default;

std::string CommittedKeys::Encode(RowLocation at) {
  std::string v(sizeof(at.file) + sizeof(at.pos), '\0');
  std::memcpy(v.data(), &at.file, sizeof(at.file));
  std::memcpy(v.data() + sizeof(at.file), &at.pos, sizeof(at.pos));
  return v;
}

Status CommittedKeys::Decode(std::string_view value, RowLocation* at) const {
  if (value.size() != sizeof(at->file) + sizeof(at->pos)) {
    return Status::Corruption("key index store {}: a location of {} bytes", store_->dir(),
                              value.size());
  }
  std::memcpy(&at->file, value.data(), sizeof(at->file));
  std::memcpy(&at->pos, value.data() + sizeof(at->file), sizeof(at->pos));
  return Status::OK();
}

Result<std::optional<RowLocation>> CommittedKeys::StoreGet(std::string_view key) const {
  RETURN_IF_ERROR(broken_);
  if (!store_) return std::optional<RowLocation>();
  std::string value;
  ASSIGN_OR_RETURN(bool found, store_->Get(key, &value));
  if (!found) return std::optional<RowLocation>();
  RowLocation at;
  RETURN_IF_ERROR(Decode(value, &at));
  return std::optional<RowLocation>(at);
}

Result<RowLocation*> CommittedKeys::Entry(std::string_view key, uint64_t hash) {
  RETURN_IF_ERROR(broken_);
  // (In memory with room: one probe finds the key or where it goes.)
  if (!store_ && !NeedsRoom(key.size())) return front_.Insert(key, {kGone, -1}, hash).first;
  // (A key the front holds needs no room: it spills nothing.)
  if (RowLocation* e = front_.Find(key, hash)) return e;
  RowLocation e{kGone, -1};
  ASSIGN_OR_RETURN(auto stored, StoreGet(key));
  if (stored) e = {stored->file | kStored, stored->pos};
  RETURN_IF_ERROR(MakeRoom(key.size()));
  return front_.Insert(key, e, hash).first;
}

const RowLocation* CommittedKeys::FrontFind(std::string_view key,
                                            const std::vector<uint64_t>& hashes, size_t i) const {
  if (i + kPrefetchAhead < hashes.size()) front_.Prefetch(hashes[i + kPrefetchAhead]);
  return front_.Find(key, hashes[i]);
}

Status CommittedKeys::FindSparse(
    const KeyAt& key_at, const std::vector<uint64_t>& hashes,
    const std::function<void(size_t, std::optional<RowLocation>)>& fn) const {
  // Point reads (whose bloom filters skip the runs that lack a key; a
  // cursor would seek in every run), batched: the keys the front lacks, a
  // batch at a time.
  std::vector<size_t> missing;
  std::vector<std::string_view> batch;
  for (size_t begin = 0; begin < hashes.size(); begin += kGetBatch) {
    const size_t end = std::min(hashes.size(), begin + kGetBatch);
    missing.clear();
    batch.clear();
    for (size_t i = begin; i < end; ++i) {
      const std::string_view key = key_at(i);
      if (const RowLocation* e = FrontFind(key, hashes, i)) {
        fn(i, Location(*e));
      } else {
        missing.push_back(i);
        batch.push_back(key);
      }
    }
    RETURN_IF_ERROR(store_->GetSorted(batch, [&](size_t j, const std::string_view* value) {
      std::optional<RowLocation> at;
      if (value != nullptr) RETURN_IF_ERROR(Decode(*value, &at.emplace()));
      fn(missing[j], at);
      return Status::OK();
    }));
  }
  return Status::OK();
}

Status CommittedKeys::FindSorted(
    const std::vector<std::string_view>& keys, const std::vector<uint64_t>& hashes,
    const std::function<void(size_t, std::optional<RowLocation>)>& fn) const {
  if (hashes.size() != keys.size()) {
    return Status::Internal("key index: {} hashes for {} keys", hashes.size(), keys.size());
  }
  return FindSorted([&](size_t i) { return keys[i]; }, hashes, fn);
}

Status CommittedKeys::FindSorted(
    const KeyAt& key_at, const std::vector<uint64_t>& hashes,
    const std::function<void(size_t, std::optional<RowLocation>)>& fn) const {
  RETURN_IF_ERROR(broken_);
  const size_t n = hashes.size();
  for (size_t i = 0; i < kPrefetchAhead && i < n; ++i) front_.Prefetch(hashes[i]);
  if (!store_) {
    for (size_t i = 0; i < n; ++i) {
      const RowLocation* e = FrontFind(key_at(i), hashes, i);
      fn(i, e == nullptr ? std::nullopt : Location(*e));
    }
    return Status::OK();
  }
  if (n * kDenseRatio < size_) return FindSparse(key_at, hashes, fn);
  std::unique_ptr<state::SpillStore::Cursor> cursor;
  for (size_t i = 0; i < n; ++i) {
    const std::string_view key = key_at(i);
    if (const RowLocation* e = FrontFind(key, hashes, i)) {
      fn(i, Location(*e));
      continue;
    }
    if (cursor == nullptr) {
      cursor = store_->Scan(std::string(key), std::string());
    } else {
      int steps = 0;
      while (cursor->Valid() && cursor->key() < key && ++steps <= kSteps) cursor->Next();
      if (cursor->Valid() && cursor->key() < key) cursor->Seek(key);
    }
    RETURN_IF_ERROR(cursor->status());
    if (!cursor->Valid() || cursor->key() != key) {
      fn(i, std::nullopt);
      continue;
    }
    RowLocation at;
    RETURN_IF_ERROR(Decode(cursor->value(), &at));
    fn(i, at);
  }
  return Status::OK();
}

Status CommittedKeys::Put(std::string_view key, uint64_t hash, std::optional<RowLocation> to,
                          bool was_live) {
  RETURN_IF_ERROR(broken_);
  // (Room first, unless the front holds the key: a spill leaves every key
  // it takes out in the store exactly when it is live, so a key the front
  // then lacks is as `was_live` says.)
  if (NeedsRoom(key.size()) && front_.Find(key, hash) == nullptr) {
    RETURN_IF_ERROR(MakeRoom(key.size()));
  }
  ++version_;
  auto [e, added] = front_.Insert(key, {kGone, -1}, hash);
  if (added && was_live && store_) e->file |= kStored;
  const bool live = added ? was_live : Live(*e);
  if (added && !live && !to) {  // (nothing to remember of a key never there)
    front_.Erase(key, hash);
  } else if (to) {
    if (!live) ++size_;
    *e = {to->file | (e->file & kStored), to->pos};
  } else if (live) {
    --size_;
    if (Stored(*e)) {
      *e = {kGone | kStored, -1};
    } else {
      front_.Erase(key, hash);
    }
  }
  return Status::OK();
}

bool CommittedKeys::NeedsRoom(size_t key_bytes) const {
  return !front_.empty() && front_.bytes() + front_.GrowthBytes(key_bytes) > front_limit_;
}

Status CommittedKeys::MakeRoom(size_t key_bytes) {
  RETURN_IF_ERROR(broken_);
  if (!NeedsRoom(key_bytes)) return Status::OK();
  Status st = Spill();
  // (Some of the front's entries may be in the store now, unmarked: an
  // erase of one would leave the store's copy.)
  if (!st.ok()) broken_ = st.WithContextF("key index store {}: a spill failed", spill_dir_);
  return st;
}

Result<std::optional<RowLocation>> CommittedKeys::Find(std::string_view key, uint64_t hash) const {
  RETURN_IF_ERROR(broken_);
  if (const RowLocation* e = front_.Find(key, hash)) {
    return Live(*e) ? std::optional<RowLocation>(Plain(*e)) : std::nullopt;
  }
  return StoreGet(key);
}

Result<std::optional<RowLocation>> CommittedKeys::Fetch(std::string_view key, uint64_t hash) {
  if (!store_) return Find(key, hash);
  ASSIGN_OR_RETURN(RowLocation * e, Entry(key, hash));
  return Live(*e) ? std::optional<RowLocation>(Plain(*e)) : std::nullopt;
}

Status CommittedKeys::Assign(std::string_view key, uint64_t hash, RowLocation at,
                             std::optional<RowLocation>* was) {
  ++version_;
  ASSIGN_OR_RETURN(RowLocation * e, Entry(key, hash));
  if (was != nullptr) *was = Location(*e);
  if (!Live(*e)) ++size_;
  *e = {at.file | (e->file & kStored), at.pos};
  return Status::OK();
}

Result<bool> CommittedKeys::Add(std::string_view key, uint64_t hash, RowLocation at,
                                RowLocation* existing) {
  ++version_;
  ASSIGN_OR_RETURN(RowLocation * e, Entry(key, hash));
  if (Live(*e)) {
    if (existing != nullptr) *existing = Plain(*e);
    return false;
  }
  ++size_;
  *e = {at.file | (e->file & kStored), at.pos};
  return true;
}

Status CommittedKeys::AddNew(std::string_view key, uint64_t hash, RowLocation at,
                             std::optional<RowLocation>* was) {
  ++version_;
  if (was != nullptr) was->reset();
  RETURN_IF_ERROR(MakeRoom(key.size()));
  auto [e, added] = front_.Insert(key, {at.file, at.pos}, hash);
  if (added) {
    ++size_;
    return Status::OK();
  }
  // (Known after all: the caller's promise did not hold.)
  if (was != nullptr) *was = Location(*e);
  if (!Live(*e)) ++size_;
  *e = {at.file | (e->file & kStored), at.pos};
  return Status::OK();
}

Status CommittedKeys::Erase(std::string_view key, uint64_t hash, std::optional<RowLocation>* was) {
  ++version_;
  if (was != nullptr) was->reset();
  RETURN_IF_ERROR(broken_);
  RowLocation* e = front_.Find(key, hash);
  if (e == nullptr && !store_) return Status::OK();
  if (e == nullptr) {
    ASSIGN_OR_RETURN(auto stored, StoreGet(key));
    if (!stored) return Status::OK();
    RETURN_IF_ERROR(MakeRoom(key.size()));
    front_.Insert(key, {kGone | kStored, -1}, hash);
    --size_;
    if (was != nullptr) *was = stored;
    return Status::OK();
  }
  if (!Live(*e)) return Status::OK();
  if (was != nullptr) *was = Plain(*e);
  --size_;
  if (Stored(*e)) {
    *e = {kGone | kStored, -1};
  } else {
    front_.Erase(key, hash);
  }
  return Status::OK();
}

Status CommittedKeys::Spill() {
  if (!store_) {
    ASSIGN_OR_RETURN(store_, state::SpillStore::Open(spill_dir_, memory_bytes_ / 2));
  }
  // In key order: a sorted run must be; and RocksDB's memtable inserts a key
  // after the last one cheaply, a random one with a search of its skip list
  // (three quarters of a spill's time, unsorted).
  struct Spilled {
    std::string_view key;
    RowLocation e;
  };
  Prefixed<Spilled> entries;
  entries.reserve(front_.size());
  front_.ForEach([&](std::string_view key, const RowLocation& e) {
    if (Live(e) || Stored(e)) entries.emplace_back(KeyPrefix(key), Spilled{key, e});
  });
  SortPrefixed(&entries, [](const Spilled& s) { return s.key; });
  if (entries.size() >= kSortedRun) {
    RETURN_IF_ERROR(store_->WriteSorted(entries.size(), [&](size_t i, std::string* buffer) {
      const Spilled& s = entries[i].second;
      state::SpillStore::SortedEntry out{s.key, std::nullopt};
      if (Live(s.e)) {
        *buffer = Encode(Plain(s.e));
        out.value = *buffer;
      }
      return out;
    }));
  } else {
    for (const auto& [prefix, s] : entries) {
      if (Live(s.e)) {
        store_->Put(s.key, Encode(Plain(s.e)));
      } else {
        store_->Delete(s.key);
      }
    }
    RETURN_IF_ERROR(store_->Flush());
  }
  // (The front fills up again: its room is kept, unless it is past its
  // half, which would spill at every key: a table of one key too large.)
  front_.Clear(/*keep_room=*/front_.bytes() <= front_limit_);
  ++spills_;
  return Status::OK();
}

void CommittedKeys::Clear() {
  ++version_;
  broken_ = Status::OK();
  front_.Clear();
  store_.reset();
  size_ = 0;
}

Result<bool> CommittedKeys::Keep(std::string* identity) {
  if (!store_) return false;
  Status st = broken_;
  if (st.ok() && !front_.empty()) st = Spill();
  if (st.ok()) {
    auto id = store_->Identity();
    st = id.status();
    if (st.ok()) *identity = std::move(*id);
  }
  if (st.ok()) st = state::SpillStore::Keep(std::move(store_));
  Clear();  // (a store not kept is removed with it)
  RETURN_IF_ERROR(st);
  return true;
}

Status CommittedKeys::Reopen(size_t size, std::string_view identity) {
  Clear();
  ASSIGN_OR_RETURN(auto store, state::SpillStore::Reopen(spill_dir_, memory_bytes_ / 2));
  ASSIGN_OR_RETURN(std::string id, store->Identity());
  if (id != identity) {
    return Status::Corruption("key index store {}: its identity {} is not the kept store's {}",
                              spill_dir_, id, identity);
  }
  store_ = std::move(store);
  size_ = size;
  return Status::OK();
}

void CommittedKeys::Reserve(size_t keys, int64_t key_bytes) {
  // (Room for as many as the front's half of the budget holds, counting the
  // arena it keeps, when that is fewer: the front then grows in one step
  // towards where it spills, not by doubling, each a rehash of every key
  // into fresh pages; and never past its half.)
  front_.ReserveWithin(front_.size() + keys, front_limit_, std::max<int64_t>(key_bytes, 1));
}

int64_t CommittedKeys::bytes() const { return front_.bytes() + (store_ ? memory_bytes_ / 2 : 0); }

}  // namespace sluice::operators
