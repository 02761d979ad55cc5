// `sluice run FILE.sql`: creates what the script defines, runs its pipelines
// and serves HTTP ingest until SIGTERM/SIGINT, then takes a final checkpoint
// and exits 0 (docs/pipelines.md).

#include <atomic>
#include <chrono>
#include <cstdio>

#include "cli/commands.h"
#include "cli/context.h"
#include "pipeline/bind.h"
#include "pipeline/dead_letter_replay.h"
#include "rest/rest_catalog.h"
#include "runtime/runtime.h"
#include "sql/parser.h"

namespace sluice::cli {
namespace {

struct RunArgs {
  std::string file;
  std::string listen;
  std::string token_env = "SLUICE_TOKEN";
  std::string clients_file;
  int64_t max_lag_records = 1'000'000;
  bool check = false;
  bool bounded = false;
  bool no_maintenance = false;
  int maintenance_threads = 1;
  double maintenance_cpu = 0.5;
  double stop_drain_s = 5;
};

Status Run(const RunArgs& a) {
  ASSIGN_OR_RETURN(std::string text, StorageIO().ReadFile(a.file));
  auto script = sql::ParseScript(text);
  if (!script.ok()) return script.status().WithContext(a.file);
  ASSIGN_OR_RETURN(catalog::Catalog * cat, OpenGlobalCatalog());
  runtime::RuntimeOptions o;
  o.warehouse = WarehousePath();
  ASSIGN_OR_RETURN(o.state_dir, StateDir());
  o.listen = a.listen;
  if (const char* token = std::getenv(a.token_env.c_str()); token && *token) o.bearer_token = token;
  // The warehouse's catalog over the Iceberg REST protocol, on the same port.
  ASSIGN_OR_RETURN(auto auth, MakeCatalogAuth(o.bearer_token, a.clients_file));
  rest::RestCatalogHandler catalog_routes(*cat, StorageIO(), o.warehouse, auth.get());
  o.routes = &catalog_routes;
  o.max_lag_records = a.max_lag_records;
  o.bounded = a.bounded;
  o.maintenance = !a.no_maintenance;
  o.maintenance_service.threads = a.maintenance_threads;
  o.maintenance_service.cpu_cores = a.maintenance_cpu;
  o.stop_drain_ms = static_cast<int64_t>(a.stop_drain_s * 1000);
  if (a.check) {
    Status checked = runtime::Runtime::Check(*cat, StorageIO(), o, *script);
    if (!checked.ok()) return checked.WithContext(a.file);
    std::printf("%s: ok (%zu statements; no table, log or journal created)\n", a.file.c_str(),
                script->statements.size());
    return Status::OK();
  }

  CatchStopSignals();

  auto rt = runtime::Runtime::Make(*cat, StorageIO(), o, *script);
  if (!rt.ok()) return rt.status().WithContext(a.file);
  RETURN_IF_ERROR((*rt)->Start());
  if ((*rt)->http_port() != 0) {
    std::fprintf(stderr, "sluice: listening on http://%s:%d\n",
                 o.listen.substr(0, o.listen.rfind(':')).c_str(), (*rt)->http_port());
  }
  std::fprintf(stderr, "sluice: running %s (SIGTERM or Ctrl-C stops after a final checkpoint)\n",
               a.file.c_str());
  // (Signals are checked every 50 ms; the end of a bounded run wakes the wait.)
  while (StopSignal() == 0 && !(*rt)->WaitEnded(std::chrono::milliseconds(50))) {
  }
  (*rt)->RequestStop();
  Status st = (*rt)->Wait();
  if (st.ok()) {
    std::fprintf(stderr, "sluice: %s\n",
                 (*rt)->finished() && StopSignal() == 0 && a.bounded
                     ? "bounded run complete: every source read to its end and committed"
                     : "stopped after a final checkpoint");
  }
  return st;
}

struct ReplayArgs {
  std::string file, pipeline, where;
  bool dry_run = false;
};

Status Replay(const ReplayArgs& a) {
  ASSIGN_OR_RETURN(std::string text, StorageIO().ReadFile(a.file));
  auto script = sql::ParseScript(text);
  if (!script.ok()) return script.status().WithContext(a.file);
  ASSIGN_OR_RETURN(catalog::Catalog * cat, OpenGlobalCatalog());
  auto bound = [&]() -> Result<pipeline::PipelineOptions> {
    ASSIGN_OR_RETURN(auto sources, pipeline::SourcesOf(*script));
    ASSIGN_OR_RETURN(const sql::CreatePipeline* p, pipeline::FindPipeline(*script, a.pipeline));
    return pipeline::BindPipeline(*cat, StorageIO(), *p, sources);
  }();
  if (!bound.ok()) return bound.status().WithContext(a.file);
  ASSIGN_OR_RETURN(auto r,
                   pipeline::ReplayDeadLetters(*cat, StorageIO(), *bound, a.where, a.dry_run));
  std::printf("%s%lld dead letters of pipeline %s: %lld %s into %s, %lld still failing%s\n",
              a.dry_run ? "dry run: " : "", static_cast<long long>(r.dead_letters),
              a.pipeline.c_str(), static_cast<long long>(r.recovered),
              a.dry_run ? "would go" : "went", bound->target.ToString().c_str(),
              static_cast<long long>(r.still_failing),
              a.dry_run ? "" : " (kept with their new error)");
  return Status::OK();
}

}  // namespace

void RegisterRunCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<RunArgs>();
  auto* cmd = app.add_subcommand(
      "run", "Run the pipelines of a SQL file (CREATE TABLE/SOURCE/PIPELINE) until SIGTERM");
  cmd->add_option("file", args->file, "SQL script")->required();
  cmd->add_option("--listen", args->listen,
                  "Serve HTTP ingest, /metrics, /v1/status, the dashboard (/) and the Iceberg "
                  "REST catalog (/v1/config, /v1/namespaces...) on HOST:PORT (port 0: any)");
  cmd->add_option("--token-env", args->token_env,
                  "Environment variable holding the bearer token HTTP clients must send "
                  "(unset or empty: no authentication)");
  cmd->add_option("--catalog-clients", args->clients_file,
                  "JSON file of OAuth2 clients of the REST catalog (see sluice serve)");
  cmd->add_option("--max-lag-records", args->max_lag_records,
                  "Answer 429 to producers while a pipeline is this many records behind")
      ->check(AtLeast(1));
  cmd->add_flag("--bounded", args->bounded,
                "Read every source to its current end, commit, and exit (file sources)");
  cmd->add_flag("--no-maintenance", args->no_maintenance,
                "Do not compact, expire or clean the tables the pipelines write (their file "
                "counts are still measured)");
  cmd->add_option("--maintenance-threads", args->maintenance_threads,
                  "Threads of the maintenance service")
      ->check(CLI::Range(1, 64));
  cmd->add_option("--maintenance-cpu", args->maintenance_cpu,
                  "CPU cores the maintenance service may use at most (0.5: half a core)")
      ->check(CLI::Range(0.01, 64.0));
  cmd->add_option("--stop-drain", args->stop_drain_s,
                  "At SIGTERM, seconds a pipeline may spend reading what HTTP ingest "
                  "acknowledged before the stop, ahead of its final checkpoint (the rest stays "
                  "in the log for the next run)")
      ->check(CLI::Range(0.0, 3600.0));
  cmd->add_flag("--check", args->check,
                "Check the script (names, options, bindings against the tables) and exit; "
                "creates nothing");
  cmd->callback([args, exit_code] {
    Status st = Run(*args);
    *exit_code = st.ok() ? 0 : ReportError("run", st);
  });

  auto* dlq = app.add_subcommand("dlq", "Dead letters: records a pipeline could not decode");
  dlq->require_subcommand(1);
  auto replay_args = std::make_shared<ReplayArgs>();
  auto* replay = dlq->add_subcommand(
      "replay",
      "Re-decode a pipeline's dead letters with its current definition: the records that now "
      "decode move to the target table, the others stay with their new error (one transaction)");
  replay->add_option("file", replay_args->file, "SQL script defining the pipeline")->required();
  replay->add_option("pipeline", replay_args->pipeline, "Pipeline name")->required();
  replay->add_option("--where", replay_args->where,
                     "Only dead letters matching this filter (columns of <table>__dlq)");
  replay->add_flag("--dry-run", replay_args->dry_run, "Count what would move; change nothing");
  replay->callback([replay_args, exit_code] {
    Status st = Replay(*replay_args);
    *exit_code = st.ok() ? 0 : ReportError("dlq replay", st);
  });
}

}  // namespace sluice::cli
