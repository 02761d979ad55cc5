// Replaying dead letters after a fix (`sluice dlq replay`).
//
// A record lands in <table>__dlq when it cannot be decoded or violates the
// schema. Once the cause is fixed (the SQL source definition, the table's
// schema), replay re-decodes the dead letters of one pipeline with its current
// binding, in one catalog transaction:
//   - the records that now decode are appended to the target table,
//   - every replayed dead letter is deleted from the dead-letter table, and
//     those that fail again are written back with their new error (same
//     source, partition and offset; a new failed_at).
// So a record is either in the target or in the dead-letter table, never in
// both and never lost, also when replay runs concurrently with the pipeline
// (its commits and replay's are ordinary optimistic commits). A replay that
// fails before the commit deletes the files it wrote.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "catalog/catalog.h"
#include "pipeline/pipeline.h"

namespace sluice::pipeline {

struct ReplayResult {
  int64_t dead_letters = 0;   // dead letters of the pipeline matching the filter
  int64_t recovered = 0;      // now in the target table
  int64_t still_failing = 0;  // written back with their new error
  std::optional<int64_t> target_snapshot;
};

// `bound` is the pipeline as BindPipeline returns it; `filter` narrows the
// dead letters (an expression over the dead-letter table's columns, e.g.
// "offset >= 1000"; empty: all of them). With `dry_run` nothing is written.
// A commit that conflicts (a compaction rewrote a dead-letter file the plan
// deletes from, another replay moved some first) committed nothing: it is
// planned again from the tables as they are (as many times as a commit
// tries: CommitOptions::max_attempts).
Result<ReplayResult> ReplayDeadLetters(catalog::Catalog& catalog, FileIO& io,
                                       const PipelineOptions& bound, const std::string& filter,
                                       bool dry_run);

}  // namespace sluice::pipeline
