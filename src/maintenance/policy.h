// Policy: how a table wants to be maintained, read from its properties
// (docs/maintenance.md lists them). Iceberg's own properties come first where
// they exist; `sluice.maintenance.*` covers the rest. Every default serves a
// table a pipeline commits to every second.
#pragma once

#include <cstdint>
#include <string>

#include "iceberg/table_metadata.h"

namespace sluice::maintenance {

// What the maintenance service does when a partition stays above the SLO.
enum class SloAction {
  kLog,          // say so (metric, log line) and nothing else
  kSlowCommits,  // also lengthen the commit interval of the pipelines writing the table
};

struct Policy {
  bool enabled = true;                    // sluice.maintenance.enabled: the service skips the table
  int64_t target_file_bytes = 0;          // write.target-file-size-bytes (the writer's default)
  int64_t small_file_bytes = 0;           // sluice.maintenance.small-file-bytes: target / 4
  int64_t min_input_files = 5;            // sluice.maintenance.min-input-files
  int64_t max_files_per_partition = 100;  // sluice.maintenance.max-files-per-partition (the SLO)
  SloAction slo_action =
      SloAction::kSlowCommits;             // sluice.maintenance.slo-action: log | slow-commits
  int64_t expire_interval_ms = 60'000;     // sluice.maintenance.expire-interval-ms
  int64_t orphan_interval_ms = 3'600'000;  // sluice.maintenance.orphan-interval-ms
  // sluice.maintenance.max-manifests: more small manifests than this in the
  // current snapshot and they are rewritten (manifests.h)
  int64_t max_manifests = 16;
  // sluice.maintenance.delete-ratio: a data file with at least this fraction
  // of its rows deleted (by deletion vectors or position deletes naming it) is
  // rewritten without its deleted rows, even alone (Iceberg's rewrite option
  // delete-ratio-threshold, with its default).
  double delete_ratio = 0.3;
};

// The policy `m`'s properties give; kInvalidArgument naming the property
// whose value does not parse.
Result<Policy> PolicyOf(const iceberg::TableMetadata& m);

}  // namespace sluice::maintenance
