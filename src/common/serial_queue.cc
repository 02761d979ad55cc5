#include "common/serial_queue.h"

#include <algorithm>

#include "common/thread_name.h"

namespace sluice {

SerialQueue::SerialQueue(int max_waiting, std::string name)
    : max_waiting_(static_cast<size_t>(std::max(max_waiting, 1))),
      worker_([this, name = std::move(name)] {
        if (!name.empty()) NameThisThread(name);
        Work();
      }) {}

SerialQueue::~SerialQueue() {
  Drain();
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  work_.notify_one();
  worker_.join();
}

void SerialQueue::Push(std::function<void()> task) {
  {
    std::unique_lock<std::mutex> lock(mu_);
    room_.wait(lock, [this] { return waiting_.size() < max_waiting_; });
    waiting_.push_back(std::move(task));
  }
  work_.notify_one();
}

void SerialQueue::Drain() {
  std::unique_lock<std::mutex> lock(mu_);
  idle_.wait(lock, [this] { return waiting_.empty() && !running_; });
}

void SerialQueue::Work() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    work_.wait(lock, [this] { return stop_ || !waiting_.empty(); });
    if (waiting_.empty()) return;  // stop_, and drained
    std::function<void()> task = std::move(waiting_.front());
    waiting_.pop_front();
    running_ = true;
    lock.unlock();
    room_.notify_one();
    task();
    task = nullptr;  // what it holds goes on this thread, before Drain returns
    lock.lock();
    running_ = false;
    if (waiting_.empty()) idle_.notify_all();
  }
}

}  // namespace sluice
