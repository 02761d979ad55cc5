// The options a Pipeline runs by, the counters it keeps for /metrics and
// /v1/status, and what a committed checkpoint reports (pipeline/pipeline.h,
// docs/pipelines.md).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "catalog/table.h"
#include "columnar/column.h"
#include "common/status.h"
#include "sources/change_format.h"
#include "sql/binder.h"

namespace sluice::pipeline {

// What one committed checkpoint did (for metrics).
struct CheckpointReport {
  int64_t checkpoint = 0;
  int64_t records = 0;
  int64_t dead_letters = 0;
  int64_t files = 0;
  double commit_seconds = 0;      // the catalog transaction, retries included
  double checkpoint_seconds = 0;  // closing files + commit + journal
};

// Maps a batch of the source schema onto the target table's schema (the SQL
// SELECT list and WHERE, bound). Rows it cannot project (an expression failed
// on them) are left out and described in `rejected`: they become dead
// letters. Null: the source schema is the table's.
using Projection =
    std::function<Result<Batch>(Batch&& source_rows, std::vector<sql::RejectedRow>* rejected)>;

// The most threads one pipeline takes.
constexpr int kMaxParallelism = 64;

struct PipelineOptions {
  std::string name;  // the pipeline's id, stored in every snapshot it commits
  catalog::TableIdent target;
  std::string source_name;  // the SQL source, the key in sluice.offsets
  std::shared_ptr<const Schema> source_schema;
  // The columns of source_schema the pipeline reads (empty: all): the others
  // are not decoded (pipeline/decoded_columns.h; docs/pipelines.md "Decoding
  // and dead letters").
  std::vector<bool> read_columns;
  Projection projection;
  // A windowed aggregation instead (sql::AggregatePlan; `projection` is null):
  // its state is checkpointed with each commit (docs/state.md).
  std::shared_ptr<const sql::AggregatePlan> aggregate;
  // A change source (FORMAT UPSERT or DEBEZIUM) into a primary-key table
  // (docs/cdc.md): its records upsert and delete keys. `projection` is null;
  // `change_plan` projects the upserted rows, and `key_plan` takes a source
  // row to the target's key columns (in key order, no WHERE): of deletes,
  // decoded with `image_schema` (the source's columns, all optional), and of
  // upserted rows the WHERE drops (their keys leave the table).
  sources::ChangeFormat format = sources::ChangeFormat::kJson;
  std::shared_ptr<const sql::ProjectionPlan> change_plan;
  std::shared_ptr<const sql::ProjectionPlan> key_plan;
  std::shared_ptr<const Schema> image_schema;
  int64_t watermark_delay_us = 0;
  int64_t idle_timeout_ms = 0;  // 0: partitions never count as idle
  // The source's partitions are one ordered stream (the files of a folder):
  // one watermark, and (change sources) one applied log position.
  bool one_watermark_partition = false;
  int64_t commit_interval_ms = 1000;
  // Local state (the staged-file journal) lives here.
  std::string state_dir;
  // Threads that decode, project and write at once (0: every core the
  // process may use, at most kMaxParallelism).
  int parallelism = 0;
  // Bytes a pipeline's state (window state, key index) holds in memory
  // before it spills to `state_dir`/spill and `state_dir`/keys-spill
  // (docs/state.md "Beyond memory").
  int64_t state_memory = int64_t{256} << 20;
  // Records (or bytes of them) buffered before a batch is decoded, projected
  // and written.
  int64_t batch_rows = 16 * 1024;
  int64_t batch_bytes = 64 << 20;
  int64_t poll_bytes = 4 << 20;
  catalog::CommitOptions commit;
  // Called on the pipeline's thread after each committed checkpoint.
  std::function<void(const CheckpointReport&)> on_checkpoint;
};

// Counters for /metrics and /v1/status (all monotonic except the gauges).
struct PipelineStats {
  // Records polled and their bytes: added once per poll of the source.
  std::atomic<int64_t> records_in{0};
  std::atomic<int64_t> bytes_in{0};
  std::atomic<int64_t> records_committed{0};
  std::atomic<int64_t> dead_letters_committed{0};
  std::atomic<int64_t> commits{0};
  std::atomic<int64_t> commit_failures{0};
  std::atomic<int64_t> files_committed{0};
  std::atomic<int64_t> last_commit_micros{0};      // duration of the last catalog commit
  std::atomic<int64_t> last_checkpoint_micros{0};  // duration of the last whole checkpoint
  std::atomic<int64_t> commit_micros_total{0};
  std::atomic<int64_t> checkpoint{0};  // last committed checkpoint number
  std::atomic<int64_t> epoch{0};
  std::atomic<int64_t> newest_committed_ingest_ms{0};  // freshness = now - this
  std::atomic<int64_t> committed_offset_sum{0};        // sum over partitions of committed offsets
  std::atomic<int64_t> source_lag{0};  // records the source holds beyond what was read
  // A windowed pipeline's state (gauges, after each batch).
  std::atomic<int64_t> state_groups{0};
  std::atomic<int64_t> state_memory_bytes{0};
  std::atomic<int64_t> state_spills{0};
  // An upsert pipeline (a primary-key table): rows its commits deleted
  // (replaced or deleted keys), times its key index was loaded from the
  // table, and the keys it holds (gauge).
  std::atomic<int64_t> upsert_deletes{0};
  std::atomic<int64_t> key_index_loads{0};
  std::atomic<int64_t> key_index_keys{0};
  std::atomic<int64_t> key_index_catchups{0};  // compactions followed without a load
  std::atomic<int64_t> key_index_restores{0};  // read from its state files at a start
  std::atomic<int64_t> key_index_reopens{0};   // its store as a clean stop kept it, at a start
  std::atomic<int64_t> key_index_memory_bytes{0};
  std::atomic<int64_t> key_index_spills{0};  // its memory written to its store (this run)
  // Checkpoints taken before the commit interval because the key index's
  // pending changes reached their share of state.memory (KeyChangesFull).
  std::atomic<int64_t> key_index_early_checkpoints{0};
  // A change source: deletes it applied (a key removed, maybe one the
  // table did not hold), and changes skipped as replays (at or below the log
  // position already applied).
  std::atomic<int64_t> change_deletes{0};
  std::atomic<int64_t> changes_replayed{0};
};

}  // namespace sluice::pipeline
