#include "common/task_pool.h"

#include <sched.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace sluice {
namespace {

void Check(bool ok, const char* what, int parts, int workers) {
  if (ok) return;
  std::fprintf(stderr, "TaskPool: %s of %d parts on %d workers\n", what, parts, workers);
  std::abort();
}

}  // namespace

TaskPool::TaskPool(int workers) {
  for (int i = 1; i <= std::max(workers, 0); ++i) threads_.emplace_back([this, i] { Work(i); });
}

TaskPool::~TaskPool() {
  Wait();
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  start_.notify_all();
  for (std::thread& t : threads_) t.join();
}

void TaskPool::Dispatch(std::function<void(int)> fn, int parts, int offset, int running) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    Check(running_ == 0, "a job started while another runs", parts, workers());
    job_ = std::move(fn);
    parts_ = parts;
    offset_ = offset;
    running_ = running;
    ++generation_;
  }
  start_.notify_all();
}

void TaskPool::Run(int parts, const std::function<void(int)>& fn) {
  Check(parts <= threads(), "Run", parts, workers());
  if (parts <= 0) return;
  if (parts > 1) Dispatch(fn, parts, 0, parts - 1);
  fn(0);
  if (parts > 1) Wait();
}

void TaskPool::Start(int parts, std::function<void(int)> fn) {
  Check(parts <= workers(), "Start", parts, workers());
  if (parts <= 0) return;
  Dispatch(std::move(fn), parts, 1, parts);
}

void TaskPool::Wait() {
  std::unique_lock<std::mutex> lock(mu_);
  done_.wait(lock, [this] { return running_ == 0; });
}

void TaskPool::Work(int index) {
  int64_t seen = 0;
  for (;;) {
    int part;
    {
      std::unique_lock<std::mutex> lock(mu_);
      start_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
      part = index - offset_;
      if (part < 1 - offset_ || part >= parts_) continue;
    }
    job_(part);  // job_ is not replaced before every part has returned
    std::lock_guard<std::mutex> lock(mu_);
    if (--running_ == 0) done_.notify_all();
  }
}

int AvailableCores() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return std::max(1, CPU_COUNT(&set));
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

}  // namespace sluice
