#include "runtime/runtime.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "catalog/table.h"
#include "common/clock.h"
#include "common/thread_name.h"
#include "iceberg/table_builder.h"
#include "pipeline/bind.h"
#include "runtime/runtime_internal.h"
#include "sources/connectors.h"
#include "sources/log_source.h"

namespace sluice::runtime {

using pipeline::BindPipeline;
using pipeline::CheckpointReport;
using pipeline::CheckSource;
using pipeline::EnsureDeadLetterTable;
using pipeline::PipelineStats;
using pipeline::SimpleName;
using pipeline::SourcesOf;
using pipeline::TableName;
using pipeline::Where;

using catalog::TableIdent;

Runtime::Runtime(catalog::Catalog& catalog, FileIO& io, RuntimeOptions options)
    : catalog_(catalog), io_(io), options_(std::move(options)) {}

Runtime::~Runtime() {
  RequestStop();
  (void)Wait();
}

Result<std::unique_ptr<Runtime>> Runtime::Make(catalog::Catalog& catalog, FileIO& io,
                                               RuntimeOptions options, const sql::Script& script) {
  if (options.warehouse.empty()) return Status::Invalid("no warehouse");
  if (options.state_dir.empty()) options.state_dir = options.warehouse + "/_sluice";
  std::unique_ptr<Runtime> rt(new Runtime(catalog, io, std::move(options)));
  RETURN_IF_ERROR(rt->InitMetrics());
  RETURN_IF_ERROR(rt->Setup(script));
  return rt;
}

Status Runtime::Check(catalog::Catalog& catalog, FileIO& io, RuntimeOptions options,
                      const sql::Script& script) {
  if (options.warehouse.empty()) return Status::Invalid("no warehouse");
  if (options.state_dir.empty()) options.state_dir = options.warehouse + "/_sluice";
  Runtime rt(catalog, io, std::move(options));
  return rt.Plan(script).status();
}

Result<std::map<std::string, sql::CreateSource>> Runtime::Plan(const sql::Script& script) {
  // 1. Check every statement (names, options, partition specs, the pipelines'
  //    bindings against existing tables or the ones the script defines)
  //    before changing anything, so a bad script leaves nothing behind.
  std::map<std::string, Schema> planned;
  for (const auto& st : script.statements) {
    if (const auto* t = std::get_if<sql::CreateTable>(&st.body)) {
      RETURN_IF_ERROR(CreateTable(*t, &planned));
    }
  }
  ASSIGN_OR_RETURN(auto sources, SourcesOf(script));
  for (const auto& [name, s] : sources) RETURN_IF_ERROR(CheckSource(s));
  int pipelines = 0;
  for (const auto& st : script.statements) {
    if (const auto* p = std::get_if<sql::CreatePipeline>(&st.body)) {
      RETURN_IF_ERROR(BindPipeline(catalog_, io_, *p, sources, &planned).status());
      ++pipelines;
    }
  }
  if (pipelines == 0) return Status::Invalid("the script defines no pipeline (CREATE PIPELINE)");
  return sources;
}

Status Runtime::Setup(const sql::Script& script) {
  ASSIGN_OR_RETURN(auto sources, Plan(script));
  // 2. Create what is missing, open the sources, recover the pipelines.
  for (const auto& st : script.statements) {
    if (const auto* t = std::get_if<sql::CreateTable>(&st.body)) {
      RETURN_IF_ERROR(CreateTable(*t, nullptr));
    }
  }
  for (const auto& [name, s] : sources) RETURN_IF_ERROR(AddSource(name, s));
  for (const auto& st : script.statements) {
    if (const auto* p = std::get_if<sql::CreatePipeline>(&st.body)) {
      RETURN_IF_ERROR(AddPipeline(*p));
    }
  }
  // Chains: a pipeline reading a table another pipeline writes.
  for (auto& r : pipelines_) {
    if (r->reads_table.empty()) continue;
    for (const auto& w : pipelines_) {
      if (w.get() != r.get() && w->options.target.ToString() == r->reads_table) {
        r->upstream.push_back(w.get());
      }
    }
  }
  // A cycle of chained pipelines (A reads B's table, B reads A's) would wait
  // on itself in a bounded run and feed itself forever otherwise.
  std::map<const Running*, int> state;  // 1: on the path, 2: done
  std::function<Status(const Running*)> visit = [&](const Running* r) -> Status {
    int& s = state[r];
    if (s == 2) return Status::OK();
    if (s == 1) {
      return Status::Invalid(
          "pipelines read each other's tables in a cycle (through {}): a "
          "chain must end",
          r->name);
    }
    s = 1;
    for (const Running* u : r->upstream) RETURN_IF_ERROR(visit(u));
    state[r] = 2;
    return Status::OK();
  };
  for (const auto& r : pipelines_) RETURN_IF_ERROR(visit(r.get()));
  RETURN_IF_ERROR(SetUpMaintenance());
  return RegisterStreamReaders();
}

Status Runtime::RegisterStreamReaders() {
  for (auto& [name, s] : streams_) {
    const std::string path = s->log->dir() + "/readers";
    std::set<std::string> listed;
    auto text = io_.ReadFile(path);
    if (!text.ok() && text.status().code() != StatusCode::kNotFound) return text.status();
    std::string_view rest = text.ok() ? std::string_view(*text) : std::string_view();
    while (!rest.empty()) {
      size_t nl = rest.find('\n');
      std::string_view line = rest.substr(0, nl);
      if (!line.empty()) listed.emplace(line);
      rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
    }
    std::set<std::string> running;
    for (const Running* r : s->readers) running.insert(r->name + "@" + r->table);
    for (const auto& l : listed) {
      if (!running.count(l)) s->retention_blocked = true;
    }
    if (!std::includes(listed.begin(), listed.end(), running.begin(), running.end())) {
      listed.insert(running.begin(), running.end());
      std::string out;
      for (const auto& l : listed) out += l + "\n";
      RETURN_IF_ERROR(io_.WriteFile(path, out, /*overwrite=*/true));
    }
  }
  return Status::OK();
}

Status Runtime::CreateTable(const sql::CreateTable& t, std::map<std::string, Schema>* plan_only) {
  ASSIGN_OR_RETURN(TableIdent ident, TableName(t.name));
  auto existing = catalog_.LoadTable(ident);
  if (existing.ok()) return Status::OK();  // use the table as it is
  if (existing.status().code() != StatusCode::kNotFound) return existing.status();
  auto where = [&](const Status& st) {
    return st.WithContextF("{}: table {}", Where(t.name.pos()), ident.ToString());
  };
  auto spec = iceberg::ParsePartitionSpec(t.PartitionSpecText(), t.schema);
  if (!spec.ok()) return where(spec.status());
  // A table committed to every second would keep every replaced metadata
  // file until orphan cleanup: the ones the metadata log drops go at once
  // (Iceberg's property, unless the script sets it).
  std::map<std::string, std::string> props = t.options.ToMap();
  props.emplace("write.metadata.delete-after-commit.enabled", "true");
  auto o = iceberg::NewTableOptionsFromProperties(std::move(props));
  if (!o.ok()) return where(o.status());
  auto md = iceberg::NewTableMetadata(t.schema, *spec, iceberg::SortOrder{},
                                      catalog::DefaultTableLocation(options_.warehouse, ident), *o);
  if (!md.ok()) return where(md.status());
  if (plan_only != nullptr) {
    if (!plan_only->emplace(ident.ToString(), t.schema).second) {
      return where(Status::Invalid("defined twice"));
    }
    return Status::OK();
  }
  ASSIGN_OR_RETURN(bool ns_exists, catalog_.NamespaceExists(ident.ns));
  if (!ns_exists) {
    Status st = catalog_.CreateNamespace(ident.ns, {});
    if (!st.ok() && st.code() != StatusCode::kAlreadyExists) return where(st);
  }
  auto created = catalog::Table::Create(catalog_, io_, ident, *md);
  if (!created.ok() && created.status().code() != StatusCode::kAlreadyExists) {
    return where(created.status());
  }
  return Status::OK();
}

Status Runtime::AddSource(const std::string& name, const sql::CreateSource& s) {
  if (sources::FindConnector(pipeline::ConnectorOf(s))->uses_log) {
    auto stream = std::make_unique<Stream>();
    stream->name = name;
    // Any body within the HTTP limit must fit one log batch once framed (4 bytes a
    // record: at most 2.5x the body, for 1-byte records and their newlines).
    log::LogOptions lo = options_.log;
    lo.max_batch_bytes = std::max(lo.max_batch_bytes, 3 * options_.max_body_bytes);
    ASSIGN_OR_RETURN(stream->log,
                     log::StreamLog::Open(options_.state_dir + "/streams/" + name, lo));
    streams_[name] = std::move(stream);
  }
  sources_[name] = s;
  return Status::OK();
}

Status Runtime::AddPipeline(const sql::CreatePipeline& p) {
  ASSIGN_OR_RETURN(std::string name, SimpleName(p.name, "pipeline"));
  for (const auto& r : pipelines_) {
    if (r->name == name)
      return Status::Invalid("{}: pipeline {} is defined twice", Where(p.name.pos()), name);
  }
  ASSIGN_OR_RETURN(PipelineOptions o, BindPipeline(catalog_, io_, p, sources_));
  // The journal belongs to the pipeline *and* its table: entries are judged
  // against that table's checkpoints.
  o.state_dir = options_.state_dir + "/pipelines/" + name + "@" + o.target.ToString();
  RETURN_IF_ERROR_CTX(EnsureDeadLetterTable(catalog_, io_, options_.warehouse, o.target),
                      "{}: target table {}", Where(p.insert.target.pos()), o.target.ToString());

  auto running = std::make_unique<Running>();
  running->name = name;
  running->stream = o.source_name;
  RETURN_IF_ERROR(RegisterPipelineMetrics(running.get(), o));
  const sql::CreateSource& def = sources_.at(o.source_name);
  const sources::Connector& connector = *sources::FindConnector(pipeline::ConnectorOf(def));
  if (options_.bounded && !connector.bounded) {
    return Status::Invalid(
        "{}: pipeline {} reads the {} source {}, which has no end: --bounded runs read file "
        "and table sources",
        Where(p.name.pos()), name, connector.name, o.source_name);
  }
  log::StreamLog* log = nullptr;
  if (auto s = streams_.find(o.source_name); s != streams_.end()) {
    log = s->second->log.get();
    s->second->readers.push_back(running.get());
  }
  sources::OpenContext context{log, &catalog_, &io_, options_.bounded};
  if (def.from_table) running->reads_table = pipeline::ConnectorOptions(def).at("table");
  ASSIGN_OR_RETURN(
      running->open_source,
      sources::MakeOpener(o.source_name, connector, pipeline::ConnectorOptions(def), context));
  running->options = o;
  ASSIGN_OR_RETURN(auto source, running->open_source());
  ASSIGN_OR_RETURN(running->pipeline, Pipeline::Open(catalog_, io_, o, std::move(source)));
  running->committed_offset = running->pipeline->stats().committed_offset_sum.load();
  pipelines_.push_back(std::move(running));
  return Status::OK();
}

Status Runtime::Start() {
  started_ms_ = iceberg::NowMillis();
  for (auto& r : pipelines_) {
    Running* raw = r.get();
    r->thread = std::thread([this, raw] { RunPipeline(raw); });
  }
  StartMaintenance();
  if (!options_.listen.empty()) {
    server::HttpServerOptions so;
    RETURN_IF_ERROR(server::ParseListen(options_.listen, &so));
    so.routes = options_.routes;
    so.bearer_token = options_.bearer_token;
    so.max_body_bytes = options_.max_body_bytes;
    so.registry = &registry_;
    ASSIGN_OR_RETURN(server_, server::HttpServer::Make(so, this));
    RETURN_IF_ERROR(server_->Start());
  }
  return Status::OK();
}

namespace {

// Failures of the environment (storage, the catalog's answer) that a new run of
// the pipeline may not meet again. The rest (fenced by a newer epoch, corrupt
// data, a bad definition, a bug) stop the process.
bool RetryInPlace(const Status& st) {
  switch (st.code()) {
    case StatusCode::kIOError:
    case StatusCode::kCommitStateUnknown:
    case StatusCode::kConflict: return true;
    default: return false;
  }
}

}  // namespace

// Runs the pipeline until a stop (then a final checkpoint) or a failure. A
// retryable failure does not end the process: the pipeline is closed, and after
// a backoff (doubling up to retry_max_ms) opened again, which recovers it exactly
// as a restart of the process would. Ingest goes on meanwhile (into the log, up
// to the backpressure limit) and /healthz reports the failure.
Status Runtime::AwaitUpstream(Running* r, int64_t* backoff_ms) {
  if (!options_.bounded || r->upstream.empty()) return Status::OK();
  // A bounded run reads a chained table to what its writers committed by
  // their end: wait for them, then open the source again to see it.
  while (!stopping_.load() && !std::all_of(r->upstream.begin(), r->upstream.end(),
                                           [](const Running* u) { return u->done.load(); })) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (stopping_.load()) return Status::OK();
  // (It has read nothing: the key index it took or restored is kept for the
  // new one, as at a clean stop, unless it followed a compaction since.)
  r->pipeline->KeepKeyIndex();
  {
    std::lock_guard<std::mutex> lock(r->mu);
    r->pipeline.reset();  // releases its journal for the new one
  }
  return Reopen(r, backoff_ms, /*wait_first=*/false);
}

Status Runtime::Reopen(Running* r, int64_t* backoff_ms, bool wait_first) {
  for (bool wait = wait_first;; wait = true) {
    if (wait) {
      for (int64_t waited = 0; waited < *backoff_ms && !stopping_.load(); waited += 10) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
      *backoff_ms = std::min(*backoff_ms * 2, options_.retry_max_ms);
    }
    if (stopping_.load()) return Status::OK();
    auto reopened = [&]() -> Result<std::unique_ptr<Pipeline>> {
      ASSIGN_OR_RETURN(auto source, r->open_source());
      return Pipeline::Open(catalog_, io_, r->options, std::move(source));
    }();
    if (reopened.ok()) {
      std::lock_guard<std::mutex> lock(r->mu);
      r->pipeline = std::move(*reopened);
      return Status::OK();
    }
    if (!RetryInPlace(reopened.status())) return reopened.status();
    std::fprintf(stderr, "sluice: pipeline %s could not open, retrying in %lld ms: %s\n",
                 r->name.c_str(), static_cast<long long>(*backoff_ms),
                 PrintableText(reopened.status().ToString()).c_str());
    r->retrying = true;
    std::lock_guard<std::mutex> lock(r->mu);
    r->last_error = reopened.status().ToString();
  }
}

void Runtime::RunPipeline(Running* r) {
  NameThisThread(ThreadName("pipe", 0, r->options.name));
  int64_t backoff_ms = options_.retry_initial_ms;
  Status st = AwaitUpstream(r, &backoff_ms);
  if (!st.ok() || r->pipeline == nullptr) {  // failed, or stopped while waiting
    if (!st.ok()) {
      std::lock_guard<std::mutex> lock(mu_);
      if (first_error_.ok()) first_error_ = st;
      stopping_.store(true);
    }
    MarkDone(r);
    return;
  }
  for (;;) {
    st = RunUntilStopOrFailure(*r);
    if (!r->retrying.load()) backoff_ms = options_.retry_initial_ms;
    if (st.ok() || !RetryInPlace(st)) break;
    std::fprintf(stderr, "sluice: pipeline %s failed, restarting it in %lld ms: %s\n",
                 r->name.c_str(), static_cast<long long>(backoff_ms),
                 PrintableText(st.ToString()).c_str());
    r->retrying = true;
    ++r->restarts;
    if (r->restarts_total) r->restarts_total->Increment();
    {
      std::lock_guard<std::mutex> lock(r->mu);
      r->last_error = st.ToString();
      const PipelineStats& s = r->pipeline->stats();
      r->before.records_in += s.records_in;
      r->before.bytes_in += s.bytes_in;
      r->before.records_committed += s.records_committed;
      r->before.dead_letters += s.dead_letters_committed;
      r->before.commits += s.commits;
      r->before.commit_failures += s.commit_failures;
      r->pipeline.reset();  // releases its journal; its staged files stay for recovery
    }
    // Reopen (recover) after the backoff, again and again while it fails likewise.
    Status reopened = Reopen(r, &backoff_ms, /*wait_first=*/true);
    if (!reopened.ok()) st = reopened;
    if (r->pipeline == nullptr) break;  // stopped while failing, or a fatal error
    // `retrying` (and the longer backoff) last until the new run commits.
  }
  if (!st.ok() && (r->pipeline != nullptr || !RetryInPlace(st))) {
    std::lock_guard<std::mutex> lock(mu_);
    if (first_error_.ok()) first_error_ = st;
    stopping_.store(true);
  }
  MarkDone(r);
}

void Runtime::MarkDone(Running* r) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    r->done.store(true);
  }
  ended_.notify_all();
}

Status Runtime::RunUntilStopOrFailure(Running& r) {
  Pipeline& p = *r.pipeline;
  while (!stopping_.load()) {
    p.SetCommitIntervalMs(r.options.commit_interval_ms * r.commit_slowdown.load());
    auto n = p.Step(100);
    r.committed_offset = p.stats().committed_offset_sum.load();
    if (!n.ok()) return n.status();
    if (r.retrying.load() && p.stats().commits.load() > 0) r.retrying = false;  // healed
    if (!streams_.empty()) ApplyRetention();
    if (options_.bounded && p.source().Exhausted()) {
      RETURN_IF_ERROR(p.FinishInput());  // the input's end: every window closes
      break;
    }
  }
  if (stopping_.load()) RETURN_IF_ERROR(DrainStream(r));
  Status st = p.Checkpoint();  // the final checkpoint
  r.committed_offset = p.stats().committed_offset_sum.load();
  // (A clean stop: what the next run can take as it is.)
  if (st.ok()) p.KeepKeyIndex();
  return st;
}

Status Runtime::DrainStream(Running& r) {
  auto s = streams_.find(r.stream);
  if (s == streams_.end()) return Status::OK();
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!first_error_.ok()) return Status::OK();  // a failure ends the run: no waiting
  }
  Pipeline& p = *r.pipeline;
  // (Records appended after this are not waited for: ingest goes on until
  // the server stops, and the next run reads them.)
  const int64_t end = s->second->log->end_offset();
  const int64_t deadline = MonotonicMillis() + options_.stop_drain_ms;
  auto read_to = [&p] {
    sources::Positions at = p.source().CurrentPositions();
    auto it = at.find(sources::LogSource::kPartition);
    return it == at.end() ? 0 : it->second;
  };
  while (read_to() < end && MonotonicMillis() < deadline) {
    RETURN_IF_ERROR(p.Step(100).status());
    r.committed_offset = p.stats().committed_offset_sum.load();
  }
  return Status::OK();
}

void Runtime::ApplyRetention() {
  for (auto& [name, s] : streams_) {
    if (s->readers.empty() || s->retention_blocked) continue;
    int64_t min_committed = INT64_MAX;
    for (const Running* r : s->readers) {
      min_committed = std::min(min_committed, r->committed_offset.load());
    }
    if (min_committed > s->retained_below.load()) {
      // Concurrent calls from several pipeline threads are safe: the log
      // serializes them, and deleting below a committed offset is idempotent.
      if (s->log->DeleteSegmentsBefore(min_committed).ok()) s->retained_below = min_committed;
    }
  }
}

void Runtime::RequestStop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_.store(true);
  }
  ended_.notify_all();
  RequestStopMaintenance();  // no new maintenance work; Wait joins it
}

bool Runtime::WaitEnded(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  return ended_.wait_for(lock, timeout, [this] { return stopping_.load() || finished(); });
}

bool Runtime::finished() const {
  return std::all_of(pipelines_.begin(), pipelines_.end(),
                     [](const auto& r) { return r->done.load(); });
}

Status Runtime::Wait() {
  for (auto& r : pipelines_) {
    if (r->thread.joinable()) r->thread.join();
  }
  StopMaintenance();
  if (server_) server_->Stop();
  for (auto& [name, s] : streams_) (void)s->log->Sync();
  std::lock_guard<std::mutex> lock(mu_);
  return first_error_;
}

log::StreamLog* Runtime::FindStream(const std::string& name) {
  auto it = streams_.find(name);
  return it == streams_.end() ? nullptr : it->second->log.get();
}

std::optional<server::Backpressure> Runtime::CheckBackpressure(const std::string& stream) {
  if (stopping_.load()) {
    return server::Backpressure{server::Backpressure::Kind::kUnavailable, 5, "sluice is stopping"};
  }
  auto it = streams_.find(stream);
  if (it == streams_.end()) return std::nullopt;
  int64_t end = it->second->log->end_offset();
  for (const Running* r : it->second->readers) {
    int64_t behind = end - r->committed_offset.load();
    if (behind > options_.max_lag_records) {
      return server::Backpressure{server::Backpressure::Kind::kBehind, 1,
                                  fmt::format("pipeline {} is {} records behind (limit {})",
                                              r->name, behind, options_.max_lag_records)};
    }
  }
  return std::nullopt;
}

}  // namespace sluice::runtime
