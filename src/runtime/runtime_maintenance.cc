// Runtime: the maintenance service of the tables its pipelines write, its
// metrics, its part of /v1/status, and the file-count SLO's action
// (docs/maintenance.md).
#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <set>

#include "iceberg/table_builder.h"
#include "runtime/runtime_internal.h"

namespace sluice::runtime {

using maintenance::CompactResult;
using maintenance::ExpireResult;
using maintenance::OrphanResult;
using maintenance::PartitionHealth;
using maintenance::Policy;
using maintenance::TableHealth;

// The longest a breached SLO stretches a pipeline's commit interval.
constexpr int64_t kMaxCommitSlowdown = 8;
// The SLO action's steps: at most one per kSlowdownStepMs.
constexpr int64_t kSlowdownStepMs = 5000;
// Beyond a pipeline's longest commit interval, what orphan cleanup leaves
// alone (a slow store, commit retries).
constexpr int64_t kOrphanSlackMs = 10 * 60 * 1000;

class Runtime::Maintenance : public maintenance::Observer {
 public:
  Maintenance(Runtime& rt, bool maintained) : rt_(rt), maintained_(maintained) {}
  ~Maintenance() override {
    if (service) service->Stop();  // its threads call this observer
  }

  Status Init() {
    auto& g = rt_.registry_;
    const std::vector<std::string> tp = {"table", "partition"}, t = {"table"},
                                   ts = {"table", "step"};
    ASSIGN_OR_RETURN(data_files_, g.AddGauge("sluice_table_data_files",
                                             "Live data files per partition of each table.", tp));
    ASSIGN_OR_RETURN(small_files_,
                     g.AddGauge("sluice_table_small_files",
                                "Live data files below sluice.maintenance.small-file-bytes.", tp));
    ASSIGN_OR_RETURN(delete_files_, g.AddGauge("sluice_table_delete_files",
                                               "Live delete files per partition.", tp));
    ASSIGN_OR_RETURN(data_bytes_, g.AddGauge("sluice_table_data_bytes",
                                             "Bytes of live data files per partition.", tp));
    ASSIGN_OR_RETURN(snapshots_, g.AddGauge("sluice_table_snapshots",
                                            "Snapshots the table's metadata holds.", t));
    ASSIGN_OR_RETURN(
        manifests_,
        g.AddGauge("sluice_table_manifests",
                   "Manifests of the table's current snapshot (planning opens them).", t));
    ASSIGN_OR_RETURN(debt_, g.AddGauge("sluice_maintenance_debt_files",
                                       "Small files compaction would merge away.", t));
    ASSIGN_OR_RETURN(
        mostly_deleted_,
        g.AddGauge("sluice_maintenance_mostly_deleted_files",
                   "Data files past sluice.maintenance.delete-ratio, due for a rewrite.", t));
    ASSIGN_OR_RETURN(slo_,
                     g.AddGauge("sluice_maintenance_slo_files_per_partition",
                                "The table's sluice.maintenance.max-files-per-partition.", t));
    ASSIGN_OR_RETURN(worst_, g.AddGauge("sluice_maintenance_max_partition_files",
                                        "Data files of the table's worst partition.", t));
    ASSIGN_OR_RETURN(over_slo_, g.AddGauge("sluice_maintenance_partitions_over_slo",
                                           "Partitions with more data files than the SLO.", t));
    ASSIGN_OR_RETURN(
        slowdown_, g.AddGauge("sluice_maintenance_commit_slowdown",
                              "Factor the SLO action stretches commit intervals by (1: none).", t));
    ASSIGN_OR_RETURN(compactions_, g.AddCounter("sluice_maintenance_compactions_total",
                                                "Partition compactions committed.", t));
    ASSIGN_OR_RETURN(conflicts_,
                     g.AddCounter("sluice_maintenance_compaction_conflicts_total",
                                  "Partition compactions dropped: a delete or a rewrite won.", t));
    ASSIGN_OR_RETURN(carried_,
                     g.AddCounter("sluice_maintenance_compaction_carried_deletes_total",
                                  "Rows deleted while compaction rewrote them, deleted from its "
                                  "output by its commit.",
                                  t));
    ASSIGN_OR_RETURN(bytes_read_, g.AddCounter("sluice_maintenance_compaction_bytes_read_total",
                                               "Bytes of data files compaction rewrote.", t));
    ASSIGN_OR_RETURN(bytes_written_,
                     g.AddCounter("sluice_maintenance_compaction_bytes_written_total",
                                  "Bytes of data files compaction wrote.", t));
    ASSIGN_OR_RETURN(bytes_copied_,
                     g.AddCounter("sluice_maintenance_compaction_bytes_copied_total",
                                  "Bytes compaction wrote as pages copied from its inputs "
                                  "without decoding their values (of bytes_written).",
                                  t));
    ASSIGN_OR_RETURN(expired_, g.AddCounter("sluice_maintenance_snapshots_expired_total",
                                            "Snapshots expired.", t));
    ASSIGN_OR_RETURN(deleted_, g.AddCounter("sluice_maintenance_files_deleted_total",
                                            "Files expiry deleted (only expired snapshots "
                                            "reached them).",
                                            t));
    ASSIGN_OR_RETURN(orphans_, g.AddCounter("sluice_maintenance_orphans_removed_total",
                                            "Unreferenced files orphan cleanup deleted.", t));
    ASSIGN_OR_RETURN(
        manifest_rewrites_,
        g.AddCounter("sluice_maintenance_manifest_rewrites_total",
                     "Manifest rewrites committed (sluice.maintenance.max-manifests).", t));
    ASSIGN_OR_RETURN(failures_, g.AddCounter("sluice_maintenance_failures_total",
                                             "Maintenance steps that failed.", ts));
    ASSIGN_OR_RETURN(seconds_, g.AddHistogram("sluice_maintenance_step_seconds",
                                              "Wall time of maintenance steps.",
                                              {0.01, 0.05, 0.25, 1, 5, 30, 120, 600}, ts));
    return Status::OK();
  }

  void OnAssessed(const std::string& table, const TableHealth& h, const Policy& p) override {
    std::lock_guard<std::mutex> lock(mu_);
    Table& t = tables_[table];
    std::set<std::string> now;
    for (const PartitionHealth& part : h.partitions) {
      now.insert(part.partition);
      SetPartition(table, part.partition, part.data_files, part.small_files, part.delete_files,
                   part.data_bytes);
    }
    for (const std::string& gone : t.partitions) {  // compacted or deleted away
      if (!now.count(gone)) SetPartition(table, gone, 0, 0, 0, 0);
    }
    t.partitions = std::move(now);
    Set(snapshots_, table, h.snapshots);
    Set(manifests_, table, h.manifests);
    Set(debt_, table, h.debt_files);
    Set(mostly_deleted_, table, h.mostly_deleted_files);
    Set(slo_, table, p.max_files_per_partition);
    Set(worst_, table, h.max_partition_files);
    Set(over_slo_, table, h.partitions_over_slo);
    const bool breached = h.partitions_over_slo > 0;
    if (breached && !t.breached) {
      fmt::print(stderr,
                 "sluice: table {}: a partition has {} data files, above the SLO of {} "
                 "(sluice.maintenance.max-files-per-partition): compaction is behind{}\n",
                 table, h.max_partition_files, p.max_files_per_partition,
                 p.slo_action == maintenance::SloAction::kSlowCommits
                     ? "; its pipelines commit less often until it catches up"
                     : "");
    } else if (!breached && t.breached) {
      fmt::print(stderr, "sluice: table {}: every partition is back within the SLO of {}\n", table,
                 p.max_files_per_partition);
    }
    t.breached = breached;
    // The action: only where the service compacts (else nothing would catch
    // up), one step per kSlowdownStepMs at most (assessments follow every
    // compaction).
    const bool acts =
        maintained_ && p.enabled && p.slo_action == maintenance::SloAction::kSlowCommits;
    const int64_t now_ms = iceberg::NowMillis();
    if (!acts) {
      t.slowdown = 1;
    } else if (now_ms - t.slowdown_changed_ms >= kSlowdownStepMs) {
      int64_t next = breached ? std::min(kMaxCommitSlowdown, t.slowdown * 2)
                              : std::max<int64_t>(1, t.slowdown / 2);
      if (next != t.slowdown) t.slowdown_changed_ms = now_ms;
      t.slowdown = next;
    }
    Set(slowdown_, table, t.slowdown);
    for (auto& r : rt_.pipelines_) {
      if (r->table == table) r->commit_slowdown = t.slowdown;
    }
    t.health = h;
    t.policy = p;
    t.last_error.clear();
  }

  void OnCompacted(const std::string& table, const CompactResult& r, double seconds) override {
    Add(compactions_, table, r.commits);
    Add(conflicts_, table, r.conflicts);
    Add(carried_, table, r.carried_deletes);
    Add(bytes_read_, table, r.bytes_read);
    Add(bytes_written_, table, r.bytes_written);
    Add(bytes_copied_, table, r.bytes_copied);
    Observe(table, "compact", seconds);
    std::lock_guard<std::mutex> lock(mu_);
    tables_[table].compactions += r.commits;
  }

  void OnExpired(const std::string& table, const ExpireResult& r, double seconds) override {
    Add(expired_, table, static_cast<int64_t>(r.expired.size()));
    Add(deleted_, table, r.deleted);
    Observe(table, "expire", seconds);
    std::lock_guard<std::mutex> lock(mu_);
    tables_[table].snapshots_expired += static_cast<int64_t>(r.expired.size());
  }

  void OnOrphansRemoved(const std::string& table, const OrphanResult& r, double seconds) override {
    Add(orphans_, table, r.deleted);
    Observe(table, "orphans", seconds);
    std::lock_guard<std::mutex> lock(mu_);
    tables_[table].orphans_removed += r.deleted;
  }

  void OnManifestsRewritten(const std::string& table, const maintenance::ManifestRewriteResult& r,
                            double seconds) override {
    Add(manifest_rewrites_, table, r.snapshot_id ? 1 : 0);
    Observe(table, "manifests", seconds);
  }

  void OnFailed(const std::string& table, const std::string& step, const Status& st) override {
    if (auto m = failures_->WithLabels({table, step}); m.ok()) (*m)->Increment();
    std::lock_guard<std::mutex> lock(mu_);
    std::string& last = tables_[table].last_error;
    std::string message = step + ": " + st.ToString();
    if (message != last) {  // once per distinct failure, not every retry
      fmt::print(stderr, "sluice: maintenance of table {} failed ({}); it rests and tries again\n",
                 table, message);
    }
    last = std::move(message);
  }

  nlohmann::json StatusJson() {
    std::lock_guard<std::mutex> lock(mu_);
    nlohmann::json out = nlohmann::json::array();
    for (const auto& [name, t] : tables_) {
      nlohmann::json j;
      j["name"] = name;
      if (t.health) {
        const TableHealth& h = *t.health;
        j["snapshots"] = h.snapshots;
        j["manifests"] = h.manifests;
        j["data_files"] = h.data_files;
        j["small_files"] = h.small_files;
        j["delete_files"] = h.delete_files;
        j["data_bytes"] = h.data_bytes;
        j["debt_files"] = h.debt_files;
        j["mostly_deleted_files"] = h.mostly_deleted_files;
        j["max_partition_files"] = h.max_partition_files;
        j["partitions"] = h.partitions.size();
        j["partitions_over_slo"] = h.partitions_over_slo;
        nlohmann::json worst = nlohmann::json::array();
        for (size_t i = 0; i < h.partitions.size() && i < 5; ++i) {
          const PartitionHealth& p = h.partitions[i];
          worst.push_back({{"partition", p.partition},
                           {"data_files", p.data_files},
                           {"small_files", p.small_files},
                           {"delete_files", p.delete_files},
                           {"mostly_deleted_files", p.mostly_deleted_files},
                           {"data_bytes", p.data_bytes}});
        }
        j["worst_partitions"] = std::move(worst);
        nlohmann::json recent = nlohmann::json::array();
        for (const maintenance::RecentSnapshot& s : h.recent) {
          recent.push_back({{"snapshot_id", std::to_string(s.snapshot_id)},
                            {"timestamp_ms", s.timestamp_ms},
                            {"operation", s.operation},
                            {"added_records", s.added_records},
                            {"deleted_records", s.deleted_records},
                            {"added_files", s.added_files},
                            {"removed_files", s.removed_files}});
        }
        j["recent_snapshots"] = std::move(recent);
      }
      if (t.policy) {
        j["slo_max_files_per_partition"] = t.policy->max_files_per_partition;
        j["maintained"] = t.policy->enabled;
      }
      j["slo_breached"] = t.breached;
      j["commit_slowdown"] = t.slowdown;
      j["compactions"] = t.compactions;
      j["snapshots_expired"] = t.snapshots_expired;
      j["orphans_removed"] = t.orphans_removed;
      if (!t.last_error.empty()) j["last_error"] = t.last_error;
      out.push_back(std::move(j));
    }
    return out;
  }

  std::unique_ptr<maintenance::MaintenanceService> service;

 private:
  struct Table {
    std::set<std::string> partitions;  // with gauges
    std::optional<TableHealth> health;
    std::optional<Policy> policy;
    bool breached = false;
    int64_t slowdown = 1;
    int64_t slowdown_changed_ms = 0;
    int64_t compactions = 0;
    int64_t snapshots_expired = 0;
    int64_t orphans_removed = 0;
    std::string last_error;
  };

  void SetPartition(const std::string& table, const std::string& part, int64_t files, int64_t small,
                    int64_t deletes, int64_t bytes) {
    const std::vector<std::string> l = {table, part};
    if (auto m = data_files_->WithLabels(l); m.ok()) (*m)->Set(static_cast<double>(files));
    if (auto m = small_files_->WithLabels(l); m.ok()) (*m)->Set(static_cast<double>(small));
    if (auto m = delete_files_->WithLabels(l); m.ok()) (*m)->Set(static_cast<double>(deletes));
    if (auto m = data_bytes_->WithLabels(l); m.ok()) (*m)->Set(static_cast<double>(bytes));
  }
  static void Set(server::Family<server::Gauge>* f, const std::string& table, int64_t v) {
    if (auto m = f->WithLabels({table}); m.ok()) (*m)->Set(static_cast<double>(v));
  }
  static void Add(server::Family<server::Counter>* f, const std::string& table, int64_t v) {
    if (auto m = f->WithLabels({table}); m.ok() && v > 0) (*m)->Increment(static_cast<double>(v));
  }
  void Observe(const std::string& table, const char* step, double seconds) {
    if (auto m = seconds_->WithLabels({table, step}); m.ok()) (*m)->Observe(seconds);
  }

  Runtime& rt_;
  const bool maintained_;  // false: --no-maintenance, the service only measures
  std::mutex mu_;
  std::map<std::string, Table> tables_;  // guarded by mu_
  server::Family<server::Gauge>*data_files_ = nullptr, *small_files_ = nullptr,
  *delete_files_ = nullptr, *data_bytes_ = nullptr, *snapshots_ = nullptr, *debt_ = nullptr,
  *slo_ = nullptr, *worst_ = nullptr, *over_slo_ = nullptr, *slowdown_ = nullptr,
  *manifests_ = nullptr, *mostly_deleted_ = nullptr;
  server::Family<server::Counter>*compactions_ = nullptr, *conflicts_ = nullptr,
  *carried_ = nullptr, *bytes_read_ = nullptr, *bytes_written_ = nullptr, *bytes_copied_ = nullptr,
  *expired_ = nullptr, *deleted_ = nullptr, *orphans_ = nullptr, *failures_ = nullptr,
  *manifest_rewrites_ = nullptr;
  server::Family<server::Histogram>* seconds_ = nullptr;
};

Status Runtime::SetUpMaintenance() {
  if (pipelines_.empty()) return Status::OK();
  std::vector<catalog::TableIdent> tables;
  std::set<std::string> seen;
  for (const auto& r : pipelines_) {
    for (const catalog::TableIdent& id :
         {r->options.target, pipeline::DeadLetterTable(r->options.target)}) {
      if (seen.insert(id.ToString()).second) tables.push_back(id);
    }
  }
  maintenance_ = std::make_shared<Maintenance>(*this, options_.maintenance);
  RETURN_IF_ERROR(maintenance_->Init());
  maintenance::ServiceOptions so = options_.maintenance_service;
  so.assess_only = !options_.maintenance;  // the gauges stay
  // A pipeline's closed data files wait for its next checkpoint: orphan
  // cleanup must not take them, however long the (stretched) interval.
  for (const auto& r : pipelines_) {
    so.min_orphan_margin_ms =
        std::max(so.min_orphan_margin_ms,
                 r->options.commit_interval_ms * kMaxCommitSlowdown + kOrphanSlackMs);
  }
  maintenance_->service = std::make_unique<maintenance::MaintenanceService>(
      catalog_, io_, std::move(tables), so, maintenance_.get());
  return Status::OK();
}

void Runtime::StartMaintenance() {
  if (maintenance_) maintenance_->service->Start();
}

void Runtime::RequestStopMaintenance() {
  if (maintenance_) maintenance_->service->RequestStop();
}

void Runtime::StopMaintenance() {
  if (maintenance_) maintenance_->service->Stop();
}

nlohmann::json Runtime::MaintenanceStatus() {
  return maintenance_ ? maintenance_->StatusJson() : nlohmann::json::array();
}

}  // namespace sluice::runtime
