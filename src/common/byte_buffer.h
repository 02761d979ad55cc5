// ByteBuffer: bytes in one block that grows without writing what it adds,
// for a buffer that read() or a decoder fills in place (a std::string's
// resize writes every new byte first), and that keeps kPadding readable bytes
// past its end, so that a parser that reads ahead (simdjson) can parse any
// part of it in place (once it has held a byte). Bytes past size() are
// readable but need not have been written, until ZeroPadding writes the
// kPadding bytes past the end: a buffer handed to a parser has it called
// first, so that a parser's look-ahead reads only bytes written (what MSan
// and valgrind check, in heap blocks).
//
// A block is reused: clear() keeps it. A block of kHugePageBytes or more (a
// batch's records) is a huge-page block (common/huge_pages.h), rounded up to
// whole huge pages: each of its 4 KiB pages would otherwise cost a page fault
// the first time it is written. Such a block is mapped memory, zeroed when
// mapped: MSan and valgrind take all of it as written, and ASan does not
// check it (a pointer kept across a growth reads unmapped memory or another
// mapping, not a freed heap block). Not thread-safe.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <utility>

#include "common/huge_pages.h"

namespace sluice {

class ByteBuffer {
 public:
  // Readable bytes past size(), whatever their content (simdjson's padding).
  static constexpr size_t kPadding = 64;

  ByteBuffer() = default;
  ByteBuffer(ByteBuffer&& other) noexcept { *this = std::move(other); }
  ByteBuffer& operator=(ByteBuffer&& other) noexcept {
    if (this != &other) {
      Release();
      data_ = std::exchange(other.data_, nullptr);
      size_ = std::exchange(other.size_, 0);
      capacity_ = std::exchange(other.capacity_, 0);
    }
    return *this;
  }
  ~ByteBuffer() { Release(); }

  char* data() { return data_; }
  const char* data() const { return data_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  // Bytes it can hold before it grows (the padding not counted).
  size_t capacity() const { return capacity_; }
  std::string_view view() const { return {data_, size_}; }

  void clear() { size_ = 0; }
  // Grows by `n` bytes left as they are (unwritten when new): where they start,
  // valid until the next growth.
  char* Extend(size_t n) {
    if (capacity_ - size_ < n) Grow(size_ + n);
    char* at = data_ + size_;
    size_ += n;
    return at;
  }
  // Drops the bytes past `n` (n <= size()).
  void Truncate(size_t n) { size_ = n; }
  // `bytes` must not lie in the buffer (a growth would free them first).
  void Append(std::string_view bytes) {
    if (!bytes.empty()) std::memcpy(Extend(bytes.size()), bytes.data(), bytes.size());
  }
  // Zeroes the kPadding bytes past size() (none when nothing was allocated).
  void ZeroPadding() {
    if (data_) std::memset(data_ + size_, 0, kPadding);
  }
  // Room for `n` bytes in all without growing again: a block of exactly `n`
  // when short (the caller knows what it needs; Extend doubles), or, from
  // kHugePageBytes on, of `n` and the padding rounded up to whole huge pages.
  void Reserve(size_t n) {
    if (n > capacity_) Resize(n);
  }

 private:
  // At least `n` bytes, doubling.
  void Grow(size_t n) { Resize(capacity_ * 2 > n ? capacity_ * 2 : n); }
  // Exactly `to` bytes (or more, in a huge-page block); the bytes held are
  // kept (realloc may keep the block).
  void Resize(size_t to);
  // Whether the block is a huge-page block (only blocks this large are).
  bool Huge() const { return capacity_ + kPadding >= kHugePageBytes; }
  void Release();

  char* data_ = nullptr;
  size_t size_ = 0;
  size_t capacity_ = 0;
};

}  // namespace sluice
