// Pipeline: one continuous INSERT INTO <table> SELECT ... FROM <source>, run
// with exactly-once checkpoints (DESIGN.md §4, docs/pipelines.md).
//
// Loop: poll records from the source, decode them (FORMAT JSON) into column
// batches, project them onto the target table's schema, and write them with
// a partitioned DataWriter. A batch is split into `parallelism` lanes,
// decoded, projected and written at once on that many threads, each lane with
// its own writer (its own data files) and the records it claims 1,024 at a
// time (a plain append, an aggregate) or a consecutive share of them (the
// key index's changes); the aggregate path decodes and filters in lanes and
// feeds the window operator the lanes' runs of records in source order, its
// shards (by key hash, one per thread; one without a group key) taking their
// rows at once. Records that cannot be decoded become rows of the
// dead-letter table `<table>__dlq`, and so do rows the projection rejects (an
// expression failed on them) and late events; the payload of each is the
// record as it came. Only the source columns the pipeline reads are decoded
// (PipelineOptions::read_columns).
// Every commit interval (and on Stop; into a primary-key table also when the
// key index's pending changes fill their memory, KeyChangesFull) a checkpoint:
//   1. closes the open data files (staged: each was recorded in the journal
//      before it was created),
//   2. commits one snapshot to the target table (and one to the dead-letter
//      table when there are dead letters) in one catalog transaction, whose
//      summaries carry sluice.pipeline/epoch/checkpoint/offsets,
//   3. clears the checkpoint's entries from the journal.
// With more than one thread (and no key index), steps 1 and 2 of a checkpoint
// the commit interval calls for run in the background, on a committer
// thread, while the next batches are read into new files: the checkpoint's
// rows, offsets and state are fixed when it begins, and its outcome is taken
// at the next Step. One checkpoint commits at a time, in order; one that
// failed fails the Step or Checkpoint that takes its outcome, and every later
// call (reopen the pipeline: recovery finds what committed). Checkpoint() and Run()'s last
// checkpoint return only once committed.
// Open() recovers: it takes a new writer epoch (fencing older runs), resumes
// the source from the offsets of the newest checkpoint in the table, and
// deletes staged files of checkpoints that never committed.
//
// There is no at-least-once mode: offsets are only ever committed with the
// data they produced.
//
// Thread-safety: Run/Step/Checkpoint from one thread; stats() and
// RequestStop() from any thread.
//
// Its options and counters are in pipeline/pipeline_options.h, the
// dead-letter table it writes in pipeline/dead_letter.h.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "catalog/table.h"
#include "columnar/batch_sizer.h"
#include "columnar/column.h"
#include "iceberg/data_writer.h"
#include "pipeline/checkpoint.h"
#include "pipeline/dead_letter.h"
#include "pipeline/decoded_columns.h"
#include "pipeline/journal.h"
#include "pipeline/pipeline_options.h"
#include "pipeline/state_files.h"
#include "sources/change_format.h"
#include "sources/file_lines.h"
#include "sources/source.h"
#include "sql/binder.h"
#include "state/state_property.h"
#include "state/state_stream.h"

namespace sluice {
class JsonDecoder;
class SerialQueue;
class TaskPool;
namespace operators {
class WatermarkTracker;
class ShardedWindowAggregate;
class PrimaryKeyIndex;
struct RowLocation;
}  // namespace operators
}  // namespace sluice

namespace sluice::pipeline {

using sources::RawBatch;
using sources::RawRecord;
using sources::RowOrigin;

class Pipeline {
 public:
  // Loads the target and dead-letter tables (both must exist), takes a new
  // epoch, recovers (see above) and seeks `source`.
  static Result<std::unique_ptr<Pipeline>> Open(catalog::Catalog& catalog, FileIO& io,
                                                PipelineOptions options,
                                                std::unique_ptr<Source> source);
  ~Pipeline();

  // Polls once (waiting at most `timeout_ms`), and checkpoints if the commit
  // interval has passed. Returns the records polled.
  Result<int64_t> Step(int timeout_ms);
  // Takes a checkpoint now (a no-op when nothing was read since the last) and
  // returns once it committed (with the one committing in the background
  // before it, if any).
  Status Checkpoint();
  // Steps until RequestStop(), then takes a final checkpoint.
  Status Run();
  // The end of a bounded input: every open window is emitted (the next
  // checkpoint commits them); later events for those windows are late.
  Status FinishInput();
  void RequestStop() { stop_.store(true); }
  // After the final checkpoint of a clean stop: keeps a spilled key index's
  // store for the next run, which then reads no state file to restore it
  // (docs/state.md "The key index"). Nothing is kept for an index in memory,
  // one that is not the state its last commit saved (a compaction followed
  // since is a change), or one whose file ids are mostly gaps
  // (PrimaryKeyIndex::Keep); a failure to keep it is printed, not returned
  // (the store is a cache). Once it kept the store the pipeline refuses to
  // go on (Step and Checkpoint fail with kInternal, a caller's bug): a run
  // that wrote a store of its own beside the kept one's record could have it
  // taken for the kept one.
  void KeepKeyIndex();
  // Changes the commit interval from the next Step on (the runtime's
  // file-count SLO action; the pipeline's own thread calls it).
  void SetCommitIntervalMs(int64_t ms) { options_.commit_interval_ms = std::max<int64_t>(1, ms); }

  const PipelineStats& stats() const { return stats_; }
  const PipelineOptions& options() const { return options_; }
  Source& source() { return *source_; }
  // Offsets of the last committed checkpoint.
  const Positions& committed_positions() const { return committed_; }

 private:
  Pipeline(catalog::Catalog& catalog, FileIO& io, PipelineOptions options,
           std::unique_ptr<Source> source);
  // The rows a lane decoded from a run of consecutive records, for the
  // windows (windowed path): taken out of the lane so that it decodes the
  // next batch while they are fed.
  struct WindowInput {
    size_t first = 0;                // the run's first record (the runs are fed in source order)
    Batch rows;                      // decoded, widened to the source schema
    std::vector<RowOrigin> origins;  // of rows
    std::vector<uint32_t> records;   // of rows: each one's record in WindowBatch::raw
    Batch input;                     // the operator's columns of the rows WHERE kept...
    std::vector<int64_t> row_of;     // ...the row each came from...
    std::vector<uint16_t> shard;     // ...and each one's shard of the operator
  };
  // A lane's decoders have their parsers allocated as they are built, for
  // records of up to this many bytes (JsonDecoder::ReserveRecords).
  static constexpr size_t kLaneRecordBytes = 16 * 1024;
  // One thread's share of a batch: its decoder and writer, and what it made
  // of its records.
  struct Lane {
    std::unique_ptr<JsonDecoder> decoder;
    std::unique_ptr<iceberg::DataWriter> writer;
    Batch rows;                        // decoded (the columns read), then widened (source schema)
    BatchSizer sizer;                  // sizes rows' buffers from the last batch's
    std::vector<RowOrigin> origins;    // of rows
    std::vector<uint32_t> records;     // of rows: each one's record in the batch
    std::vector<WindowInput> windows;  // windowed path: each run of records' rows
    std::vector<bool> retracts;        // an aggregate over a changelog: rows -U and -D took back
    Batch dead;                        // dead letters
    int64_t written = 0;               // rows written
    // Upserts: the lane's changes in source order, change i of the key
    // keys[key_ends[i-1], key_ends[i]); where the writer put each written
    // row, and the writer's files.
    struct KeyChange {
      int64_t row = -1;  // the written row (placements[row]); -1: a delete
      uint32_t partition = 0;
      std::string position;  // in the database's log (change sources); "" none
    };
    std::vector<KeyChange> changes;
    std::string keys;
    std::vector<uint32_t> key_ends;
    std::vector<iceberg::RowPlacement> placements;
    std::vector<std::string> file_paths;
    // A change source: the records' parser, the decoder of delete images and
    // the images decoded.
    std::unique_ptr<sources::ChangeParser> parser;
    std::unique_ptr<JsonDecoder> image_decoder;
    Batch images;
    Status status;
  };

  // pipeline_recover.cc: opening. Recover loads the tables, takes a new
  // epoch (fencing older runs), finds the committed checkpoint, deletes the
  // staged files of checkpoints that never committed, and starts from it.
  struct ResumePoint {
    std::optional<CommittedCheckpoint> committed;
    Positions positions;  // this source's, in the committed checkpoint
  };
  Status Recover();
  Result<ResumePoint> FindResumePoint(const iceberg::TableMetadata& md) const;
  Status TakeEpoch();
  Status DropUncommittedFiles(const std::optional<CommittedCheckpoint>& committed, int64_t last);
  Status StartFrom(const ResumePoint& resume);
  Status StartWriters();
  // pipeline_checkpoint.cc: a checkpoint's steps. BeginCheckpoint drains the
  // lanes and the window and write stages, takes the writers of the checkpoint's files
  // and fixes its updates (offsets, state files, counts); the checkpoint then
  // commits (CloseAndCommit: files closed, one catalog transaction) in line,
  // or in the background on committer_ (`background`, when the pipeline has
  // more than one lane and no key index), and TakeCommitted applies its
  // outcome on the pipeline's thread (the journal, retired state files,
  // counts), waiting for it when `wait`.
  struct Committing {
    int64_t checkpoint = 0;
    int64_t started_us = 0;
    std::vector<std::unique_ptr<iceberg::DataWriter>> writers;  // the lanes'
    std::unique_ptr<iceberg::DataWriter> dead_letter_writer;
    std::vector<catalog::TableUpdate> updates;  // the files added as they close
    Positions positions;
    int64_t rows = 0, dead_letters = 0, newest_ingest_ms = 0;
    // Set by CloseAndCommit (on committer_'s thread in the background):
    Status status;
    int64_t snapshot_id = 0;
    int64_t commit_micros = 0, finished_us = 0;
    std::atomic<bool> done{false};
  };
  Status BeginCheckpoint(bool background);
  Status CommitOrHandOver(std::unique_ptr<Committing> c, bool background);
  void CloseAndCommit(Committing& c, TaskPool& close_pool);  // its outcome into c
  Status TakeCommitted(bool wait);
  struct ClosedFiles {
    std::vector<iceberg::DataFile> data, dead_letters;
  };
  // Closes the writers at once on `pool` (their last row groups are encoded
  // here).
  Result<ClosedFiles> CloseFiles(Committing& c, TaskPool& pool);
  // The target table's update (summary, offsets, properties, window state);
  // AddFiles adds the closed files to it, and the dead letters' update.
  Result<std::vector<catalog::TableUpdate>> CheckpointUpdates(const Positions& positions);
  void AddFiles(ClosedFiles files, std::vector<catalog::TableUpdate>* updates);
  Status AfterCommit(const Committing& c);
  CheckpointReport CountCommit(Committing& c);
  // Records a file about to be created in the staged-file journal, under the
  // checkpoint it belongs to (any thread).
  Status RecordStaged(int64_t checkpoint, const std::string& path);
  // Hands the polled records to the lanes (after taking the lanes' last
  // batch); with more than one lane they run while the source is polled on,
  // and (windowed) while the window stage takes the batches before.
  Status FlushRows();
  // Waits for the lanes' batch and takes their results in source order:
  // rows counted, dead letters written, key changes to the index (upserts);
  // windowed, the rows and dead letters into `windows`, for the window stage.
  struct WindowBatch;
  Status TakeLanes(WindowBatch* windows);
  // Both, and the window and write stages drained: nothing is left in the
  // lanes or the stages.
  Status FinishLanes();
  Status WriteDeadLetters(Batch& dead);
  // Polls the source into polling_ (waiting at most `timeout_ms`) and counts
  // what came.
  Result<int64_t> Poll(int timeout_ms);
  // Counts records [first, end) of `batch` into the stats.
  void CountPolled(const RawBatch& batch, size_t first);
  // Whether polling_ holds a batch's worth: batch_rows records (the ranges
  // not read yet counted at the last batch's bytes a record) or batch_bytes.
  bool BatchFull() const;
  // Reads what is left of `batch`'s deferred ranges (deferred_lines_ has
  // planned them) and counts their records: on the lanes' threads with the
  // pipeline's, or on the pipeline's alone while the lanes decode.
  Status ReadRanges(RawBatch& batch);
  // Decodes records [begin, end) of flushing_ into `lane`, dead-letters what
  // fails (adding to lane.dead), and projects and writes the rows, adding to
  // lane.written (or prepares them for the windows).
  Status RunLane(Lane& lane, size_t begin, size_t end);
  Status CheckEpoch();
  // The epoch step of opening through a catalog that does not swap whole
  // metadata files (REST): commits the next epoch with an empty snapshot on
  // main; returns it.
  Result<int64_t> BumpEpochOnMain();
  void RenewReaderHold();
  // pipeline_aggregate.cc: the windowed path. PrepareAggregate runs in a
  // lane (WHERE and the operator's columns); FeedAggregate takes a batch's
  // runs of records in source order (watermarks, the windows, emitting
  // closed ones).
  Status StartAggregate(const std::optional<CommittedCheckpoint>& committed);
  // The window state and watermarks of the committed checkpoint, from the
  // files its property names (none: a first start).
  Status RestoreWindows(const std::optional<CommittedCheckpoint>& committed);
  // Records [first, ...) of flushing_ decoded into lane.rows: WHERE and the
  // operator's columns, into a WindowInput of lane.windows.
  Status PrepareAggregate(Lane& lane, size_t first);
  // The window stage (windowed path): the batches the lanes decoded, in
  // source order, one at a time. RunWindowBatch writes a batch's dead letters,
  // feeds its rows to the windows, emits the closed ones and writes them
  // (WriteWindowRows). With more than one lane it runs on window_stage_'s
  // thread, beside the lanes decoding the next batch and the pipeline's
  // thread polling, and hands the rows to write on to write_stage_.
  // PushWindows hands a batch over (waiting while one already waits);
  // SettleWindows drains both stages, counts the rows written and returns
  // the first error, for good: after a failure either stage skips every later
  // batch, so that Pipeline must not checkpoint again (FlushRows fails at
  // once, too).
  // Between a PushWindows and the next SettleWindows, the stage alone touches
  // window_, watermarks_, dead_rows_, dlq_writer_, dead_pending_,
  // window_rows_ and window_status_, and its write stage alone
  // lanes_[0].writer and write_status_; both read epoch_ (the writers record
  // their files in the journal): the pipeline's thread changes none of them
  // before settling.
  struct WindowBatch {
    std::vector<WindowInput> inputs;  // the lanes' runs of records, in source order
    std::vector<Batch> dead;          // the lanes' dead letters
    // The records the lanes decoded (a late row's dead letter is its record
    // as it came) and the partitions RowOrigin::partition names.
    std::unique_ptr<RawBatch> raw;
  };
  Status PushWindows(WindowBatch batch);
  void RunWindowBatch(WindowBatch& batch);
  void FeedWindowBatch(WindowBatch& batch);
  Status SettleWindows();
  // Window rows to lanes_[0].writer: on write_stage_ when there is one.
  Status WriteWindowRows(Batch rows);
  Status FeedAggregate(const std::vector<WindowInput>& inputs, const RawBatch& raw);
  // RawBatches the window stage is done with, kept for the lanes' next
  // batches (their buffers already grown): TakeSpareRaw, or a new one.
  std::unique_ptr<RawBatch> TakeSpareRaw();
  void KeepSpareRaw(std::unique_ptr<RawBatch> raw);
  Status IdleCheckAggregate();
  Status EmitWindows(int64_t watermark);
  // GROUP BY without a window: the rows of the groups the checkpoint changed
  // replace their rows (HAVING drops a group's row), through the upsert path.
  Status EmitUpdatedGroups();
  // Deletes the rows of `groups` (operator rows) in the table (their keys
  // into `lane`'s changes).
  Status DeleteGroupRows(Lane& lane, const Batch& groups);
  // Records `path` in the staged-file journal and streams a state file
  // into it (`write`); its bytes.
  Result<int64_t> WriteStateFile(const std::string& path,
                                 const std::function<Status(state::StateWriter*)>& write);
  // A committed state file to read; its size into `*bytes`.
  Result<std::unique_ptr<state::StateReader>> OpenStateFile(const std::string& path,
                                                            int64_t* bytes);
  // Writes the window state file of the checkpoint being taken and sets its
  // property in `update`.
  Status SaveState(catalog::TableUpdate* update);
  // pipeline_upsert.cc: a primary-key table. StartUpserts loads the key
  // index; PrepareUpserts (in a lane) takes the written rows' keys;
  // FeedUpserts records them in source order; PlanUpsertDeletes writes the
  // deletes of the checkpoint's changes into `u` (the index made current
  // first), DiscardUpsertDeletes drops them after a lost commit.
  Status StartUpserts(const std::optional<CommittedCheckpoint>& committed);
  // The key index from the state files `committed` references (false when
  // it references none, or they are unreadable: the index is loaded from
  // the table instead).
  Result<bool> RestoreKeyIndex(const CommittedCheckpoint& committed);
  // The key index's property of `committed`'s checkpoint, decoded and as
  // the table holds it (none: there is none, or it is another checkpoint's,
  // or of other key columns); kCorruption when it cannot be decoded.
  struct SavedKeyIndex {
    state::StateProperty property;
    std::string value;
  };
  Result<std::optional<SavedKeyIndex>> SavedKeyIndexProperty(
      const CommittedCheckpoint& committed) const;
  // Where a spilled key index's store is (keys-spill), and what a clean stop
  // that kept it writes beside it (keys-kept).
  std::string KeySpillDir() const { return options_.state_dir + "/keys-spill"; }
  std::string KeptKeyIndexPath() const { return options_.state_dir + "/keys-kept"; }
  // pipeline_upsert_kept.cc: the store KeepKeyIndex left, taken as the key
  // index when it is of `committed`'s checkpoint (false: there is none, or
  // it is not, and the caller wipes it). What KeepKeyIndex wrote beside it is
  // removed first, durably, whatever it says: an error when that fails (a
  // store about to change must never pass for the kept one).
  Result<bool> ReopenKeptKeyIndex(const std::optional<CommittedCheckpoint>& committed);
  // Writes the key index as the checkpoint's commit leaves it (after its
  // deletes were planned) and sets its property in `update`; an earlier
  // attempt's file goes first.
  Status SaveKeyIndex(catalog::TableUpdate* update);
  void DropStagedKeyIndex();
  Status LoadKeyIndex();
  void CountKeyIndex();  // the index's numbers into stats_
  // `state.memory` for the window state or the key index: half each when the
  // pipeline keeps both (an updating aggregate into a primary-key table).
  int64_t StateMemoryShare() const {
    bool both = options_.aggregate && options_.aggregate->updating();
    return both ? options_.state_memory / 2 : options_.state_memory;
  }
  // The key index's changes since the last checkpoint stay in memory until
  // it commits: once they take as much as the index's share of state.memory
  // (at least 64 KiB) the checkpoint comes early, so that one commit
  // interval's changes (a micro-batch of millions of keys, a backlog) do not
  // grow without bound. (Not sooner: a checkpoint of uniform updates writes
  // deletes for most data files, which compaction must then fold; at half
  // the share, updates ran 2.5x slower; docs/state.md.)
  bool KeyChangesFull() const;
  // Scans the key columns (of `only_files`, or all), calling `row` with each
  // row's key and place until it returns false; `reserve` sizes the index
  // for the rows first.
  Status ScanKeys(
      const std::set<std::string>& only_files, bool reserve,
      const std::function<Result<bool>(std::string_view key, operators::RowLocation at)>& row);
  Status RefreshKeyIndex();
  // What the snapshots since the indexed one did to the index: nothing (all
  // this pipeline's), moved rows (the others are compactions: `compactions`,
  // oldest first, can be followed), or anything else (load it again).
  enum class KeyIndex { kCurrent, kCompacted, kStale };
  KeyIndex KeyIndexState(std::vector<const iceberg::Snapshot*>* compactions) const;
  // Follows compactions: the keys whose rows they moved are pointed at the
  // rows' new places (reading only the files they wrote); loads the index
  // again when anything does not add up.
  Status CatchUpCompactions(const std::vector<const iceberg::Snapshot*>& compactions);
  // Moves the keys whose rows were in `moved_from` (file ids) to the rows of
  // the files the compactions wrote (`added`): false when the rows do not
  // add up to the index's count of them (the index is then loaded again).
  Result<bool> RelocateCompacted(const std::vector<bool>& moved_from,
                                 const std::set<std::string>& added);
  Status PrepareUpserts(Lane& lane, const Batch& rows);
  Status FeedUpserts(Lane& lane);
  // pipeline_changes.cc: a change source's lane (decode the changes, project
  // the upserted rows, take the deleted keys, write) and its start.
  Status StartChanges(const std::optional<CommittedCheckpoint>& committed);
  Status RunChangeLane(Lane& lane, size_t begin, size_t end);
  // The changes' keys (rows of `keys`, columns `key_columns`) into the lane.
  Status AddKeyChange(Lane& lane, const Batch& keys, const std::vector<int>& key_columns,
                      int64_t key_row, int64_t written_row, const RowOrigin& origin,
                      sources::Change&& change);
  Status PlanUpsertDeletes(const std::vector<iceberg::DataFile>& added, catalog::SnapshotUpdate* u);
  void DiscardUpsertDeletes(catalog::SnapshotUpdate* u);
  // Commits `updates` (retrying an upsert's plan when another writer changed
  // the table meanwhile); the snapshot ids.
  Result<std::vector<int64_t>> CommitCheckpoint(std::vector<catalog::TableUpdate>& updates);
  void DeadLetterRow(std::string_view payload, const std::string& error,
                     const std::string& partition, int64_t offset, int64_t ingested_ms,
                     Batch* dead);

  catalog::Catalog& catalog_;
  FileIO& io_;
  PipelineOptions options_;
  int64_t hold_renewed_ms_ = 0;  // when sluice.reader.<pipeline> was last committed
  std::unique_ptr<Source> source_;
  std::unique_ptr<catalog::Table> table_;
  std::unique_ptr<catalog::Table> dlq_table_;
  std::unique_ptr<StagedJournal> journal_;
  std::mutex journal_mu_;  // lanes' writers record their files at once
  std::string source_description_;
  std::unique_ptr<TaskPool> pool_;
  std::vector<Lane> lanes_;  // lanes_[0]'s writer also takes the windows' rows
  std::unique_ptr<iceberg::DataWriter> dlq_writer_;
  DecodedColumns decoded_;                 // the source columns the lanes decode
  RawBatch polling_;                       // filled by the source
  RawBatch flushing_;                      // in the lanes
  sources::DeferredLines deferred_lines_;  // reads flushing_'s ranges
  // Of the last batch read from ranges; until one is, a guess on the small
  // side (a first batch smaller than batch_rows rather than larger).
  double bytes_per_record_ = 64;
  bool ranges_read_ = false;  // bytes_per_record_ is a batch's (a new batch reserves by it)
  std::mutex spare_raw_mu_;   // the window stage returns, the pipeline's thread takes
  std::vector<std::unique_ptr<RawBatch>> spare_raw_;
  int lanes_running_ = 0;              // lanes of flushing_ not yet finished (0: none)
  std::atomic<size_t> next_claim_{0};  // the next record of flushing_ a lane may claim
  std::shared_ptr<const Schema> dead_schema_;
  Batch dead_rows_;  // dead letters not yet written (of the windowed path)
  int64_t epoch_ = 0;
  int64_t next_checkpoint_ = 1;
  Positions committed_;
  bool dirty_ = false;  // records read since the last checkpoint
  int64_t newest_ingest_ms_ = 0;
  int64_t rows_pending_ = 0;  // rows written to the open files
  int64_t dead_pending_ = 0;
  int64_t last_checkpoint_ms_ = 0;
  std::atomic<bool> stop_{false};
  PipelineStats stats_;
  // Background checkpoints (more than one lane): the committer thread, the
  // pool on which it closes the files (its workers and it: one thread a
  // lane), and the checkpoint it commits (null: none); a failed one fails
  // every later call.
  std::unique_ptr<SerialQueue> committer_;
  std::unique_ptr<TaskPool> close_pool_;
  std::unique_ptr<Committing> committing_;
  // A failed checkpoint, or a batch the lanes dropped: fails every later call.
  Status checkpoint_failed_;
  // Windowed aggregations only. The operator's shards run on a pool of their
  // own, as the lanes' pool may be decoding the next batch meanwhile.
  std::unique_ptr<TaskPool> shard_pool_;
  std::unique_ptr<SerialQueue> window_stage_;  // more than one lane only
  Status window_status_;                       // the stage's first error
  std::atomic<bool> window_failed_{false};     // window_status_ or write_status_ is an error
  int64_t window_rows_ = 0;                    // rows the stage wrote, not yet counted
  // More than one lane: the window rows are written (lanes_[0].writer) on a
  // thread of their own, in the order emitted, while the window stage takes
  // its next batch (WriteWindowRows); SettleWindows drains it after the stage.
  Status write_status_;  // the write stage's first error (its thread's until drained)
  std::unique_ptr<SerialQueue> write_stage_;
  std::unique_ptr<operators::ShardedWindowAggregate> window_;  // a shard per lane (keyed)
  std::unique_ptr<operators::WatermarkTracker> watermarks_;
  StateFileChain window_state_;
  // Upserts into a primary-key table only.
  std::unique_ptr<operators::PrimaryKeyIndex> keys_;
  std::vector<int> key_columns_;             // in the table's schema, key order
  std::vector<std::string> key_names_;       // their names (the index's scan reads them)
  std::string key_fingerprint_;              // "<field id>:<type>,...": how keys are encoded
  std::optional<int64_t> indexed_snapshot_;  // the snapshot keys_ reflects
  StateFileChain key_state_;                 // the index's state files
  std::string key_state_staged_;             // the file of the commit being tried
  bool key_index_stale_ = false;             // load it again before the next plan
  int64_t pending_upsert_deletes_ = 0;       // rows the checkpoint being taken deletes
  int64_t pending_change_deletes_ = 0, pending_changes_replayed_ = 0;
  // A change source: per partition, the highest log position applied
  // (committed with each checkpoint).
  ChangePositions change_positions_;
};

}  // namespace sluice::pipeline
