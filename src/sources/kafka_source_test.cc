#include "sources/kafka_source.h"

#include <sys/wait.h>

#include <chrono>
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "common/testing.h"
#include "sources/kafka_test_util.h"

namespace sluice::sources {
namespace {

using testing::Drain;
using testing::Got;
using testing::MockCluster;
using testing::Produce;

constexpr int kPartitions = 4;

// Every record is kRecordBytes long, so that max_bytes counts records.
constexpr size_t kRecordBytes = 32;
std::string Record(int n) {
  std::string r = "{\"n\":" + std::to_string(n) + ",\"pad\":\"";
  return r + std::string(kRecordBytes - r.size() - 2, 'x') + "\"}";
}

// Records first..first+count-1, record n to partition n % kPartitions: within a
// partition, record n lands at offset n / kPartitions (for first == 0).
std::vector<std::pair<int, std::string>> Numbered(int first, int count) {
  std::vector<std::pair<int, std::string>> out;
  for (int n = first; n < first + count; ++n) out.emplace_back(n % kPartitions, Record(n));
  return out;
}

// Checks that `got` holds exactly the records numbered [first, end) (each once,
// at the offset its number implies, in offset order per partition).
void ExpectExactly(const std::vector<Got>& got, int first, int end) {
  std::map<std::string, int64_t> last;
  std::multiset<int> seen;
  const double now_ms = static_cast<double>(WallMillis());
  for (const Got& g : got) {
    int n = -1;
    ASSERT_EQ(std::sscanf(g.value.c_str(), "{\"n\":%d,", &n), 1) << g.value;
    seen.insert(n);
    EXPECT_EQ(g.partition, std::to_string(n % kPartitions)) << g.value;
    EXPECT_EQ(g.offset, n / kPartitions) << g.value;
    EXPECT_NEAR(g.timestamp_ms, now_ms, 10 * 60 * 1000) << "producer timestamps are now";
    auto it = last.find(g.partition);
    if (it != last.end()) {
      EXPECT_GT(g.offset, it->second) << "partition " << g.partition;
    }
    last[g.partition] = g.offset;
  }
  for (int n = first; n < end; ++n) {
    EXPECT_EQ(seen.count(n), 1u) << "record " << n << (seen.count(n) ? " duplicated" : " missing");
  }
  EXPECT_EQ(got.size(), static_cast<size_t>(end - first)) << "records outside the expected range";
}

int64_t TotalLag(const Source& source) {
  int64_t total = 0;
  for (const auto& [partition, lag] : source.Lag()) total += lag;
  return total;
}

class KafkaSourceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK_AND_ASSIGN(cluster_, MockCluster::Start(3));
    ASSERT_OK(cluster_->CreateTopic("events", kPartitions));
  }
  KafkaOptions Options(const std::string& topic = "events") const {
    KafkaOptions o;
    o.brokers = cluster_->bootstraps();
    o.topic = topic;
    o.client_id = "kafka-source-test";
    return o;
  }
  std::unique_ptr<MockCluster> cluster_;
};

TEST_F(KafkaSourceTest, ReadsEverythingExactlyOnce) {
  ASSERT_OK(Produce(cluster_->bootstraps(), "events", Numbered(0, 200)));
  ASSERT_OK_AND_ASSIGN(auto source, OpenKafkaSource(Options()));
  EXPECT_EQ(source->Describe(), "kafka:events@" + cluster_->bootstraps());
  EXPECT_EQ(source->CurrentPositions(), (Positions{{"0", 0}, {"1", 0}, {"2", 0}, {"3", 0}}));
  ASSERT_OK_AND_ASSIGN(auto got, Drain(*source, 200));
  ExpectExactly(got, 0, 200);
  EXPECT_EQ(source->CurrentPositions(), (Positions{{"0", 50}, {"1", 50}, {"2", 50}, {"3", 50}}));

  // Records produced later arrive too, after the ones already delivered.
  ASSERT_OK(Produce(cluster_->bootstraps(), "events", Numbered(200, 40)));
  ASSERT_OK_AND_ASSIGN(auto more, Drain(*source, 40));
  ExpectExactly(more, 200, 240);
}

TEST_F(KafkaSourceTest, PollStopsAtMaxBytes) {
  ASSERT_OK(Produce(cluster_->bootstraps(), "events", Numbered(0, 40)));
  ASSERT_OK_AND_ASSIGN(auto source, OpenKafkaSource(Options()));
  std::vector<Got> got;
  auto sink = [&](const SourceRecord& r) {
    got.push_back(Got{r.partition, r.offset, r.timestamp_ms, std::string(r.value)});
  };
  // The first record always comes; then no more once max_bytes is reached (a
  // poll returns fewer when no more are fetched yet: the limits are upper
  // bounds, and the loop shows they are reached once records are waiting).
  ASSERT_OK_AND_ASSIGN(int64_t n, source->Poll(1, 5000, sink));
  EXPECT_EQ(n, 1);
  bool reached = false;
  for (int polls = 0; got.size() < 40 && polls < 200; ++polls) {
    // Two records' bytes allow two; one byte more allows a third.
    int64_t limit = polls % 2 ? 2 : 3;
    ASSERT_OK_AND_ASSIGN(n, source->Poll(2 * kRecordBytes + (limit == 3), 5000, sink));
    EXPECT_LE(n, limit) << "poll " << polls;
    reached = reached || n == limit;
  }
  EXPECT_TRUE(reached) << "no poll reached its limit";
  ExpectExactly(got, 0, 40);
  EXPECT_EQ(Record(1234).size(), kRecordBytes);
}

// Splits `all` by saved positions: records before them and from them on.
std::pair<std::vector<Got>, std::vector<Got>> SplitAt(const std::vector<Got>& all,
                                                      const Positions& at) {
  std::pair<std::vector<Got>, std::vector<Got>> out;
  for (const Got& g : all) (g.offset < at.at(g.partition) ? out.first : out.second).push_back(g);
  return out;
}

TEST_F(KafkaSourceTest, SeekToSavedPositionsContinuesWithoutGapOrDuplicate) {
  ASSERT_OK(Produce(cluster_->bootstraps(), "events", Numbered(0, 200)));
  ASSERT_OK_AND_ASSIGN(auto source, OpenKafkaSource(Options()));
  // Read part of the topic in small polls and save the positions, as a checkpoint would.
  std::vector<Got> first;
  auto sink = [&](const SourceRecord& r) {
    first.push_back(Got{r.partition, r.offset, r.timestamp_ms, std::string(r.value)});
  };
  while (first.size() < 90) {
    ASSERT_OK_AND_ASSIGN(int64_t n, source->Poll(64, 5000, sink));
    ASSERT_GT(n, 0);
  }
  Positions saved = source->CurrentPositions();
  int64_t saved_total = 0;
  for (const auto& [p, offset] : saved) saved_total += offset;
  EXPECT_EQ(saved_total, static_cast<int64_t>(first.size()));

  // The live source keeps reading past its checkpoint: that part is "lost" by a crash.
  ASSERT_OK_AND_ASSIGN(auto uncommitted, Drain(*source, 110));
  ExpectExactly(
      [&] {
        auto all = first;
        all.insert(all.end(), uncommitted.begin(), uncommitted.end());
        return all;
      }(),
      0, 200);

  ASSERT_OK(Produce(cluster_->bootstraps(), "events", Numbered(200, 100)));

  // Seeking the same source back to the checkpoint: exactly the rest.
  ASSERT_OK(source->Seek(saved));
  EXPECT_EQ(source->CurrentPositions(), saved);
  ASSERT_OK_AND_ASSIGN(auto rest, Drain(*source, 300 - first.size()));
  auto all = first;
  all.insert(all.end(), rest.begin(), rest.end());
  ExpectExactly(all, 0, 300);
  EXPECT_TRUE(SplitAt(rest, saved).first.empty()) << "records before the saved positions";

  // A fresh source (a restarted pipeline) seeking to the checkpoint: exactly the rest.
  ASSERT_OK_AND_ASSIGN(auto fresh, OpenKafkaSource(Options()));
  ASSERT_OK(fresh->Seek(saved));
  ASSERT_OK_AND_ASSIGN(auto fresh_rest, Drain(*fresh, 300 - first.size()));
  all = first;
  all.insert(all.end(), fresh_rest.begin(), fresh_rest.end());
  ExpectExactly(all, 0, 300);
}

TEST_F(KafkaSourceTest, MissingPartitionsStartAtTheBeginning) {
  ASSERT_OK(Produce(cluster_->bootstraps(), "events", Numbered(0, 80)));
  ASSERT_OK_AND_ASSIGN(auto source, OpenKafkaSource(Options()));
  ASSERT_OK(source->Seek({{"1", 15}, {"3", 20}}));  // partition 3 at its end
  EXPECT_EQ(source->CurrentPositions(), (Positions{{"0", 0}, {"1", 15}, {"2", 0}, {"3", 20}}));
  ASSERT_OK_AND_ASSIGN(auto got, Drain(*source, 20 + 5 + 20));
  std::set<int> want;
  for (int n = 0; n < 80; ++n) {
    int p = n % kPartitions;
    if (p == 0 || p == 2 || (p == 1 && n / kPartitions >= 15)) want.insert(n);
  }
  std::set<int> seen;
  for (const Got& g : got) {
    int n = -1;
    ASSERT_EQ(std::sscanf(g.value.c_str(), "{\"n\":%d,", &n), 1);
    EXPECT_TRUE(seen.insert(n).second) << "duplicate " << n;
  }
  EXPECT_EQ(seen, want);
}

TEST_F(KafkaSourceTest, LagDecreasesToZero) {
  ASSERT_OK(Produce(cluster_->bootstraps(), "events", Numbered(0, 120)));
  ASSERT_OK_AND_ASSIGN(auto source, OpenKafkaSource(Options()));
  EXPECT_EQ(TotalLag(*source), 120);
  int64_t previous = 120;
  int64_t delivered = 0;
  auto sink = [&](const SourceRecord&) { ++delivered; };
  for (int i = 0; i < 200 && delivered < 120; ++i) {
    ASSERT_OK(source->Poll(100, 1000, sink));
    int64_t lag = TotalLag(*source);
    EXPECT_LE(lag, previous);
    EXPECT_GE(lag, 120 - delivered) << "lag below the records not yet delivered";
    previous = lag;
  }
  ASSERT_EQ(delivered, 120);
  EXPECT_EQ(TotalLag(*source), 0);
  EXPECT_EQ(source->Lag(), (Positions{{"0", 0}, {"1", 0}, {"2", 0}, {"3", 0}}));
}

TEST_F(KafkaSourceTest, UnknownTopicIsAClearError) {
  ASSERT_ERROR(OpenKafkaSource(Options("no_such_topic")), StatusCode::kNotFound,
               "topic 'no_such_topic' does not exist");
}

TEST_F(KafkaSourceTest, BadSeeksAreRejected) {
  ASSERT_OK(Produce(cluster_->bootstraps(), "events", Numbered(0, 8)));
  ASSERT_OK_AND_ASSIGN(auto source, OpenKafkaSource(Options()));
  ASSERT_ERROR(source->Seek({{"7", 0}}), StatusCode::kInvalidArgument, "has no partition 7");
  ASSERT_ERROR(source->Seek({{"x1", 0}}), StatusCode::kInvalidArgument, "'x1'");
  ASSERT_ERROR(source->Seek({{"01", 0}}), StatusCode::kInvalidArgument,
               "partition '01' is not a Kafka partition number");
  ASSERT_ERROR(source->Seek({{"1", -2}}), StatusCode::kInvalidArgument, "negative offset -2");
  ASSERT_ERROR(source->Seek({{"2", 3}}), StatusCode::kOutOfRange,
               "topic 'events' partition 2: position 3 is beyond the end");
}

TEST_F(KafkaSourceTest, ForbiddenPropertiesAreRejected) {
  KafkaOptions o = Options();
  o.properties["enable.auto.commit"] = "true";
  ASSERT_ERROR(OpenKafkaSource(o), StatusCode::kInvalidArgument, "never commits offsets");
  o.properties = {{"auto.offset.reset", "earliest"}};
  ASSERT_ERROR(OpenKafkaSource(o), StatusCode::kInvalidArgument, "'auto.offset.reset'='earliest'");
  o.properties = {{"auto.offset.reset", "error"}, {"enable.auto.commit", "false"}};
  ASSERT_OK(OpenKafkaSource(o));
  o.properties = {{"no.such.property", "1"}};
  ASSERT_ERROR(OpenKafkaSource(o), StatusCode::kInvalidArgument, "no.such.property");
  o = Options();
  o.brokers.clear();
  ASSERT_ERROR(OpenKafkaSource(o), StatusCode::kInvalidArgument, "no brokers");
}

TEST_F(KafkaSourceTest, PositionDeletedByRetentionIsOutOfRange) {
  // The mock keeps about 5 MB per partition: 14 message sets of 400 kB push the
  // first ones out, as retention would.
  std::vector<std::pair<int, std::string>> big;
  for (int i = 0; i < 14; ++i) big.emplace_back(0, std::string(400 * 1000, 'a' + i));
  ASSERT_OK(Produce(cluster_->bootstraps(), "events", big, /*flush_each=*/true));
  ASSERT_OK_AND_ASSIGN(auto source, OpenKafkaSource(Options()));
  int64_t earliest = source->CurrentPositions().at("0");
  ASSERT_GT(earliest, 0) << "the mock deleted nothing";
  ASSERT_ERROR(source->Seek({{"0", 0}}), StatusCode::kOutOfRange,
               "topic 'events' partition 0: position 0 is no longer retained (earliest offset is " +
                   std::to_string(earliest) + ")");
  ASSERT_OK(source->Seek({{"0", earliest}}));
  ASSERT_OK_AND_ASSIGN(auto got, Drain(*source, 14 - earliest, 1 << 20));
  ASSERT_EQ(got.size(), static_cast<size_t>(14 - earliest));
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].offset, earliest + static_cast<int64_t>(i));
    EXPECT_EQ(got[i].value[0], static_cast<char>('a' + earliest + i));
  }
}

TEST_F(KafkaSourceTest, RecordsDeletedWhileReadingStopThePoll) {
  auto big = [](int first, int count) {
    std::vector<std::pair<int, std::string>> out;
    for (int i = first; i < first + count; ++i) out.emplace_back(0, std::string(400 * 1000, 'x'));
    return out;
  };
  ASSERT_OK(Produce(cluster_->bootstraps(), "events", big(0, 4), /*flush_each=*/true));
  KafkaOptions o = Options();
  // Prefetch as little as possible, so that the trimmed records are not already fetched.
  o.properties = {{"queued.max.messages.kbytes", "1"},
                  {"message.max.bytes", "1000"},
                  {"fetch.max.bytes", "1000"},
                  {"fetch.message.max.bytes", "1"}};
  ASSERT_OK_AND_ASSIGN(auto source, OpenKafkaSource(o));
  std::vector<int64_t> offsets;
  auto sink = [&](const SourceRecord& r) { offsets.push_back(r.offset); };
  ASSERT_OK_AND_ASSIGN(int64_t n, source->Poll(1, 5000, sink));
  ASSERT_EQ(n, 1);
  // The mock trims the partition log to about 5 MB: offsets up to ~17 go away.
  ASSERT_OK(Produce(cluster_->bootstraps(), "events", big(4, 16), /*flush_each=*/true));
  Status st;
  for (int i = 0; i < 100 && st.ok(); ++i) st = source->Poll(1, 100, sink).status();
  ASSERT_ERROR(st, StatusCode::kOutOfRange, "topic 'events' partition 0: fetch position");
  // What was delivered has no gap; the error sticks until the next Seek.
  for (size_t i = 0; i < offsets.size(); ++i) EXPECT_EQ(offsets[i], static_cast<int64_t>(i));
  EXPECT_LT(offsets.size(), 20u);
  EXPECT_EQ(source->CurrentPositions().at("0"), static_cast<int64_t>(offsets.size()));
  ASSERT_ERROR(source->Poll(1, 100, sink), StatusCode::kOutOfRange, "fetch position");
  ASSERT_ERROR(source->Seek(source->CurrentPositions()), StatusCode::kOutOfRange,
               "no longer retained");
}

TEST(KafkaSourceOpenTest, UnreachableBrokersAreARetryableError) {
  KafkaOptions o;
  o.brokers = "127.0.0.1:1";
  o.topic = "events";
  o.metadata_timeout_ms = 500;
  auto source = OpenKafkaSource(o);
  ASSERT_ERROR(source, StatusCode::kIOError, "kafka:events@127.0.0.1:1: metadata request");
  EXPECT_TRUE(source.status().retryable());
}

TEST_F(KafkaSourceTest, AllBrokersDownIsAnErrorAfterTheTimeout) {
  ASSERT_OK(Produce(cluster_->bootstraps(), "events", Numbered(0, 8)));
  KafkaOptions o = Options();
  o.brokers_down_timeout_ms = 1000;
  ASSERT_OK_AND_ASSIGN(auto source, OpenKafkaSource(o));
  ASSERT_OK_AND_ASSIGN(auto got, Drain(*source, 8));
  ExpectExactly(got, 0, 8);
  ASSERT_OK(cluster_->SetAllBrokersUp(false));
  Status st;
  auto sink = [](const SourceRecord&) {};
  for (int i = 0; i < 60 && st.ok(); ++i) st = source->Poll(1 << 20, 250, sink).status();
  ASSERT_ERROR(st, StatusCode::kIOError, "topic 'events': all brokers down");
  EXPECT_TRUE(st.retryable());
}

}  // namespace
}  // namespace sluice::sources
