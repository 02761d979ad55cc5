// Table-layer benchmark (not a test): commit latency on a table with many
// snapshots, scan-planning time with a selective partition filter against
// planning the whole table, and commit latency through sluice's REST catalog
// (loopback HTTP, the same SQLite catalog behind it) against committing to
// SQLite directly, all in the same run.
//
//   build/bench/table_bench [SNAPSHOTS=1000] [FILES=10000] [REST_COMMITS=300]
//
// Commits go through the embedded SQLite catalog in a temporary warehouse;
// data files are entries only (planning reads manifests, not data).
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <optional>

#include "catalog/rest_client.h"
#include "catalog/table.h"
#include "columnar/sql_schema.h"
#include "common/endian.h"
#include "iceberg/scan.h"
#include "iceberg/table_builder.h"
#include "rest/rest_catalog.h"
#include "server/http_server.h"

namespace {

using namespace sluice;
using Clock = std::chrono::steady_clock;

double Ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

double Percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())))];
}

iceberg::DataFile Entry(const std::string& table, int64_t n, int32_t day) {
  iceberg::DataFile f;
  f.file_path = fmt::format("{}/data/f{}.parquet", table, n);
  f.record_count = 1000;
  f.file_size_in_bytes = 1 << 20;
  std::string v;
  AppendLE<int32_t>(&v, day);
  f.partition = {v};
  return f;
}

// `n` one-file appends to a new table `name` created through `via`: their
// latencies in ms.
std::optional<std::vector<double>> Appends(catalog::Catalog& via, FileIO& io,
                                           const std::string& warehouse, const std::string& name,
                                           int n) {
  auto schema = ParseColumnList("id BIGINT NOT NULL, ts TIMESTAMPTZ, v STRING");
  auto spec = iceberg::ParsePartitionSpec("day(ts)", *schema);
  catalog::TableIdent id{{"b"}, name};
  auto md = iceberg::NewTableMetadata(*schema, *spec, iceberg::SortOrder{},
                                      catalog::DefaultTableLocation(warehouse, id), {});
  auto t = catalog::Table::Create(via, io, id, *md);
  if (!t.ok()) {
    std::fprintf(stderr, "%s\n", t.status().ToString().c_str());
    return std::nullopt;
  }
  std::vector<double> latency;
  for (int i = 0; i < n; ++i) {
    auto start = Clock::now();
    auto r = (*t)->Append({Entry((*t)->metadata().location, i, i % 30)});
    if (!r.ok()) {
      std::fprintf(stderr, "%s\n", r.status().ToString().c_str());
      return std::nullopt;
    }
    latency.push_back(Ms(Clock::now() - start));
  }
  return latency;
}

// 3. Commit latency through sluice's REST catalog against SQLite directly.
int RestCommits(catalog::Catalog& sqlite, FileIO& io, const std::string& warehouse, int n) {
  rest::RestCatalogHandler handler(sqlite, io, warehouse);
  server::NoStreams target;
  server::HttpServerOptions o;
  o.routes = &handler;
  auto server = server::HttpServer::Make(o, &target);
  if (!server.ok() || !(*server)->Start().ok()) return 1;
  auto client =
      catalog::OpenRestCatalog("http://127.0.0.1:" + std::to_string((*server)->port()), io);
  if (!client.ok()) {
    std::fprintf(stderr, "%s\n", client.status().ToString().c_str());
    return 1;
  }
  auto direct = Appends(sqlite, io, warehouse, "direct", n);
  auto via_rest = Appends(**client, io, warehouse, "via_rest", n);
  if (!direct || !via_rest) return 1;
  double d50 = Percentile(*direct, 0.5), r50 = Percentile(*via_rest, 0.5);
  std::printf(
      "commit latency through the REST catalog, %d appends: p50 %.1f ms, p99 %.1f ms; "
      "SQLite directly: p50 %.1f ms, p99 %.1f ms: REST/direct p50 %.2fx\n",
      n, r50, Percentile(*via_rest, 0.99), d50, Percentile(*direct, 0.99),
      r50 / std::max(d50, 1e-3));
  return 0;
}

int Run(int snapshots, int files, int rest_commits) {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("sluice_table_bench_" + std::to_string(getpid()));
  fs::remove_all(dir);
  auto io = MakeLocalFileIO();
  auto cat = catalog::OpenCatalog((dir / "catalog.db").string());
  if (!cat.ok() || !(*cat)->CreateNamespace({"b"}, {}).ok()) return 1;
  auto schema = ParseColumnList("id BIGINT NOT NULL, ts TIMESTAMPTZ, v STRING");
  auto spec = iceberg::ParsePartitionSpec("day(ts)", *schema);
  auto make = [&](const std::string& name) -> std::unique_ptr<catalog::Table> {
    catalog::TableIdent id{{"b"}, name};
    auto md = iceberg::NewTableMetadata(*schema, *spec, iceberg::SortOrder{},
                                        catalog::DefaultTableLocation(dir.string(), id), {});
    auto t = catalog::Table::Create(**cat, *io, id, *md);
    if (!t.ok()) std::fprintf(stderr, "%s\n", t.status().ToString().c_str());
    return t.ok() ? std::move(*t) : nullptr;
  };

  // 1. Commit latency: `snapshots` appends of one file each.
  auto t = make("commits");
  if (!t) return 1;
  std::vector<double> latency;
  for (int i = 0; i < snapshots; ++i) {
    auto start = Clock::now();
    auto r = t->Append({Entry(t->metadata().location, i, i % 30)});
    if (!r.ok()) {
      std::fprintf(stderr, "%s\n", r.status().ToString().c_str());
      return 1;
    }
    latency.push_back(Ms(Clock::now() - start));
  }
  std::vector<double> last(latency.end() - std::min<size_t>(100, latency.size()), latency.end());
  std::printf(
      "commit latency, %d appends: p50 %.1f ms, p99 %.1f ms; last 100: p50 %.1f ms, "
      "p99 %.1f ms\n",
      snapshots, Percentile(latency, 0.5), Percentile(latency, 0.99), Percentile(last, 0.5),
      Percentile(last, 0.99));

  // 2. Planning: `files` files over 100 day partitions in 100 commits.
  auto p = make("planning");
  if (!p) return 1;
  int per_commit = std::max(1, files / 100);
  for (int c = 0; c < 100; ++c) {
    std::vector<iceberg::DataFile> batch;
    for (int k = 0; k < per_commit; ++k) {
      batch.push_back(Entry(p->metadata().location, c * per_commit + k, 19723 + c));
    }
    if (!p->Append(batch).ok()) return 1;
  }
  auto md = std::make_shared<const iceberg::TableMetadata>(p->metadata());
  auto plan = [&](const std::string& filter, int* planned) {
    double best = 1e18;
    for (int rep = 0; rep < 5; ++rep) {
      iceberg::ScanOptions o;
      o.filter = filter;
      auto start = Clock::now();
      auto scan = iceberg::TableScan::Make(*io, md, o);
      (void)(*scan)->Plan();
      best = std::min(best, Ms(Clock::now() - start));
      *planned = static_cast<int>((*scan)->tasks().size());
    }
    return best;
  };
  int all_files = 0, selected = 0;
  double full = plan("", &all_files);
  double selective = plan("ts >= '2024-01-10' AND ts < '2024-01-11'", &selected);
  std::printf(
      "planning, %d files in 100 partitions: full %.1f ms (%d files), selective "
      "day filter %.2f ms (%d files): %.1fx faster than full planning\n",
      all_files, full, all_files, selective, selected, full / std::max(selective, 1e-3));
  int rc = rest_commits > 0 ? RestCommits(**cat, *io, dir.string(), rest_commits) : 0;
  fs::remove_all(dir);
  return rc;
}

}  // namespace

int main(int argc, char** argv) {
  int snapshots = argc > 1 ? std::atoi(argv[1]) : 1000;
  int files = argc > 2 ? std::atoi(argv[2]) : 10000;
  int rest_commits = argc > 3 ? std::atoi(argv[3]) : 300;
  return Run(snapshots, files, rest_commits);
}
