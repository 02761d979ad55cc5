// Test helpers for src/server: an IngestTarget over real logs, a log storage that
// fails on demand, running `promtool check metrics` on a rendering, and a raw-socket
// HTTP client for what a library client will not send.
#pragma once

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>

#include "log/fault_injection_storage.h"
#include "log/stream_log.h"
#include "server/http_server.h"
#include "server/metrics.h"

namespace sluice::server::testing {

// True when `promtool` is on the PATH.
bool HavePromtool();

// Runs `promtool check metrics` on `text`: its exit status (0: passed) and output.
std::pair<int, std::string> Promtool(const std::string& text);

class TestTarget : public IngestTarget {
 public:
  log::StreamLog* FindStream(const std::string& name) override {
    auto it = logs.find(name);
    return it == logs.end() ? nullptr : it->second.get();
  }
  std::optional<Backpressure> CheckBackpressure(const std::string& stream) override {
    ++checks;
    if (check_delay_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(check_delay_ms));
    std::lock_guard<std::mutex> lock(mu);
    return backpressure;
  }
  void OnAppended(const std::string& stream, int64_t records, int64_t bytes) override {
    std::lock_guard<std::mutex> lock(mu);
    appended_records[stream] += records;
    appended_bytes[stream] += bytes;
  }
  std::string MetricsText() override { return registry.Render(); }
  std::string StatusJson() override { return "{\"streams\":[\"events_in\"]}"; }
  std::optional<std::string> Unhealthy() override {
    for (auto& [name, log] : logs) {
      if (!log->Health().ok()) return "stream '" + name + "': its log cannot append";
    }
    return std::nullopt;
  }

  std::map<std::string, std::unique_ptr<log::StreamLog>> logs;  // set before the server starts
  Registry registry;
  std::mutex mu;
  std::optional<Backpressure> backpressure;                         // guarded by mu
  std::map<std::string, int64_t> appended_records, appended_bytes;  // guarded by mu
  std::atomic<int> check_delay_ms{0};
  std::atomic<int> checks{0};  // CheckBackpressure calls
};

// A connected loopback TCP socket (receive timeout `timeout_s`), or -1.
int Connect(int port, int timeout_s = 5);
// Sends all of `data` (false if the peer is gone).
bool SendAll(int fd, std::string_view data);
// Reads until the peer closes or the receive timeout passes.
std::string ReadUntilClose(int fd);
// Reads one response (headers and Content-Length body) from `fd`, using and keeping
// bytes in `buffer`; "" on timeout or close before a whole response.
std::string ReadResponse(int fd, std::string* buffer);
// The status code of a response's status line, or 0.
int StatusOf(std::string_view response);
// How many status lines ("HTTP/1.1 NNN") `text` holds, interim 100 answers excluded.
int CountResponses(std::string_view text);

}  // namespace sluice::server::testing
