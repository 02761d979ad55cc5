#include "common/crc32c.h"

#include <array>
#include <cstring>

namespace sluice {
namespace {

constexpr uint32_t kPoly = 0x82F63B78u;  // reflected Castagnoli polynomial

using Tables = std::array<std::array<uint32_t, 256>, 8>;

constexpr Tables MakeTables() {
  Tables t{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ kPoly : c >> 1;
    t[0][i] = c;
  }
  for (uint32_t i = 0; i < 256; ++i) {
    for (int s = 1; s < 8; ++s) t[s][i] = (t[s - 1][i] >> 8) ^ t[0][t[s - 1][i] & 0xff];
  }
  return t;
}

constexpr Tables kTables = MakeTables();

#if defined(__x86_64__)
// The SSE4.2 crc32 instruction computes exactly this CRC (same polynomial,
// reflected), 8 bytes per instruction.
__attribute__((target("sse4.2"))) uint32_t Crc32cSse42(uint32_t crc, std::string_view data) {
  const auto* p = reinterpret_cast<const uint8_t*>(data.data());
  size_t n = data.size();
  uint64_t c = ~crc;
  while (n >= 8) {
    uint64_t v;
    std::memcpy(&v, p, 8);
    c = __builtin_ia32_crc32di(c, v);
    p += 8;
    n -= 8;
  }
  auto c32 = static_cast<uint32_t>(c);
  while (n-- > 0) c32 = __builtin_ia32_crc32qi(c32, *p++);
  return ~c32;
}
#endif

}  // namespace

uint32_t Crc32cPortable(uint32_t crc, std::string_view data) {
  const auto* p = reinterpret_cast<const uint8_t*>(data.data());
  size_t n = data.size();
  uint32_t c = ~crc;
  while (n >= 8) {
    uint32_t lo;
    uint32_t hi;
    std::memcpy(&lo, p, 4);  // little-endian hosts only (see common/endian.h)
    std::memcpy(&hi, p + 4, 4);
    lo ^= c;
    c = kTables[7][lo & 0xff] ^ kTables[6][(lo >> 8) & 0xff] ^ kTables[5][(lo >> 16) & 0xff] ^
        kTables[4][lo >> 24] ^ kTables[3][hi & 0xff] ^ kTables[2][(hi >> 8) & 0xff] ^
        kTables[1][(hi >> 16) & 0xff] ^ kTables[0][hi >> 24];
    p += 8;
    n -= 8;
  }
  while (n-- > 0) c = kTables[0][(c ^ *p++) & 0xff] ^ (c >> 8);
  return ~c;
}

}  // namespace sluice

namespace sluice {

uint32_t Crc32cExtend(uint32_t crc, std::string_view data) {
#if defined(__x86_64__)
  static const bool kHardware = __builtin_cpu_supports("sse4.2");
  if (kHardware) return Crc32cSse42(crc, data);
#endif
  return Crc32cPortable(crc, data);
}

}  // namespace sluice
