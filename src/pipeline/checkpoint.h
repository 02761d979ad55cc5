// What a pipeline records in the table with each checkpoint, and how it finds
// it again (DESIGN.md §4).
//
// Every snapshot a pipeline commits carries, in its summary:
//   sluice.pipeline    the pipeline's name
//   sluice.epoch       the writer epoch of the run that committed it
//   sluice.checkpoint  the checkpoint number (increasing per pipeline)
//   sluice.offsets     JSON {"<source>": {"<partition>": next_offset, ...}}
//   sluice.change-positions  (change sources with log positions only) JSON
//                      {"<partition>": "<position>"}: per source partition, the
//                      highest database log position applied
//                      (sources/change_format.h); a change at or below it is a
//                      replay and is skipped
// Recovery reads the newest such snapshot of the pipeline in the ancestry of
// main: its offsets are where to resume (snapshots of other writers, e.g. a
// compaction, may sit on top of it). The same commit also sets the table
// property `sluice.checkpoint.<pipeline>` ({"epoch", "checkpoint", "offsets"}):
// when snapshot expiry has removed the pipeline's snapshots from the ancestry,
// recovery resumes from the property instead of from the source's beginning
// (the property also holds "change_positions").
//
// Epochs fence zombies: each run of a pipeline raises the table property
// `sluice.epoch.<pipeline>` by compare-and-swap when it starts; a commit is
// only made while that property still holds the run's own epoch.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "common/status.h"
#include "iceberg/table_metadata.h"
#include "sources/source.h"

namespace sluice::pipeline {

inline constexpr char kSummaryPipeline[] = "sluice.pipeline";
inline constexpr char kSummaryEpoch[] = "sluice.epoch";
inline constexpr char kSummaryCheckpoint[] = "sluice.checkpoint";
inline constexpr char kSummaryOffsets[] = "sluice.offsets";
inline constexpr char kSummaryChangePositions[] = "sluice.change-positions";

// source name -> partition -> next offset
// The source interface a pipeline consumes (sources/source.h).
using sources::Positions;
using sources::Source;
using sources::SourceRecord;

using SourceOffsets = std::map<std::string, Positions>;
// partition -> the highest log position applied
using ChangePositions = std::map<std::string, std::string>;

struct CommittedCheckpoint {
  int64_t snapshot_id = 0;  // 0 when read from the table property
  int64_t epoch = 0;
  int64_t checkpoint = 0;
  SourceOffsets offsets;
  ChangePositions change_positions;
};

std::string EncodeOffsets(const SourceOffsets& offsets);
Result<SourceOffsets> DecodeOffsets(const std::string& json);
std::string EncodeChangePositions(const ChangePositions& positions);
Result<ChangePositions> DecodeChangePositions(const std::string& json);

// The newest checkpoint of `pipeline` in the ancestry of main, else the one in
// the table property (none if it never committed). A malformed sluice.* key is
// kCorruption naming the snapshot or the property.
Result<std::optional<CommittedCheckpoint>> FindCheckpoint(const iceberg::TableMetadata& table,
                                                          const std::string& pipeline);

// The table property holding the pipeline's last committed checkpoint, and
// its value.
std::string CheckpointProperty(const std::string& pipeline);
std::string EncodeCheckpointProperty(int64_t epoch, int64_t checkpoint,
                                     const SourceOffsets& offsets,
                                     const ChangePositions& change_positions = {});

// The table property holding the pipeline's current writer epoch.
std::string EpochProperty(const std::string& pipeline);
// The epoch recorded in `table` for `pipeline` (0 if none).
Result<int64_t> CurrentEpoch(const iceberg::TableMetadata& table, const std::string& pipeline);

}  // namespace sluice::pipeline
