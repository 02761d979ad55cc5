// Runtime internals shared by runtime.cc (setup, threads) and
// runtime_status.cc (metrics, status).
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "runtime/runtime.h"
#include "sql/binder.h"

namespace sluice::runtime {

// An HTTP source: its log and the pipelines reading it.
struct Runtime::Stream {
  std::string name;
  std::unique_ptr<log::StreamLog> log;
  std::vector<const Running*> readers;
  // Every pipeline that ever read the stream is listed in <stream>/readers;
  // while one of them is not running here, no segment is deleted (it has not
  // committed past them).
  bool retention_blocked = false;
  std::atomic<int64_t> retained_below{0};
  server::Counter* records_in = nullptr;
  server::Counter* bytes_in = nullptr;
  server::Gauge* end_offset = nullptr;
};

struct Runtime::Running {
  std::string name;
  std::string stream;       // the source's name
  std::string table;        // the target, "ns.name"
  std::string reads_table;  // a source FROM TABLE: that table, "ns.name"
  // Bounded runs: the pipelines of this script writing the table this one
  // reads; it starts once they have ended, so that it reads all they wrote.
  std::vector<const Running*> upstream;
  PipelineOptions options;  // bound, with the metric hooks: to reopen after a failure
  std::function<Result<std::unique_ptr<Source>>()> open_source;
  // Replaced by the pipeline thread when it restarts the pipeline after a
  // retryable failure; other threads read it under `mu` (it may be null then).
  mutable std::mutex mu;
  std::unique_ptr<Pipeline> pipeline;  // guarded by mu for readers off the thread
  // The pipeline's committed source offset (sum over partitions), kept by its
  // thread; stays at the last value while the pipeline restarts.
  std::atomic<int64_t> committed_offset{0};
  // Counters of the pipelines that ran before the current one (guarded by mu).
  struct Totals {
    int64_t records_in = 0, bytes_in = 0, records_committed = 0, dead_letters = 0, commits = 0,
            commit_failures = 0;
  } before;
  std::string last_error;            // guarded by mu; the failure being retried
  std::atomic<int64_t> restarts{0};  // retryable failures restarted in place
  std::atomic<bool> retrying{false};
  std::thread thread;
  std::atomic<bool> done{false};
  // The file-count SLO's action: the commit interval is options'
  // commit_interval_ms times this (runtime_maintenance.cc sets it).
  std::atomic<int64_t> commit_slowdown{1};
  // Metrics (handles into the registry).
  server::Counter *records_read = nullptr, *bytes_read = nullptr, *records_committed = nullptr,
                  *dead_letters = nullptr, *commits = nullptr, *commit_failures = nullptr;
  server::Gauge *lag_records = nullptr, *lag_seconds = nullptr, *freshness = nullptr,
                *checkpoint = nullptr, *epoch = nullptr, *state_groups = nullptr,
                *state_memory = nullptr, *state_spills = nullptr, *key_index_keys = nullptr,
                *key_index_memory = nullptr, *key_index_spills = nullptr,
                *key_index_early_checkpoints = nullptr;
  server::Counter* restarts_total = nullptr;
  server::Histogram *commit_seconds = nullptr, *checkpoint_seconds = nullptr;
  // The last checkpoint's duration, for /v1/status (the histogram holds all).
  std::atomic<double> last_checkpoint_seconds{0};
};

}  // namespace sluice::runtime
