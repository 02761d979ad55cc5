// Group commit under concurrent appenders and readers, fsync counting per policy,
// and the sticky error after a failed sync (through a fault-injecting storage).
#include <atomic>
#include <set>
#include <thread>

#include "common/testing.h"
#include "log/fault_injection_storage.h"
#include "log/stream_log.h"
#include "log/test_util.h"

namespace sluice::log {
namespace {

using testing::ReadAll;
using testing::ScratchDir;

constexpr int kThreads = 4;
constexpr int kAppendsPerThread = 500;

std::string Value(int thread, int i) {
  return "t" + std::to_string(thread) + "-" + std::to_string(i);
}

// Runs kThreads x kAppendsPerThread single-record appends (plus a reader polling the
// readable end) and checks every record is present exactly once at its acked offset.
void RunConcurrentAppends(StreamLog* log) {
  std::vector<std::vector<AppendResult>> acks(kThreads);
  std::atomic<bool> failed{false};
  std::atomic<bool> writers_done{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kAppendsPerThread; ++i) {
        auto r = log->Append({Value(t, i)});
        if (!r.ok()) {
          failed = true;
          return;
        }
        acks[t].push_back(*r);
      }
    });
  }
  // A concurrent reader must only ever see complete, valid records.
  std::thread reader([&] {
    int64_t offset = 0;
    while (!writers_done.load() || offset < log->end_offset()) {
      auto r = log->Read(offset, 4096);
      if (!r.ok()) {
        failed = true;
        ADD_FAILURE() << r.status().ToString();
        return;
      }
      for (const auto& rec : r->records) {
        if (rec.offset != offset++ || rec.value.empty() || rec.value[0] != 't') failed = true;
      }
    }
  });
  for (auto& th : threads) th.join();
  writers_done = true;
  reader.join();
  ASSERT_FALSE(failed.load());

  const int64_t total = kThreads * kAppendsPerThread;
  EXPECT_EQ(log->next_offset(), total);
  ASSERT_OK_AND_ASSIGN(auto all, ReadAll(*log, 1 << 16));
  ASSERT_EQ(static_cast<int64_t>(all.size()), total);
  std::set<int64_t> offsets;
  for (int t = 0; t < kThreads; ++t) {
    int64_t previous = -1;
    for (int i = 0; i < kAppendsPerThread; ++i) {
      const AppendResult& a = acks[t][i];
      EXPECT_EQ(a.first_offset, a.last_offset);
      EXPECT_GT(a.first_offset, previous);  // one thread's appends stay in order
      previous = a.first_offset;
      ASSERT_LT(a.first_offset, total);
      EXPECT_EQ(all[a.first_offset].value, Value(t, i));
      EXPECT_TRUE(offsets.insert(a.first_offset).second) << "offset acked twice";
    }
  }
  EXPECT_EQ(static_cast<int64_t>(offsets.size()), total);  // unique in [0, total): contiguous
}

TEST(ConcurrencyTest, GroupCommitBatchesSyncs) {
  ScratchDir dir;
  LogOptions o;
  o.segment_bytes = 16 << 10;  // rolls happen under contention too
  ASSERT_OK_AND_ASSIGN(auto log, StreamLog::Open(dir.path(), o));
  RunConcurrentAppends(log.get());
  int64_t syncs = log->sync_count();
  std::printf("group commit: %d appends, %lld syncs\n", kThreads * kAppendsPerThread,
              static_cast<long long>(syncs));
  EXPECT_GT(syncs, 0);
  EXPECT_LT(syncs, kThreads * kAppendsPerThread);
}

TEST(ConcurrencyTest, EveryBatchSyncsEachBatch) {
  ScratchDir dir;
  LogOptions o;
  o.fsync_policy = FsyncPolicy::kEveryBatch;
  ASSERT_OK_AND_ASSIGN(auto log, StreamLog::Open(dir.path(), o));
  RunConcurrentAppends(log.get());
  EXPECT_EQ(log->sync_count(), kThreads * kAppendsPerThread);
}

TEST(ConcurrencyTest, IntervalPolicySyncsRarely) {
  ScratchDir dir;
  LogOptions o;
  o.fsync_policy = FsyncPolicy::kInterval;
  o.fsync_interval_ms = 60000;
  ASSERT_OK_AND_ASSIGN(auto log, StreamLog::Open(dir.path(), o));
  for (int i = 0; i < 100; ++i) ASSERT_OK(log->Append({"x"}));
  EXPECT_LE(log->sync_count(), 1);
  ASSERT_OK(log->Sync());
  ASSERT_OK_AND_ASSIGN(auto all, ReadAll(*log));
  EXPECT_EQ(all.size(), 100u);
}

// A failed sync fails its batch; once the storage works again the next append
// repairs the log by itself (no reopen): the failed batch is cut off, offsets
// continue after the last acknowledged record, and a reopen sees the same.
TEST(ConcurrencyTest, FailedSyncIsRepairedByTheNextAppendAndNothingUnackedSurvives) {
  ScratchDir dir;
  FaultInjectingLogStorage storage;
  LogOptions o;
  o.storage = &storage;
  {
    ASSERT_OK_AND_ASSIGN(auto log, StreamLog::Open(dir.path(), o));
    ASSERT_OK(log->Append({"a"}));
    storage.FailAll(LogOp::kSync);
    ASSERT_ERROR(log->Append({"b"}, IdempotencyKey{7, 1}), StatusCode::kIOError, "(injected)");
    ASSERT_ERROR(log->Health(), StatusCode::kIOError, "(injected)");
    ASSERT_ERROR(log->Append({"still failing"}), StatusCode::kIOError, "(injected)");
    EXPECT_EQ(log->end_offset(), 1);
    // "b" was written but never acknowledged: readers must not see it.
    ASSERT_OK_AND_ASSIGN(ReadResult r, log->Read(0, 1 << 20));
    ASSERT_EQ(r.records.size(), 1u);
    EXPECT_EQ(r.records[0].value, "a");
    storage.Heal();
    ASSERT_OK_AND_ASSIGN(AppendResult c, log->Append({"c"}));
    EXPECT_EQ(c.first_offset, 1) << "offsets continue after the last acknowledged record";
    EXPECT_OK(log->Health());
    // The failed batch's key answers nothing: its retry is appended.
    ASSERT_OK_AND_ASSIGN(AppendResult retry, log->Append({"b"}, IdempotencyKey{7, 1}));
    EXPECT_FALSE(retry.duplicate);
    EXPECT_EQ(retry.first_offset, 2);
  }
  ASSERT_OK_AND_ASSIGN(auto log, StreamLog::Open(dir.path(), o));
  ASSERT_OK_AND_ASSIGN(auto all, ReadAll(*log));
  std::vector<std::string> values;
  for (const auto& rec : all) values.push_back(rec.value);
  EXPECT_EQ(values, (std::vector<std::string>{"a", "c", "b"}));
}

// Health() alone repairs too, once the storage works: a probe sees the log recover
// without any append.
TEST(ConcurrencyTest, HealthRepairsTheLogWithoutAnAppend) {
  ScratchDir dir;
  FaultInjectingLogStorage storage;
  LogOptions o;
  o.storage = &storage;
  ASSERT_OK_AND_ASSIGN(auto log, StreamLog::Open(dir.path(), o));
  storage.FailAll(LogOp::kSync);
  ASSERT_FALSE(log->Append({"x"}).ok());
  storage.Heal();
  Status health;
  for (int i = 0; i < 50 && !(health = log->Health()).ok(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_OK(health);
  ASSERT_OK_AND_ASSIGN(AppendResult y, log->Append({"y"}));
  EXPECT_EQ(y.first_offset, 0);
}

}  // namespace
}  // namespace sluice::log
