// Dictionary builders for one column chunk: distinct values → dense indices
// (in first-seen order), with the dictionary's PLAIN-encoded size tracked so
// the column writer can fall back to PLAIN when it grows past its limit.
//
// Open addressing with linear probing over a power-of-two table; values are
// stored once (fixed-width values as 64-bit patterns, byte strings in one
// heap). Not thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sluice::parquet {

// 4- or 8-byte values (INT32, INT64, FLOAT, DOUBLE) keyed by bit pattern, so
// -0.0 and +0.0 (and distinct NaN payloads) stay distinct.
class FixedDictionary {
 public:
  explicit FixedDictionary(int width);
  uint32_t GetOrInsert(uint64_t bits);
  int64_t size() const { return static_cast<int64_t>(values_.size()); }
  int64_t plain_size() const { return size() * width_; }
  uint64_t value(uint32_t index) const { return values_[index]; }
  // Appends the PLAIN encoding of all values in index order.
  void WritePlain(std::string* out) const;
  void Clear();

 private:
  void Grow();
  int width_;
  std::vector<uint32_t> slots_;  // index + 1; 0 = empty
  std::vector<uint64_t> values_;
  uint64_t mask_ = 0;
};

// Byte strings: BYTE_ARRAY (PLAIN = 4-byte length + bytes) or, with
// `fixed_width` > 0, FIXED_LEN_BYTE_ARRAY (PLAIN = the raw bytes).
class BytesDictionary {
 public:
  explicit BytesDictionary(int fixed_width);
  uint32_t GetOrInsert(std::string_view v);
  int64_t size() const { return static_cast<int64_t>(hashes_.size()); }
  int64_t plain_size() const { return plain_size_; }
  std::string_view value(uint32_t index) const {
    return std::string_view(heap_.data() + offsets_[index], offsets_[index + 1] - offsets_[index]);
  }
  void WritePlain(std::string* out) const;
  void Clear();

 private:
  void Grow();
  int fixed_width_;
  std::vector<uint32_t> slots_;
  std::vector<uint64_t> hashes_;
  std::vector<uint32_t> offsets_{0};
  std::string heap_;
  int64_t plain_size_ = 0;
  uint64_t mask_ = 0;
};

// Fast non-cryptographic hashes used by the dictionaries.
uint64_t HashWord(uint64_t v);
uint64_t HashBytes(std::string_view v);

}  // namespace sluice::parquet
