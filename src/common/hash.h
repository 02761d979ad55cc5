// Hash functions with fixed, specified outputs (persisted or shared with other
// implementations): MurmurHash3 x86 32-bit, as Iceberg's bucket transform uses.
#pragma once

#include <cstdint>
#include <string_view>

namespace sluice {

// MurmurHash3_x86_32 of `data` with `seed`, returned as the signed value Java sees.
int32_t Murmur3_32(std::string_view data, uint32_t seed = 0);

}  // namespace sluice
