// Random (version 4) UUIDs for file names, table uuids and snapshot ids.
// Thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <string>

namespace sluice {

std::array<uint8_t, 16> RandomUuidBytes();
// Canonical lowercase "8-4-4-4-12" form of a new random UUID.
std::string NewUuid();
// A positive 63-bit id from a random UUID (Java Iceberg: high XOR low, & Long.MAX).
int64_t NewSnapshotId();

}  // namespace sluice
