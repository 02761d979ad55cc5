#include "parquet/rle_encoder.h"

#include <cstring>
#include <type_traits>

#include "common/endian.h"

namespace sluice::parquet {

int BitWidth(uint64_t max_value) {
  int w = 0;
  while (max_value != 0) {
    ++w;
    max_value >>= 1;
  }
  return w;
}

template <typename T>
void BitPack(const T* values, int64_t n, int bit_width, std::string* out) {
  if (bit_width == 0 || n == 0) return;
  size_t bytes = static_cast<size_t>((n * bit_width + 7) / 8);
  size_t pos = out->size();
  out->resize(pos + bytes);
  uint8_t* dst = reinterpret_cast<uint8_t*>(out->data() + pos);
  uint64_t acc = 0;
  int bits = 0;
  const uint64_t mask = bit_width == 64 ? ~uint64_t{0} : (uint64_t{1} << bit_width) - 1;
  for (int64_t i = 0; i < n; ++i) {
    acc |= (static_cast<uint64_t>(static_cast<std::make_unsigned_t<T>>(values[i])) & mask) << bits;
    bits += bit_width;
    if (bits >= 32) {
      uint32_t word = static_cast<uint32_t>(acc);
      std::memcpy(dst, &word, 4);
      dst += 4;
      acc >>= 32;
      bits -= 32;
    }
  }
  while (bits > 0) {
    *dst++ = static_cast<uint8_t>(acc);
    acc >>= 8;
    bits -= 8;
  }
}

namespace {

template <typename T>
void EmitLiteral(const T* values, int64_t count, int bit_width, std::string* out) {
  int64_t groups = (count + 7) / 8;
  AppendVarint(out, static_cast<uint64_t>(groups) << 1 | 1);
  if (count % 8 == 0) {
    BitPack(values, count, bit_width, out);
    return;
  }
  T padded[8] = {};
  int64_t full = count / 8 * 8;
  BitPack(values, full, bit_width, out);
  std::memcpy(padded, values + full, sizeof(T) * (count - full));
  BitPack(padded, 8, bit_width, out);
}

template <typename T>
void EmitRun(T value, int64_t count, int bit_width, std::string* out) {
  AppendVarint(out, static_cast<uint64_t>(count) << 1);
  uint32_t v = static_cast<uint32_t>(static_cast<std::make_unsigned_t<T>>(value));
  char buf[4];
  std::memcpy(buf, &v, 4);
  out->append(buf, (bit_width + 7) / 8);
}

}  // namespace

template <typename T>
void EncodeRleHybrid(const T* values, int64_t n, int bit_width, std::string* out) {
  int64_t literal_start = 0;
  int64_t i = 0;
  while (i < n) {
    T v = values[i];
    int64_t j = i + 1;
    while (j < n && values[j] == v) ++j;
    int64_t run = j - i;
    if (run >= 8) {
      // A literal run before an RLE run must hold a multiple of 8 values:
      // borrow the first values of the run to fill its last group.
      int64_t pending = i - literal_start;
      int64_t pad = (8 - pending % 8) % 8;
      if (run - pad >= 8) {
        if (pending + pad > 0) EmitLiteral(values + literal_start, pending + pad, bit_width, out);
        EmitRun(v, run - pad, bit_width, out);
        literal_start = j;
      }
    }
    i = j;
  }
  if (literal_start < n) EmitLiteral(values + literal_start, n - literal_start, bit_width, out);
}

template void BitPack<uint8_t>(const uint8_t*, int64_t, int, std::string*);
template void BitPack<int16_t>(const int16_t*, int64_t, int, std::string*);
template void BitPack<uint32_t>(const uint32_t*, int64_t, int, std::string*);
template void EncodeRleHybrid<uint8_t>(const uint8_t*, int64_t, int, std::string*);
template void EncodeRleHybrid<int16_t>(const int16_t*, int64_t, int, std::string*);
template void EncodeRleHybrid<uint32_t>(const uint32_t*, int64_t, int, std::string*);

}  // namespace sluice::parquet
