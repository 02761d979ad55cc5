// Hash functions with fixed, specified outputs (persisted or shared with other
// implementations): MurmurHash3 x86 32-bit, as Iceberg's bucket transform uses.
#pragma once

#include <cstdint>
#include <string_view>

namespace sluice {

// MurmurHash3_x86_32 of `data` with `seed`, returned as the signed value Java sees.
int32_t Murmur3_32(std::string_view data, uint32_t seed = 0);

// The splitmix64 finalizer: every bit of `h` moves about half of the output's.
inline uint64_t SplitMix64(uint64_t h) {
  h ^= h >> 30;
  h *= 0xbf58476d1ce4e5b9ull;
  h ^= h >> 27;
  h *= 0x94d049bb133111ebull;
  h ^= h >> 31;
  return h;
}

}  // namespace sluice
