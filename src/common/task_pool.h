// TaskPool: worker threads that run the parts of one job at once, for a
// pipeline that uses every core (docs/pipelines.md "Parallelism").
//
// Run(parts, fn) calls fn(0) .. fn(parts - 1), part 0 on the calling thread
// and the others on the workers, and returns once every call has returned: a
// fork-join, so the caller sees every part's effects after Run.
// Start(parts, fn) runs every part on the workers and returns at once, so the
// caller can do other work meanwhile; Wait() returns once they have all
// returned (and the caller sees their effects). One job at a time: no Run or
// Start between a Start and its Wait.
// A pool of `workers` runs Run jobs of up to workers + 1 parts and Start jobs
// of up to `workers` parts; more is a bug (checked). Parts must not throw.
//
// Thread-safety: Run, Start and Wait from one thread at a time.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace sluice {

class TaskPool {
 public:
  explicit TaskPool(int workers);
  ~TaskPool();  // waits for a started job
  TaskPool(const TaskPool&) = delete;
  TaskPool& operator=(const TaskPool&) = delete;

  int workers() const { return static_cast<int>(threads_.size()); }
  // The most parts of a Run: the workers and the caller.
  int threads() const { return workers() + 1; }

  void Run(int parts, const std::function<void(int)>& fn);
  void Start(int parts, std::function<void(int)> fn);
  void Wait();

 private:
  // Hands parts to the workers: worker w (1-based) runs part w - offset.
  void Dispatch(std::function<void(int)> fn, int parts, int offset, int running);
  void Work(int index);

  std::vector<std::thread> threads_;
  std::mutex mu_;
  std::condition_variable start_, done_;
  std::function<void(int)> job_;
  int parts_ = 0, offset_ = 0;
  int64_t generation_ = 0;  // one per job
  int running_ = 0;         // worker parts of the current job not yet returned
  bool stop_ = false;
};

// The cores this process may use (at least 1).
int AvailableCores();

}  // namespace sluice
