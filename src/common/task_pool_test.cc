#include "common/task_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "common/thread_name.h"

namespace sluice {
namespace {

TEST(TaskPoolTest, RunCallsEveryPartOnceAndReturnsAfterTheLast) {
  TaskPool pool(3);
  EXPECT_EQ(pool.threads(), 4);
  for (int round = 0; round < 200; ++round) {
    int parts = 1 + round % 7;  // (more parts than threads, too)
    std::vector<int> calls(7, 0);
    std::set<std::thread::id> threads;
    std::mutex mu;
    pool.Run(parts, [&](int i) {
      std::lock_guard<std::mutex> lock(mu);
      ++calls[i];
      threads.insert(std::this_thread::get_id());
    });
    for (int i = 0; i < 7; ++i) EXPECT_EQ(calls[i], i < parts ? 1 : 0) << round;
    EXPECT_LE(threads.size(), static_cast<size_t>(std::min(parts, pool.threads())));
  }
}

// Parts that, on a worker, wait until the caller has run all the others: a
// worker that the scheduler runs late, or that is busy, must not hold up a
// part no thread has begun. A pool that left such a part to the workers
// would never return.
struct WorkersWaitForTheCaller {
  explicit WorkersWaitForTheCaller(int parts) : parts(parts) {}
  void operator()(int) {
    if (std::this_thread::get_id() == caller) {
      caller_ran.fetch_add(1);
    } else {
      while (caller_ran.load() < parts - 1) std::this_thread::yield();
    }
    ran.fetch_add(1);
  }
  const int parts;
  const std::thread::id caller = std::this_thread::get_id();
  std::atomic<int> caller_ran{0}, ran{0};
};

TEST(TaskPoolTest, TheCallerOfRunTakesThePartsNoWorkerHasBegun) {
  TaskPool pool(1);
  for (int round = 0; round < 50; ++round) {
    WorkersWaitForTheCaller parts(3);  // three parts, two threads
    pool.Run(3, std::ref(parts));
    EXPECT_EQ(parts.ran.load(), 3);
    EXPECT_GE(parts.caller_ran.load(), 2);
  }
}

TEST(TaskPoolTest, TheCallerOfWaitTakesTheStartedPartsNoWorkerHasBegun) {
  for (int workers : {0, 1}) {
    TaskPool pool(workers);
    for (int round = 0; round < 50; ++round) {
      WorkersWaitForTheCaller parts(3);
      pool.Start(3, std::ref(parts));
      pool.Wait();
      EXPECT_EQ(parts.ran.load(), 3) << workers << " workers";
    }
  }
}

TEST(TaskPoolTest, AFreeWorkerTakesAPartWhileTheCallerRunsAnother) {
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

TEST(TaskPoolTest, StartRunsEveryPartWhileTheCallerGoesOn) {
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
    // Run works between started jobs.
    int ran = 0;
    pool.Run(3, [&](int) {
      std::lock_guard<std::mutex> lock(mu);
      ++ran;
    });
    EXPECT_EQ(ran, 3);
  }
}

// Started parts run while the caller goes on, before it waits (the pipeline
// polls its next batch while its lanes decode).
TEST(TaskPoolTest, StartedPartsRunOnTheWorkersBeforeTheCallerWaits) {
  TaskPool pool(2);
  for (int round = 0; round < 20; ++round) {
    std::atomic<int> ran{0};
    pool.Start(2, [&](int) { ran.fetch_add(1); });
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (ran.load() < 2 && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::yield();
    }
    EXPECT_EQ(ran.load(), 2) << "the workers left started parts to Wait";
    pool.Wait();
  }
}

TEST(TaskPoolTest, WorkersAreNamedByRoleNumberAndOwner) {
  TaskPool pool(2, "lane", "orders");
  std::mutex mu;
  std::set<std::string> names;
  std::atomic<int> ran{0};
  // Started parts run on the workers (the test above), not on this thread.
  pool.Start(2, [&](int) {
    std::lock_guard<std::mutex> lock(mu);
    names.insert(ThisThreadName());
    ran.fetch_add(1);
  });
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (ran.load() < 2 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::yield();
  }
  pool.Wait();
  // One worker may have run both parts.
  ASSERT_FALSE(names.empty());
  for (const std::string& name : names) {
    EXPECT_TRUE(name == "lane1:orders" || name == "lane2:orders") << name;
  }
}

TEST(TaskPoolTest, APoolWithoutWorkersRunsOnTheCaller) {
  TaskPool pool(0);
  std::thread::id ran;
  pool.Run(1, [&](int) { ran = std::this_thread::get_id(); });
  EXPECT_EQ(ran, std::this_thread::get_id());
  EXPECT_GE(AvailableCores(), 1);
}

TEST(ClaimRunTest, RunsShrinkAsTheItemsRunOutAndCoverEachItemOnce) {
  std::atomic<size_t> next{0};
  std::vector<std::pair<size_t, size_t>> runs;
  for (;;) {
    auto run = ClaimRun(next, 5005, 2, 128, 1024);
    if (run.first == run.second) break;
    runs.push_back(run);
  }
  ASSERT_FALSE(runs.empty());
  // In order, back to back, from the first item to the last.
  EXPECT_EQ(runs.front().first, 0u);
  EXPECT_EQ(runs.back().second, 5005u);
  for (size_t i = 1; i < runs.size(); ++i) EXPECT_EQ(runs[i].first, runs[i - 1].second);
  // The first run is the longest allowed (a quarter of 5,005 is more); then a
  // quarter of what is left each (3,981 / 4 = 995), down to 128; the last
  // takes the 143 left, not 128 and then a run of 15.
  std::vector<size_t> lengths;
  for (const auto& [begin, end] : runs) lengths.push_back(end - begin);
  EXPECT_EQ(lengths,
            (std::vector<size_t>{1024, 995, 746, 560, 420, 315, 236, 177, 133, 128, 128, 143}));
  auto none = ClaimRun(next, 5005, 2, 128, 1024);
  EXPECT_EQ(none, std::make_pair(size_t{5005}, size_t{5005}));
}

TEST(ClaimRunTest, ARunOfNoneOrLimitsOutOfOrderStillClaimEveryItem) {
  for (auto [min_run, max_run] : {std::pair<size_t, size_t>{0, 0}, {0, 4}, {8, 2}}) {
    std::atomic<size_t> next{0};
    size_t claimed = 0, runs = 0;
    for (;;) {
      auto [begin, end] = ClaimRun(next, 100, 2, min_run, max_run);
      if (begin == end) break;
      EXPECT_EQ(begin, claimed);
      claimed = end;
      ASSERT_LT(++runs, 200u) << min_run << " " << max_run;
    }
    EXPECT_EQ(claimed, 100u) << min_run << " " << max_run;
    EXPECT_EQ(next.load(), 100u);
  }
}

TEST(ClaimRunTest, ThreadsThatClaimAtOnceClaimEachItemExactlyOnce) {
  constexpr size_t kItems = 200000;
  std::atomic<size_t> next{0};
  std::vector<std::atomic<int>> claimed(kItems);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (;;) {
        auto [begin, end] = ClaimRun(next, kItems, 4, 16, 512);
        if (begin == end) return;
        for (size_t i = begin; i < end; ++i) claimed[i].fetch_add(1);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  size_t wrong = 0;
  for (const auto& c : claimed) wrong += c.load() != 1;
  EXPECT_EQ(wrong, 0u);
}

}  // namespace
}  // namespace sluice
