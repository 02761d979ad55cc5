#include "common/task_pool.h"

#include <sched.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace sluice {

TaskPool::TaskPool(int threads) {
  for (int i = 1; i < std::max(threads, 1); ++i) workers_.emplace_back([this, i] { Work(i); });
}

TaskPool::~TaskPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  start_.notify_all();
  for (std::thread& t : workers_) t.join();
}

void TaskPool::Run(int parts, const std::function<void(int)>& fn) {
  if (parts > threads()) {
    std::fprintf(stderr, "TaskPool::Run: %d parts on %d threads\n", parts, threads());
    std::abort();
  }
  if (parts <= 0) return;
  if (parts > 1) {
    std::lock_guard<std::mutex> lock(mu_);
    job_ = &fn;
    parts_ = parts;
    running_ = parts - 1;
    ++generation_;
  }
  if (parts > 1) start_.notify_all();
  fn(0);
  if (parts > 1) {
    std::unique_lock<std::mutex> lock(mu_);
    done_.wait(lock, [this] { return running_ == 0; });
    job_ = nullptr;
  }
}

void TaskPool::Work(int index) {
  int64_t seen = 0;
  for (;;) {
    const std::function<void(int)>* job;
    {
      std::unique_lock<std::mutex> lock(mu_);
      start_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
      if (index >= parts_) continue;
      job = job_;
    }
    (*job)(index);
    std::lock_guard<std::mutex> lock(mu_);
    if (--running_ == 0) done_.notify_one();
  }
}

int AvailableCores() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return std::max(1, CPU_COUNT(&set));
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

}  // namespace sluice
