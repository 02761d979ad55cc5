#include "parquet/dictionary.h"

#include <cstring>

#include "common/endian.h"
#include "common/hash.h"

namespace sluice::parquet {

namespace {
constexpr size_t kInitialSlots = 1024;
constexpr uint64_t kMul = 0x9e3779b97f4a7c15ULL;
}  // namespace

uint64_t HashWord(uint64_t v) { return SplitMix64(v); }

uint64_t HashBytes(std::string_view v) {
  // Whole 8-byte words, then the last 8 bytes (overlapping) or, for short
  // strings, overlapping 4-byte / single-byte loads: no per-byte loop or
  // variable-length memcpy.
  const char* p = v.data();
  const size_t n = v.size();
  uint64_t h = (n + 1) * kMul;
  auto mix = [](uint64_t x) {
    x *= kMul;
    return x ^ (x >> 29);
  };
  if (n >= 8) {
    const char* last = p + n - 8;
    for (; p < last; p += 8) h = mix(h ^ LoadLE<uint64_t>(p));
    h = mix(h ^ LoadLE<uint64_t>(last));
  } else if (n >= 4) {
    h = mix(h ^ (static_cast<uint64_t>(LoadLE<uint32_t>(p)) << 32 | LoadLE<uint32_t>(p + n - 4)));
  } else if (n > 0) {
    h = mix(h ^ (static_cast<uint64_t>(static_cast<uint8_t>(p[0])) << 16 |
                 static_cast<uint64_t>(static_cast<uint8_t>(p[n / 2])) << 8 |
                 static_cast<uint8_t>(p[n - 1])));
  }
  return HashWord(h);
}

FixedDictionary::FixedDictionary(int width) : width_(width) { Clear(); }

void FixedDictionary::Clear() {
  slots_.assign(kInitialSlots, 0);
  mask_ = kInitialSlots - 1;
  values_.clear();
}

void FixedDictionary::Grow() {
  std::vector<uint32_t> slots(slots_.size() * 2, 0);
  mask_ = slots.size() - 1;
  for (uint32_t i = 0; i < values_.size(); ++i) {
    uint64_t s = HashWord(values_[i]) & mask_;
    while (slots[s] != 0) s = (s + 1) & mask_;
    slots[s] = i + 1;
  }
  slots_.swap(slots);
}

uint32_t FixedDictionary::GetOrInsert(uint64_t bits) {
  uint64_t s = HashWord(bits) & mask_;
  while (true) {
    uint32_t e = slots_[s];
    if (e == 0) break;
    if (values_[e - 1] == bits) return e - 1;
    s = (s + 1) & mask_;
  }
  uint32_t index = static_cast<uint32_t>(values_.size());
  values_.push_back(bits);
  slots_[s] = index + 1;
  if (values_.size() * 2 > slots_.size()) Grow();
  return index;
}

void FixedDictionary::WritePlain(std::string* out) const {
  size_t pos = out->size();
  out->resize(pos + values_.size() * width_);
  char* dst = out->data() + pos;
  for (uint64_t v : values_) {
    if (width_ == 4) {
      StoreLE<uint32_t>(dst, static_cast<uint32_t>(v));
    } else {
      StoreLE<uint64_t>(dst, v);
    }
    dst += width_;
  }
}

BytesDictionary::BytesDictionary(int fixed_width) : fixed_width_(fixed_width) { Clear(); }

void BytesDictionary::Clear() {
  slots_.assign(kInitialSlots, 0);
  mask_ = kInitialSlots - 1;
  hashes_.clear();
  offsets_.assign(1, 0);
  heap_.clear();
  plain_size_ = 0;
}

void BytesDictionary::Grow() {
  std::vector<uint32_t> slots(slots_.size() * 2, 0);
  mask_ = slots.size() - 1;
  for (uint32_t i = 0; i < hashes_.size(); ++i) {
    uint64_t s = hashes_[i] & mask_;
    while (slots[s] != 0) s = (s + 1) & mask_;
    slots[s] = i + 1;
  }
  slots_.swap(slots);
}

uint32_t BytesDictionary::GetOrInsert(std::string_view v) {
  uint64_t h = HashBytes(v);
  uint64_t s = h & mask_;
  while (true) {
    uint32_t e = slots_[s];
    if (e == 0) break;
    if (hashes_[e - 1] == h && value(e - 1) == v) return e - 1;
    s = (s + 1) & mask_;
  }
  uint32_t index = static_cast<uint32_t>(hashes_.size());
  hashes_.push_back(h);
  heap_.append(v);
  offsets_.push_back(static_cast<uint32_t>(heap_.size()));
  plain_size_ += static_cast<int64_t>(v.size()) + (fixed_width_ > 0 ? 0 : 4);
  slots_[s] = index + 1;
  if (hashes_.size() * 2 > slots_.size()) Grow();
  return index;
}

void BytesDictionary::WritePlain(std::string* out) const {
  if (fixed_width_ > 0) {
    out->append(heap_);
    return;
  }
  out->reserve(out->size() + plain_size_);
  for (int64_t i = 0; i < size(); ++i) {
    std::string_view v = value(static_cast<uint32_t>(i));
    AppendLE<uint32_t>(out, static_cast<uint32_t>(v.size()));
    out->append(v);
  }
}

}  // namespace sluice::parquet
