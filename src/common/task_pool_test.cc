#include "common/task_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <set>

namespace sluice {
namespace {

TEST(TaskPoolTest, RunCallsEveryPartOnceAndReturnsAfterTheLast) {
  TaskPool pool(3);
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
  TaskPool pool(1);
  std::atomic<int> arrived{0};
  // Each part waits for the other: a pool that ran them one after the other
  // would never return.
  pool.Run(2, [&](int) {
    arrived.fetch_add(1);
    while (arrived.load() < 2) std::this_thread::yield();
  });
  EXPECT_EQ(arrived.load(), 2);
}

TEST(TaskPoolTest, StartRunsEveryPartOnTheWorkersWhileTheCallerGoesOn) {
  TaskPool pool(2);
  for (int round = 0; round < 100; ++round) {
    std::atomic<bool> caller_went_on{false};
    std::vector<int> calls(2, 0);
    std::mutex mu;
    std::set<std::thread::id> threads;
    int parts = 1 + round % 2;
    pool.Start(parts, [&](int i) {
      // Every part waits for the caller: Start must have returned.
      while (!caller_went_on.load()) std::this_thread::yield();
      std::lock_guard<std::mutex> lock(mu);
      ++calls[i];
      threads.insert(std::this_thread::get_id());
    });
    caller_went_on = true;
    pool.Wait();
    for (int i = 0; i < 2; ++i) EXPECT_EQ(calls[i], i < parts ? 1 : 0) << round;
    EXPECT_EQ(threads.count(std::this_thread::get_id()), 0u) << "a part ran on the caller";
    EXPECT_EQ(threads.size(), static_cast<size_t>(parts));
    // Run works between started jobs.
    int ran = 0;
    pool.Run(3, [&](int) {
      std::lock_guard<std::mutex> lock(mu);
      ++ran;
    });
    EXPECT_EQ(ran, 3);
  }
}

TEST(TaskPoolTest, APoolWithoutWorkersRunsOnTheCaller) {
  TaskPool pool(0);
  std::thread::id ran;
  pool.Run(1, [&](int) { ran = std::this_thread::get_id(); });
  EXPECT_EQ(ran, std::this_thread::get_id());
  EXPECT_GE(AvailableCores(), 1);
}

}  // namespace
}  // namespace sluice
