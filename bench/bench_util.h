// Helpers the benchmark programs share.
#pragma once

#include <ctime>

namespace sluice::bench {

// This thread's CPU time in ms: what a step costs, without the disk's fsync
// waits or another thread's work in it.
inline double ThreadCpuMs() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

}  // namespace sluice::bench
