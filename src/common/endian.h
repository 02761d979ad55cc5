// Little-endian loads/stores and varint/zigzag coding shared by the Parquet
// Thrift protocol and Avro. x86-64 and aarch64 are little-endian; memcpy keeps
// unaligned access defined.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>

namespace sluice {

template <typename T>
inline T LoadLE(const void* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

template <typename T>
inline void StoreLE(void* p, T v) {
  std::memcpy(p, &v, sizeof(T));
}

template <typename T>
inline void AppendLE(std::string* out, T v) {
  out->append(reinterpret_cast<const char*>(&v), sizeof(T));
}

inline uint64_t ZigZagEncode(int64_t v) {
  return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
}
inline int64_t ZigZagDecode(uint64_t v) {
  return static_cast<int64_t>(v >> 1) ^ -static_cast<int64_t>(v & 1);
}

inline void AppendVarint(std::string* out, uint64_t v) {
  char buf[10];
  int n = 0;
  while (v >= 0x80) {
    buf[n++] = static_cast<char>(v | 0x80);
    v >>= 7;
  }
  buf[n++] = static_cast<char>(v);
  out->append(buf, n);
}

// Decodes a ULEB128 varint from [*p, end). Returns false on truncation or if it
// is longer than 10 bytes; *p advances past it on success.
inline bool ReadVarint(const uint8_t** p, const uint8_t* end, uint64_t* out) {
  uint64_t result = 0;
  for (int shift = 0; shift < 64 && *p < end; shift += 7) {
    uint8_t b = *(*p)++;
    result |= static_cast<uint64_t>(b & 0x7f) << shift;
    if ((b & 0x80) == 0) {
      *out = result;
      return true;
    }
  }
  return false;
}

}  // namespace sluice
