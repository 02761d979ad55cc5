// SerialQueue: one worker thread that runs tasks one at a time, in the order
// they were pushed: a pipeline stage that runs beside the thread feeding it
// (docs/pipelines.md "Parallelism").
//
// Push hands a task over and returns at once, unless `max_waiting` tasks
// already wait for the worker: then it blocks until one starts
// (backpressure, so the feeding thread cannot run ahead without bound).
// Drain returns once every task pushed has returned; the caller then sees
// their effects. Tasks must not throw.
//
// The worker is named `name` (common/thread_name.h), when one is given.
//
// Thread-safety: Push and Drain from one thread (the feeder) at a time; the
// tasks run on the worker.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace sluice {

class SerialQueue {
 public:
  explicit SerialQueue(int max_waiting, std::string name = {});
  ~SerialQueue();  // drains, then stops the worker
  SerialQueue(const SerialQueue&) = delete;
  SerialQueue& operator=(const SerialQueue&) = delete;

  void Push(std::function<void()> task);
  void Drain();

 private:
  void Work();

  const size_t max_waiting_;
  std::mutex mu_;
  std::condition_variable work_;  // a task waits, or stop_
  std::condition_variable room_;  // a task started: fewer wait
  std::condition_variable idle_;  // nothing waits and nothing runs
  std::deque<std::function<void()>> waiting_;
  bool running_ = false;
  bool stop_ = false;
  std::thread worker_;  // last: it starts once the members above exist
};

}  // namespace sluice
