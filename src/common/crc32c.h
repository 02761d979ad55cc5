// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), the checksum of iSCSI,
// ext4, Kafka record batches and sluice's log batches. The SSE4.2 instruction
// where the CPU has it, else a portable table-driven implementation (slicing by
// 8); the output is fixed by RFC 3720, so it may be persisted and compared with
// other implementations.
#pragma once

#include <cstdint>
#include <string_view>

namespace sluice {

// Extends `crc` (the value returned for the bytes before `data`; 0 to start) over `data`.
uint32_t Crc32cExtend(uint32_t crc, std::string_view data);

// The portable implementation (tests compare it with the hardware one).
uint32_t Crc32cPortable(uint32_t crc, std::string_view data);

// CRC-32C of `data`.
inline uint32_t Crc32c(std::string_view data) { return Crc32cExtend(0, data); }

}  // namespace sluice
