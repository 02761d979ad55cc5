// Ingest throughput of the HTTP server into one stream log (default group commit),
// driven over loopback by keep-alive clients with TCP_NODELAY.
//
//   server_benchmark [records_per_request=100] [clients=4] [seconds=3] [dir=$TMPDIR]
//
// Prints requests/s, records/s, MB/s, p50/p99 latency and the log's fsync count.
// The numbers in docs/http_api.md come from this program.
#include <httplib.h>
#include <stdlib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "server/http_server.h"

namespace {

using namespace sluice;

class OneStream : public server::IngestTarget {
 public:
  explicit OneStream(std::unique_ptr<log::StreamLog> log) : log_(std::move(log)) {}
  log::StreamLog* FindStream(const std::string&) override { return log_.get(); }
  std::optional<server::Backpressure> CheckBackpressure(const std::string&) override {
    return std::nullopt;
  }
  void OnAppended(const std::string&, int64_t, int64_t) override {}
  std::string MetricsText() override { return ""; }
  std::string StatusJson() override { return "{}"; }
  log::StreamLog& log() { return *log_; }

 private:
  std::unique_ptr<log::StreamLog> log_;
};

int Run(int per_request, int clients, int seconds, const std::string& base) {
  std::string pattern = base + "/sluice-server-bench-XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) {
    std::fprintf(stderr, "cannot create a directory under %s\n", base.c_str());
    return 1;
  }
  const std::string dir = pattern;
  int rc = 0;
  {
    auto log = log::StreamLog::Open(dir + "/s");
    if (!log.ok()) {
      std::fprintf(stderr, "%s\n", log.status().ToString().c_str());
      return 1;
    }
    OneStream target(std::move(log).value());
    server::HttpServerOptions options;
    options.worker_threads = std::max(4, clients);
    auto server = server::HttpServer::Make(options, &target);
    Status started = server.ok() ? (*server)->Start() : server.status();
    if (!started.ok()) {
      std::fprintf(stderr, "%s\n", started.ToString().c_str());
      return 1;
    }
    int port = (*server)->port();

    std::string body;
    for (int i = 0; i < per_request; ++i) {
      body +=
          "{\"id\":" + std::to_string(i) + ",\"kind\":\"click\",\"user\":\"u-123456\",\"v\":1.5}\n";
    }
    std::atomic<bool> stop{false};
    std::atomic<int64_t> errors{0};
    std::vector<std::vector<double>> latency_ms(clients);
    std::vector<std::thread> threads;
    auto start = std::chrono::steady_clock::now();
    for (int c = 0; c < clients; ++c) {
      threads.emplace_back([&, c] {
        httplib::Client cli("127.0.0.1", port);
        cli.set_keep_alive(true);
        cli.set_tcp_nodelay(true);
        while (!stop) {
          auto t0 = std::chrono::steady_clock::now();
          auto r = cli.Post("/v1/streams/s/records", body, "application/x-ndjson");
          if (!r || r->status != 200) {
            ++errors;
            continue;
          }
          latency_ms[c].push_back(
              std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                  .count());
        }
      });
    }
    std::this_thread::sleep_for(std::chrono::seconds(seconds));
    stop = true;
    for (auto& t : threads) t.join();
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::vector<double> all;
    for (const auto& v : latency_ms) all.insert(all.end(), v.begin(), v.end());
    std::sort(all.begin(), all.end());
    double requests = static_cast<double>(all.size());
    if (all.empty()) {
      std::fprintf(stderr, "no request succeeded (%ld errors)\n", static_cast<long>(errors));
      rc = 1;
    } else {
      std::printf(
          "records/request=%d clients=%d: %.0f requests/s, %.0f records/s, %.1f MB/s, "
          "p50 %.2f ms, p99 %.2f ms, errors %ld, fsyncs %ld\n",
          per_request, clients, requests / secs, requests * per_request / secs,
          requests * static_cast<double>(body.size()) / secs / 1e6, all[all.size() / 2],
          all[all.size() * 99 / 100], static_cast<long>(errors),
          static_cast<long>(target.log().sync_count()));
    }
    (*server)->Stop();
  }
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  return rc;
}

}  // namespace

int main(int argc, char** argv) {
  int per_request = argc > 1 ? std::atoi(argv[1]) : 100;
  int clients = argc > 2 ? std::atoi(argv[2]) : 4;
  int seconds = argc > 3 ? std::atoi(argv[3]) : 3;
  const char* tmp = std::getenv("TMPDIR");
  std::string base = argc > 4 ? argv[4] : (tmp != nullptr ? tmp : "/tmp");
  if (per_request < 1 || clients < 1 || seconds < 1) {
    std::fprintf(stderr, "usage: %s [records_per_request] [clients] [seconds] [dir]\n", argv[0]);
    return 2;
  }
  return Run(per_request, clients, seconds, base);
}
