// TaskPool: worker threads that run the parts of one job at once, for a
// pipeline that uses every core (docs/pipelines.md "Parallelism").
//
// Run(parts, fn) calls fn(0) .. fn(parts - 1), part 0 on the calling thread
// and the others on the pool's workers, and returns once every call has
// returned: a fork-join, so the caller sees every part's effects after Run.
// A pool of `threads` runs up to `threads` parts at once (threads - 1 workers
// besides the caller); Run with more parts than that is a bug (checked).
// Parts must not throw.
//
// Thread-safety: Run from one thread at a time (the pipeline's).
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
  explicit TaskPool(int threads);
  ~TaskPool();
  TaskPool(const TaskPool&) = delete;
  TaskPool& operator=(const TaskPool&) = delete;

  int threads() const { return static_cast<int>(workers_.size()) + 1; }
  void Run(int parts, const std::function<void(int)>& fn);

 private:
  void Work(int index);

  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::condition_variable start_, done_;
  const std::function<void(int)>* job_ = nullptr;
  int parts_ = 0;
  int64_t generation_ = 0;  // one per Run
  int running_ = 0;         // worker parts of the current Run not yet returned
  bool stop_ = false;
};

// The cores this process may use (at least 1).
int AvailableCores();

}  // namespace sluice
