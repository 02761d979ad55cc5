// KeyTable: a compact hash map from byte-string keys to a RowLocation, for
// the primary-key index (docs/upserts.md), which holds millions of keys.
//
// Open addressing with linear probing over 32-byte slots (the key's hash,
// where its bytes are, the location), the keys' bytes in one arena. About
// 9 + 32 / 0.6 bytes a BIGINT key on average, where a
// std::unordered_map<std::string, RowLocation> took about 100 (a node, a
// bucket pointer and a string object a key), and one cache miss to find a
// key instead of three.
//
// Every table hashes with a seed of its own (a process's random seed and a
// counter): entries taken from one table in its slot order (ForEach), or read
// back in the order a table of another process wrote them, and inserted into
// another would otherwise arrive in the other's hash order and pile up in
// long probe runs while it grows.
//
// Erase moves later slots of the probe run back (no tombstones); the arena
// bytes of erased keys are reclaimed once they outweigh the live ones.
// Pointers Find and Insert return stay valid until the next Insert or Erase.
// Not thread-safe.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/hash.h"

namespace sluice::operators {

// A hash seed no other table of this process has: the process's random seed
// and a counter (see above; GroupTable hashes with one too).
uint64_t NewTableSeed();
// The hash of `key` under `seed`; never 0. Inline: every probe of a group
// or key table hashes, and a key is a few bytes.
inline uint64_t SeededHash(uint64_t seed, std::string_view key) {
  const char* p = key.data();
  const size_t n = key.size();
  uint64_t h = seed ^ n;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t v;
    std::memcpy(&v, p + i, 8);
    h = SplitMix64(h ^ v);
  }
  // The last n % 8 bytes, little-endian, by loads of 4, 2 and 1 bytes (a
  // memcpy of a variable length is a call into the C library).
  uint64_t tail = 0;
  const size_t rest = n - i;
  int shift = 0;
  if (rest & 4) {
    uint32_t v;
    std::memcpy(&v, p + i, 4);
    tail = v;
    i += 4;
    shift = 32;
  }
  if (rest & 2) {
    uint16_t v;
    std::memcpy(&v, p + i, 2);
    tail |= uint64_t{v} << shift;
    i += 2;
    shift += 16;
  }
  if (rest & 1) tail |= uint64_t{static_cast<uint8_t>(p[i])} << shift;
  h = SplitMix64(h ^ tail ^ (uint64_t{0xff} << 56));
  return h == 0 ? 1 : h;
}

// SeededHash of the key AppendValueKey builds for a valid value of kWidth
// (4 or 8) bytes, a byte 1 then the value's bytes (little-endian), computed
// from the value in a register: a loop that stored each row's key bytes to
// hash them loaded them back across the stores, and every row stalled on it.
template <int kWidth>
inline uint64_t SeededHashOfValidValue(uint64_t seed, uint64_t value) {
  static_assert(kWidth == 4 || kWidth == 8);
  static_assert(std::endian::native == std::endian::little, "SeededHash loads little-endian words");
  constexpr uint64_t kLastWord = uint64_t{0xff} << 56;  // as SeededHash marks its tail
  uint64_t h;
  if constexpr (kWidth == 8) {
    h = SplitMix64((seed ^ 9) ^ (1 | (value << 8)));  // bytes 0-7: the valid byte, 7 of the value's
    h = SplitMix64(h ^ (value >> 56) ^ kLastWord);    // the tail: its last byte
  } else {
    h = SplitMix64((seed ^ 5) ^ (1 | ((value & 0xffffffff) << 8)) ^ kLastWord);  // all a tail
  }
  return h == 0 ? 1 : h;
}

struct RowLocation {
  uint32_t file = 0;  // PrimaryKeyIndex::FilePath(file)
  int64_t pos = 0;
  bool operator==(const RowLocation&) const = default;
};

class KeyTable {
 public:
  KeyTable();
  KeyTable(const KeyTable&) = default;
  KeyTable& operator=(const KeyTable&) = default;
  // A moved-from table is empty.
  KeyTable(KeyTable&& other) noexcept;
  KeyTable& operator=(KeyTable&& other) noexcept;
  RowLocation* Find(std::string_view key) { return Find(key, HashOf(key)); }
  const RowLocation* Find(std::string_view key) const {
    return const_cast<KeyTable*>(this)->Find(key);
  }
  // The key's location and false when it is present (unchanged), else a new
  // entry holding `at` and true.
  std::pair<RowLocation*, bool> Insert(std::string_view key, RowLocation at) {
    return Insert(key, at, HashOf(key));
  }
  // Whether the key was there.
  bool Erase(std::string_view key) { return Erase(key, HashOf(key)); }

  // The same with the key's hash taken first: a loop over many keys hashes
  // a batch of them and prefetches their slots, so that their memory reads
  // overlap instead of following one another (a random read of a large
  // table is a cache and TLB miss: a few hundred nanoseconds here).
  uint64_t HashOf(std::string_view key) const;
  void Prefetch(uint64_t hash) const {
    if (!slots_.empty()) __builtin_prefetch(&slots_[hash & (slots_.size() - 1)]);
  }
  RowLocation* Find(std::string_view key, uint64_t hash);
  const RowLocation* Find(std::string_view key, uint64_t hash) const {
    return const_cast<KeyTable*>(this)->Find(key, hash);
  }
  std::pair<RowLocation*, bool> Insert(std::string_view key, RowLocation at, uint64_t hash);
  bool Erase(std::string_view key, uint64_t hash);
  // Room for `keys` keys without growing.
  void Reserve(size_t keys);
  // The bytes of the slots Reserve(keys) gives a new table.
  static int64_t SlotBytesFor(size_t keys);
  // Room for `keys` keys, or for as many as keep the table within `bytes`:
  // its slots, and its arena grown by doublings from what it holds to make
  // room for `key_bytes` more bytes for each key past those it holds. Never
  // grows the table past `bytes` (a table already past it is left as it is).
  void ReserveWithin(size_t keys, int64_t bytes, int64_t key_bytes);
  // The arena bytes its keys take (a long key's length too), for an
  // estimate of the next keys'.
  int64_t key_bytes() const { return static_cast<int64_t>(arena_.size() - garbage_); }
  // Empties the table; `keep_room`: keeps its slots and arena allocated (a
  // table that fills up again soon), else frees them.
  void Clear(bool keep_room = false);
  // Bytes the table grows by when a key of `key_bytes` that is not there is
  // inserted next (its slots doubling, its arena reallocated).
  int64_t GrowthBytes(size_t key_bytes) const;
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  // Bytes held: slots and arena.
  int64_t bytes() const {
    return static_cast<int64_t>(slots_.size() * sizeof(Slot) + arena_.capacity());
  }
  // Bytes the entries need: the slots their number takes and their keys'
  // bytes (not the room a cleared table keeps).
  int64_t used_bytes() const { return SlotBytesFor(size_) + static_cast<int64_t>(arena_.size()); }

  // How far entries sit from their hash's slot, on average (0: all at home).
  double MeanDisplacement() const;

  // fn(std::string_view key, RowLocation& at) for every entry, in no order;
  // fn must not insert or erase.
  template <typename Fn>
  void ForEach(Fn&& fn) {
    for (Slot& s : slots_) {
      if (s.hash != 0) fn(KeyOf(s), s.at);
    }
  }
  template <typename Fn>
  void ForEach(Fn&& fn) const {
    for (const Slot& s : slots_) {
      if (s.hash != 0) fn(KeyOf(s), static_cast<const RowLocation&>(s.at));
    }
  }

 private:
  struct Slot {
    uint64_t hash = 0;  // 0: empty (a key's hash is never 0)
    uint64_t ref = 0;   // arena offset << 24 | length (kLong: a u64 length first)
    RowLocation at;
  };
  // A zeroed array of slots. A large one is a huge-page block
  // (common/huge_pages.h): one page fault per 2 MiB instead of per 4 KiB,
  // and fewer TLB misses on random probes.
  class Slots {
   public:
    Slots() = default;
    explicit Slots(size_t n);
    Slots(const Slots& other);
    Slots& operator=(const Slots& other);
    Slots(Slots&& other) noexcept { Swap(other); }
    Slots& operator=(Slots&& other) noexcept {
      Slots moved(std::move(other));
      Swap(moved);
      return *this;
    }
    ~Slots();
    size_t size() const { return n_; }
    bool empty() const { return n_ == 0; }
    void Zero() {
      if (n_ > 0) std::memset(static_cast<void*>(data_), 0, n_ * sizeof(Slot));
    }
    Slot& operator[](size_t i) { return data_[i]; }
    const Slot& operator[](size_t i) const { return data_[i]; }
    Slot* begin() { return data_; }
    Slot* end() { return data_ + n_; }
    const Slot* begin() const { return data_; }
    const Slot* end() const { return data_ + n_; }

   private:
    void Swap(Slots& other) noexcept {
      std::swap(data_, other.data_);
      std::swap(n_, other.n_);
      std::swap(mapped_, other.mapped_);
    }
    Slot* data_ = nullptr;
    size_t n_ = 0;
    size_t mapped_ = 0;  // the huge-page block's bytes at data_ (0: from calloc)
  };
  static constexpr uint64_t kLong = (uint64_t{1} << 24) - 1;
  std::string_view KeyOf(const Slot& s) const;
  // Appends `key` to `arena`: its ref.
  static uint64_t Append(std::string* arena, std::string_view key);
  // The slot holding `key`, or the empty slot where it would go.
  size_t Probe(std::string_view key, uint64_t hash) const;
  void Grow(size_t slots);
  void CompactArena();

  Slots slots_;  // a power of two of them, or none
  std::string arena_;
  size_t size_ = 0;
  size_t garbage_ = 0;  // arena bytes of erased keys
  uint64_t seed_;
};

// Calls fn(key, at, hash) for each (key, at) added, `hash` being the key's
// hash in `into` (a KeyTable, or anything with its HashOf and Prefetch):
// kBatch keys at a time, their slots in `into` prefetched first, so that
// their memory reads overlap. The keys are copied (a cursor's key lives only
// until it moves). Flush before the end; fn may change `into`.
template <typename Into, typename Fn>
class PrefetchingBatch {
 public:
  static constexpr size_t kBatch = 16;
  PrefetchingBatch(const Into& into, Fn fn) : into_(into), fn_(std::move(fn)) {}
  void Add(std::string_view key, RowLocation at) {
    keys_[n_].assign(key);
    ats_[n_] = at;
    if (++n_ == kBatch) Flush();
  }
  void Flush() {
    for (size_t i = 0; i < n_; ++i) {
      hashes_[i] = into_.HashOf(keys_[i]);
      into_.Prefetch(hashes_[i]);
    }
    for (size_t i = 0; i < n_; ++i) fn_(std::string_view(keys_[i]), ats_[i], hashes_[i]);
    n_ = 0;
  }

 private:
  const Into& into_;
  Fn fn_;
  std::string keys_[kBatch];
  RowLocation ats_[kBatch];
  uint64_t hashes_[kBatch];
  size_t n_ = 0;
};

// PrefetchingBatch over every entry of `from`; fn may change `into`, not
// `from`.
template <typename Into, typename Fn>
void ForEachPrefetching(const KeyTable& from, const Into& into, Fn&& fn) {
  PrefetchingBatch batch(into, std::forward<Fn>(fn));
  from.ForEach([&](std::string_view key, const RowLocation& at) { batch.Add(key, at); });
  batch.Flush();
}

// A key's first 8 bytes as a big-endian number, zero-padded: two keys whose
// prefixes differ compare as their prefixes do (byte order); equal prefixes
// say nothing (compare the keys).
inline uint64_t KeyPrefix(std::string_view key) {
  uint64_t prefix = 0;
  if (!key.empty()) std::memcpy(&prefix, key.data(), key.size() < 8 ? key.size() : 8);
  if constexpr (std::endian::native == std::endian::little) prefix = __builtin_bswap64(prefix);
  return prefix;
}

// Items paired with their keys' prefixes (KeyPrefix), for SortPrefixed.
template <typename T>
using Prefixed = std::vector<std::pair<uint64_t, T>>;

// Sorts `entries` in the byte order of their items' keys (`key_of(item)`, a
// string_view) by the prefixes they are paired with, and by whole keys only
// where those tie: a sort of millions of keys then follows no pointer and
// calls no memcmp for most comparisons.
template <typename T, typename KeyOf>
void SortPrefixed(Prefixed<T>* entries, KeyOf key_of) {
  std::sort(entries->begin(), entries->end(), [&](const auto& a, const auto& b) {
    return a.first != b.first ? a.first < b.first : key_of(a.second) < key_of(b.second);
  });
}

// SortPrefixed for items without their prefixes: a copy paired with them is
// sorted and moved back (a caller that builds its items can pair them at
// once, and spare the copy).
template <typename T, typename KeyOf>
void SortByKeyPrefix(std::vector<T>* items, KeyOf key_of) {
  Prefixed<T> entries;
  entries.reserve(items->size());
  for (T& item : *items) entries.emplace_back(KeyPrefix(key_of(item)), std::move(item));
  SortPrefixed(&entries, key_of);
  for (size_t i = 0; i < entries.size(); ++i) (*items)[i] = std::move(entries[i].second);
}

}  // namespace sluice::operators
