// End-to-end pipeline benchmark: HTTP -> stream log -> committed Iceberg table.
//
// Starts `sluice run` (a child process, so its CPU time is measured apart from
// this load generator) on a fresh warehouse, POSTs ~100-byte JSON events in
// NDJSON bodies from several client threads for a while, waits until every
// acknowledged event is committed, and reports:
//   - events/s accepted (wall clock) and events per CPU-second of the sluice
//     process (events/s/core);
//   - freshness: for each request, the time from its acknowledgement to the
//     commit of the first snapshot whose sluice.offsets cover it (the snapshot's
//     timestamp), p50/p99/max;
//   - a check that the table holds exactly the events sent.
// It also writes the same kind of events to a JSON lines file so that
// bench/pipeline_bench.sh can time DuckDB on them for the reference ratio.
//
//   pipeline_bench SLUICE_BINARY [SECONDS=10] [EVENTS_PER_REQUEST=20000] [CLIENTS=2]
//                  [COMMIT_INTERVAL=1s] [RATE=0] [SAMPLE_JSONL]
// RATE caps the events/s sent by all clients together (0: as fast as accepted):
// freshness is meaningful at a rate the pipeline sustains, throughput at 0.
#include <fcntl.h>
#include <httplib.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "catalog/table.h"
#include "io/s3/s3_file_io.h"
#include "pipeline/checkpoint.h"

extern char** environ;

namespace {

namespace fs = std::filesystem;
using sluice::pipeline::DecodeOffsets;

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// ~100 bytes:
// {"id":12345678,"user_id":4242,"kind":"click","url":"/p/1234","ts":"2024-01-01T10:00:00.123456Z"}
void AppendEvent(int64_t id, std::string* out) {
  static const char* kKinds[] = {"click", "view", "purchase", "signup"};
  char buf[160];
  int n = std::snprintf(buf, sizeof buf,
                        "{\"id\":%lld,\"user_id\":%lld,\"kind\":\"%s\",\"url\":\"/p/%lld\","
                        "\"ts\":\"2024-01-%02lldT10:00:%02lld.%06lldZ\"}\n",
                        static_cast<long long>(id), static_cast<long long>(id * 7919 % 100000),
                        kKinds[id % 4], static_cast<long long>(id % 5000),
                        static_cast<long long>(1 + id % 28), static_cast<long long>(id % 60),
                        static_cast<long long>(id % 1000000));
  out->append(buf, n);
}

double CpuSeconds(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  size_t p = s.rfind(')');
  if (p == std::string::npos) return 0;
  std::vector<std::string> f;
  size_t i = p + 2;
  while (i < s.size()) {
    size_t j = s.find(' ', i);
    if (j == std::string::npos) j = s.size();
    f.push_back(s.substr(i, j - i));
    i = j + 1;
  }
  // Fields after the name: state(0) ... utime(11) stime(12), in clock ticks.
  if (f.size() < 13) return 0;
  return (std::stod(f[11]) + std::stod(f[12])) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

struct Ack {
  int64_t ack_ms;
  int64_t last_offset;
};

int Fail(const std::string& msg) {
  std::fprintf(stderr, "pipeline_bench: %s\n", msg.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2)
    return Fail(
        "usage: pipeline_bench SLUICE [SECONDS] [EVENTS_PER_REQUEST] [CLIENTS] [COMMIT_INTERVAL] "
        "[RATE] [SAMPLE_JSONL] [PARALLELISM]");
  const std::string sluice = argv[1];
  const int seconds = argc > 2 ? std::atoi(argv[2]) : 10;
  const int per_request = argc > 3 ? std::atoi(argv[3]) : 20000;
  const int clients = argc > 4 ? std::atoi(argv[4]) : 2;
  const std::string interval = argc > 5 ? argv[5] : "1s";
  const double rate = argc > 6 ? std::atof(argv[6]) : 0;
  const std::string sample = argc > 7 ? argv[7] : "";
  const int parallelism = argc > 8 ? std::atoi(argv[8]) : 0;  // 0: sluice's default

  fs::path dir = fs::temp_directory_path() / ("sluice-pbench-" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::string sql = (dir / "bench.sql").string();
  std::ofstream(sql)
      << "CREATE TABLE lake.events (id BIGINT NOT NULL, user_id BIGINT, kind STRING,"
         " url STRING, ts TIMESTAMPTZ) PARTITIONED BY (day(ts));\n"
         "CREATE SOURCE events_in (id BIGINT, user_id BIGINT, kind STRING, url STRING,"
         " ts TIMESTAMPTZ) WITH (connector = 'http') FORMAT JSON;\n"
         "CREATE PIPELINE load WITH (commit_interval = '"
      << interval << "'"
      << (parallelism > 0 ? ", parallelism = " + std::to_string(parallelism) : std::string())
      << ") AS INSERT INTO lake.events SELECT id, user_id, kind, url, ts FROM "
         "events_in;\n";
  const int port = 21000 + getpid() % 20000;
  std::string listen = "127.0.0.1:" + std::to_string(port);
  // BENCH_WAREHOUSE (s3://bucket/prefix): the table on S3, catalog and state
  // on local disk.
  const char* remote = std::getenv("BENCH_WAREHOUSE");
  std::string wh = remote != nullptr && *remote != '\0' ? remote : (dir / "wh").string();
  std::string catalog_uri = (dir / "catalog.db").string();
  if (remote == nullptr || *remote == '\0') catalog_uri = wh + "/catalog.db";
  std::vector<std::string> args = {sluice,
                                   "--warehouse",
                                   wh,
                                   "--catalog",
                                   "sqlite:" + catalog_uri,
                                   "--state-dir",
                                   (dir / "state").string(),
                                   "run",
                                   sql,
                                   "--listen",
                                   listen,
                                   "--max-lag-records",
                                   "1000000000"};
  std::vector<char*> cargs;
  for (auto& a : args) cargs.push_back(a.data());
  cargs.push_back(nullptr);
  pid_t pid = 0;
  if (posix_spawn(&pid, sluice.c_str(), nullptr, nullptr, cargs.data(), environ) != 0) {
    return Fail("cannot start " + sluice);
  }
  httplib::Client probe("127.0.0.1", port);
  bool up = false;
  for (int i = 0; i < 500 && !up; ++i) {
    auto r = probe.Get("/healthz");
    up = r && r->status == 200;
    if (!up) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (!up) return Fail("sluice run did not come up");

  if (!sample.empty()) {  // the reference's input: the same kind of events
    std::string body;
    std::ofstream out(sample);
    for (int64_t i = 1; i <= 2'000'000; ++i) {
      AppendEvent(i, &body);
      if (body.size() > (1 << 20)) out << body, body.clear();
    }
    out << body;
  }

  std::atomic<int64_t> next_id{1};
  std::atomic<bool> stop{false};
  std::mutex mu;
  std::vector<Ack> acks;
  std::atomic<int64_t> bytes_sent{0}, errors{0};
  auto client = [&] {
    httplib::Client c("127.0.0.1", port);
    c.set_keep_alive(true);
    c.set_read_timeout(60, 0);
    std::string body;
    auto start = std::chrono::steady_clock::now();
    int64_t mine = 0;  // events this client sent
    while (!stop.load()) {
      if (rate > 0) {  // pace: this client's share of RATE
        auto due = start + std::chrono::duration<double>(mine / (rate / clients));
        std::this_thread::sleep_until(due);
      }
      mine += per_request;
      int64_t first = next_id.fetch_add(per_request);
      body.clear();
      for (int64_t id = first; id < first + per_request; ++id) AppendEvent(id, &body);
      auto r = c.Post("/v1/streams/events_in/records", body, "application/x-ndjson");
      if (!r || r->status != 200) {
        ++errors;
        return;
      }
      int64_t now = NowMs();
      size_t p = r->body.find("\"last_offset\":");
      int64_t last = std::strtoll(r->body.c_str() + p + 14, nullptr, 10);
      bytes_sent += static_cast<int64_t>(body.size());
      std::lock_guard<std::mutex> lock(mu);
      acks.push_back({now, last});
    }
  };
  double cpu0 = CpuSeconds(pid);
  auto t0 = std::chrono::steady_clock::now();
  std::vector<std::thread> threads;
  for (int i = 0; i < clients; ++i) threads.emplace_back(client);
  std::this_thread::sleep_for(std::chrono::seconds(seconds));
  stop = true;
  for (auto& t : threads) t.join();
  double send_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (errors > 0) return Fail("a request failed");
  int64_t sent = static_cast<int64_t>(acks.size()) * per_request;

  // Wait until everything is committed.
  int64_t committed = 0;
  for (int i = 0; i < 6000 && committed < sent; ++i) {
    auto r = probe.Get("/v1/status");
    if (r && r->status == 200) {
      size_t p = r->body.find("\"committed_offset\":");
      if (p != std::string::npos) committed = std::strtoll(r->body.c_str() + p + 19, nullptr, 10);
    }
    if (committed < sent) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  double all_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  double cpu = CpuSeconds(pid) - cpu0;
  kill(pid, SIGTERM);
  int status = 0;
  waitpid(pid, &status, 0);
  if (committed < sent) return Fail("not everything was committed");
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return Fail("sluice run did not exit 0");

  // Freshness from the snapshots' commit times and offsets.
  auto catalog = sluice::catalog::OpenCatalog("sqlite:" + catalog_uri);
  if (!catalog.ok()) return Fail(catalog.status().ToString());
  auto io = sluice::MakeStorageFileIO();
  auto table = sluice::catalog::Table::Load(**catalog, *io, {{"lake"}, "events"});
  if (!table.ok()) return Fail(table.status().ToString());
  std::vector<std::pair<int64_t, int64_t>> commits;  // (offset, time)
  for (const auto& s : (*table)->metadata().snapshots) {
    auto it = s.summary.find(sluice::pipeline::kSummaryOffsets);
    if (it == s.summary.end()) continue;
    auto o = DecodeOffsets(it->second);
    if (!o.ok()) return Fail(o.status().ToString());
    commits.push_back({o->at("events_in").at("0"), s.timestamp_ms});
  }
  std::sort(commits.begin(), commits.end());
  std::vector<int64_t> fresh;
  for (const Ack& a : acks) {
    auto it =
        std::upper_bound(commits.begin(), commits.end(), std::make_pair(a.last_offset, INT64_MAX));
    if (it == commits.end()) return Fail("an acknowledged request is in no snapshot");
    fresh.push_back(std::max<int64_t>(0, it->second - a.ack_ms));
  }
  std::sort(fresh.begin(), fresh.end());
  auto pct = [&](double q) {
    return fresh[std::min(fresh.size() - 1, static_cast<size_t>(q * fresh.size()))];
  };
  const auto* snap = (*table)->metadata().current_snapshot();
  int64_t rows = snap ? std::strtoll(snap->summary.at("total-records").c_str(), nullptr, 10) : 0;
  if (rows != sent)
    return Fail("table has " + std::to_string(rows) + " rows, sent " + std::to_string(sent));

  std::printf(
      "events: %lld in %zu requests of %d (%.1f MB), %d clients, commit interval %s, %zu "
      "snapshots\n",
      static_cast<long long>(sent), acks.size(), per_request, bytes_sent / 1e6, clients,
      interval.c_str(), commits.size());
  std::printf("accepted: %.0f events/s (%.1f MB/s) over %.1f s; all committed after %.1f s\n",
              sent / send_s, bytes_sent / 1e6 / send_s, send_s, all_s);
  std::printf("sluice CPU: %.2f s -> %.0f events per CPU-second (events/s/core)\n", cpu,
              sent / cpu);
  std::printf("freshness (ack -> committed snapshot): p50 %lld ms, p99 %lld ms, max %lld ms\n",
              static_cast<long long>(pct(0.5)), static_cast<long long>(pct(0.99)),
              static_cast<long long>(fresh.back()));
  std::printf(
      "RESULT events_per_second=%.0f events_per_cpu_second=%.0f freshness_p50_ms=%lld "
      "freshness_p99_ms=%lld\n",
      sent / send_s, sent / cpu, static_cast<long long>(pct(0.5)),
      static_cast<long long>(pct(0.99)));
  fs::remove_all(dir);
  return 0;
}
