#include "pipeline/pipeline.h"

#include <algorithm>

#include "columnar/json_reader.h"
#include "columnar/sql_schema.h"
#include "common/kill_point.h"
#include "common/serial_queue.h"
#include "common/task_pool.h"
#include "iceberg/data_writer.h"
#include "iceberg/table_builder.h"
#include "operators/primary_key_index.h"
#include "operators/sharded_window_aggregate.h"
#include "operators/watermark.h"

namespace sluice::pipeline {

using catalog::Table;
using catalog::TableIdent;

namespace {

// A batch smaller than this per lane is not split (the threads would cost
// more than they save).
constexpr size_t kMinRecordsPerLane = 512;
// Lanes claim a batch's records at most this many at a time, fewer as the
// batch runs out (ClaimRun), down to kMinRecordsPerClaim.
constexpr size_t kRecordsPerClaim = 1024;
constexpr size_t kMinRecordsPerClaim = 128;
// Records' buffers that the window stage may hold at once: a batch the
// pipeline's thread waits to push, one waiting on the stage and one on it.
constexpr size_t kSpareRawBatches = 3;

int64_t NowMs() { return iceberg::NowMillis(); }

}  // namespace

Pipeline::Pipeline(catalog::Catalog& catalog, FileIO& io, PipelineOptions options,
                   std::unique_ptr<Source> source)
    : catalog_(catalog), io_(io), options_(std::move(options)), source_(std::move(source)) {}

Pipeline::~Pipeline() {
  // Lanes, a window stage and a commit still running use the members.
  if (pool_) pool_->Wait();
  if (window_stage_) window_stage_->Drain();
  if (write_stage_) write_stage_->Drain();
  if (committer_) committer_->Drain();
  // Open writers delete their unfinished files as they are destroyed; files
  // closed for a checkpoint that did not commit stay, recorded in the journal,
  // for the next run's recovery (a destructor cannot know whether a commit
  // whose outcome was unknown happened).
}

Result<std::unique_ptr<Pipeline>> Pipeline::Open(catalog::Catalog& catalog, FileIO& io,
                                                 PipelineOptions options,
                                                 std::unique_ptr<Source> source) {
  if (options.name.empty()) return Status::Invalid("a pipeline needs a name");
  if (options.commit_interval_ms <= 0) {
    return Status::Invalid("pipeline {}: commit_interval must be positive", options.name);
  }
  if (options.state_dir.empty())
    return Status::Invalid("pipeline {}: no state folder", options.name);
  std::unique_ptr<Pipeline> p(new Pipeline(catalog, io, std::move(options), std::move(source)));
  RETURN_IF_ERROR_CTX(p->Recover(), "pipeline {}", p->options_.name);
  return p;
}

Status Pipeline::StartWriters() {
  // A windowed pipeline writes its windows through one writer (lane 0's, in
  // the order they close); otherwise every lane has one, and they share the
  // table's memory and open-file budgets (with the dead-letter writer).
  int writers = options_.aggregate ? 1 : static_cast<int>(lanes_.size());
  auto make = [&](const Table& t,
                  int memory_share) -> Result<std::unique_ptr<iceberg::DataWriter>> {
    ASSIGN_OR_RETURN(iceberg::DataWriterOptions o,
                     iceberg::DataWriterOptionsFromProperties(t.metadata().properties,
                                                              iceberg::WriteRole::kStreaming));
    o.memory_budget_bytes /= memory_share;
    o.max_open_files = std::max(1, o.max_open_files / memory_share);
    o.open_files_share = writers + 1;
    // (Bound now: a writer's files belong to the checkpoint it was made for,
    // whatever next_checkpoint_ says by the time it creates them.)
    o.before_create = [this, checkpoint = next_checkpoint_](const std::string& path) {
      return RecordStaged(checkpoint, path);
    };
    return iceberg::DataWriter::Make(io_, t.metadata(), std::move(o));
  };
  for (int i = 0; i < writers; ++i) {
    ASSIGN_OR_RETURN(lanes_[i].writer, make(*table_, writers));
  }
  ASSIGN_OR_RETURN(dlq_writer_, make(*dlq_table_, 1));
  dead_schema_ = std::make_shared<Schema>(*dlq_table_->metadata().current_schema());
  dead_rows_ = Batch::Make(dead_schema_);
  return Status::OK();
}

Status Pipeline::RecordStaged(int64_t checkpoint, const std::string& path) {
  std::lock_guard<std::mutex> lock(journal_mu_);
  return journal_->Record(epoch_, checkpoint, path);
}

Status Pipeline::RunLane(Lane& lane, size_t begin, size_t end) {
  RETURN_IF_ERROR(FailPoint("pipeline.lane"));
  if (options_.format != sources::ChangeFormat::kJson && !options_.aggregate) {
    return RunChangeLane(lane, begin, end);
  }
  lane.rows = Batch::Make(decoded_.decoded());
  const int64_t lane_bytes = flushing_.Bytes(begin, end);
  lane.sizer.Reserve(&lane.rows, static_cast<int64_t>(end - begin), lane_bytes);
  lane.origins.clear();
  lane.records.clear();
  lane.retracts.clear();
  const std::vector<std::string>& partitions = flushing_.partitions;
  // An aggregate over a changelog: +I and +U rows add, -U and -D rows retract.
  const bool changelog = options_.format == sources::ChangeFormat::kChangelog;
  const bool in_place = options_.format == sources::ChangeFormat::kJson;
  static_assert(ByteBuffer::kPadding >= JsonDecoder::kPadding);
  for (size_t i = begin; i < end; ++i) {
    const RawRecord& r = flushing_.records[i];
    std::string_view value = flushing_.Value(i);
    int64_t before = lane.rows.num_rows();
    std::string_view row = value;
    sources::Change change;
    Status st;
    if (changelog) {
      st = lane.parser->Parse(value, {}, &change);
      if (st.ok() && change.kind == sources::Change::Kind::kNone) continue;
      row = change.image;
    }
    // A JSON record is parsed where it lies in the batch, a line end after it
    // (sources/raw_batch.h).
    if (st.ok()) st = lane.decoder->DecodeLine(row, r.origin.offset, &lane.rows, in_place);
    if (st.ok()) {
      if (lane.rows.num_rows() > before) {
        lane.origins.push_back(r.origin);
        lane.records.push_back(static_cast<uint32_t>(i));
        if (changelog) lane.retracts.push_back(change.kind == sources::Change::Kind::kDelete);
      }
      continue;
    }
    // The decoder left the rows unchanged: the record becomes a dead letter.
    AppendDeadLetter({value, &st, source_description_, partitions[r.origin.partition],
                      r.origin.offset, r.origin.timestamp_ms * 1000, NowMs() * 1000, options_.name},
                     &lane.dead);
  }
  lane.sizer.Learn(lane.rows, lane_bytes);
  lane.rows = decoded_.Widen(std::move(lane.rows));              // NULL in the columns not read
  if (options_.aggregate) return PrepareAggregate(lane, begin);  // the windows write the rows
  Batch b = std::move(lane.rows);
  if (options_.projection) {
    std::vector<sql::RejectedRow> rejected;
    ASSIGN_OR_RETURN(b, options_.projection(std::move(b), &rejected));
    int64_t now_us = NowMs() * 1000;
    for (const sql::RejectedRow& r : rejected) {
      Status error = Status::Invalid("{}", r.error);
      const RowOrigin& o = lane.origins[r.row];
      // The record as it came (the decoded row lacks the columns not read).
      AppendDeadLetter(
          {flushing_.Value(lane.records[r.row]), &error, source_description_,
           partitions[o.partition], o.offset, o.timestamp_ms * 1000, now_us, options_.name},
          &lane.dead);
    }
  }
  if (keys_) {
    RETURN_IF_ERROR(PrepareUpserts(lane, b));
    RETURN_IF_ERROR_CTX(lane.writer->Write(b, &lane.placements), "writing to {}",
                        options_.target.ToString());
    lane.file_paths = lane.writer->FilePaths();
  } else {
    RETURN_IF_ERROR_CTX(lane.writer->Write(b), "writing to {}", options_.target.ToString());
  }
  lane.written += b.num_rows();
  return Status::OK();
}

Status Pipeline::FlushRows() {
  // A failed window stage fails the pipeline now, not at the next checkpoint.
  if (window_failed_.load(std::memory_order_relaxed)) return SettleWindows();
  if (!polling_.deferred.empty()) {
    // The batch's file ranges: this thread reads parts of them while the
    // lanes still decode the batch before, and the lanes' threads join in
    // once they are done (ReadRanges).
    deferred_lines_.Plan(polling_);
    while (lanes_running_ > 0 && pool_->Busy() && deferred_lines_.ReadNext(polling_)) {
    }
  }
  WindowBatch windows;
  RETURN_IF_ERROR(TakeLanes(&windows));
  if (!polling_.records.empty() || !polling_.deferred.empty()) {
    // Lanes: on the pipeline's thread alone, or on the workers while it polls
    // the next batch (and the window stage takes the batches before).
    std::swap(flushing_, polling_);
    polling_.Clear();
    RETURN_IF_ERROR(ReadRanges(flushing_));
    if (flushing_.records.empty()) {  // (blank lines only)
      flushing_.Clear();
      return PushWindows(std::move(windows));
    }
    flushing_.raw.ZeroPadding();  // (the decoders' look-ahead reads only bytes written)
    size_t n = flushing_.records.size();
    int lanes = static_cast<int>(lanes_.size());
    lanes_running_ = static_cast<int>(std::clamp<size_t>(n / kMinRecordsPerLane, 1, lanes));
    int parts = lanes_running_;
    // The lanes claim records a few at a time, so that a lane whose thread
    // waits for a core (the pipeline's thread polls meanwhile, the window
    // stage feeds: more threads than cores) leaves them to the lanes that
    // run, not the batch waiting for it. The window stage (any aggregate,
    // into a primary-key table too) takes each run of records in source
    // order (TakeLanes). The key index takes a change source's or an
    // upsert's changes in source order, lane after lane: their lanes take
    // consecutive records.
    const bool claim = lanes > 1 && (options_.aggregate ||
                                     (options_.format == sources::ChangeFormat::kJson && !keys_));
    next_claim_.store(0, std::memory_order_relaxed);
    auto run = [this, n, parts, claim](int i) {
      Lane& lane = lanes_[i];
      lane.dead = Batch::Make(dead_schema_);
      lane.written = 0;
      lane.windows.clear();
      if (!claim) {
        lane.status = RunLane(lane, n * i / parts, n * (i + 1) / parts);
        return;
      }
      lane.status = Status::OK();
      while (lane.status.ok()) {
        auto [begin, end] = ClaimRun(next_claim_, n, parts, kMinRecordsPerClaim, kRecordsPerClaim);
        if (begin == end) break;
        lane.status = RunLane(lane, begin, end);
      }
    };
    if (lanes == 1) {
      RETURN_IF_ERROR(PushWindows(std::move(windows)));  // (none: one lane finishes at once)
      run(0);
      return FinishLanes();
    }
    pool_->Start(parts, run);
  }
  // The lanes' last batch to the window stage, once they decode the next: a
  // stage behind (the push waits) does not hold them up.
  return PushWindows(std::move(windows));
}

Status Pipeline::WriteDeadLetters(Batch& dead) {
  if (dead.num_rows() == 0) return Status::OK();
  RETURN_IF_ERROR_CTX(dlq_writer_->Write(dead), "writing dead letters of {}",
                      options_.target.ToString());
  dead_pending_ += dead.num_rows();
  dead = Batch::Make(dead_schema_);
  return Status::OK();
}

Status Pipeline::TakeLanes(WindowBatch* windows) {
  if (lanes_running_ == 0) return Status::OK();
  pool_->Wait();
  Status st;
  for (int i = 0; i < lanes_running_ && st.ok(); ++i) {
    Lane& lane = lanes_[i];
    st = lane.status;
    if (!st.ok()) break;
    if (options_.aggregate) {
      for (WindowInput& in : lane.windows) windows->inputs.push_back(std::move(in));
      lane.windows.clear();
      windows->dead.push_back(std::exchange(lane.dead, Batch{}));
      continue;
    }
    rows_pending_ += lane.written;
    st = WriteDeadLetters(lane.dead);
    if (st.ok() && keys_) st = FeedUpserts(lane);
  }
  for (int i = 0; i < lanes_running_; ++i) {
    lanes_[i].rows = Batch{};
    lanes_[i].windows.clear();
  }
  lanes_running_ = 0;
  if (!st.ok()) {
    // The batch is dropped, its records past the source's positions: the
    // run must never checkpoint again (a restart reads them anew).
    *windows = WindowBatch{};
    if (checkpoint_failed_.ok()) checkpoint_failed_ = st;
  }
  // The runs each lane claimed, back in source order.
  std::sort(windows->inputs.begin(), windows->inputs.end(),
            [](const WindowInput& a, const WindowInput& b) { return a.first < b.first; });
  if (st.ok() && !windows->inputs.empty()) {
    // The records go with the batch (its late rows' dead letters); the
    // lanes decode the next ones into a buffer the stage is done with.
    windows->raw = TakeSpareRaw();
    std::swap(*windows->raw, flushing_);
  }
  flushing_.Clear();
  return st;
}

std::unique_ptr<RawBatch> Pipeline::TakeSpareRaw() {
  std::lock_guard<std::mutex> lock(spare_raw_mu_);
  if (spare_raw_.empty()) return std::make_unique<RawBatch>();
  std::unique_ptr<RawBatch> raw = std::move(spare_raw_.back());
  spare_raw_.pop_back();
  return raw;
}

void Pipeline::KeepSpareRaw(std::unique_ptr<RawBatch> raw) {
  if (raw == nullptr) return;
  raw->Clear();
  std::lock_guard<std::mutex> lock(spare_raw_mu_);
  // (As many as the stage can hold back: so that none is let go when it
  // catches up, only to be grown anew from nothing when it falls behind
  // again, a batch's bytes of copies and page faults each. A buffer that one
  // outsized record grew past twice a batch's bytes is let go.)
  if (spare_raw_.size() < kSpareRawBatches &&
      raw->raw.capacity() <= 2 * static_cast<size_t>(options_.batch_bytes)) {
    spare_raw_.push_back(std::move(raw));
  }
}

Status Pipeline::PushWindows(WindowBatch batch) {
  if (batch.inputs.empty()) return Status::OK();
  if (!window_stage_) {
    RunWindowBatch(batch);
    return SettleWindows();
  }
  // (The task holds the batch alone, so the stage frees it too.)
  window_stage_->Push(
      [this, held = std::make_shared<WindowBatch>(std::move(batch))] { RunWindowBatch(*held); });
  return Status::OK();
}

void Pipeline::RunWindowBatch(WindowBatch& batch) {
  FeedWindowBatch(batch);
  KeepSpareRaw(std::move(batch.raw));
}

void Pipeline::FeedWindowBatch(WindowBatch& batch) {
  // A failed stage takes nothing more; nor does this one once its write
  // stage failed (the rows it would emit could not be written).
  if (!window_status_.ok() || window_failed_.load(std::memory_order_relaxed)) return;
  Status st = FailPoint("window_stage.batch");
  for (size_t i = 0; i < batch.dead.size() && st.ok(); ++i) st = WriteDeadLetters(batch.dead[i]);
  if (st.ok()) st = FeedAggregate(batch.inputs, *batch.raw);
  // Once per batch, after all its runs: a partition whose records sit in a
  // later run must not turn idle between the runs.
  if (st.ok()) st = IdleCheckAggregate();
  if (st.ok()) st = WriteDeadLetters(dead_rows_);
  if (!st.ok()) window_failed_.store(true, std::memory_order_relaxed);
  window_status_ = std::move(st);
}

Status Pipeline::SettleWindows() {
  if (window_stage_) window_stage_->Drain();
  if (write_stage_) write_stage_->Drain();  // (after the stage: it pushes there)
  rows_pending_ += std::exchange(window_rows_, 0);
  // A failed stage stays failed: the batches it skipped are lost to this
  // Pipeline, which must never checkpoint again (a restart recovers them).
  RETURN_IF_ERROR(window_status_);
  RETURN_IF_ERROR(write_status_);
  return WriteDeadLetters(dead_rows_);
}

Status Pipeline::FinishLanes() {
  WindowBatch windows;
  RETURN_IF_ERROR(TakeLanes(&windows));
  RETURN_IF_ERROR(PushWindows(std::move(windows)));
  return SettleWindows();
}

Result<int64_t> Pipeline::Poll(int timeout_ms) {
  const size_t first = polling_.records.size();
  const size_t ranges = polling_.deferred.size();
  polling_.keys = options_.format != sources::ChangeFormat::kJson;  // change formats read them
  // A file's lines are read by the lanes' threads, not this one alone.
  polling_.defer_reads = true;
  if (polling_.raw.empty() && ranges_read_) {
    // A new batch of file ranges: its buffer is grown now to the bytes a
    // batch holds (and a poll more), not doubled as the ranges come, each
    // growth a copy of the bytes reserved before it, on this thread while the
    // lanes wait.
    const double expected = static_cast<double>(options_.batch_rows) * bytes_per_record_ +
                            static_cast<double>(options_.poll_bytes);
    const auto limit = static_cast<size_t>(options_.batch_bytes);
    const auto want = static_cast<size_t>(std::min(expected, static_cast<double>(limit)));
    // (With an eighth more, up to batch_bytes: the bytes a record drift as a
    // run goes on, and each growth is a new block whose pages are faulted in
    // anew, and a heap block's growth copies the whole block, stale bytes too.)
    if (polling_.raw.capacity() < want) polling_.raw.Reserve(std::min(want + want / 8, limit));
  }
  Result<int64_t> polled = source_->PollInto(options_.poll_bytes, timeout_ms, &polling_);
  // (A failed poll may have moved positions past records it dropped: a file
  // source's ranges it could not read.)
  if (!polled.ok() && checkpoint_failed_.ok()) checkpoint_failed_ = polled.status();
  if (polling_.deferred.size() > ranges) dirty_ = true;  // (their records count once read)
  CountPolled(polling_, first);
  return polled;
}

void Pipeline::CountPolled(const RawBatch& batch, size_t first) {
  // (Counted once per poll: an atomic add per record stalled on the stores
  // of the record's copy, about a tenth of a fast pipeline's CPU.)
  int64_t bytes = 0;
  for (size_t i = first; i < batch.records.size(); ++i) {
    const RawRecord& r = batch.records[i];
    bytes += static_cast<int64_t>(r.size);
    newest_ingest_ms_ = std::max(newest_ingest_ms_, r.origin.timestamp_ms);
  }
  const int64_t records = static_cast<int64_t>(batch.records.size() - first);
  if (records > 0) dirty_ = true;
  stats_.records_in.fetch_add(records, std::memory_order_relaxed);
  stats_.bytes_in.fetch_add(bytes, std::memory_order_relaxed);
}

bool Pipeline::BatchFull() const {
  // (A file source defers at most kMaxDeferredRanges a batch, and ends a
  // poll before lines it must read itself after them: both want the ranges
  // read on the lanes' threads now, not on this one by the next poll.)
  if (polling_.deferred.size() >= sources::kMaxDeferredRanges || polling_.lines_wait) return true;
  const double unread = static_cast<double>(polling_.DeferredBytes()) / bytes_per_record_;
  return static_cast<double>(polling_.records.size()) + unread >=
             static_cast<double>(options_.batch_rows) ||
         static_cast<int64_t>(polling_.raw.size()) >= options_.batch_bytes;
}

Status Pipeline::ReadRanges(RawBatch& batch) {
  if (batch.deferred.empty()) return Status::OK();
  const size_t first = batch.records.size();
  const int64_t bytes = batch.DeferredBytes();
  // (Planned by the caller, which may have read parts already.) On the lanes'
  // threads too, unless they still decode the batch before.
  if (lanes_running_ == 0) {
    pool_->Run(deferred_lines_.Unclaimed(), [&](int) { deferred_lines_.ReadNext(batch); });
  } else {
    while (deferred_lines_.ReadNext(batch)) {
    }
  }
  Status st = deferred_lines_.Finish(batch);
  if (!st.ok()) {
    // The ranges are past the source's positions: the run must never
    // checkpoint again (a restart reads them anew).
    if (checkpoint_failed_.ok()) checkpoint_failed_ = st;
    batch.Clear();
    return st;
  }
  const size_t read = batch.records.size() - first;
  if (read > 0) {
    bytes_per_record_ = static_cast<double>(bytes) / static_cast<double>(read);
    ranges_read_ = true;
  }
  CountPolled(batch, first);
  return Status::OK();
}

Result<int64_t> Pipeline::Step(int timeout_ms) {
  RETURN_IF_ERROR(TakeCommitted(/*wait=*/false));  // a checkpoint committed in the background
  int64_t until_checkpoint = last_checkpoint_ms_ + options_.commit_interval_ms - NowMs();
  int wait = static_cast<int>(std::clamp<int64_t>(until_checkpoint, 0, timeout_ms));
  ASSIGN_OR_RETURN(int64_t n, Poll(wait));
  if (n == 0 && !polling_.deferred.empty()) {
    // Nothing new came: what was polled is read now, not when the batch
    // fills or a checkpoint takes it (so records_read counts it meanwhile).
    deferred_lines_.Plan(polling_);
    RETURN_IF_ERROR(ReadRanges(polling_));
  }
  int64_t lag = polling_.DeferredBytes();  // (past the source's positions, not read yet)
  for (const auto& [partition, n] : source_->Lag()) lag += n;
  stats_.source_lag = lag;
  if (BatchFull()) RETURN_IF_ERROR(FlushRows());
  if (NowMs() - last_checkpoint_ms_ >= options_.commit_interval_ms) {
    RETURN_IF_ERROR(BeginCheckpoint(/*background=*/true));
  } else if (KeyChangesFull()) {
    const int64_t commits = stats_.commits.load();
    RETURN_IF_ERROR(Checkpoint());
    if (stats_.commits.load() > commits) ++stats_.key_index_early_checkpoints;
  }
  return n;
}

Status Pipeline::Run() {
  while (!stop_.load()) {
    auto n = Step(100);
    if (!n.ok()) return n.status();
  }
  return Checkpoint();
}

}  // namespace sluice::pipeline
