#include "maintenance/health.h"

#include <algorithm>
#include <map>

#include "iceberg/data_writer.h"
#include "iceberg/manifest.h"
#include "maintenance/files.h"
#include "maintenance/manifests.h"

namespace sluice::maintenance {

namespace {

constexpr size_t kRecentSnapshots = 8;

int64_t SummaryCount(const iceberg::Snapshot& s, const char* key) {
  auto it = s.summary.find(key);
  return it == s.summary.end() ? 0 : std::strtoll(it->second.c_str(), nullptr, 10);
}

std::vector<RecentSnapshot> RecentSnapshots(const iceberg::TableMetadata& md, size_t n) {
  std::vector<const iceberg::Snapshot*> by_time;
  for (const iceberg::Snapshot& s : md.snapshots) by_time.push_back(&s);
  const size_t keep = std::min(n, by_time.size());
  std::partial_sort(by_time.begin(), by_time.begin() + keep, by_time.end(), [](auto* a, auto* b) {
    return a->timestamp_ms != b->timestamp_ms ? a->timestamp_ms > b->timestamp_ms
                                              : a->sequence_number > b->sequence_number;
  });
  std::vector<RecentSnapshot> out;
  for (size_t i = 0; i < by_time.size() && i < n; ++i) {
    const iceberg::Snapshot& s = *by_time[i];
    out.push_back({s.snapshot_id, s.timestamp_ms, s.operation(), SummaryCount(s, "added-records"),
                   SummaryCount(s, "deleted-records"), SummaryCount(s, "added-data-files"),
                   SummaryCount(s, "deleted-data-files")});
  }
  return out;
}

}  // namespace

Result<TableHealth> AssessTable(const catalog::Table& table, const Policy& policy) {
  const iceberg::TableMetadata& md = table.metadata();
  TableHealth h;
  h.snapshots = static_cast<int64_t>(md.snapshots.size());
  h.metadata_log = static_cast<int64_t>(md.metadata_log.size());
  h.snapshot_id = md.current_snapshot_id;
  h.recent = RecentSnapshots(md, kRecentSnapshots);
  if (!h.snapshot_id) return h;
  ASSIGN_OR_RETURN(ManifestCount manifests, CountManifests(table));
  h.manifests = manifests.all;
  h.small_manifests = manifests.small;
  h.small_manifest_groups = manifests.small_groups;
  ASSIGN_OR_RETURN(std::vector<iceberg::ManifestEntry> live, table.LiveFiles(*h.snapshot_id));
  std::map<std::pair<int32_t, iceberg::PartitionValues>, PartitionHealth> parts;
  std::map<std::pair<int32_t, iceberg::PartitionValues>, std::vector<int64_t>> small_sizes;
  const Schema* schema = md.current_schema();
  const std::map<std::string, int64_t> deleted = DeletedRowsByFile(live);
  for (const iceberg::ManifestEntry& e : live) {
    auto [it, fresh] = parts.try_emplace({e.file.spec_id, e.file.partition});
    PartitionHealth& p = it->second;
    if (fresh) {
      p.spec_id = e.file.spec_id;
      p.values = e.file.partition;
      const iceberg::PartitionSpec* spec = md.spec_by_id(e.file.spec_id);
      if (spec != nullptr && !spec->fields.empty() && schema != nullptr) {
        ASSIGN_OR_RETURN(TypePtr type, iceberg::PartitionType(*spec, *schema));
        p.partition = iceberg::PartitionPath(*spec, type, e.file.partition);
      }
    }
    const int64_t bytes = e.file.file_size_in_bytes;
    if (e.file.content != iceberg::FileContent::kData) {
      ++p.delete_files;
      p.delete_bytes += bytes;
      continue;
    }
    ++p.data_files;
    p.data_bytes += bytes;
    if (auto d = deleted.find(e.file.file_path);
        d != deleted.end() && DeletedFraction(d->second, e.file) >= policy.delete_ratio) {
      ++p.mostly_deleted_files;
    }
    if (bytes < policy.small_file_bytes) {
      ++p.small_files;
      p.small_bytes += bytes;
      small_sizes[it->first].push_back(bytes);
    }
  }
  const int64_t target = std::max<int64_t>(1, policy.target_file_bytes);
  for (auto& [key, p] : parts) {
    p.due_files = static_cast<int64_t>(
        TieredRun(small_sizes[key], policy.min_input_files, policy.tier_factor).length);
    p.debt_files = std::max<int64_t>(0, p.small_files - (p.small_bytes + target - 1) / target);
    h.data_files += p.data_files;
    h.small_files += p.small_files;
    h.delete_files += p.delete_files;
    h.data_bytes += p.data_bytes;
    h.debt_files += p.debt_files;
    h.mostly_deleted_files += p.mostly_deleted_files;
    h.max_partition_files = std::max(h.max_partition_files, p.data_files);
    // Over the SLO: more files than it allows, and some that compaction would
    // merge now (a partition of full-size files, or of the few growing files
    // tiering keeps, is big, not unhealthy).
    if (p.data_files > policy.max_files_per_partition && p.due_files > 0) {
      ++h.partitions_over_slo;
    }
    h.partitions.push_back(std::move(p));
  }
  std::stable_sort(h.partitions.begin(), h.partitions.end(),
                   [](const PartitionHealth& a, const PartitionHealth& b) {
                     return a.data_files > b.data_files;
                   });
  return h;
}

}  // namespace sluice::maintenance
