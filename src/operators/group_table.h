// GroupTable: one window's groups, from a group key's bytes to a value (the
// window operator's accumulators, window_aggregate.h), hashed.
//
// A row finds its group with one probe of a compact slot array and one read
// of the entry, where an ordered tree of string keys read a node (a cache
// miss, at hundreds of thousands of groups) per level and allocated one per
// group. Order is made only when asked for: Sorted() gives the live entries
// in the keys' byte order (the order of the spill store and of the emitted
// rows), so a window is sorted once, when it is scanned, not on every row.
//
// Slots: open addressing with linear probing, 8 bytes each (the low 32 bits
// of the key's hash, then the entry's number + 1; 0 is empty), filled to at
// most 3/4. Erase moves later slots of the probe run back (no tombstones)
// and reuses the entry's number. Entries live in chunks that double in size,
// so an entry stays at its address until it is erased: a caller may hold one
// while it inserts others. An erased entry is not live (its value reset)
// until a later insert reuses it. The hash is seeded per table
// (key_table.h NewTableSeed).
//
// V must be default-constructible and movable. Not thread-safe.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "operators/key_table.h"

namespace sluice::operators {

template <typename V>
class GroupTable {
 public:
  struct Entry {
    std::string key;
    V value;
    bool live = false;
  };

  GroupTable() : seed_(NewTableSeed()) {}
  // With a given hash seed: the same slots run after run (tests).
  explicit GroupTable(uint64_t seed) : seed_(seed) {}
  // A moved-from table is empty.
  GroupTable(GroupTable&& other) noexcept
      : slots_(std::move(other.slots_)),
        chunks_(std::move(other.chunks_)),
        free_(std::move(other.free_)),
        next_id_(std::exchange(other.next_id_, 0)),
        size_(std::exchange(other.size_, 0)),
        seed_(other.seed_) {
    other.slots_.clear();
    other.chunks_.clear();
    other.free_.clear();
  }
  GroupTable& operator=(GroupTable&& other) noexcept {
    if (this != &other) {
      GroupTable moved(std::move(other));
      std::swap(slots_, moved.slots_);
      std::swap(chunks_, moved.chunks_);
      std::swap(free_, moved.free_);
      std::swap(next_id_, moved.next_id_);
      std::swap(size_, moved.size_);
      std::swap(seed_, moved.seed_);
    }
    return *this;
  }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

  Entry* Find(std::string_view key) {
    if (size_ == 0) return nullptr;
    uint64_t slot = slots_[Probe(key, SeededHash(seed_, key))];
    return slot == 0 ? nullptr : &At(Id(slot));
  }

  // The key's entry and false when it is there (unchanged), else a new live
  // entry holding `value` and true.
  std::pair<Entry*, bool> Insert(std::string_view key, V&& value) {
    uint64_t hash = SeededHash(seed_, key);
    if ((size_ + 1) * 4 > slots_.size() * 3) Grow();
    size_t i = Probe(key, hash);
    if (slots_[i] != 0) return {&At(Id(slots_[i])), false};
    uint32_t id = NewId();
    Entry& e = At(id);
    e.key.assign(key);
    e.value = std::move(value);
    e.live = true;
    slots_[i] = (hash << 32) | (uint64_t{id} + 1);
    ++size_;
    return {&e, true};
  }

  // Whether the key was there.
  bool Erase(std::string_view key) {
    if (size_ == 0) return false;
    size_t hole = Probe(key, SeededHash(seed_, key));
    if (slots_[hole] == 0) return false;
    uint32_t id = Id(slots_[hole]);
    Entry& e = At(id);
    e.live = false;
    e.value = V();
    std::string().swap(e.key);  // (a long key's bytes)
    free_.push_back(id);
    // Later slots of the run move back into the hole unless their home slot
    // lies cyclically after the hole (they would be unreachable from it).
    const size_t mask = slots_.size() - 1;
    for (size_t j = (hole + 1) & mask; slots_[j] != 0; j = (j + 1) & mask) {
      size_t home = Home(slots_[j]) & mask;
      bool stays = hole <= j ? (hole < home && home <= j) : (hole < home || home <= j);
      if (stays) continue;
      slots_[hole] = slots_[j];
      hole = j;
    }
    slots_[hole] = 0;
    --size_;
    return true;
  }

  // fn(Entry&) for every live entry, in no order; fn must not insert (it
  // may erase the entry it is given).
  template <typename Fn>
  void ForEach(Fn&& fn) {
    for (uint32_t id = 0; id < next_id_; ++id) {
      Entry& e = At(id);
      if (e.live) fn(e);
    }
  }

  // The live entries in their keys' byte order.
  std::vector<Entry*> Sorted() {
    std::vector<Entry*> out;
    out.reserve(size_);
    ForEach([&](Entry& e) { out.push_back(&e); });
    SortByKey(&out);
    return out;
  }

  // Sorts entries (of any tables) in their keys' byte order (key_table.h
  // SortByKeyPrefix).
  static void SortByKey(std::vector<Entry*>* entries) {
    SortByKeyPrefix(entries, [](const Entry* e) { return std::string_view(e->key); });
  }

  // Bytes a table of `entries` entries holds per entry (its entry and its
  // share of the slots) beside the key bytes and what V holds.
  static constexpr int64_t kBytesPerEntry = static_cast<int64_t>(sizeof(Entry)) + 16;

 private:
  static uint32_t Id(uint64_t slot) { return static_cast<uint32_t>(slot) - 1; }
  static uint32_t Home(uint64_t slot) { return static_cast<uint32_t>(slot >> 32); }

  // Chunk c holds entries 2^c - 1 .. 2^(c+1) - 2.
  Entry& At(uint32_t id) const {
    uint64_t n = uint64_t{id} + 1;
    int chunk = static_cast<int>(std::bit_width(n)) - 1;
    return chunks_[chunk][n - (uint64_t{1} << chunk)];
  }

  uint32_t NewId() {
    if (!free_.empty()) {
      uint32_t id = free_.back();
      free_.pop_back();
      return id;
    }
    uint32_t id = next_id_++;
    if (static_cast<size_t>(std::bit_width(uint64_t{id} + 1)) > chunks_.size()) {
      chunks_.push_back(std::make_unique<Entry[]>(size_t{1} << chunks_.size()));
    }
    return id;
  }

  // The slot holding `key`, or the empty slot where it would go.
  size_t Probe(std::string_view key, uint64_t hash) const {
    const size_t mask = slots_.size() - 1;
    const uint32_t home = static_cast<uint32_t>(hash);
    for (size_t i = home & mask;; i = (i + 1) & mask) {
      uint64_t slot = slots_[i];
      if (slot == 0) return i;
      if (Home(slot) == home && At(Id(slot)).key == key) return i;
    }
  }

  void Grow() {
    std::vector<uint64_t> old = std::move(slots_);
    slots_.assign(std::max<size_t>(4, old.size() * 2), 0);
    const size_t mask = slots_.size() - 1;
    for (uint64_t slot : old) {
      if (slot == 0) continue;
      size_t i = Home(slot) & mask;
      while (slots_[i] != 0) i = (i + 1) & mask;
      slots_[i] = slot;
    }
  }

  std::vector<uint64_t> slots_;  // a power of two of them, or none
  std::vector<std::unique_ptr<Entry[]>> chunks_;
  std::vector<uint32_t> free_;  // erased entries' numbers
  uint32_t next_id_ = 0;
  size_t size_ = 0;
  uint64_t seed_;
};

}  // namespace sluice::operators
