#include "maintenance/service.h"

#include <time.h>

#include <algorithm>
#include <chrono>

#include "common/thread_name.h"
#include "iceberg/table_builder.h"

namespace sluice::maintenance {
namespace {

// The first orphan cleanup after a start waits this long (at most its
// interval): a process restarted often does not list its tables each time.
constexpr int64_t kFirstOrphansMs = 5 * 60 * 1000;

// Partitions one compaction unit takes at most (one group commit).
constexpr size_t kPartitionsPerCompaction = 16;

double ThreadCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

const char* StepName(MaintenanceService::Step step) {
  switch (step) {
    case MaintenanceService::Step::kAssess: return "assess";
    case MaintenanceService::Step::kCompact: return "compact";
    case MaintenanceService::Step::kExpire: return "expire";
    case MaintenanceService::Step::kOrphans: return "orphans";
    case MaintenanceService::Step::kManifests: return "manifests";
  }
  return "?";
}

MaintenanceService::MaintenanceService(catalog::Catalog& catalog, FileIO& io,
                                       std::vector<catalog::TableIdent> tables,
                                       ServiceOptions options, Observer* observer)
    : catalog_(catalog), io_(io), options_(std::move(options)), observer_(observer) {
  if (!options_.clock) options_.clock = [] { return iceberg::NowMillis(); };
  options_.threads = std::max(1, options_.threads);
  for (catalog::TableIdent& id : tables) {
    auto t = std::make_unique<TableState>();
    t->name = id.ToString();
    t->ident = std::move(id);
    tables_.push_back(std::move(t));
  }
}

MaintenanceService::~MaintenanceService() { Stop(); }

void MaintenanceService::Start() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!threads_.empty() || tables_.empty()) return;
  stop_ = false;
  for (int i = 0; i < options_.threads; ++i) {
    threads_.emplace_back([this, i] {
      NameThisThread(ThreadName("maint", i + 1, ""));
      Loop();
    });
  }
}

void MaintenanceService::RequestStop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
}

void MaintenanceService::Stop() {
  RequestStop();
  for (std::thread& t : threads_) t.join();
  threads_.clear();
}

std::optional<MaintenanceService::Unit> MaintenanceService::PickLocked(int64_t now) {
  // 1. Missing file counts first (never read, or stale after a compaction),
  // and counts overdue by a whole interval (a hot table kept busy compacting
  // must not freeze the others' counts): the other decisions rest on them.
  for (auto& t : tables_) {
    const bool overdue = now >= t->next_assess_ms + options_.assess_interval_ms;
    if (!t->busy && (!t->health || overdue) && now >= t->next_assess_ms) {
      return Unit{t.get(), Step::kAssess, {}, {}};
    }
  }
  auto periodic_assessment = [&]() -> std::optional<Unit> {
    for (auto& t : tables_) {
      if (!t->busy && now >= t->next_assess_ms) return Unit{t.get(), Step::kAssess, {}, {}};
    }
    return std::nullopt;
  };
  if (options_.assess_only) return periodic_assessment();
  // 2. Expiry, then orphans, each once per its table's interval: they go
  // before compaction, which a hot table would otherwise never leave.
  for (Step step : {Step::kExpire, Step::kOrphans}) {
    for (auto& t : tables_) {
      if (t->busy || !t->policy || !t->policy->enabled) continue;
      int64_t due = step == Step::kExpire ? t->next_expire_ms : t->next_orphans_ms;
      if (now >= due) return Unit{t.get(), step, {}, {}};
    }
  }
  // 3. Manifests, where too many small ones make planning slow: cheap, and
  // a hot table's compactions would otherwise keep it waiting.
  for (auto& t : tables_) {
    if (t->busy || !t->health || !t->policy || !t->policy->enabled) continue;
    const TableHealth& h = *t->health;
    if (h.small_manifests > t->policy->max_manifests &&
        h.small_manifests > h.small_manifest_groups && now >= t->next_manifests_ms) {
      return Unit{t.get(), Step::kManifests, {}, {}};
    }
  }
  // 4. Compaction of the table with the worst partition of all (most data
  // files against its table's SLO, then most files due): its due partitions,
  // the worst first, up to kPartitionsPerCompaction (one plan of the table
  // and one commit serve them all: compact.h's groups).
  auto score = [](const TableState& t, const PartitionHealth& p) {
    return std::make_pair(
        static_cast<double>(p.data_files) / static_cast<double>(t.policy->max_files_per_partition),
        p.due_files + p.mostly_deleted_files);
  };
  TableState* worst = nullptr;
  std::pair<double, int64_t> worst_score{0, 0};
  for (auto& t : tables_) {
    if (t->busy || !t->health || !t->policy || !t->policy->enabled) continue;
    for (const PartitionHealth& p : t->health->partitions) {
      if (p.due() && (worst == nullptr || score(*t, p) > worst_score)) {
        worst = t.get();
        worst_score = score(*t, p);
      }
    }
  }
  if (worst != nullptr) {
    std::vector<const PartitionHealth*> due;
    for (const PartitionHealth& p : worst->health->partitions) {
      if (p.due()) due.push_back(&p);
    }
    std::stable_sort(due.begin(), due.end(), [&](const auto* a, const auto* b) {
      return score(*worst, *a) > score(*worst, *b);
    });
    if (due.size() > kPartitionsPerCompaction) due.resize(kPartitionsPerCompaction);
    Unit u{worst, Step::kCompact, due[0]->partition, {}};
    for (const PartitionHealth* p : due) u.partitions.emplace(p->spec_id, p->values);
    return u;
  }
  // 5. Counts read again every interval: last, so that reading them (a hot
  // table's take a while) never crowds out the work they call for.
  if (auto u = periodic_assessment()) return u;
  return std::nullopt;
}

std::optional<MaintenanceService::Done> MaintenanceService::RunOne() {
  std::optional<Unit> u;
  {
    std::lock_guard<std::mutex> lock(mu_);
    u = PickLocked(Now());
    if (!u) return std::nullopt;
    u->table->busy = true;
  }
  u->table->compacted = false;  // (busy: only this thread touches it)
  Status st = Run(*u);
  Finish(*u, st);
  return Done{u->table->name, u->step, u->partition, static_cast<int64_t>(u->partitions.size())};
}

Status MaintenanceService::Run(const Unit& u) {
  switch (u.step) {
    case Step::kAssess: return Assess(*u.table);
    case Step::kCompact: return Compact(*u.table, u.partitions);
    case Step::kExpire: return Expire(*u.table);
    case Step::kOrphans: return RemoveOrphansOf(*u.table);
    case Step::kManifests: return RewriteManifestsOf(*u.table);
  }
  return Status::OK();
}

Status MaintenanceService::Assess(TableState& t) {
  ASSIGN_OR_RETURN(auto table, catalog::Table::Load(catalog_, io_, t.ident));
  ASSIGN_OR_RETURN(Policy policy, PolicyOf(table->metadata()));
  ASSIGN_OR_RETURN(TableHealth health, AssessTable(*table, policy));
  observer_->OnAssessed(t.name, health, policy);
  std::lock_guard<std::mutex> lock(mu_);
  if (!t.policy) {  // the first (good) assessment: expiry starts now, orphan cleanup soon
    t.next_expire_ms = Now();
    t.next_orphans_ms = Now() + std::min<int64_t>(policy.orphan_interval_ms, kFirstOrphansMs);
  }
  t.policy = policy;
  t.health = std::move(health);
  return Status::OK();
}

Status MaintenanceService::Compact(TableState& t, const std::set<PartitionKey>& partitions) {
  auto start = std::chrono::steady_clock::now();
  ASSIGN_OR_RETURN(auto table, catalog::Table::Load(catalog_, io_, t.ident));
  CompactOptions o;
  o.partitions = partitions;
  o.tiered = true;
  ASSIGN_OR_RETURN(CompactResult r, CompactTable(*table, o));
  observer_->OnCompacted(t.name, r, SecondsSince(start));
  std::lock_guard<std::mutex> lock(mu_);
  t.compacted = r.commits > 0;
  return Status::OK();
}

Status MaintenanceService::Expire(TableState& t) {
  auto start = std::chrono::steady_clock::now();
  ASSIGN_OR_RETURN(auto table, catalog::Table::Load(catalog_, io_, t.ident));
  ExpireOptions o;
  o.now_ms = Now();
  o.readers_catalog = &catalog_;
  o.readers_cache = &readers_cache_;
  o.manifest_cache = &t.manifests;
  ASSIGN_OR_RETURN(ExpireResult r, ExpireSnapshots(*table, o));
  observer_->OnExpired(t.name, r, SecondsSince(start));
  return Status::OK();
}

Status MaintenanceService::RemoveOrphansOf(TableState& t) {
  auto start = std::chrono::steady_clock::now();
  ASSIGN_OR_RETURN(auto locations, CatalogTableLocations(catalog_, io_));
  ASSIGN_OR_RETURN(auto table, catalog::Table::Load(catalog_, io_, t.ident));
  OrphanOptions o;
  o.now_ms = Now();
  o.other_table_locations = OtherTableLocations(locations, t.ident);
  o.min_margin_ms = options_.min_orphan_margin_ms;
  o.manifest_cache = &t.manifests;
  ASSIGN_OR_RETURN(OrphanResult r, RemoveOrphans(*table, o));
  observer_->OnOrphansRemoved(t.name, r, SecondsSince(start));
  return Status::OK();
}

Status MaintenanceService::RewriteManifestsOf(TableState& t) {
  auto start = std::chrono::steady_clock::now();
  ASSIGN_OR_RETURN(auto table, catalog::Table::Load(catalog_, io_, t.ident));
  ManifestRewriteOptions o;
  o.max_manifests = t.policy ? t.policy->max_manifests : std::optional<int64_t>();
  ASSIGN_OR_RETURN(ManifestRewriteResult r, RewriteManifests(*table, o));
  observer_->OnManifestsRewritten(t.name, r, SecondsSince(start));
  return Status::OK();
}

void MaintenanceService::Finish(const Unit& u, const Status& st) {
  if (!st.ok()) observer_->OnFailed(u.table->name, StepName(u.step), st);
  wake_.notify_all();  // the table is free again once the lock below goes
  std::lock_guard<std::mutex> lock(mu_);
  TableState& t = *u.table;
  t.busy = false;
  const int64_t now = Now();
  switch (u.step) {
    case Step::kAssess: t.next_assess_ms = now + options_.assess_interval_ms; break;
    case Step::kCompact:
      // The counts are stale now (or the compaction failed): assess before
      // compacting this table again; after a failure, rest first.
      t.health.reset();
      t.next_assess_ms = t.compacted ? now : now + options_.assess_interval_ms;
      break;
    case Step::kManifests:  // the manifest count is stale: read it again at once
      t.health.reset();
      t.next_assess_ms = now;
      t.next_manifests_ms = now + options_.assess_interval_ms;
      break;
    case Step::kExpire:
      t.next_expire_ms = now + (t.policy ? t.policy->expire_interval_ms : 0);
      break;
    case Step::kOrphans:
      t.next_orphans_ms = now + (t.policy ? t.policy->orphan_interval_ms : 0);
      break;
  }
  if (!st.ok()) {  // rest: nothing on this table until its next good assessment
    t.health.reset();
    if (u.step == Step::kAssess) t.policy.reset();  // its policy is unknown now
    t.next_assess_ms = std::max(t.next_assess_ms, now + options_.assess_interval_ms);
    if (u.step == Step::kExpire || u.step == Step::kOrphans) {
      int64_t& next = u.step == Step::kExpire ? t.next_expire_ms : t.next_orphans_ms;
      next = std::max(next, now + options_.assess_interval_ms);
    }
  }
}

int64_t MaintenanceService::IdleWaitMs(int64_t now) {
  int64_t next = now + options_.assess_interval_ms;
  for (auto& t : tables_) {
    if (t->busy) continue;
    next = std::min(next, t->next_assess_ms);
    if (t->policy && t->policy->enabled && !options_.assess_only) {
      next = std::min({next, t->next_expire_ms, t->next_orphans_ms});
    }
  }
  return std::clamp<int64_t>(next - now, 10, options_.assess_interval_ms);
}

void MaintenanceService::Loop() {
  // Of one core, per thread (a budget of nothing still lets work crawl on).
  const double share = std::max(0.01, options_.cpu_cores / options_.threads);
  while (true) {
    double cpu_before = ThreadCpuSeconds();
    std::optional<Done> done = RunOne();
    double cpu = ThreadCpuSeconds() - cpu_before;
    std::unique_lock<std::mutex> lock(mu_);
    if (stop_) return;
    int64_t wait_ms = 0;
    if (!done) {
      wait_ms = IdleWaitMs(Now());
    } else if (share < 1) {
      wait_ms = static_cast<int64_t>(cpu * (1 / share - 1) * 1000);
    }
    if (wait_ms > 0)
      wake_.wait_for(lock, std::chrono::milliseconds(wait_ms), [&] { return stop_; });
    if (stop_) return;
  }
}

}  // namespace sluice::maintenance
