#include "common/task_pool.h"

#include <sched.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "common/thread_name.h"

namespace sluice {
namespace {

void Check(bool ok, const char* what, int parts) {
  if (ok) return;
  std::fprintf(stderr, "TaskPool: %s of %d parts\n", what, parts);
  std::abort();
}

}  // namespace

TaskPool::TaskPool(int workers, std::string_view role, std::string_view owner) {
  for (int i = 0; i < std::max(workers, 0); ++i) {
    threads_.emplace_back([this, name = ThreadName(role, i + 1, owner)] {
      NameThisThread(name);
      Work();
    });
  }
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

void TaskPool::Dispatch(std::function<void(int)> fn, int parts) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    Check(finished_ == parts_, "a job started while another runs", parts);
    job_ = std::move(fn);
    parts_ = parts;
    next_ = 0;
    finished_ = 0;
    ++generation_;
  }
  if (!threads_.empty()) start_.notify_all();
}

void TaskPool::RunParts(std::unique_lock<std::mutex>& lock) {
  while (next_ < parts_) {
    int part = next_++;
    lock.unlock();
    job_(part);  // job_ is not replaced before every part has returned
    lock.lock();
    if (++finished_ == parts_) done_.notify_all();
  }
}

void TaskPool::Run(int parts, const std::function<void(int)>& fn) {
  if (parts <= 0) return;
  if (parts == 1 || threads_.empty()) {
    for (int i = 0; i < parts; ++i) fn(i);
    return;
  }
  Dispatch(fn, parts);
  Wait();
}

void TaskPool::Start(int parts, std::function<void(int)> fn) {
  Check(parts >= 0, "Start", parts);
  if (parts == 0) return;
  Dispatch(std::move(fn), parts);
}

void TaskPool::Wait() {
  std::unique_lock<std::mutex> lock(mu_);
  RunParts(lock);
  done_.wait(lock, [this] { return finished_ == parts_; });
}

bool TaskPool::Busy() {
  std::lock_guard<std::mutex> lock(mu_);
  return finished_ < parts_;
}

void TaskPool::Work() {
  int64_t seen = 0;
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    start_.wait(lock, [&] { return stop_ || generation_ != seen; });
    if (stop_) return;
    seen = generation_;
    RunParts(lock);
  }
}

int AvailableCores() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return std::max(1, CPU_COUNT(&set));
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

std::pair<size_t, size_t> ClaimRun(std::atomic<size_t>& next, size_t n, int threads, size_t min_run,
                                   size_t max_run) {
  const size_t shares = 2 * static_cast<size_t>(std::max(threads, 1));
  min_run = std::max<size_t>(min_run, 1);  // (a run of none would end no claim)
  max_run = std::max(max_run, min_run);
  size_t begin = next.load(std::memory_order_relaxed);
  size_t end = begin;
  do {
    if (begin >= n) return {n, n};
    const size_t left = n - begin;
    const size_t run = std::min(left, std::clamp(left / shares, min_run, max_run));
    // (Fewer than min_run left after this run: they join it.)
    end = left - run < min_run ? n : begin + run;
  } while (!next.compare_exchange_weak(begin, end, std::memory_order_relaxed));
  return {begin, end};
}

}  // namespace sluice
