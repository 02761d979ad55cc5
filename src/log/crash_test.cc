// Kill/restart/verify: a child process appends in a loop and reports each
// acknowledged batch through a pipe; the parent kills it with SIGKILL at a random
// moment, reopens the log and checks every acknowledged batch is present and
// intact, then that the log accepts appends. Repeated over several rounds on the
// same log, so later rounds also recover logs that earlier kills left behind.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <random>
#include <thread>

#include "common/testing.h"
#include "log/stream_log.h"
#include "log/test_util.h"

namespace sluice::log {
namespace {

using testing::ScratchDir;

struct Ack {
  int64_t first_offset;
  int32_t round;
  int32_t batch;
};

std::vector<std::string> BatchRecords(int round, int batch) {
  // Sizes vary so batches straddle segment rolls and tears land anywhere.
  std::vector<std::string> out;
  int n = 1 + batch % 7;
  for (int i = 0; i < n; ++i) {
    out.push_back(fmt::format("r{}-b{}-i{}-{}", round, batch, i, std::string(batch % 97, 'p')));
  }
  return out;
}

LogOptions CrashOptions() {
  LogOptions o;
  o.segment_bytes = 32 << 10;
  return o;
}

[[noreturn]] void ChildLoop(const std::string& dir, int round, int fd) {
  auto log = StreamLog::Open(dir, CrashOptions());
  if (!log.ok()) _exit(2);
  for (int batch = 0;; ++batch) {
    auto r = (*log)->Append(BatchRecords(round, batch),
                            IdempotencyKey{round, static_cast<int64_t>(batch)});
    if (!r.ok()) _exit(3);
    Ack ack{r->first_offset, round, batch};
    if (::write(fd, &ack, sizeof(ack)) != static_cast<ssize_t>(sizeof(ack))) _exit(4);
  }
}

TEST(CrashTest, KillNineNeverLosesAcknowledgedBatches) {
  ScratchDir dir;
  std::mt19937 rng(std::random_device{}());
  std::vector<Ack> acked;
  constexpr int kRounds = 8;
  for (int round = 0; round < kRounds; ++round) {
    int fds[2];
    ASSERT_EQ(::pipe(fds), 0);
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      ::close(fds[0]);
      ChildLoop(dir.path(), round, fds[1]);
    }
    ::close(fds[1]);
    std::this_thread::sleep_for(
        std::chrono::milliseconds(std::uniform_int_distribution<int>(20, 150)(rng)));
    ::kill(pid, SIGKILL);
    int wstatus = 0;
    ASSERT_EQ(::waitpid(pid, &wstatus, 0), pid);
    ASSERT_TRUE(WIFSIGNALED(wstatus)) << "child exited early with " << WEXITSTATUS(wstatus);
    size_t round_acks = 0;
    Ack ack;
    while (::read(fds[0], &ack, sizeof(ack)) == static_cast<ssize_t>(sizeof(ack))) {
      acked.push_back(ack);
      ++round_acks;
    }
    ::close(fds[0]);

    ASSERT_OK_AND_ASSIGN(auto log, StreamLog::Open(dir.path(), CrashOptions()));
    for (const Ack& a : acked) {
      auto want = BatchRecords(a.round, a.batch);
      ASSERT_OK_AND_ASSIGN(ReadResult r, log->Read(a.first_offset, 1 << 20));
      ASSERT_GE(r.records.size(), want.size()) << "round " << a.round << " batch " << a.batch;
      for (size_t i = 0; i < want.size(); ++i) {
        ASSERT_EQ(r.records[i].value, want[i]) << "offset " << a.first_offset + i;
      }
    }
    // The last acknowledged batch of this round is remembered as a duplicate.
    if (round_acks > 0) {
      const Ack& last = acked.back();
      ASSERT_OK_AND_ASSIGN(AppendResult dup, log->Append(BatchRecords(last.round, last.batch),
                                                         IdempotencyKey{last.round, last.batch}));
      EXPECT_TRUE(dup.duplicate);
      EXPECT_EQ(dup.first_offset, last.first_offset);
    }
    int64_t end = log->next_offset();
    ASSERT_OK_AND_ASSIGN(AppendResult fresh, log->Append({"after-crash"}));
    EXPECT_EQ(fresh.first_offset, end);
    std::printf("round %d: %zu batches acknowledged before kill, log ends at %lld\n", round,
                round_acks, static_cast<long long>(end));
  }
  EXPECT_GT(acked.size(), 0u);
}

}  // namespace
}  // namespace sluice::log
