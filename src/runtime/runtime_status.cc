// Runtime: metrics (GET /metrics) and status (GET /v1/status).
#include <nlohmann/json.hpp>

#include "catalog/table.h"
#include "iceberg/data_writer.h"
#include "iceberg/table_builder.h"
#include "io/s3/s3_client.h"
#include "runtime/runtime_internal.h"

namespace sluice::runtime {

using pipeline::CheckpointReport;
using pipeline::PipelineStats;

namespace {

// Brings a counter up to a monotonic total kept elsewhere.
void SyncCounter(server::Counter* c, int64_t total) {
  double delta = static_cast<double>(total) - c->value();
  if (delta > 0) c->Increment(delta);
}

template <typename M>
Result<M*> One(Result<server::Family<M>*> family, const std::vector<std::string>& labels) {
  if (!family.ok()) return family.status();
  return (*family)->WithLabels(labels);
}

}  // namespace

Status Runtime::InitMetrics() {
  ASSIGN_OR_RETURN(auto* uptime, registry_.AddGauge("sluice_uptime_seconds",
                                                    "Seconds since this sluice process started."));
  (void)uptime;
  return Status::OK();
}

Status Runtime::RegisterPipelineMetrics(Running* r, PipelineOptions& o) {
  const std::vector<std::string> l = {r->name};
  auto& g = registry_;
  const std::vector<std::string> p = {"pipeline"};
  ASSIGN_OR_RETURN(r->records_read, One(g.AddCounter("sluice_pipeline_records_read_total",
                                                     "Records read from the source.", p),
                                        l));
  ASSIGN_OR_RETURN(r->bytes_read, One(g.AddCounter("sluice_pipeline_bytes_read_total",
                                                   "Bytes of records read from the source.", p),
                                      l));
  ASSIGN_OR_RETURN(r->records_committed, One(g.AddCounter("sluice_pipeline_records_committed_total",
                                                          "Rows committed to the target table.", p),
                                             l));
  ASSIGN_OR_RETURN(r->dead_letters,
                   One(g.AddCounter("sluice_pipeline_dead_letters_total",
                                    "Records committed to the dead-letter table.", p),
                       l));
  ASSIGN_OR_RETURN(
      r->commits,
      One(g.AddCounter("sluice_pipeline_commits_total", "Checkpoints committed.", p), l));
  ASSIGN_OR_RETURN(r->commit_failures, One(g.AddCounter("sluice_pipeline_commit_failures_total",
                                                        "Checkpoint commits that failed.", p),
                                           l));
  ASSIGN_OR_RETURN(r->lag_records,
                   One(g.AddGauge("sluice_pipeline_source_lag_records",
                                  "Source records not yet committed (unread plus in flight).", p),
                       l));
  ASSIGN_OR_RETURN(r->lag_seconds,
                   One(g.AddGauge("sluice_pipeline_source_lag_seconds",
                                  "While records wait to be committed: now minus the ingest time "
                                  "of the newest committed record (0 when caught up).",
                                  p),
                       l));
  ASSIGN_OR_RETURN(r->freshness,
                   One(g.AddGauge("sluice_pipeline_freshness_seconds",
                                  "Now minus the ingest time of the newest committed record.", p),
                       l));
  ASSIGN_OR_RETURN(r->checkpoint, One(g.AddGauge("sluice_pipeline_checkpoint",
                                                 "Number of the last committed checkpoint.", p),
                                      l));
  ASSIGN_OR_RETURN(r->epoch,
                   One(g.AddGauge("sluice_pipeline_epoch", "Writer epoch of this run.", p), l));
  ASSIGN_OR_RETURN(
      r->state_groups,
      One(g.AddGauge("sluice_pipeline_state_groups",
                     "Open window groups of a windowed pipeline (memory and disk).", p),
          l));
  ASSIGN_OR_RETURN(
      r->state_memory,
      One(g.AddGauge("sluice_pipeline_state_memory_bytes",
                     "Bytes of window state held in memory (at most state.memory).", p),
          l));
  ASSIGN_OR_RETURN(r->state_spills,
                   One(g.AddGauge("sluice_pipeline_state_spills",
                                  "Times this run's window state spilled from memory to disk.", p),
                       l));
  ASSIGN_OR_RETURN(r->key_index_keys,
                   One(g.AddGauge("sluice_pipeline_key_index_keys",
                                  "Keys in the primary-key index of an upsert pipeline.", p),
                       l));
  ASSIGN_OR_RETURN(
      r->key_index_memory,
      One(g.AddGauge(
              "sluice_pipeline_key_index_memory_bytes",
              "Bytes of the primary-key index held in memory (its committed layer is bounded "
              "by state.memory).",
              p),
          l));
  ASSIGN_OR_RETURN(
      r->key_index_spills,
      One(g.AddGauge("sluice_pipeline_key_index_spills",
                     "Times this run's primary-key index spilled from memory to disk.", p),
          l));
  ASSIGN_OR_RETURN(
      r->key_index_early_checkpoints,
      One(g.AddGauge("sluice_pipeline_key_index_early_checkpoints",
                     "Checkpoints this run took before the commit interval because the "
                     "primary-key index's pending changes filled their memory.",
                     p),
          l));
  ASSIGN_OR_RETURN(r->commit_seconds,
                   One(g.AddHistogram("sluice_pipeline_commit_duration_seconds",
                                      "Duration of the catalog commit of a checkpoint.",
                                      server::DefaultSecondsBuckets(), p),
                       l));
  ASSIGN_OR_RETURN(
      r->checkpoint_seconds,
      One(g.AddHistogram("sluice_pipeline_checkpoint_duration_seconds",
                         "Duration of a whole checkpoint (from its start until committed).",
                         server::DefaultSecondsBuckets(), p),
          l));
  ASSIGN_OR_RETURN(r->restarts_total,
                   One(g.AddCounter("sluice_pipeline_restarts_total",
                                    "Retryable failures (storage) after which the pipeline was "
                                    "reopened in place.",
                                    p),
                       l));
  r->table = o.target.ToString();
  server::Histogram* commit = r->commit_seconds;
  server::Histogram* checkpoint = r->checkpoint_seconds;
  o.on_checkpoint = [commit, checkpoint, r](const CheckpointReport& c) {
    commit->Observe(c.commit_seconds);
    checkpoint->Observe(c.checkpoint_seconds);
    r->last_checkpoint_seconds = c.checkpoint_seconds;
  };
  auto s = streams_.find(o.source_name);
  if (s != streams_.end() && s->second->records_in == nullptr) {
    const std::vector<std::string> sl = {s->first};
    const std::vector<std::string> st = {"stream"};
    ASSIGN_OR_RETURN(s->second->records_in,
                     One(g.AddCounter("sluice_stream_records_in_total",
                                      "Records appended to the stream's log over HTTP.", st),
                         sl));
    ASSIGN_OR_RETURN(s->second->bytes_in,
                     One(g.AddCounter("sluice_stream_bytes_in_total",
                                      "Bytes appended to the stream's log over HTTP.", st),
                         sl));
    ASSIGN_OR_RETURN(s->second->end_offset,
                     One(g.AddGauge("sluice_stream_end_offset",
                                    "Offset the next record appended to the stream gets.", st),
                         sl));
  }
  return Status::OK();
}

void Runtime::OnAppended(const std::string& stream, int64_t records, int64_t bytes) {
  auto it = streams_.find(stream);
  if (it == streams_.end() || it->second->records_in == nullptr) return;
  it->second->records_in->Increment(static_cast<double>(records));
  it->second->bytes_in->Increment(static_cast<double>(bytes));
}

// A consistent copy of a pipeline's numbers, including the runs before a restart
// (the pipeline may be absent while it restarts: then only those).
struct Runtime::Snapshot {
  int64_t records_in = 0, bytes_in = 0, records_committed = 0, dead_letters = 0, commits = 0,
          commit_failures = 0, source_lag = 0, newest_committed_ingest_ms = 0, checkpoint = 0,
          epoch = 0, last_commit_micros = 0, state_groups = 0, state_memory = 0, state_spills = 0,
          key_index_keys = 0, key_index_loads = 0, upsert_deletes = 0, change_deletes = 0,
          changes_replayed = 0, key_index_catchups = 0, key_index_restores = 0,
          key_index_reopens = 0, key_index_memory = 0, key_index_spills = 0,
          key_index_early_checkpoints = 0;
};

Runtime::Snapshot Runtime::Numbers(const Running& r) {
  std::lock_guard<std::mutex> lock(r.mu);
  Snapshot n;
  n.records_in = r.before.records_in;
  n.bytes_in = r.before.bytes_in;
  n.records_committed = r.before.records_committed;
  n.dead_letters = r.before.dead_letters;
  n.commits = r.before.commits;
  n.commit_failures = r.before.commit_failures;
  if (r.pipeline == nullptr) return n;
  const PipelineStats& s = r.pipeline->stats();
  n.records_in += s.records_in;
  n.bytes_in += s.bytes_in;
  n.records_committed += s.records_committed;
  n.dead_letters += s.dead_letters_committed;
  n.commits += s.commits;
  n.commit_failures += s.commit_failures;
  n.source_lag = s.source_lag;
  n.newest_committed_ingest_ms = s.newest_committed_ingest_ms;
  n.checkpoint = s.checkpoint;
  n.epoch = s.epoch;
  n.last_commit_micros = s.last_commit_micros;
  n.state_groups = s.state_groups;
  n.state_memory = s.state_memory_bytes;
  n.state_spills = s.state_spills;
  n.key_index_keys = s.key_index_keys;
  n.key_index_loads = s.key_index_loads;
  n.upsert_deletes = s.upsert_deletes;
  n.change_deletes = s.change_deletes;
  n.changes_replayed = s.changes_replayed;
  n.key_index_catchups = s.key_index_catchups;
  n.key_index_restores = s.key_index_restores;
  n.key_index_reopens = s.key_index_reopens;
  n.key_index_memory = s.key_index_memory_bytes;
  n.key_index_spills = s.key_index_spills;
  n.key_index_early_checkpoints = s.key_index_early_checkpoints;
  return n;
}

// Records the source holds that the table does not yet: the source's own lag
// plus what was read but not committed (nor dead-lettered) yet.
int64_t Runtime::LagRecords(const Snapshot& s) {
  int64_t in_flight = s.records_in - s.records_committed - s.dead_letters;
  return s.source_lag + std::max<int64_t>(0, in_flight);
}

void Runtime::RefreshMetrics() {
  const int64_t now = iceberg::NowMillis();
  for (auto& r : pipelines_) {
    const Snapshot s = Numbers(*r);
    SyncCounter(r->records_read, s.records_in);
    SyncCounter(r->bytes_read, s.bytes_in);
    SyncCounter(r->records_committed, s.records_committed);
    SyncCounter(r->dead_letters, s.dead_letters);
    SyncCounter(r->commits, s.commits);
    SyncCounter(r->commit_failures, s.commit_failures);
    int64_t lag = LagRecords(s);
    r->lag_records->Set(static_cast<double>(lag));
    int64_t newest = s.newest_committed_ingest_ms;
    int64_t since = newest > 0 ? newest : started_ms_;
    r->lag_seconds->Set(lag > 0 ? std::max<int64_t>(0, now - since) / 1e3 : 0.0);
    r->freshness->Set(newest > 0 ? std::max<int64_t>(0, now - newest) / 1e3 : 0.0);
    r->checkpoint->Set(static_cast<double>(s.checkpoint));
    r->state_groups->Set(static_cast<double>(s.state_groups));
    r->state_memory->Set(static_cast<double>(s.state_memory));
    r->state_spills->Set(static_cast<double>(s.state_spills));
    r->key_index_keys->Set(static_cast<double>(s.key_index_keys));
    r->key_index_memory->Set(static_cast<double>(s.key_index_memory));
    r->key_index_spills->Set(static_cast<double>(s.key_index_spills));
    r->key_index_early_checkpoints->Set(static_cast<double>(s.key_index_early_checkpoints));
    r->epoch->Set(static_cast<double>(s.epoch));
  }
  for (auto& [name, s] : streams_) {
    if (s->end_offset) s->end_offset->Set(static_cast<double>(s->log->end_offset()));
  }
  if (auto up =
          registry_.AddGauge("sluice_uptime_seconds", "Seconds since this sluice process started.");
      up.ok()) {
    if (auto m = (*up)->WithLabels({}); m.ok()) (*m)->Set((now - started_ms_) / 1e3);
  }
}

// The S3 client's counters, once this process has sent S3 a request.
void Runtime::RefreshStorageMetrics() {
  const s3::S3Counters& c = s3::ProcessS3Counters();
  if (c.requests.load() == 0) return;
  struct Item {
    const char* name;
    const char* help;
    int64_t value;
  };
  const Item items[] = {
      {"sluice_s3_requests_total", "Requests sent to S3, retries included.", c.requests.load()},
      {"sluice_s3_retries_total",
       "S3 requests sent again after throttling, a 5xx or a broken "
       "connection.",
       c.retries.load()},
      {"sluice_s3_failures_total", "S3 calls that ended in an error after their retries.",
       c.failures.load()},
      {"sluice_s3_bytes_read_total", "Bytes read from S3.", c.bytes_read.load()},
      {"sluice_s3_bytes_written_total", "Bytes written to S3.", c.bytes_written.load()},
  };
  for (const Item& item : items) {
    auto family = registry_.AddCounter(item.name, item.help);
    if (!family.ok()) continue;
    if (auto m = (*family)->WithLabels({}); m.ok()) SyncCounter(*m, item.value);
  }
}

std::string Runtime::MetricsText() {
  std::lock_guard<std::mutex> lock(metrics_mu_);
  RefreshMetrics();
  RefreshStorageMetrics();
  return registry_.Render();
}

std::optional<std::string> Runtime::Unhealthy() {
  if (stopping_.load()) return "stopping";
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!first_error_.ok()) return "a pipeline failed (see /v1/status)";
  }
  for (auto& r : pipelines_) {
    if (r->retrying.load()) {
      return fmt::format("pipeline {} is failing and restarting (see /v1/status)", r->name);
    }
  }
  for (auto& [name, s] : streams_) {
    // No details here: /healthz needs no token. /v1/status has the message.
    if (!s->log->Health().ok()) return fmt::format("stream '{}': its log cannot append", name);
  }
  return std::nullopt;
}

std::string Runtime::StatusJson() {
  nlohmann::json j;
  const int64_t now = iceberg::NowMillis();
  j["state"] = stopping_.load() ? "stopping" : "running";
  j["uptime_seconds"] = (now - started_ms_) / 1e3;
  nlohmann::json pipes = nlohmann::json::array();
  for (auto& r : pipelines_) {
    const Snapshot s = Numbers(*r);
    nlohmann::json p;
    p["name"] = r->name;
    p["source"] = r->stream;
    p["target"] = r->table;
    p["running"] = !r->done.load();
    p["epoch"] = s.epoch;
    p["checkpoint"] = s.checkpoint;
    // As the pipeline uses it now: the file-count SLO's action may stretch it.
    p["commit_interval_ms"] = r->options.commit_interval_ms * r->commit_slowdown.load();
    p["records_read"] = s.records_in;
    p["records_committed"] = s.records_committed;
    p["dead_letters"] = s.dead_letters;
    p["commits"] = s.commits;
    p["commit_failures"] = s.commit_failures;
    p["committed_offset"] = r->committed_offset.load();
    p["source_lag_records"] = s.source_lag;
    p["lag_records"] = LagRecords(s);
    p["last_commit_seconds"] = s.last_commit_micros / 1e6;             // its catalog commit
    p["last_checkpoint_seconds"] = r->last_checkpoint_seconds.load();  // all of it
    if (r->options.aggregate) {
      p["state"] = {{"groups", s.state_groups},
                    {"memory_bytes", s.state_memory},
                    {"memory_budget_bytes", r->options.state_memory},
                    {"spills", s.state_spills}};
    }
    // An upsert pipeline (this run's numbers).
    if (s.key_index_loads + s.key_index_restores + s.key_index_reopens > 0) {
      p["upserts"] = {{"keys", s.key_index_keys},
                      {"deleted_rows", s.upsert_deletes},
                      {"index_loads", s.key_index_loads},
                      {"index_restores", s.key_index_restores},
                      {"index_reopens", s.key_index_reopens},
                      {"index_catchups", s.key_index_catchups},
                      {"index_memory_bytes", s.key_index_memory},
                      {"index_spills", s.key_index_spills},
                      {"index_early_checkpoints", s.key_index_early_checkpoints}};
      if (r->options.format != sources::ChangeFormat::kJson) {
        p["upserts"]["format"] = sources::ChangeFormatName(r->options.format);
        p["upserts"]["key_deletes"] = s.change_deletes;
        p["upserts"]["replays_skipped"] = s.changes_replayed;
      }
    }
    int64_t newest = s.newest_committed_ingest_ms;
    p["freshness_seconds"] = newest > 0 ? nlohmann::json((now - newest) / 1e3) : nlohmann::json();
    p["restarts"] = r->restarts.load();
    p["retrying"] = r->retrying.load();
    {
      std::lock_guard<std::mutex> lock(r->mu);
      if (!r->last_error.empty()) p["last_error"] = r->last_error;
    }
    pipes.push_back(std::move(p));
  }
  j["pipelines"] = std::move(pipes);
  nlohmann::json streams = nlohmann::json::array();
  for (auto& [name, s] : streams_) {
    Status health = s->log->Health();
    streams.push_back({{"name", name},
                       {"start_offset", s->log->start_offset()},
                       {"end_offset", s->log->end_offset()},
                       {"segments", s->log->segment_count()},
                       {"healthy", health.ok()}});
    if (!health.ok()) streams.back()["error"] = health.ToString();
  }
  j["streams"] = std::move(streams);
  j["tables"] = MaintenanceStatus();
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!first_error_.ok()) j["error"] = first_error_.ToString();
  }
  return j.dump();
}

}  // namespace sluice::runtime
