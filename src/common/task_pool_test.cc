#include "common/task_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <set>

namespace sluice {
namespace {

TEST(TaskPoolTest, RunCallsEveryPartOnceAndReturnsAfterTheLast) {
  TaskPool pool(4);
  EXPECT_EQ(pool.threads(), 4);
  for (int round = 0; round < 200; ++round) {
    int parts = 1 + round % 4;
    std::vector<int> calls(4, 0);
    std::set<std::thread::id> threads;
    std::mutex mu;
    pool.Run(parts, [&](int i) {
      std::lock_guard<std::mutex> lock(mu);
      ++calls[i];
      threads.insert(std::this_thread::get_id());
    });
    for (int i = 0; i < 4; ++i) EXPECT_EQ(calls[i], i < parts ? 1 : 0) << round;
    EXPECT_EQ(threads.size(), static_cast<size_t>(parts)) << "parts run on their own threads";
  }
}

TEST(TaskPoolTest, PartsRunAtTheSameTime) {
  TaskPool pool(2);
  std::atomic<int> arrived{0};
  // Each part waits for the other: a pool that ran them one after the other
  // would never return.
  pool.Run(2, [&](int) {
    arrived.fetch_add(1);
    while (arrived.load() < 2) std::this_thread::yield();
  });
  EXPECT_EQ(arrived.load(), 2);
}

TEST(TaskPoolTest, APoolOfOneRunsOnTheCaller) {
  TaskPool pool(1);
  std::thread::id ran;
  pool.Run(1, [&](int) { ran = std::this_thread::get_id(); });
  EXPECT_EQ(ran, std::this_thread::get_id());
  EXPECT_GE(AvailableCores(), 1);
}

}  // namespace
}  // namespace sluice
