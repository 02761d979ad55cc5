// The runtime (`sluice run`) over a scratch warehouse: what a stop commits.
#include "runtime/runtime.h"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "common/testing.h"
#include "pipeline/test_util.h"
#include "sql/parser.h"

namespace sluice::runtime {
namespace {

class RuntimeTest : public pipeline::testing::PipelineFixture {
 protected:
  // lake.events fed by the source events_in (`source`: its WITH options; by
  // default the HTTP source), committing every hour: only a stop or the end of
  // a bounded run commits.
  Result<std::unique_ptr<Runtime>> Start(int64_t stop_drain_ms,
                                         const std::string& source = "connector = 'http'",
                                         bool bounded = false) {
    auto script = sql::ParseScript(
        "CREATE TABLE lake.events (id BIGINT NOT NULL, user_id BIGINT, kind STRING, ts "
        "TIMESTAMPTZ) PARTITIONED BY (day(ts));"
        "CREATE SOURCE events_in (id BIGINT, user_id BIGINT, kind STRING, ts TIMESTAMPTZ)"
        "  WITH (" +
        source +
        ") FORMAT JSON;"
        "CREATE PIPELINE load_events WITH (commit_interval = '1h') AS"
        "  INSERT INTO lake.events SELECT * FROM events_in;");
    RETURN_IF_ERROR(script.status());
    RuntimeOptions o;
    o.warehouse = warehouse_;
    o.state_dir = (dir_ / "state").string();
    o.stop_drain_ms = stop_drain_ms;
    o.bounded = bounded;
    ASSIGN_OR_RETURN(auto rt, Runtime::Make(*catalog_, *io_, o, *script));
    RETURN_IF_ERROR(rt->Start());
    return rt;
  }
  // Appends events [from, to) to the runtime's stream, as HTTP ingest does
  // before it acknowledges them: in batches of 100,000, made before the first
  // is appended, so that the running pipeline cannot read one batch while the
  // next is made (a slow build would let it catch up before a stop).
  void Acknowledge(Runtime& rt, int64_t from, int64_t to) {
    log::StreamLog* stream = rt.FindStream("events_in");
    ASSERT_NE(stream, nullptr);
    std::vector<std::vector<std::string>> batches;
    for (int64_t i = from; i < to; i += 100'000) {
      auto& batch = batches.emplace_back();
      for (int64_t id = i; id < std::min(to, i + 100'000); ++id) batch.push_back(Event(id));
    }
    for (const auto& batch : batches) ASSERT_OK(stream->Append(batch).status());
  }
};

TEST_F(RuntimeTest, AStopCommitsEveryRecordAcknowledgedBeforeIt) {
  // 300,000 records (20 MB, several polls) acknowledged, then a stop at once: the
  // pipeline is far behind, and reads the log to its end before the final
  // checkpoint.
  ASSERT_OK_AND_ASSIGN(auto rt, Start(/*stop_drain_ms=*/120'000));
  Acknowledge(*rt, 0, 300'000);
  rt->RequestStop();
  ASSERT_OK(rt->Wait());
  EXPECT_EQ(Ids(), Range(0, 300'000));
}

TEST_F(RuntimeTest, WhatAStopLeftInTheLogTheNextRunCommitsOnce) {
  // No time to read the log at the stop: the final checkpoint holds what was
  // read; the next run commits the rest, once.
  {
    ASSERT_OK_AND_ASSIGN(auto rt, Start(/*stop_drain_ms=*/0));
    Acknowledge(*rt, 0, 300'000);
    rt->RequestStop();
    ASSERT_OK(rt->Wait());
  }
  EXPECT_LT(Ids().size(), 300'000u) << "the stop waited for the log's end";
  ASSERT_OK_AND_ASSIGN(auto rt, Start(/*stop_drain_ms=*/120'000));
  rt->RequestStop();
  ASSERT_OK(rt->Wait());
  EXPECT_EQ(Ids(), Range(0, 300'000));
}

// WaitEnded returns when it is woken, long before its timeout (after which
// it would return true as well): the test fails on the time it took.
TEST_F(RuntimeTest, WaitEndedWakesAtAStopFromAnotherThread) {
  ASSERT_OK_AND_ASSIGN(auto rt, Start(/*stop_drain_ms=*/0));
  EXPECT_FALSE(rt->WaitEnded(std::chrono::milliseconds(20)));  // running: the wait times out
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));  // (the wait has begun)
    rt->RequestStop();
  });
  auto started = std::chrono::steady_clock::now();
  EXPECT_TRUE(rt->WaitEnded(std::chrono::seconds(60)));
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(30));
  stopper.join();
  ASSERT_OK(rt->Wait());
  EXPECT_TRUE(rt->finished());
  EXPECT_TRUE(rt->WaitEnded(std::chrono::milliseconds(0)));
}

TEST_F(RuntimeTest, WaitEndedWakesWhenABoundedRunReadsItsFilesToTheEnd) {
  std::filesystem::create_directories(dir_ / "in");
  {
    std::ofstream in(dir_ / "in" / "a.jsonl");
    for (int64_t id = 0; id < 1000; ++id) in << Event(id) << "\n";
  }
  ASSERT_OK_AND_ASSIGN(auto rt, Start(/*stop_drain_ms=*/0,
                                      "connector = 'file', path = '" + (dir_ / "in").string() + "'",
                                      /*bounded=*/true));
  auto started = std::chrono::steady_clock::now();
  EXPECT_TRUE(rt->WaitEnded(std::chrono::seconds(60)));
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(30));
  EXPECT_TRUE(rt->finished());
  EXPECT_FALSE(rt->stopping()) << "the run ended by itself";
  ASSERT_OK(rt->Wait());
  EXPECT_EQ(Ids(), Range(0, 1000));
}

}  // namespace
}  // namespace sluice::runtime
