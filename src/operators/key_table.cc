#include "operators/key_table.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <new>
#include <random>
#include <utility>

#include "common/hash.h"
#include "common/huge_pages.h"

namespace sluice::operators {

namespace {

// Slots are filled to at most 3/4 before the table doubles.
bool OverLoad(size_t entries, size_t slots) { return entries * 4 > slots * 3; }

uint64_t Mix(uint64_t h) { return SplitMix64(h); }

std::atomic<uint64_t> tables{0};

uint64_t ProcessSeed() {
  static const uint64_t seed = [] {
    std::random_device random;
    return (uint64_t{random()} << 32) ^ random();
  }();
  return seed;
}

}  // namespace

// Arrays of at least this many bytes are huge-page blocks.
constexpr size_t kMapBytes = size_t{4} << 20;

KeyTable::Slots::Slots(size_t n) : n_(n) {
  size_t bytes = n * sizeof(Slot);
  if (bytes >= kMapBytes) {
    HugeBlock block = MapHugeBlock(bytes);
    data_ = static_cast<Slot*>(block.data);
    mapped_ = block.bytes;
  } else if (n > 0) {
    data_ = static_cast<Slot*>(std::calloc(n, sizeof(Slot)));
    if (data_ == nullptr) throw std::bad_alloc();
  }
}

KeyTable::Slots::Slots(const Slots& other) : Slots(other.n_) {
  if (n_ > 0) std::memcpy(static_cast<void*>(data_), other.data_, n_ * sizeof(Slot));
}

KeyTable::Slots& KeyTable::Slots::operator=(const Slots& other) {
  if (this != &other) {
    Slots copy(other);
    Swap(copy);
  }
  return *this;
}

KeyTable::Slots::~Slots() {
  if (mapped_ > 0) {
    UnmapHugeBlock({data_, mapped_});
  } else {
    std::free(data_);
  }
}

uint64_t NewTableSeed() {
  return Mix(ProcessSeed() ^ (tables.fetch_add(1) * 0x9e3779b97f4a7c15ull));
}

KeyTable::KeyTable() : seed_(NewTableSeed()) {}

KeyTable::KeyTable(KeyTable&& other) noexcept
    : slots_(std::move(other.slots_)),
      arena_(std::move(other.arena_)),
      size_(std::exchange(other.size_, 0)),
      garbage_(std::exchange(other.garbage_, 0)),
      seed_(other.seed_) {
  other.arena_.clear();
}

KeyTable& KeyTable::operator=(KeyTable&& other) noexcept {
  if (this != &other) {
    slots_ = std::move(other.slots_);
    arena_ = std::move(other.arena_);
    other.arena_.clear();
    size_ = std::exchange(other.size_, 0);
    garbage_ = std::exchange(other.garbage_, 0);
    seed_ = other.seed_;
  }
  return *this;
}

uint64_t KeyTable::HashOf(std::string_view key) const { return SeededHash(seed_, key); }

std::string_view KeyTable::KeyOf(const Slot& s) const {
  const char* at = arena_.data() + (s.ref >> 24);
  uint64_t length = s.ref & kLong;
  if (length == kLong) {
    std::memcpy(&length, at, sizeof(length));
    at += sizeof(length);
  }
  return std::string_view(at, length);
}

uint64_t KeyTable::Append(std::string* arena, std::string_view key) {
  uint64_t ref = static_cast<uint64_t>(arena->size()) << 24;
  if (key.size() < kLong) {
    ref |= key.size();
  } else {
    uint64_t length = key.size();
    // (One reallocation at most, as GrowthBytes counts.)
    if (arena->size() + sizeof(length) + key.size() > arena->capacity()) {
      arena->reserve(std::max(arena->capacity() * 2, arena->size() + sizeof(length) + key.size()));
    }
    arena->append(reinterpret_cast<const char*>(&length), sizeof(length));
    ref |= kLong;
  }
  arena->append(key);
  return ref;
}

size_t KeyTable::Probe(std::string_view key, uint64_t hash) const {
  const size_t mask = slots_.size() - 1;
  for (size_t i = hash & mask;; i = (i + 1) & mask) {
    const Slot& s = slots_[i];
    if (s.hash == 0) return i;
    if (s.hash == hash && KeyOf(s) == key) return i;
  }
}

RowLocation* KeyTable::Find(std::string_view key, uint64_t hash) {
  if (size_ == 0) return nullptr;
  Slot& s = slots_[Probe(key, hash)];
  return s.hash == 0 ? nullptr : &s.at;
}

std::pair<RowLocation*, bool> KeyTable::Insert(std::string_view key, RowLocation at,
                                               uint64_t hash) {
  if (OverLoad(size_ + 1, slots_.size())) Grow(std::max<size_t>(16, slots_.size() * 2));
  Slot& s = slots_[Probe(key, hash)];
  if (s.hash != 0) return {&s.at, false};
  s.hash = hash;
  s.ref = Append(&arena_, key);
  s.at = at;
  ++size_;
  return {&s.at, true};
}

bool KeyTable::Erase(std::string_view key, uint64_t hash) {
  if (size_ == 0) return false;
  const size_t mask = slots_.size() - 1;
  size_t hole = Probe(key, hash);
  if (slots_[hole].hash == 0) return false;
  garbage_ += KeyOf(slots_[hole]).size();
  // Later slots of the run move back into the hole unless their home slot
  // lies cyclically after the hole (they would be unreachable from it).
  for (size_t j = (hole + 1) & mask; slots_[j].hash != 0; j = (j + 1) & mask) {
    size_t home = slots_[j].hash & mask;
    bool stays = hole <= j ? (hole < home && home <= j) : (hole < home || home <= j);
    if (stays) continue;
    slots_[hole] = slots_[j];
    hole = j;
  }
  slots_[hole] = Slot{};
  --size_;
  if (garbage_ > (size_t{1} << 20) && garbage_ * 2 > arena_.size()) CompactArena();
  return true;
}

namespace {
// The slots a table of `slots` holds `keys` in (doubled as needed).
size_t SlotsFor(size_t keys, size_t slots) {
  while (OverLoad(keys, slots)) slots *= 2;
  return slots;
}
}  // namespace

void KeyTable::Reserve(size_t keys) {
  size_t slots = SlotsFor(keys, slots_.empty() ? 16 : slots_.size());
  if (slots > slots_.size()) Grow(slots);
}

int64_t KeyTable::SlotBytesFor(size_t keys) {
  return static_cast<int64_t>(SlotsFor(keys, 16) * sizeof(Slot));
}

void KeyTable::ReserveWithin(size_t keys, int64_t bytes, int64_t key_bytes) {
  // The bytes of a table of `slots` filled with as many of the keys as fit
  // its load (OverLoad): the slots, and the arena as held or as those keys
  // grow it, by doublings (as a string grows, and as GrowthBytes counts it:
  // a front that spills when its arena would double must have room for that).
  auto cost = [&](size_t slots) {
    const size_t held = std::min(keys, slots / 4 * 3);
    const int64_t more = held > size_ ? static_cast<int64_t>(held - size_) * key_bytes : 0;
    const int64_t need = static_cast<int64_t>(arena_.size()) + more;
    int64_t arena = std::max<int64_t>(static_cast<int64_t>(arena_.capacity()), 16);
    while (arena < need) arena *= 2;
    return static_cast<int64_t>(slots * sizeof(Slot)) + arena;
  };
  size_t slots = slots_.empty() ? 16 : slots_.size();
  while (OverLoad(keys, slots) && slots < (size_t{1} << 40) && cost(slots * 2) <= bytes) {
    slots *= 2;
  }
  if (slots > slots_.size() && cost(slots) <= bytes) Grow(slots);
}

void KeyTable::Clear(bool keep_room) {
  if (keep_room) {
    slots_.Zero();
    arena_.clear();
  } else {
    slots_ = {};
    arena_ = {};
  }
  size_ = garbage_ = 0;
}

int64_t KeyTable::GrowthBytes(size_t key_bytes) const {
  int64_t grown = 0;
  if (OverLoad(size_ + 1, slots_.size())) {
    size_t slots = std::max<size_t>(16, slots_.size() * 2);
    grown += static_cast<int64_t>((slots - slots_.size()) * sizeof(Slot));
  }
  // (A string at least doubles its capacity when it grows.)
  size_t appended = key_bytes + (key_bytes < kLong ? 0 : sizeof(uint64_t));
  if (arena_.size() + appended > arena_.capacity()) {
    grown += static_cast<int64_t>(std::max(arena_.capacity(), appended));
  }
  return grown;
}

double KeyTable::MeanDisplacement() const {
  if (size_ == 0) return 0;
  const size_t mask = slots_.size() - 1;
  double total = 0;
  for (size_t i = 0; i < slots_.size(); ++i) {
    if (slots_[i].hash != 0) total += static_cast<double>((i - slots_[i].hash) & mask);
  }
  return total / static_cast<double>(size_);
}

void KeyTable::Grow(size_t slots) {
  Slots grown(slots);  // (first: a failed allocation leaves the table as it was)
  Slots old = std::move(slots_);
  slots_ = std::move(grown);
  const size_t mask = slots - 1;
  for (const Slot& s : old) {
    if (s.hash == 0) continue;
    size_t i = s.hash & mask;
    while (slots_[i].hash != 0) i = (i + 1) & mask;
    slots_[i] = s;
  }
}

void KeyTable::CompactArena() {
  std::string arena;
  arena.reserve(arena_.size() - garbage_);
  for (Slot& s : slots_) {
    if (s.hash == 0) continue;
    s.ref = Append(&arena, KeyOf(s));
  }
  arena_ = std::move(arena);
  garbage_ = 0;
}

}  // namespace sluice::operators
