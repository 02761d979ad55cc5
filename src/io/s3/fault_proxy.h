// FaultProxy (tests): an HTTP proxy in front of a real S3 server that fails the
// requests a test chooses, the way S3 and networks fail: 503 SlowDown
// (throttling), 500 InternalError, a connection reset before any answer, and an
// answer cut off mid-body. Every other request is forwarded unchanged (one
// upstream connection per request) and its answer relayed.
//
// Faults are taken in order from a script (Fail), then at random with
// probability `rate` (SetRandom). Thread per client connection; stops with the
// object.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace sluice::s3 {

// (kPreconditionFailed, 412 as AWS answers a create of an existing key, is only
// scripted, never random.)
enum class Fault { kNone, kSlowDown, kInternalError, kReset, kCutBody, kPreconditionFailed };

class FaultProxy {
 public:
  // Proxies to "http://HOST:PORT" on 127.0.0.1 at a free port.
  explicit FaultProxy(const std::string& upstream);
  ~FaultProxy();

  std::string endpoint() const { return "http://127.0.0.1:" + std::to_string(port_); }
  // The next requests (one fault each, in order) fail so.
  void Fail(std::vector<Fault> faults);
  // Afterwards, each request fails with probability `rate`, with a random fault.
  void SetRandom(double rate, uint64_t seed);
  int64_t requests() const { return requests_.load(); }
  int64_t faults() const { return faults_.load(); }

 private:
  void Accept();
  void Serve(int client);
  Fault Next();

  std::string upstream_host_;
  int upstream_port_ = 0;
  int listener_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int64_t> requests_{0};
  std::atomic<int64_t> faults_{0};
  std::mutex mu_;
  std::deque<Fault> script_;
  double rate_ = 0;
  std::mt19937_64 rng_;
  std::thread acceptor_;
  struct Worker {
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> done;
  };
  std::vector<Worker> workers_;  // guarded by mu_; finished ones joined as new ones start
  std::vector<int> clients_;     // guarded by mu_
};

}  // namespace sluice::s3
