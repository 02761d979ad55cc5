// Internal to src/maintenance: how a compaction's rewrite tracks where each
// input row went, and carries deletes that landed during the rewrite onto
// its new files (compact_carry.cc), so that no deleted row comes back.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "catalog/table.h"
#include "iceberg/data_writer.h"
#include "iceberg/table_metadata.h"
#include "maintenance/compact.h"

namespace sluice::maintenance::internal {

// Where rows of an input file went: `length` consecutive input positions from
// `in_pos` to consecutive positions from `out_pos` of output file `output`.
struct Run {
  int64_t in_pos = 0, out_pos = 0, length = 0;
  int32_t output = 0;  // index in Staged::output_paths
};

// A partition rewritten, its commit pending.
struct Staged {
  PartitionCompaction* plan = nullptr;
  std::vector<std::unique_ptr<iceberg::DataWriter>> writers;  // one per sort run
  std::vector<iceberg::DataFile> added;
  std::vector<std::string> output_paths;  // of every writer, in order
  // Where the live rows of each input went, by input (index in input_index).
  std::map<std::string, int32_t> input_index;
  std::vector<std::vector<Run>> origins;
  void Abort() {  // removes the files written
    for (auto& w : writers) w->Abort();
  }
  const std::vector<Run>* OriginOf(const std::string& input) const {
    auto it = input_index.find(input);
    return it == input_index.end() ? nullptr : &origins[static_cast<size_t>(it->second)];
  }
};

// Carries what changed in the group's inputs since the plan onto its new
// files, on the refreshed table: positions deleted since (a row delete, a
// dead-letter replay) become deletes of the new files (position delete
// files; v3: deletion vectors), and an input gone since (removed by a delete
// of all its rows, or rewritten by another compaction, whose files hold its
// rows) has every row it gave deleted from the new files and is no longer
// removed. Sets `u`'s deletes, removals and base; `rows` counts the rows
// carried. False when it cannot: every input is gone, or one has equality
// deletes that do not apply to the new files as they do to it (the new files
// keep the plan's data sequence number where the table has equality deletes,
// so those committed since apply to them, in the same partition).
Result<bool> CarryNewDeletes(catalog::Table& table, const std::vector<Staged*>& group,
                             catalog::SnapshotUpdate* u, int64_t* rows);

// Whether `group`'s new files keep the data sequence number of the snapshot
// the compaction read (SnapshotUpdate::data_sequence_number), so that
// equality deletes committed meanwhile apply to them as to their inputs:
// where the table may hold equality deletes (other engines write them;
// sluice does not: its summary's total says so, or it has no total), and
// only when every input is in the table's default spec. Rows of an older
// spec move to another partition of the current one, where a delete that
// never applied to them could (equality deletes are scoped by partition).
// Elsewhere the new files take the commit's number, and the partition's older
// position deletes can still be dropped as dangling.
bool KeepsReadSequence(const iceberg::TableMetadata& md, const std::vector<Staged*>& group);

}  // namespace sluice::maintenance::internal
