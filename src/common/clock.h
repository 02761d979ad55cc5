// The clocks, read in integer units.
//
// Wall time (std::chrono::system_clock) dates what others read: snapshot
// timestamps, log records, file ages, UUIDv7s. It can jump (NTP, an
// operator), so it never measures an interval. Monotonic time
// (std::chrono::steady_clock) measures intervals and deadlines; its zero is
// arbitrary, so it never dates anything.
//
// Code whose behaviour depends on time takes a clock as an option (a
// std::function returning one of these) so tests can drive it; these are the
// defaults.
#pragma once

#include <chrono>
#include <cstdint>

namespace sluice {

// Milliseconds since the Unix epoch.
inline int64_t WallMillis() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

inline int64_t MonotonicSeconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

inline int64_t MonotonicMillis() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

inline int64_t MonotonicMicros() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace sluice
