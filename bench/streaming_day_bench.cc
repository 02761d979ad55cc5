// "A day of streaming" (issue 9, section 7), scaled to a run of minutes: a
// table gets COMMITS commits back to back, each writing ROWS rows into each of
// PARTITIONS partitions (one small file per partition per commit), the way a
// 1 s streaming pipeline writes. The same run is made twice in one process:
//   off — no maintenance (what sluice did before the maintenance service);
//   on  — the maintenance service (maintenance/service.h) running beside the
//         writer, as inside `sluice run`, with its default budget of half a
//         core.
// and the "off" table is then compacted from scratch (sluice table compact,
// then rewrite-manifests --all).
// For each: ingest commits/s (on / off is the ratio that counts), files per
// partition over time, planning time, the time of a selective scan (one
// partition) and of a full scan, and metadata size (metadata files,
// manifests, bytes).
//
//   build/bench/streaming_day_bench [COMMITS=2000] [PARTITIONS=50] [ROWS=20] [SECOND_MS=100]
//                                   [PROPS=key=value,...]  (more properties of the "on" table)
//   (PLAN_RUNS=N: plan each table N times, not 5: to profile planning;
//    PLAN_ONLY=on|off|compacted: only that table N times)
//
// Time is compressed: a commit every SECOND_MS (as fast as the writer goes
// if it cannot keep that pace) stands for a commit every second. The
// service keeps its CPU budget (half a core) in real time, so it has
// 1000 / SECOND_MS times less CPU per commit than in a real day, a harsher
// test; its intervals are compressed by the same factor: file counts every
// 5 "seconds", expiry every 60 of a 600-"second" retention.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include "catalog/table.h"
#include "columnar/sql_schema.h"
#include "iceberg/data_writer.h"
#include "iceberg/manifest.h"
#include "iceberg/scan.h"
#include "iceberg/table_builder.h"
#include "maintenance/compact.h"
#include "maintenance/health.h"
#include "maintenance/manifests.h"
#include "maintenance/service.h"

namespace {

using namespace sluice;
using Clock = std::chrono::steady_clock;
namespace fs = std::filesystem;

double Ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

// The service's reports, unused: the bench reads the table itself.
class Quiet : public maintenance::Observer {
 public:
  void OnAssessed(const std::string&, const maintenance::TableHealth&,
                  const maintenance::Policy&) override {}
  void OnCompacted(const std::string&, const maintenance::CompactResult& r, double) override {
    compactions += r.commits;
    conflicts += r.conflicts;
    bytes_written += r.bytes_written;
  }
  void OnExpired(const std::string&, const maintenance::ExpireResult&, double) override {}
  void OnOrphansRemoved(const std::string&, const maintenance::OrphanResult&, double) override {}
  void OnManifestsRewritten(const std::string&, const maintenance::ManifestRewriteResult& r,
                            double) override {
    if (r.snapshot_id) ++manifest_rewrites;
  }
  void OnFailed(const std::string& table, const std::string& step, const Status& st) override {
    std::fprintf(stderr, "maintenance of %s failed (%s): %s\n", table.c_str(), step.c_str(),
                 st.ToString().c_str());
  }
  std::atomic<int64_t> compactions{0}, conflicts{0}, bytes_written{0}, manifest_rewrites{0};
};

std::vector<std::string> SplitList(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    if (comma > start) out.push_back(text.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

// Table properties the "on" table also gets (the PROPS argument): a policy to try.
std::map<std::string, std::string> g_policy;

struct Row {
  std::string name;
  double commits_per_s = 0;
  int64_t max_files = 0;
  double mean_files = 0;
  double plan_ms = 0, selective_ms = 0, full_ms = 0;
  int64_t rows = 0, metadata_files = 0, manifests = 0, metadata_bytes = 0, compactions = 0,
          conflicts = 0, manifest_rewrites = 0;
  std::vector<int64_t> max_files_over_time;
  std::vector<double> plan_ms_over_time;  // sampled with max_files_over_time
};

// Runs of each timing (PLAN_RUNS, default 5, for planning: raise it to
// profile planning).
template <typename F>
double MedianMs(F f, int runs = 5) {
  std::vector<double> v;
  for (int i = 0; i < runs; ++i) {
    auto t0 = Clock::now();
    f();
    v.push_back(Ms(Clock::now() - t0));
  }
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int64_t ScanRows(FileIO& io, const catalog::Table& t, const std::string& filter) {
  iceberg::ScanOptions so;
  so.filter = filter;
  auto scan = iceberg::TableScan::Make(
      io, std::make_shared<const iceberg::TableMetadata>(t.metadata()), so);
  if (!scan.ok()) return -1;
  Batch b;
  int64_t n = 0;
  while (true) {
    auto more = (*scan)->Next(&b);
    if (!more.ok() || !*more) break;
    n += b.num_rows();
  }
  return n;
}

// The median time of planning a full scan of `t` as it is now.
double PlanMs(FileIO& io, const catalog::Table& t, int runs) {
  auto md = std::make_shared<const iceberg::TableMetadata>(t.metadata());
  return MedianMs(
      [&] {
        auto scan = iceberg::TableScan::Make(io, md, {});
        if (scan.ok()) (void)(*scan)->Plan();
      },
      runs);
}

// Planning and scan times, files per partition and metadata size of `t` now.
void Measure(FileIO& io, catalog::Table& t, const fs::path& location, Row* r) {
  (void)t.Refresh();
  const char* plan_runs = std::getenv("PLAN_RUNS");
  const char* only = std::getenv("PLAN_ONLY");
  bool profiled = only == nullptr || r->name == only;
  r->plan_ms =
      PlanMs(io, t, plan_runs != nullptr && profiled ? std::max(1, std::atoi(plan_runs)) : 5);
  r->selective_ms = MedianMs([&] { (void)ScanRows(io, t, "p = 7"); });
  r->full_ms = MedianMs([&] { r->rows = ScanRows(io, t, ""); });
  auto policy = maintenance::PolicyOf(t.metadata());
  if (policy.ok()) {
    auto h = maintenance::AssessTable(t, *policy);
    if (h.ok()) {
      r->max_files = h->max_partition_files;
      r->mean_files = h->partitions.empty() ? 0
                                            : static_cast<double>(h->data_files) /
                                                  static_cast<double>(h->partitions.size());
    }
  }
  r->metadata_files = r->metadata_bytes = 0;
  for (const auto& e : fs::directory_iterator(location / "metadata")) {
    if (e.path().extension() == ".json") ++r->metadata_files;
    r->metadata_bytes += static_cast<int64_t>(e.file_size());
  }
  if (const iceberg::Snapshot* s = t.metadata().current_snapshot()) {
    auto list = iceberg::ReadManifestList(io, s->manifest_list, t.metadata().format_version);
    if (list.ok()) r->manifests = static_cast<int64_t>(list->size());
  }
}

Row Ingest(const std::string& name, bool maintain, int commits, int partitions, int rows,
           int64_t second_ms, const fs::path& dir, catalog::Catalog& cat, FileIO& io,
           Schema schema) {
  Row r;
  r.name = name;
  catalog::TableIdent id{{"b"}, name};
  auto spec = iceberg::ParsePartitionSpec("p", schema);
  std::map<std::string, std::string> props;
  if (maintain) {  // time is compressed (see the header): so are the intervals
    props["history.expire.max-snapshot-age-ms"] = std::to_string(600 * second_ms);
    props["sluice.maintenance.expire-interval-ms"] = std::to_string(60 * second_ms);
    props["write.metadata.delete-after-commit.enabled"] = "true";  // as `sluice run` creates
    for (const auto& [k, v] : g_policy) props[k] = v;
  }
  auto md = iceberg::NewTableMetadata(schema, *spec, iceberg::SortOrder{},
                                      catalog::DefaultTableLocation(dir.string(), id),
                                      iceberg::NewTableOptions{2, props});
  auto created = catalog::Table::Create(cat, io, id, *md);
  if (!created.ok()) {
    std::fprintf(stderr, "%s\n", created.status().ToString().c_str());
    std::exit(1);
  }
  std::unique_ptr<catalog::Table> t = std::move(*created);
  Quiet quiet;
  std::unique_ptr<maintenance::MaintenanceService> service;
  if (maintain) {
    maintenance::ServiceOptions so;  // the defaults of `sluice run`, but:
    so.assess_interval_ms = 5 * second_ms;
    service = std::make_unique<maintenance::MaintenanceService>(
        cat, io, std::vector<catalog::TableIdent>{id}, so, &quiet);
    service->Start();
  }
  auto sp = std::make_shared<const Schema>(schema);
  int64_t next_id = 0;
  const int sample_every = std::max(1, commits / 10);
  Clock::duration writing{};
  const auto start = Clock::now();
  for (int c = 0; c < commits; ++c) {
    std::this_thread::sleep_until(start + std::chrono::milliseconds(c * second_ms));
    auto t0 = Clock::now();
    Batch b = Batch::Make(sp);
    for (int p = 0; p < partitions; ++p) {
      for (int i = 0; i < rows; ++i) {
        b.columns[0].Append<int64_t>(next_id++);
        b.columns[1].Append<int32_t>(p);
        b.columns[2].AppendBytes("event payload of a streaming day");
      }
    }
    auto w = iceberg::DataWriter::Make(io, t->metadata());
    Status st = w.ok() ? (*w)->Write(b) : w.status();
    auto files = st.ok() ? (*w)->Close() : Result<std::vector<iceberg::DataFile>>(st);
    if (files.ok()) st = t->Append(*files).status();
    if (!files.ok() || !st.ok()) {
      std::fprintf(stderr, "commit %d: %s\n", c,
                   (files.ok() ? st : files.status()).ToString().c_str());
      std::exit(1);
    }
    writing += Clock::now() - t0;
    if ((c + 1) % sample_every == 0) {
      (void)t->Refresh();  // (the service's commits)
      auto policy = maintenance::PolicyOf(t->metadata());
      auto h = maintenance::AssessTable(*t, *policy);
      r.max_files_over_time.push_back(h.ok() ? h->max_partition_files : -1);
      r.plan_ms_over_time.push_back(PlanMs(io, *t, 3));
    }
  }
  // The writer's own time per commit (pacing excluded): what maintenance slows.
  r.commits_per_s = commits / (std::chrono::duration<double>(writing).count());
  if (service) service->Stop();
  r.compactions = quiet.compactions.load();
  r.conflicts = quiet.conflicts.load();
  r.manifest_rewrites = quiet.manifest_rewrites.load();
  Measure(io, *t, dir / "b" / name, &r);
  return r;
}

void Print(const Row& r, const Row& off) {
  std::printf("%-10s %9.1f %6.2fx %6lld %7.1f %9.2f %9.1f %9.1f %6lld %6lld %10lld %6lld  ",
              r.name.c_str(), r.commits_per_s, r.commits_per_s / off.commits_per_s,
              static_cast<long long>(r.max_files), r.mean_files, r.plan_ms, r.selective_ms,
              r.full_ms, static_cast<long long>(r.metadata_files),
              static_cast<long long>(r.manifests), static_cast<long long>(r.metadata_bytes),
              static_cast<long long>(r.compactions));
  for (int64_t f : r.max_files_over_time) std::printf(" %lld", static_cast<long long>(f));
  if (r.conflicts > 0)
    std::printf("  (%lld compactions lost)", static_cast<long long>(r.conflicts));
  if (r.manifest_rewrites > 0)
    std::printf("  (%lld manifest rewrites)", static_cast<long long>(r.manifest_rewrites));
  std::printf("\n");
}

}  // namespace

int main(int argc, char** argv) {
  const int commits = argc > 1 ? std::atoi(argv[1]) : 2000;
  const int partitions = argc > 2 ? std::atoi(argv[2]) : 50;
  const int rows = argc > 3 ? std::atoi(argv[3]) : 20;
  const int64_t second_ms = argc > 4 ? std::atoll(argv[4]) : 100;
  // PROPS: "key=value,key=value" (e.g. sluice.maintenance.max-manifests=4).
  for (std::string item : argc > 5 ? SplitList(argv[5]) : std::vector<std::string>{}) {
    size_t eq = item.find('=');
    if (eq != std::string::npos) g_policy[item.substr(0, eq)] = item.substr(eq + 1);
  }
  fs::path dir = fs::temp_directory_path() / ("sluice_day_bench_" + std::to_string(getpid()));
  fs::remove_all(dir);
  auto io = MakeLocalFileIO();
  auto cat = catalog::OpenCatalog((dir / "catalog.db").string());
  if (!cat.ok() || !(*cat)->CreateNamespace({"b"}, {}).ok()) return 1;
  auto schema = ParseColumnList("id BIGINT NOT NULL, p INT NOT NULL, v STRING");
  std::printf(
      "%d commits x %d partitions x %d rows (one file per partition per commit), one every "
      "%lld ms\n",
      commits, partitions, rows, static_cast<long long>(second_ms));
  Row off = Ingest("off", false, commits, partitions, rows, second_ms, dir, **cat, *io, *schema);
  Row on = Ingest("on", true, commits, partitions, rows, second_ms, dir, **cat, *io, *schema);
  // The "off" table compacted from scratch, its manifests then rewritten, as
  // `sluice table compact` and `sluice table rewrite-manifests --all` do:
  // the best a table of these rows can be planned.
  Row compacted = off;
  compacted.name = "compacted";
  {
    auto t = catalog::Table::Load(**cat, *io, catalog::TableIdent{{"b"}, "off"});
    auto r = maintenance::CompactTable(**t, {});
    if (!r.ok()) std::fprintf(stderr, "compact: %s\n", r.status().ToString().c_str());
    maintenance::ManifestRewriteOptions mo;
    mo.force = true;
    auto m = maintenance::RewriteManifests(**t, mo);
    if (!m.ok()) std::fprintf(stderr, "rewrite manifests: %s\n", m.status().ToString().c_str());
    compacted.compactions = r.ok() ? r->commits : 0;
    compacted.max_files_over_time.clear();
    Measure(*io, **t, dir / "b" / "off", &compacted);
  }
  std::printf(
      "%-10s %9s %7s %6s %7s %9s %9s %9s %6s %6s %10s %6s   max files/partition over time\n",
      "table", "commits/s", "vs off", "max f", "mean f", "plan ms", "select ms", "full ms", "md",
      "mfsts", "md bytes", "cmpct");
  Print(off, off);
  Print(on, off);
  Print(compacted, off);
  std::printf("rows: off %lld, on %lld, compacted %lld; planning on/compacted %.2fx\n",
              static_cast<long long>(off.rows), static_cast<long long>(on.rows),
              static_cast<long long>(compacted.rows), on.plan_ms / compacted.plan_ms);
  // Planning of the "on" table sampled over the run (as max files/partition),
  // against the compacted table's at the end: the end alone is one sample.
  std::vector<double> ratios;
  std::printf("planning of on over time, / compacted:");
  for (double ms : on.plan_ms_over_time) {
    ratios.push_back(ms / compacted.plan_ms);
    std::printf(" %.2f", ratios.back());
  }
  std::sort(ratios.begin(), ratios.end());
  if (!ratios.empty()) {
    std::printf("  (median %.2fx, max %.2fx)", ratios[ratios.size() / 2], ratios.back());
  }
  std::printf("\n");
  fs::remove_all(dir);
  return off.rows == on.rows && on.rows == compacted.rows ? 0 : 1;
}
