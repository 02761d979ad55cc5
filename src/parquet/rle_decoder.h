// Bit unpacking and the RLE / bit-packed hybrid decoder of Parquet
// (definition and repetition levels, dictionary indices, RLE booleans).
//
// Contract: decoders never read outside [data, data + len); malformed input
// (a run past the end, a bit width over 32) is a kCorruption status. Values are
// unpacked in bulk; no allocation per value. Not thread-safe.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "common/endian.h"
#include "common/status.h"

namespace sluice::parquet {

// Unpacks `count` little-endian-bit-order values of `width` bits (0..64) from
// `in`, which holds at least ceil(count * width / 8) bytes.
template <typename T>
inline void UnpackBits(const uint8_t* in, int width, size_t count, T* out) {
  if (width == 0) {
    std::fill(out, out + count, T{0});
    return;
  }
  const size_t total_bytes = (count * static_cast<size_t>(width) + 7) / 8;
  const uint64_t mask = width >= 64 ? ~uint64_t{0} : (uint64_t{1} << width) - 1;
  size_t bit = 0;
  for (size_t i = 0; i < count; ++i, bit += static_cast<size_t>(width)) {
    size_t byte = bit >> 3;
    int shift = static_cast<int>(bit & 7);
    uint64_t v = 0;
    if (byte + 8 <= total_bytes) {
      v = LoadLE<uint64_t>(in + byte);
    } else {
      std::memcpy(&v, in + byte, total_bytes - byte);
    }
    v >>= shift;
    if (shift + width > 64) {
      // The value spills into a ninth byte (only for widths above 56).
      v |= static_cast<uint64_t>(in[byte + 8]) << (64 - shift);
    }
    out[i] = static_cast<T>(v & mask);
  }
}

class RleBitPackedDecoder {
 public:
  RleBitPackedDecoder() = default;
  RleBitPackedDecoder(const uint8_t* data, size_t len, int bit_width)
      : p_(data), end_(data + len), bit_width_(bit_width) {}

  // Decodes exactly `n` values into `out`.
  template <typename T>
  Status Get(T* out, size_t n) {
    if (bit_width_ < 0 || bit_width_ > 32) {
      return Status::Corruption("invalid RLE bit width {}", bit_width_);
    }
    if (bit_width_ == 0) {
      std::fill(out, out + n, T{0});
      return Status::OK();
    }
    size_t done = 0;
    while (done < n) {
      if (rle_left_ == 0 && packed_left_ == 0) RETURN_IF_ERROR(NextRun());
      if (rle_left_ > 0) {
        size_t k = std::min<size_t>(rle_left_, n - done);
        std::fill(out + done, out + done + k, static_cast<T>(rle_value_));
        rle_left_ -= k;
        done += k;
      } else {
        size_t k = std::min<size_t>(packed_left_, n - done);
        // Unpack from the bit position of the next value in the current run.
        size_t bit = packed_pos_ * static_cast<size_t>(bit_width_);
        if (bit % 8 == 0) {
          UnpackBits(packed_ + bit / 8, bit_width_, k, out + done);
        } else {
          // Runs are groups of 8 values, so an unaligned start only happens
          // mid-group; finish it value by value.
          for (size_t i = 0; i < k; ++i) {
            size_t b = (packed_pos_ + i) * static_cast<size_t>(bit_width_);
            uint64_t v = 0;
            size_t avail = static_cast<size_t>(packed_end_ - (packed_ + b / 8));
            std::memcpy(&v, packed_ + b / 8, std::min<size_t>(8, avail));
            out[done + i] = static_cast<T>((v >> (b % 8)) & ((uint64_t{1} << bit_width_) - 1));
          }
        }
        packed_pos_ += k;
        packed_left_ -= k;
        done += k;
      }
    }
    return Status::OK();
  }

  // Largest value decoded by the last Get is not tracked; callers check ranges.
  const uint8_t* position() const { return p_; }

 private:
  Status NextRun() {
    uint64_t header;
    if (!ReadVarint(&p_, end_, &header)) return Status::Corruption("invalid RLE run header");
    if (header & 1) {
      uint64_t groups = header >> 1;
      if (groups == 0) return Status::Corruption("empty bit-packed run");
      size_t avail = static_cast<size_t>(end_ - p_);
      uint64_t bytes = groups * static_cast<uint64_t>(bit_width_);
      uint64_t values = groups * 8;
      if (bytes > avail) {
        // Tolerate a final run whose padding was not written.
        values = avail * 8 / static_cast<uint64_t>(bit_width_);
        bytes = avail;
        if (values == 0) return Status::Corruption("invalid RLE run: bit-packed run past the end");
      }
      packed_ = p_;
      packed_end_ = p_ + bytes;
      packed_pos_ = 0;
      packed_left_ = values;
      p_ += bytes;
    } else {
      uint64_t count = header >> 1;
      if (count == 0) return Status::Corruption("invalid RLE run: zero-length run");
      size_t bytes = (static_cast<size_t>(bit_width_) + 7) / 8;
      if (static_cast<size_t>(end_ - p_) < bytes) {
        return Status::Corruption("invalid RLE run: value past the end");
      }
      uint32_t v = 0;
      std::memcpy(&v, p_, bytes);
      p_ += bytes;
      rle_value_ = v;
      rle_left_ = count;
    }
    return Status::OK();
  }

  const uint8_t* p_ = nullptr;
  const uint8_t* end_ = nullptr;
  int bit_width_ = 0;
  uint64_t rle_left_ = 0;
  uint32_t rle_value_ = 0;
  const uint8_t* packed_ = nullptr;
  const uint8_t* packed_end_ = nullptr;
  uint64_t packed_pos_ = 0;
  uint64_t packed_left_ = 0;
};

// Bits needed to store values 0..max_value.
inline int BitWidth(uint64_t max_value) {
  int w = 0;
  while (max_value != 0) {
    ++w;
    max_value >>= 1;
  }
  return w;
}

}  // namespace sluice::parquet
