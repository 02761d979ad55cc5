// The log on a failing disk, systematically: for each kind of storage call
// (append, fsync, create, truncate, remove, folder fsync) and a spread of its
// occurrences, that call fails once while a producer appends keyed batches across
// segment rolls and retention. A refused batch is retried with its key, as a
// client would. In every case: each batch ends up in the log exactly once and in
// order, nothing refused is readable, the log repairs itself without a reopen,
// and a reopen reads the same.
#include <algorithm>
#include <string>
#include <vector>

#include "common/testing.h"
#include "log/fault_injection_storage.h"
#include "log/stream_log.h"
#include "log/test_util.h"

namespace sluice::log {
namespace {

using testing::ReadAll;
using testing::ScratchDir;

constexpr int kBatches = 40;
constexpr LogOp kOps[] = {LogOp::kAppend,   LogOp::kSync,   LogOp::kCreate,
                          LogOp::kTruncate, LogOp::kRemove, LogOp::kSyncDir};

LogOptions Small(LogStorage* storage) {
  LogOptions o;
  o.segment_bytes = 600;  // a roll every few batches
  o.storage = storage;
  return o;
}

std::vector<std::string> Batch(int b) {
  return {"b" + std::to_string(b) + "-0", "b" + std::to_string(b) + "-1"};
}

// Appends every batch (retrying refused ones with the same key) and applies
// retention halfway; returns how many appends were refused.
int AppendAll(StreamLog& log) {
  int refused = 0;
  for (int b = 0; b < kBatches; ++b) {
    for (int attempt = 0;; ++attempt) {
      auto r = log.Append(Batch(b), IdempotencyKey{1, b});
      if (r.ok()) break;
      ++refused;
      EXPECT_NE(r.status().message().find("(injected)"), std::string::npos)
          << r.status().ToString();
      if (attempt == 3) {
        ADD_FAILURE() << "batch " << b
                      << " still refused after the fault: " << r.status().ToString();
        return refused;
      }
    }
    // Retention of the first records (a failed remove is retried at the next call).
    if (b >= kBatches / 2) (void)log.DeleteSegmentsBefore(40);
  }
  return refused;
}

// Every record from the log's first retained offset on, in order, once.
std::vector<std::string> Expected(const StreamLog& log) {
  std::vector<std::string> all;
  for (int b = 0; b < kBatches; ++b) {
    for (auto& r : Batch(b)) all.push_back(r);
  }
  EXPECT_GT(log.start_offset(), 0) << "retention removed nothing";
  EXPECT_LE(log.start_offset(), 40);
  return std::vector<std::string>(all.begin() + log.start_offset(), all.end());
}

std::vector<std::string> Values(const StreamLog& log) {
  auto all = ReadAll(log);
  EXPECT_TRUE(all.ok()) << all.status().ToString();
  std::vector<std::string> out;
  if (all.ok()) {
    for (const auto& r : *all) out.push_back(r.value);
  }
  return out;
}

TEST(LogFaultTest, EveryFailedStorageCallIsRepairedAndNothingIsLostOrDoubled) {
  std::vector<int64_t> calls(kLogOpCount);
  {
    ScratchDir dir;
    FaultInjectingLogStorage storage;
    ASSERT_OK_AND_ASSIGN(auto log, StreamLog::Open(dir.path(), Small(&storage)));
    for (LogOp op : kOps) calls[static_cast<int>(op)] = -storage.calls(op);
    ASSERT_EQ(AppendAll(*log), 0);
    for (LogOp op : kOps) calls[static_cast<int>(op)] += storage.calls(op);
    ASSERT_GT(log->start_offset(), 0);  // segments rolled and retention removed some
  }
  int cases = 0, refused_total = 0;
  for (LogOp op : kOps) {
    // Occurrences: the first few, then a spread; truncate runs only in a repair,
    // so it is failed on the first repair after an fsync failure.
    int64_t n_calls = std::max<int64_t>(calls[static_cast<int>(op)], op == LogOp::kTruncate);
    std::vector<int64_t> ns;
    for (int64_t n = 1; n <= n_calls && n <= 4; ++n) ns.push_back(n);
    for (int64_t k = 1; k <= 4 && n_calls > 4; ++k) ns.push_back(4 + (n_calls - 4) * k / 4);
    for (int64_t n : ns) {
      SCOPED_TRACE(fmt::format("call {} of op {} fails", n, static_cast<int>(op)));
      ScratchDir dir;
      FaultInjectingLogStorage storage;
      ASSERT_OK_AND_ASSIGN(auto log, StreamLog::Open(dir.path(), Small(&storage)));
      if (op == LogOp::kTruncate) storage.FailNth(LogOp::kSync, 3);
      storage.FailNth(op, n);
      refused_total += AppendAll(*log);
      EXPECT_OK(log->Health());
      EXPECT_EQ(Values(*log), Expected(*log));
      log.reset();
      ASSERT_OK_AND_ASSIGN(auto reopened, StreamLog::Open(dir.path(), Small(&storage)));
      EXPECT_EQ(Values(*reopened), Expected(*reopened)) << "after reopen";
      ++cases;
    }
  }
  std::printf("%d fault cases, %d appends refused and retried\n", cases, refused_total);
  EXPECT_GT(refused_total, 0);
}

}  // namespace
}  // namespace sluice::log
