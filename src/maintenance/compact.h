// CompactTable: bin-packs each partition's small data files into files of the
// target size, where it pays, one commit per partition (docs/maintenance.md).
//
// Policy (table properties, then these options):
//   target    write.target-file-size-bytes (the writer's, default 512 MiB)
//   small     sluice.maintenance.small-file-bytes: a data file below this is
//             small (default a quarter of the target)
//   min files sluice.maintenance.min-input-files: a partition is compacted
//             once it has this many small files (default 5)
//   ratio     sluice.maintenance.delete-ratio: a file with this fraction of
//             its rows deleted makes its partition due (default 0.3)
// A compacted partition's small files, and its files with deletes, are read
// with their deletes applied and written anew into the table's current
// partition spec, sorted by the table's sort order when it has one (in runs
// of sort_run_bytes); the worst partitions (most input files) go first.
// Where nothing needs to change in the rows (no deletes, no sort order, the
// current spec and schema in every input, format v1/v2), column chunks
// without a dictionary are not decoded: their pages are copied into the
// output's row groups (recompressed when compressed more lightly than the
// table asks), and only the other columns are decoded and encoded
// (compact_pages.h).
//
// Partitions are committed in groups (partitions_per_commit, one `replace`
// snapshot each): a crash loses at most one group's work, and a large table
// never needs one giant commit. A group's commit fails (kConflict) when a
// file it replaces got a delete or went since the plan. The compaction then
// carries that change onto its new files: it knows where each input row went,
// so a row deleted meanwhile is deleted from the output by the same commit
// (position deletes, v3 deletion vectors), and the rows of an input gone
// meanwhile are too (the input is no longer replaced). Where it cannot (an
// input with equality deletes, every input gone, max_carries reached) the
// partitions are committed one by one, and only those in conflict are skipped
// (their new files removed). A deleted row never comes back. A deletion vector goes
// with its data file; a delete file goes once no data file it could apply to
// is left live (SnapshotUpdate::remove_dangling_deletes: the new files'
// sequence numbers are above every existing delete's).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "catalog/table.h"

namespace sluice::maintenance {

struct CompactOptions {
  std::optional<int64_t> target_file_bytes;
  std::optional<int64_t> small_file_bytes;
  std::optional<int64_t> min_input_files;
  // Files with this fraction of their rows deleted are rewritten, even alone
  // (default: the policy's sluice.maintenance.delete-ratio).
  std::optional<double> delete_ratio;
  // Only these partitions (spec id and values; a path could name two: a null
  // and the string "null"), when set.
  std::set<std::pair<int32_t, iceberg::PartitionValues>> partitions;
  // At most this many partitions, the worst first (0: all that are due).
  int64_t max_partitions = 0;
  // Partitions per `replace` commit: a crash loses at most one group's work.
  int64_t partitions_per_commit = 16;
  // Size-tiered (the maintenance service): a partition's smallest small files
  // that TieredRun selects, not all of them, and of the files with deletes
  // only those past the delete ratio.
  bool tiered = false;
  // Every data file of every partition, whatever its size and count (`sluice
  // table rewrite`: into the current spec and schema, every delete applied).
  bool all_files = false;
  // A table with a sort order: each partition's rows are sorted by it, in
  // runs of at most this many bytes of input files, or twice the small-file
  // size if more (so that a run's output is not small: compaction
  // converges); with all_files, exactly this. Each run is read whole into
  // memory, sorted and written to its own files.
  int64_t sort_run_bytes = int64_t{128} << 20;
  // Times a commit in conflict carries the deletes that arrived meanwhile
  // onto its new files and tries again, before the partitions step aside.
  int max_carries = 8;
  bool dry_run = false;
  // Called before each commit (of a group, and of each partition when a
  // group falls back), its files written (tests: a concurrent writer's moment).
  std::function<void()> before_commit;
};

struct PartitionCompaction {
  std::string partition;  // "ts_day=2024-01-31", "" unpartitioned
  int32_t spec_id = 0;
  iceberg::PartitionValues values;  // the partition's, in spec spec_id
  bool inputs_have_deletes = false;
  std::vector<std::string> inputs;  // the data files rewritten
  int64_t input_bytes = 0, rows = 0;
  int64_t outputs = 0, output_bytes = 0;  // 0 when dry or skipped
  // Bytes of the output's pages copied from the inputs without decoding
  // their values (parquet/page_copy.h), of output_bytes.
  int64_t copied_bytes = 0;
  std::string skipped;  // why it did not commit ("" when it did)
};

struct CompactResult {
  std::vector<PartitionCompaction> partitions;  // planned, in the order done
  int64_t partitions_seen = 0, data_files = 0, small_files = 0;
  int64_t commits = 0, conflicts = 0;
  // Rows deleted from the inputs during the compaction, deleted from its
  // output by the commit (CarryNewDeletes).
  int64_t carried_deletes = 0;
  int64_t bytes_read = 0, bytes_written = 0;
  int64_t bytes_copied = 0;  // of bytes_written: pages copied without decoding
};

Result<CompactResult> CompactTable(catalog::Table& table, const CompactOptions& options,
                                   const catalog::CommitOptions& commit = {});

}  // namespace sluice::maintenance
