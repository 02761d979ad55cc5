// Snapshot expiry on a streaming table (a benchmark, not a test). Two twin
// tables get the same commits: MINUTES times, 60 one-commit appends of FILES
// data files each (a 1 s pipeline's minute), then one rewrite of those files
// into one (a compaction) and one of the manifests (as the service merges
// them). After each minute both are expired to their newest
// RETAIN snapshots, as the maintenance service does every minute: one through
// a ManifestCache kept from minute to minute (the service), one without (what
// `sluice table expire-snapshots` reads). Data files are manifest entries
// only: expiry reads metadata, never data. Prints the mean CPU time of an
// expiry (the thread's) over the minutes once the retention is full, and
// their ratio.
//
//   build/bench/expire_bench [MINUTES=40] [RETAIN=1200] [FILES=4]
#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <filesystem>
#include <memory>

#include "bench_util.h"
#include "catalog/table.h"
#include "columnar/sql_schema.h"
#include "iceberg/table_builder.h"
#include "maintenance/expire.h"
#include "maintenance/manifest_cache.h"

namespace {

using namespace sluice;
using bench::ThreadCpuMs;  // the service's budget is CPU; a commit's fsync is the disk's

iceberg::DataFile Entry(const std::string& location, int64_t n) {
  iceberg::DataFile f;
  f.file_path = fmt::format("{}/data/f{}.parquet", location, n);
  f.record_count = 1000;
  f.file_size_in_bytes = 1 << 20;
  return f;
}

struct Twin {
  std::unique_ptr<catalog::Table> table;
  maintenance::ManifestCache cache;
  bool cached = false;
  double ms = 0;  // summed over the measured minutes
  int64_t deleted = 0;
};

int Run(int minutes, int retain, int files) {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("sluice_expire_bench_" + std::to_string(getpid()));
  fs::remove_all(dir);
  auto io = MakeLocalFileIO();
  auto cat = catalog::OpenCatalog((dir / "catalog.db").string());
  if (!cat.ok() || !(*cat)->CreateNamespace({"b"}, {}).ok()) return 1;
  auto schema = ParseColumnList("id BIGINT NOT NULL, v STRING");
  Twin twins[2];
  twins[0].cached = true;
  for (int i = 0; i < 2; ++i) {
    catalog::TableIdent id{{"b"}, i == 0 ? "cached" : "uncached"};
    auto md = iceberg::NewTableMetadata(*schema, {}, {},
                                        catalog::DefaultTableLocation(dir.string(), id), {});
    auto t = catalog::Table::Create(**cat, *io, id, *md);
    if (!t.ok()) {
      std::fprintf(stderr, "%s\n", t.status().ToString().c_str());
      return 1;
    }
    twins[i].table = std::move(*t);
  }
  int64_t next_file = 0, measured = 0;
  for (int minute = 0; minute < minutes; ++minute) {
    const int64_t first = next_file;
    for (int second = 0; second < 60; ++second) {
      std::vector<int64_t> ns;
      for (int f = 0; f < files; ++f) ns.push_back(next_file++);
      for (Twin& t : twins) {
        std::vector<iceberg::DataFile> batch;
        for (int64_t n : ns) batch.push_back(Entry(t.table->metadata().location, n));
        if (auto r = t.table->Append(batch); !r.ok()) {
          std::fprintf(stderr, "%s\n", r.status().ToString().c_str());
          return 1;
        }
      }
    }
    const int64_t merged = next_file++;
    const bool full = (minute + 1) * 62 > retain;
    if (full) ++measured;
    for (Twin& t : twins) {
      catalog::SnapshotUpdate u;
      u.kind = catalog::ChangeKind::kRewriteFiles;
      const std::string location = t.table->metadata().location;
      for (int64_t n = first; n < merged; ++n)
        u.remove_paths.push_back(Entry(location, n).file_path);
      u.add_data.push_back(Entry(location, merged));
      catalog::SnapshotUpdate merge;  // the service's manifest rewrite
      merge.kind = catalog::ChangeKind::kRewriteManifests;
      for (const catalog::SnapshotUpdate* c : {&u, &merge}) {
        if (auto r = t.table->Commit(*c); !r.ok()) {
          std::fprintf(stderr, "%s\n", r.status().ToString().c_str());
          return 1;
        }
      }
      maintenance::ExpireOptions o;
      o.now_ms = t.table->metadata().snapshots.back().timestamp_ms + 1;
      o.older_than_ms = o.now_ms;
      o.retain_last = retain;
      if (t.cached) o.manifest_cache = &t.cache;
      const double start = ThreadCpuMs();
      auto r = maintenance::ExpireSnapshots(*t.table, o);
      const double ms = ThreadCpuMs() - start;
      if (!r.ok()) {
        std::fprintf(stderr, "%s\n", r.status().ToString().c_str());
        return 1;
      }
      if (full) {
        t.ms += ms;
        t.deleted += static_cast<int64_t>(r->data_files.size());
      }
    }
  }
  if (measured == 0) {
    std::fprintf(stderr, "expire_bench: the retention never filled; raise MINUTES\n");
    return 1;
  }
  if (twins[0].deleted != twins[1].deleted) {
    std::fprintf(
        stderr, "expire_bench: FAILED: %lld data files deleted with the cache, %lld without\n",
        static_cast<long long>(twins[0].deleted), static_cast<long long>(twins[1].deleted));
    return 1;
  }
  const double with = twins[0].ms / static_cast<double>(measured);
  const double without = twins[1].ms / static_cast<double>(measured);
  std::printf(
      "expiry of a minute of 1 s commits (%d files each, compacted each minute), %d snapshots "
      "kept, %lld minutes measured (%lld data files deleted): %.1f ms of CPU with the manifest "
      "cache, %.1f ms without: %.1fx\n",
      files, retain, static_cast<long long>(measured), static_cast<long long>(twins[0].deleted),
      with, without, without / std::max(with, 1e-3));
  fs::remove_all(dir);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  int minutes = argc > 1 ? std::atoi(argv[1]) : 40;
  int retain = argc > 2 ? std::atoi(argv[2]) : 1200;
  int files = argc > 3 ? std::atoi(argv[3]) : 4;
  return Run(minutes, retain, files);
}
