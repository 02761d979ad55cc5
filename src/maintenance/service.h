// MaintenanceService: keeps the tables a `sluice run` writes healthy while
// its pipelines commit to them (docs/maintenance.md). It owns its threads and
// a CPU budget, and schedules one unit of work at a time per thread, by need:
//   1. assess: a table's file counts, first and right after each of its
//      compactions (AssessTable); again every assess_interval_ms, after the
//      work below (counting must not crowd it out), or before it once
//      overdue by a whole interval (a busy table must not freeze the others');
//   2. expire: each table every sluice.maintenance.expire-interval-ms, from
//      its first assessment on;
//   3. orphans: each table every sluice.maintenance.orphan-interval-ms, the
//      first at most 5 min after its first assessment (never a file younger
//      than min_orphan_margin_ms);
//   4. manifests: a table whose current snapshot has more small manifests
//      than sluice.maintenance.max-manifests (manifests.h), by its last
//      assessment, at most once per assess_interval_ms; assessed again
//      right after;
//   5. compact: the table with the worst partition of all (most data files
//      against the table's SLO, then most files due): its due partitions,
//      the worst first, up to 16 on one plan of the table, each one
//      `replace` commit. A partition is due once a size tier of its small
//      files has min-input-files (TieredRun by the table's tier-factor,
//      files.h: each byte is rewritten a logarithmic number of times, not at
//      every compaction). A unit that
//      commits nothing (conflicts) waits for the next assessment interval.
// A table whose assessment fails has no policy until one succeeds: nothing
// but assessment runs on it meanwhile.
// A table has at most one unit running. A unit that fails is reported to the
// observer and the table rests for assess_interval_ms: maintenance never stops
// ingest, and its commits never make an ingest commit fail (a compaction that
// loses a race to a delete is dropped, see compact.h; an append it races with
// only retries its catalog swap).
//
// CPU budget: after each unit, a thread sleeps long enough that its share of
// `cpu_cores` (cpu_cores / threads) is not exceeded, measured in the thread's
// own CPU time.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "catalog/catalog.h"
#include "maintenance/compact.h"
#include "maintenance/expire.h"
#include "maintenance/health.h"
#include "maintenance/manifest_cache.h"
#include "maintenance/manifests.h"
#include "maintenance/orphans.h"
#include "maintenance/policy.h"

namespace sluice::maintenance {

// What the service tells about its work; called on its threads (one call at
// a time per table, possibly concurrent for different tables).
class Observer {
 public:
  virtual ~Observer() = default;
  virtual void OnAssessed(const std::string& table, const TableHealth& health,
                          const Policy& policy) = 0;
  virtual void OnCompacted(const std::string& table, const CompactResult& result,
                           double seconds) = 0;
  virtual void OnExpired(const std::string& table, const ExpireResult& result, double seconds) = 0;
  virtual void OnOrphansRemoved(const std::string& table, const OrphanResult& result,
                                double seconds) = 0;
  virtual void OnManifestsRewritten(const std::string& table, const ManifestRewriteResult& result,
                                    double seconds) = 0;
  // `step` is assess, compact, expire, orphans or manifests.
  virtual void OnFailed(const std::string& table, const std::string& step,
                        const Status& status) = 0;
};

struct ServiceOptions {
  int threads = 1;
  double cpu_cores = 0.5;  // at most this much CPU across the threads
  int64_t assess_interval_ms = 5000;
  bool assess_only = false;  // count files (for the gauges), change nothing
  // Orphan cleanup never takes files younger than this (OrphanOptions::min_margin_ms):
  // the runtime sets it above its pipelines' longest commit interval.
  int64_t min_orphan_margin_ms = 0;
  std::function<int64_t()> clock;  // milliseconds since the epoch; default the wall clock
};

class MaintenanceService {
 public:
  enum class Step { kAssess, kCompact, kExpire, kOrphans, kManifests };
  struct Done {  // what RunOne did
    std::string table;
    Step step;
    std::string partition;   // kCompact: the worst partition compacted
    int64_t partitions = 0;  // kCompact: how many
  };

  // `observer` must outlive the service.
  MaintenanceService(catalog::Catalog& catalog, FileIO& io, std::vector<catalog::TableIdent> tables,
                     ServiceOptions options, Observer* observer);
  ~MaintenanceService();  // Stop()

  void Start();
  // No new unit starts after this; returns at once.
  void RequestStop();
  // RequestStop, then joins the threads: a unit in progress finishes first.
  void Stop();

  // Runs the most needed unit on the calling thread (the threads' loop; tests
  // call it directly). nullopt when nothing is due.
  std::optional<Done> RunOne();

 private:
  struct TableState {
    catalog::TableIdent ident;
    std::string name;
    bool busy = false;
    bool compacted = false;             // the unit running committed a compaction
    std::optional<TableHealth> health;  // cleared when stale
    std::optional<Policy> policy;
    int64_t next_assess_ms = 0, next_expire_ms = 0, next_orphans_ms = 0, next_manifests_ms = 0;
    // What the table's manifest lists and manifests list: each expiry reads
    // only what was committed since the one before.
    ManifestCache manifests;
  };
  using PartitionKey = std::pair<int32_t, iceberg::PartitionValues>;  // spec id, values
  struct Unit {
    TableState* table = nullptr;
    Step step = Step::kAssess;
    std::string partition;              // kCompact: the worst one's path (reported)
    std::set<PartitionKey> partitions;  // kCompact: what it compacts
  };

  int64_t Now() const { return options_.clock(); }
  std::optional<Unit> PickLocked(int64_t now);
  // Runs `u` (outside the lock); returns its failure, which only rests the table.
  Status Run(const Unit& u);
  Status Assess(TableState& t);
  Status Compact(TableState& t, const std::set<PartitionKey>& partitions);
  Status Expire(TableState& t);
  Status RemoveOrphansOf(TableState& t);
  Status RewriteManifestsOf(TableState& t);
  void Finish(const Unit& u, const Status& st);
  void Loop();
  // Milliseconds until something may be due (at most assess_interval_ms).
  int64_t IdleWaitMs(int64_t now);

  catalog::Catalog& catalog_;
  FileIO& io_;
  ServiceOptions options_;
  Observer* observer_;
  std::mutex mu_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::vector<std::unique_ptr<TableState>> tables_;
  std::vector<std::thread> threads_;
  // The FROM TABLE readers every table records, shared by the expiries (a
  // table idle since the last one is not read again).
  catalog::TableReadersCache readers_cache_;
};

const char* StepName(MaintenanceService::Step step);

}  // namespace sluice::maintenance
