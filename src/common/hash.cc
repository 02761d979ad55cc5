#include "common/hash.h"

#include "common/endian.h"

namespace sluice {

namespace {
inline uint32_t Rotl(uint32_t x, int r) { return (x << r) | (x >> (32 - r)); }
inline uint32_t MixK(uint32_t k) {
  k *= 0xcc9e2d51u;
  k = Rotl(k, 15);
  return k * 0x1b873593u;
}
}  // namespace

int32_t Murmur3_32(std::string_view data, uint32_t seed) {
  const auto* p = reinterpret_cast<const uint8_t*>(data.data());
  const size_t n = data.size();
  uint32_t h = seed;
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    h ^= MixK(LoadLE<uint32_t>(p + i));
    h = Rotl(h, 13);
    h = h * 5 + 0xe6546b64u;
  }
  uint32_t k = 0;
  switch (n & 3) {
    case 3: k ^= static_cast<uint32_t>(p[i + 2]) << 16; [[fallthrough]];
    case 2: k ^= static_cast<uint32_t>(p[i + 1]) << 8; [[fallthrough]];
    case 1: k ^= p[i]; h ^= MixK(k);
  }
  h ^= static_cast<uint32_t>(n);
  h ^= h >> 16;
  h *= 0x85ebca6bu;
  h ^= h >> 13;
  h *= 0xc2b2ae35u;
  h ^= h >> 16;
  return static_cast<int32_t>(h);
}

}  // namespace sluice
