// Records produced by another client (kcat) into the standalone mock program
// (sluice-kafka-mock) are read exactly once by the Kafka source.
#include <sys/wait.h>

#include <cstdio>
#include <set>
#include <string>

#include "common/testing.h"
#include "sources/kafka_source.h"
#include "sources/kafka_test_util.h"

#ifndef SLUICE_KAFKA_MOCK_PATH
#error "SLUICE_KAFKA_MOCK_PATH must name the sluice-kafka-mock binary"
#endif

namespace sluice::sources {
namespace {

using testing::Child;
using testing::Drain;

TEST(KafkaKcatTest, RecordsProducedByKcatAreReadExactlyOnce) {
  if (!testing::OnPath("kcat")) GTEST_SKIP() << "kcat is not installed";
  ASSERT_OK_AND_ASSIGN(auto mock, Child::Spawn({SLUICE_KAFKA_MOCK_PATH, "--topic", "events:4"}));
  ASSERT_OK_AND_ASSIGN(std::string bootstrap, mock->ReadLine());
  ASSERT_NE(bootstrap.find(':'), std::string::npos) << bootstrap;

  constexpr int kRecords = 100;
  std::string command = "kcat -b '" + bootstrap + "' -P -t events";
  FILE* kcat = popen(command.c_str(), "w");
  ASSERT_NE(kcat, nullptr);
  for (int n = 0; n < kRecords; ++n) std::fprintf(kcat, "{\"n\":%d}\n", n);
  int rc = pclose(kcat);
  ASSERT_TRUE(WIFEXITED(rc) && WEXITSTATUS(rc) == 0) << command << " failed: " << rc;

  KafkaOptions options;
  options.brokers = bootstrap;
  options.topic = "events";
  ASSERT_OK_AND_ASSIGN(auto source, OpenKafkaSource(options));
  ASSERT_OK_AND_ASSIGN(auto got, Drain(*source, kRecords));
  std::set<int> seen;
  std::set<std::string> partitions;
  for (const auto& g : got) {
    int n = -1;
    ASSERT_EQ(std::sscanf(g.value.c_str(), "{\"n\":%d}", &n), 1) << g.value;
    EXPECT_TRUE(seen.insert(n).second) << "duplicate record " << n;
    partitions.insert(g.partition);
  }
  EXPECT_EQ(got.size(), static_cast<size_t>(kRecords));
  EXPECT_EQ(seen.size(), static_cast<size_t>(kRecords));
  EXPECT_EQ(*seen.begin(), 0);
  EXPECT_EQ(*seen.rbegin(), kRecords - 1);
  int64_t total = 0;
  for (const auto& [p, next] : source->CurrentPositions()) total += next;
  EXPECT_EQ(total, kRecords);
  source.reset();

  ASSERT_OK_AND_ASSIGN(int status, mock->Terminate());
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "mock exit status " << status;
}

TEST(KafkaKcatTest, MockProgramRejectsBadArguments) {
  ASSERT_OK_AND_ASSIGN(auto mock, Child::Spawn({SLUICE_KAFKA_MOCK_PATH, "--topic", "events"}));
  ASSERT_ERROR(mock->ReadLine(), StatusCode::kIOError, "closed stdout");
}

}  // namespace
}  // namespace sluice::sources
