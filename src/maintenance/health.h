// AssessTable: the file counts of a table's current snapshot, per partition:
// what the maintenance service schedules by and publishes as gauges (the
// file-count SLO, docs/maintenance.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "catalog/table.h"
#include "maintenance/policy.h"

namespace sluice::maintenance {

struct PartitionHealth {
  std::string partition;  // "ts_day=2024-01-31", "" unpartitioned
  int32_t spec_id = 0;
  iceberg::PartitionValues values;  // what identifies it (a path may name two)
  int64_t data_files = 0, small_files = 0, delete_files = 0;
  int64_t data_bytes = 0, small_bytes = 0, delete_bytes = 0;
  // The small files compaction would merge away: small files minus the
  // files their bytes fill at the target size.
  int64_t debt_files = 0;
  // The small files a tiered compaction (the service's) would merge now
  // (TieredRun; 0: no merge is due, see due()).
  int64_t due_files = 0;
  // Data files with policy.delete_ratio of their rows deleted (files.h's
  // DeletedRowsByFile): compaction rewrites them, even alone.
  int64_t mostly_deleted_files = 0;
  // Due for compaction: small files to merge or files to rid of deletes.
  bool due() const { return due_files > 0 || mostly_deleted_files > 0; }
};

// A snapshot as the status shows it: newest first in TableHealth::recent.
struct RecentSnapshot {
  int64_t snapshot_id = 0;
  int64_t timestamp_ms = 0;
  std::string operation;  // append, overwrite, delete, replace
  int64_t added_records = 0, deleted_records = 0, added_files = 0, removed_files = 0;
};

struct TableHealth {
  std::optional<int64_t> snapshot_id;  // the current snapshot assessed (none: empty table)
  int64_t snapshots = 0;               // in the metadata
  int64_t metadata_log = 0;            // previous metadata files the metadata lists
  // Of the current snapshot (manifests.h): all, small, and the (spec,
  // content) groups of the small ones.
  int64_t manifests = 0, small_manifests = 0, small_manifest_groups = 0;
  std::vector<PartitionHealth> partitions;  // worst first (most data files)
  int64_t data_files = 0, small_files = 0, delete_files = 0, data_bytes = 0, debt_files = 0;
  int64_t mostly_deleted_files = 0;  // PartitionHealth's, summed
  int64_t max_partition_files = 0;   // data files of the worst partition
  // Partitions above policy.max_files_per_partition with files due (due_files).
  int64_t partitions_over_slo = 0;
  std::vector<RecentSnapshot> recent;  // the newest few snapshots, newest first
};

// Reads the current snapshot's manifests of `table` (as loaded: no refresh)
// and counts its live files by partition, judged by `policy`.
Result<TableHealth> AssessTable(const catalog::Table& table, const Policy& policy);

}  // namespace sluice::maintenance
