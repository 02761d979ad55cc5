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
  bool enabled = true;            // sluice.maintenance.enabled: the service skips the table
  int64_t target_file_bytes = 0;  // write.target-file-size-bytes (the writer's default)
  int64_t small_file_bytes = 0;   // sluice.maintenance.small-file-bytes: target / 4
  int64_t min_input_files = 5;    // sluice.maintenance.min-input-files
  // sluice.maintenance.tier-factor (2 to 1024): a small file joins a merge
  // once the files smaller than it sum to 1/factor of its size (files.h,
  // TieredRun)
  int64_t tier_factor = 2;
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

// What size-tiered compaction (files.h, TieredRun) makes of one partition
// that gets one file of `commit_bytes` per commit for `commits` commits and is
// compacted after every commit as far as the rule allows (a service that
// keeps up). A model, not a measurement: a merged file is the sum of its
// inputs, and a file of at least `small_file_bytes` leaves the tiers (it is
// no longer small). What the policy's trade rests on: planning a scan costs
// about the same per live file, so `mean_files` is about what a streaming
// partition costs planning against one compacted file, and
// `rewrites_per_byte` what compaction costs in writing.
struct TieringOutlook {
  double mean_files = 0;         // files in the partition, mean over the commits
  int64_t max_files = 0;         // the most at any commit
  double rewrites_per_byte = 0;  // bytes compaction wrote / bytes committed
  int64_t merges = 0;            // compactions of the partition
};
TieringOutlook ModelTiering(int64_t commits, int64_t commit_bytes, int64_t small_file_bytes,
                            int64_t min_files, int64_t factor = 2);

}  // namespace sluice::maintenance
