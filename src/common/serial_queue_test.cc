#include "common/serial_queue.h"

#include <gtest/gtest.h>

#include <atomic>
#include <vector>

namespace sluice {
namespace {

TEST(SerialQueueTest, TasksRunOneAtATimeInTheOrderPushedOnOneOtherThread) {
  SerialQueue queue(2);
  std::vector<int> order;  // only the worker touches it until Drain
  std::atomic<int> inside{0};
  std::atomic<bool> overlapped{false};
  std::thread::id worker;
  for (int i = 0; i < 500; ++i) {
    queue.Push([&, i] {
      if (inside.fetch_add(1) != 0) overlapped = true;
      if (i == 0) worker = std::this_thread::get_id();
      EXPECT_EQ(worker, std::this_thread::get_id());
      order.push_back(i);
      inside.fetch_sub(1);
    });
  }
  queue.Drain();
  ASSERT_EQ(order.size(), 500u);
  for (int i = 0; i < 500; ++i) EXPECT_EQ(order[i], i);
  EXPECT_FALSE(overlapped.load());
  EXPECT_NE(worker, std::this_thread::get_id());
}

TEST(SerialQueueTest, PushWaitsWhileTheQueueHoldsItsMostWaitingTasks) {
  SerialQueue queue(1);
  std::atomic<bool> release{false};
  std::atomic<int> ran{0};
  queue.Push([&] {  // runs, held
    while (!release.load()) std::this_thread::yield();
    ran.fetch_add(1);
  });
  // One more waits (once the worker holds the first; until then, Push waits).
  queue.Push([&] { ran.fetch_add(1); });
  std::atomic<bool> third_pushed{false};
  std::thread feeder([&] {
    queue.Push([&] { ran.fetch_add(1); });
    third_pushed = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(third_pushed.load()) << "a push went past a full queue";
  release = true;
  feeder.join();
  EXPECT_TRUE(third_pushed.load());
  queue.Drain();
  EXPECT_EQ(ran.load(), 3);
}

TEST(SerialQueueTest, DrainOnAnIdleQueueReturnsAndTheDestructorRunsWhatWaits) {
  std::atomic<int> ran{0};
  {
    SerialQueue queue(4);
    queue.Drain();
    for (int i = 0; i < 4; ++i) {
      queue.Push([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
        ran.fetch_add(1);
      });
    }
  }
  EXPECT_EQ(ran.load(), 4);
}

}  // namespace
}  // namespace sluice
