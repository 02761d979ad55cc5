// Random (version 4) UUIDs for file names, table uuids and snapshot ids;
// time-ordered (version 7) ones for idempotency keys.
// Thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <string>

namespace sluice {

std::array<uint8_t, 16> RandomUuidBytes();
// Canonical lowercase "8-4-4-4-12" form of a new random UUID.
std::string NewUuid();
// The same form of a new version 7 UUID (RFC 9562): the Unix time in
// milliseconds, then random bits; the REST spec's Idempotency-Key.
std::string NewUuidV7();
// A positive 63-bit id from a random UUID (Java Iceberg: high XOR low, & Long.MAX).
int64_t NewSnapshotId();

}  // namespace sluice
