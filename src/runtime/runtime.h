// Runtime: what `sluice run FILE.sql` runs. It turns a parsed script into
// tables, sources and pipelines, runs every pipeline on its own thread, and
// serves the HTTP ingest endpoint, /metrics and /v1/status.
//
// Setup (Make):
// - CREATE TABLE creates the table unless it exists (an existing table is
//   used as it is: its schema is what the pipeline binds against); every
//   pipeline target also gets its dead-letter table <name>__dlq.
// - CREATE SOURCE ... WITH (connector = 'http') opens the stream's durable log
//   under <state>/streams/<source>; connector = 'kafka' (brokers, topic) reads
//   the topic directly, positions kept in the table; connector = 'file' (path,
//   pattern) reads JSON lines files in a folder (file_source.h).
// - CREATE PIPELINE binds its INSERT ... SELECT (sql/binder.h) and recovers
//   (pipeline.h). Options: commit_interval ('250ms', '1s', '15m', '1h').
//   A delivery guarantee other than exactly-once is refused.
// Errors name the script's line and column.
//
// Running (Start/RequestStop/Wait): a pipeline that fails on storage (kIOError,
// kCommitStateUnknown, kConflict) is closed and reopened in place after a backoff
// (recovery, as at a process restart), so a full disk or a flaky store does not
// become a crash loop; while it retries, /healthz answers 503. Any other failure
// (fenced, corrupt data, a bug) stops the runtime (the process exits non-zero and
// a supervisor restarts it: recovery makes that safe). RequestStop makes every
// pipeline take a final checkpoint.
// Backpressure: a stream whose slowest pipeline is more than max_lag_records
// behind answers 429; a stopping runtime answers 503. Log segments that every
// pipeline reading a stream has committed past are deleted; the pipelines that
// ever read a stream are listed in its folder (`readers`), and while one of
// them is not running in this process the stream's segments are all kept.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <thread>
#include <vector>

#include "catalog/catalog.h"
#include "io/file_io.h"
#include "log/stream_log.h"
#include "maintenance/service.h"
#include "pipeline/pipeline.h"
#include "server/http_server.h"
#include "server/metrics.h"
#include "sql/ast.h"

namespace sluice::runtime {

using pipeline::Pipeline;
using pipeline::PipelineOptions;
using sources::Source;

struct RuntimeOptions {
  std::string warehouse;  // where new tables go
  std::string state_dir;  // stream logs and pipeline journals; default <warehouse>/_sluice
  std::string listen;     // "host:port" for HTTP; empty: no server
  // More routes on that port (`sluice run` mounts the REST catalog); may be null.
  server::RouteHandler* routes = nullptr;
  std::string bearer_token;
  int64_t max_lag_records = 1'000'000;
  int64_t max_body_bytes = 16 << 20;
  log::LogOptions log;
  // A pipeline failing for a retryable reason (storage: kIOError, an unknown or
  // conflicting commit) is restarted in place after this backoff, doubling up to
  // retry_max_ms; other failures stop the runtime.
  int64_t retry_initial_ms = 1000;
  int64_t retry_max_ms = 30'000;
  // `sluice run --bounded`: each pipeline stops (after a final checkpoint)
  // once its source is exhausted (Source::Exhausted); only file sources are
  // bounded today.
  bool bounded = false;
  // The maintenance service of the tables the pipelines write (their targets
  // and dead-letter tables): compaction, expiry, orphan cleanup, the
  // file-count SLO (maintenance/service.h, docs/maintenance.md).
  bool maintenance = true;
  maintenance::ServiceOptions maintenance_service;
  // A stop (RequestStop, not a pipeline's failure) first lets each running
  // pipeline reading an HTTP stream read up to the stream's end as it sees
  // the stop, for at most this long, so that its final checkpoint holds the
  // records acknowledged before (what it has not read by then stays in the
  // log for the next run). `sluice run --stop-drain`.
  int64_t stop_drain_ms = 5'000;
};

class Runtime : public server::IngestTarget {
 public:
  static Result<std::unique_ptr<Runtime>> Make(catalog::Catalog& catalog, FileIO& io,
                                               RuntimeOptions options, const sql::Script& script);
  // Checks `script` as Make() does first (names, options, partition specs, each
  // pipeline's binding against the tables that exist or that the script defines)
  // without creating or opening anything: `sluice run --check`.
  static Status Check(catalog::Catalog& catalog, FileIO& io, RuntimeOptions options,
                      const sql::Script& script);
  ~Runtime() override;

  // Starts the pipeline threads and the HTTP server.
  Status Start();
  int http_port() const { return server_ ? server_->port() : 0; }
  // Asks every pipeline to take a final checkpoint and stop; returns at once.
  void RequestStop();
  // Waits until every pipeline stopped (after RequestStop, or after one
  // failed, which stops the others); stops the server. Returns the first error.
  Status Wait();
  // True once a pipeline failed or a stop was requested.
  bool stopping() const { return stopping_.load(); }
  // True once every pipeline has ended (a bounded run is complete).
  bool finished() const;
  // Waits up to `timeout` for stopping() or finished(); whether either holds.
  // (A caller also watching signals waits in short steps.)
  bool WaitEnded(std::chrono::milliseconds timeout);

  // server::IngestTarget
  log::StreamLog* FindStream(const std::string& name) override;
  std::optional<server::Backpressure> CheckBackpressure(const std::string& stream) override;
  void OnAppended(const std::string& stream, int64_t records, int64_t bytes) override;
  std::string MetricsText() override;
  std::string StatusJson() override;
  std::optional<std::string> Unhealthy() override;

 private:
  struct Stream;
  struct Running;
  struct Snapshot;
  static Snapshot Numbers(const Running& r);
  static int64_t LagRecords(const Snapshot& s);

  Runtime(catalog::Catalog& catalog, FileIO& io, RuntimeOptions options);
  // Step 1 of Setup (and all of Check): the sources by name, once all is checked.
  Result<std::map<std::string, sql::CreateSource>> Plan(const sql::Script& script);
  Status Setup(const sql::Script& script);
  // With `plan_only`, checks the statement and records the table's schema
  // there (unless the table exists) instead of creating it.
  Status CreateTable(const sql::CreateTable& t, std::map<std::string, Schema>* plan_only);
  Status AddSource(const std::string& name, const sql::CreateSource& s);  // checked already
  Status AddPipeline(const sql::CreatePipeline& p);
  Status InitMetrics();
  Status RegisterStreamReaders();
  Status RegisterPipelineMetrics(Running* r, PipelineOptions& o);
  void RefreshMetrics();
  void RefreshStorageMetrics();
  void RunPipeline(Running* r);
  // A bounded run's chained pipeline: waits for its upstream pipelines to
  // end, then reopens it to read what they committed.
  Status AwaitUpstream(Running* r, int64_t* backoff_ms);
  // Opens r's pipeline again (recovering, as a restart would), after the
  // backoff when `wait_first`, and again with a doubling backoff while it
  // fails with a storage error. OK with no pipeline: stopped meanwhile.
  Status Reopen(Running* r, int64_t* backoff_ms, bool wait_first);
  Status RunUntilStopOrFailure(Running& r);
  // At a stop: steps r's pipeline until it has read its stream's log to the
  // end as of now (RuntimeOptions::stop_drain_ms at most). Other sources
  // keep what they hold; after a pipeline's failure nothing is drained.
  Status DrainStream(Running& r);
  void ApplyRetention();
  // Sets r->done and wakes WaitEnded.
  void MarkDone(Running* r);
  // runtime_maintenance.cc
  class Maintenance;
  Status SetUpMaintenance();
  void StartMaintenance();
  void RequestStopMaintenance();
  void StopMaintenance();
  nlohmann::json MaintenanceStatus();

  catalog::Catalog& catalog_;
  FileIO& io_;
  RuntimeOptions options_;
  std::map<std::string, sql::CreateSource> sources_;        // by lowercased name
  std::map<std::string, std::unique_ptr<Stream>> streams_;  // http sources, by name
  std::vector<std::unique_ptr<Running>> pipelines_;
  server::Registry registry_;
  std::unique_ptr<server::HttpServer> server_;
  std::atomic<bool> stopping_{false};
  std::mutex mu_;                  // guards first_error_; held to change stopping_ or a done
  std::condition_variable ended_;  // notified when stopping_ or a done turns true
  Status first_error_;
  std::mutex metrics_mu_;  // one refresh at a time
  int64_t started_ms_ = 0;
  std::shared_ptr<Maintenance> maintenance_;  // (shared: destroyed where it is complete)
};

}  // namespace sluice::runtime
