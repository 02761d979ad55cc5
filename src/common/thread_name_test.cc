#include "common/thread_name.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>

#include "common/serial_queue.h"

namespace sluice {
namespace {

std::string NameOfAThreadNamed(const std::string& name) {
  std::string seen;
  std::thread t([&] {
    NameThisThread(name);
    seen = ThisThreadName();
  });
  t.join();
  return seen;
}

TEST(ThreadNameTest, ANameIsRoleIndexAndOwnerAndTheThreadShowsIt) {
  EXPECT_EQ(ThreadName("lane", 2, "q5"), "lane2:q5");
  EXPECT_EQ(ThreadName("window", 0, "q5"), "window:q5");
  EXPECT_EQ(ThreadName("maint", 1, ""), "maint1");
  EXPECT_EQ(NameOfAThreadNamed("lane2:q5"), "lane2:q5");
}

TEST(ThreadNameTest, ALongNameKeepsItsFirstFifteenBytes) {
  std::string name = ThreadName("shard1", 0, "a_pipeline_with_a_long_name");
  EXPECT_EQ(NameOfAThreadNamed(name), name.substr(0, kMaxThreadName));
  EXPECT_EQ(NameOfAThreadNamed(name).size(), kMaxThreadName);
}

TEST(ThreadNameTest, ASerialQueuesWorkerHasTheQueuesName) {
  std::string seen;
  {
    SerialQueue queue(1, "window:q5");
    queue.Push([&] { seen = ThisThreadName(); });
    queue.Drain();
  }
  EXPECT_EQ(seen, "window:q5");
}

}  // namespace
}  // namespace sluice
