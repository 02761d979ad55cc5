// TaskPool: worker threads that run the parts of one job at once, for a
// pipeline that uses every core (docs/pipelines.md "Parallelism").
//
// Run(parts, fn) calls fn(0) .. fn(parts - 1) and returns once every call has
// returned: a fork-join, so the caller sees every part's effects after Run.
// Start(parts, fn) hands the parts to the workers and returns at once, so the
// caller can do other work meanwhile; Wait() returns once they have all
// returned (and the caller sees their effects). One job at a time: no Run or
// Start between a Start and its Wait. Parts beyond the workers (all of them,
// for a pool without workers) may run only once the caller waits.
//
// Parts are claimed, not assigned: a thread free to work takes the next part
// no thread has begun. The caller of Run takes parts until none is left, and
// so does the caller of Wait; only then do they wait, for parts other
// threads are running. A worker that the scheduler has not run yet (its core
// busy with another thread) therefore holds nobody up: its part is done by
// the caller, and the worker finds nothing left when it runs. Which thread
// runs a part, and how many parts run at once, is not promised; a part must
// not wait for another part. Parts must not throw.
//
// Workers are named "<role><n>:<owner>" (common/thread_name.h).
//
// A part may itself take items by claim from an atomic counter that all
// parts share (ClaimRun below: runs that shrink as the items run out).
//
// Thread-safety: Run, Start and Wait from one thread at a time; ClaimRun
// from any.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

namespace sluice {

class TaskPool {
 public:
  explicit TaskPool(int workers, std::string_view role = "pool", std::string_view owner = {});
  ~TaskPool();  // waits for a started job
  TaskPool(const TaskPool&) = delete;
  TaskPool& operator=(const TaskPool&) = delete;

  int workers() const { return static_cast<int>(threads_.size()); }
  // The threads that may run a Run's parts: the workers and the caller.
  int threads() const { return workers() + 1; }

  void Run(int parts, const std::function<void(int)>& fn);
  void Start(int parts, std::function<void(int)> fn);
  void Wait();
  // Whether a started job has parts that have not returned: the caller of
  // Start may do other work of its own until they have, then Wait.
  bool Busy();

 private:
  // Makes fn's parts the job to claim and wakes the workers.
  void Dispatch(std::function<void(int)> fn, int parts);
  // Runs parts of the current job until none is left to claim.
  void RunParts(std::unique_lock<std::mutex>& lock);
  void Work();

  std::vector<std::thread> threads_;
  std::mutex mu_;
  std::condition_variable start_, done_;
  std::function<void(int)> job_;
  int parts_ = 0;           // of the current job (0: none)
  int next_ = 0;            // the next part to claim
  int finished_ = 0;        // parts that returned
  int64_t generation_ = 0;  // one per job
  bool stop_ = false;
};

// The cores this process may use (at least 1).
int AvailableCores();

// Claims the next run of the items [0, n) that `threads` threads share by
// claim, `next` being the first item no thread has claimed: [begin, end), or
// begin == end == n once none is left. Runs hold at most `max_run` items,
// and fewer as the items run out (a share of what is left, 1 / (2 x
// threads)), down to `min_run`: so that a thread preempted while it holds
// the last runs (more threads than cores) keeps the others waiting for
// little, while the first runs stay long. The last run takes what is left
// rather than leave fewer than `min_run`. (A `min_run` of 0 counts as 1, a
// `max_run` below `min_run` as `min_run`.) Every item is claimed once, in
// order; safe from any number of threads.
std::pair<size_t, size_t> ClaimRun(std::atomic<size_t>& next, size_t n, int threads, size_t min_run,
                                   size_t max_run);

}  // namespace sluice
