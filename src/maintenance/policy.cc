#include "maintenance/policy.h"

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

}  // namespace sluice::maintenance
