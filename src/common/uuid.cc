#include "common/uuid.h"

#include <chrono>
#include <mutex>
#include <random>

#include "common/clock.h"

namespace sluice {

std::array<uint8_t, 16> RandomUuidBytes() {
  static std::mutex mu;
  static std::mt19937_64 rng{std::random_device{}()};
  uint64_t hi, lo;
  {
    std::lock_guard<std::mutex> lock(mu);
    hi = rng();
    lo = rng();
  }
  std::array<uint8_t, 16> b;
  for (int i = 0; i < 8; ++i) {
    b[i] = static_cast<uint8_t>(hi >> (56 - 8 * i));
    b[8 + i] = static_cast<uint8_t>(lo >> (56 - 8 * i));
  }
  b[6] = (b[6] & 0x0f) | 0x40;  // version 4
  b[8] = (b[8] & 0x3f) | 0x80;  // RFC 4122 variant
  return b;
}

namespace {

std::string UuidText(const std::array<uint8_t, 16>& b) {
  static const char kHex[] = "0123456789abcdef";
  std::string s;
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) s.push_back('-');
    s.push_back(kHex[b[i] >> 4]);
    s.push_back(kHex[b[i] & 15]);
  }
  return s;
}

}  // namespace

std::string NewUuid() { return UuidText(RandomUuidBytes()); }

std::string NewUuidV7() {
  auto b = RandomUuidBytes();
  const auto ms = static_cast<uint64_t>(WallMillis());
  for (int i = 0; i < 6; ++i) b[i] = static_cast<uint8_t>(ms >> (40 - 8 * i));
  b[6] = (b[6] & 0x0f) | 0x70;  // version 7 (the variant is RandomUuidBytes')
  return UuidText(b);
}

int64_t NewSnapshotId() {
  auto b = RandomUuidBytes();
  uint64_t hi = 0, lo = 0;
  for (int i = 0; i < 8; ++i) {
    hi = hi << 8 | b[i];
    lo = lo << 8 | b[8 + i];
  }
  int64_t id = static_cast<int64_t>((hi ^ lo) & 0x7fffffffffffffffULL);
  return id == 0 ? 1 : id;
}

}  // namespace sluice
