#include "maintenance/policy.h"

#include <algorithm>
#include <numeric>
#include <vector>

#include "iceberg/data_writer.h"
#include "maintenance/files.h"

namespace sluice::maintenance {

Result<Policy> PolicyOf(const iceberg::TableMetadata& m) {
  Policy p;
  const auto& props = m.properties;
  if (auto it = props.find("sluice.maintenance.enabled"); it != props.end()) {
    if (it->second != "true" && it->second != "false") {
      return Status::Invalid(
          "table property sluice.maintenance.enabled = '{}' is not true or false", it->second);
    }
    p.enabled = it->second == "true";
  }
  ASSIGN_OR_RETURN(iceberg::DataWriterOptions wo, iceberg::DataWriterOptionsFromProperties(props));
  p.target_file_bytes = wo.target_file_bytes;
  ASSIGN_OR_RETURN(p.small_file_bytes, IntProperty(m, "sluice.maintenance.small-file-bytes",
                                                   p.target_file_bytes / 4, 1));
  ASSIGN_OR_RETURN(p.min_input_files,
                   IntProperty(m, "sluice.maintenance.min-input-files", p.min_input_files, 2));
  ASSIGN_OR_RETURN(p.tier_factor,
                   IntProperty(m, "sluice.maintenance.tier-factor", p.tier_factor, 2));
  if (p.tier_factor > 1024) {
    return Status::Invalid("table property sluice.maintenance.tier-factor = {} is over 1024",
                           p.tier_factor);
  }
  ASSIGN_OR_RETURN(
      p.max_files_per_partition,
      IntProperty(m, "sluice.maintenance.max-files-per-partition", p.max_files_per_partition, 1));
  if (auto it = props.find("sluice.maintenance.slo-action"); it != props.end()) {
    if (it->second == "log") {
      p.slo_action = SloAction::kLog;
    } else if (it->second == "slow-commits") {
      p.slo_action = SloAction::kSlowCommits;
    } else {
      return Status::Invalid(
          "table property sluice.maintenance.slo-action = '{}' is not log or slow-commits",
          it->second);
    }
  }
  ASSIGN_OR_RETURN(p.expire_interval_ms, IntProperty(m, "sluice.maintenance.expire-interval-ms",
                                                     p.expire_interval_ms, 1));
  ASSIGN_OR_RETURN(p.orphan_interval_ms, IntProperty(m, "sluice.maintenance.orphan-interval-ms",
                                                     p.orphan_interval_ms, 1));
  ASSIGN_OR_RETURN(p.max_manifests,
                   IntProperty(m, "sluice.maintenance.max-manifests", p.max_manifests, 1));
  ASSIGN_OR_RETURN(p.delete_ratio,
                   FractionProperty(m, "sluice.maintenance.delete-ratio", p.delete_ratio));
  return p;
}

TieringOutlook ModelTiering(int64_t commits, int64_t commit_bytes, int64_t small_file_bytes,
                            int64_t min_files, int64_t factor) {
  TieringOutlook o;
  std::vector<int64_t> small;  // the partition's small files
  int64_t large = 0, files_summed = 0, rewritten = 0;
  for (int64_t c = 0; c < commits; ++c) {
    if (commit_bytes >= small_file_bytes) {
      ++large;  // (not small to begin with)
    } else {
      small.push_back(commit_bytes);
    }
    while (true) {
      std::sort(small.begin(), small.end());
      TieredWindow w = TieredRun(small, min_files, factor);
      if (w.length == 0) break;
      const auto first = small.begin() + static_cast<ptrdiff_t>(w.start);
      const auto last = first + static_cast<ptrdiff_t>(w.length);
      const int64_t merged = std::accumulate(first, last, int64_t{0});
      small.erase(first, last);
      rewritten += merged;
      ++o.merges;
      if (merged >= small_file_bytes) {
        ++large;
      } else {
        small.push_back(merged);
      }
    }
    const int64_t files = large + static_cast<int64_t>(small.size());
    files_summed += files;
    o.max_files = std::max(o.max_files, files);
  }
  if (commits > 0) {
    o.mean_files = static_cast<double>(files_summed) / static_cast<double>(commits);
    o.rewrites_per_byte =
        static_cast<double>(rewritten) / static_cast<double>(commits * commit_bytes);
  }
  return o;
}

}  // namespace sluice::maintenance
