// Pipeline, the windowed path: watermarks, the window operator, emitting
// closed windows, and the operator's state in each checkpoint
// (docs/state.md).
#include <filesystem>
#include <numeric>

#include "columnar/column_ops.h"
#include "common/kill_point.h"
#include "common/serial_queue.h"
#include "common/task_pool.h"
#include "common/thread_name.h"
#include "iceberg/data_writer.h"
#include "iceberg/table_builder.h"
#include "operators/primary_key_index.h"
#include "operators/sharded_window_aggregate.h"
#include "operators/watermark.h"
#include "pipeline/pipeline.h"
#include "state/state_property.h"

namespace sluice::pipeline {
namespace {

// Rows of closed windows taken from the operator at a time.
constexpr int64_t kEmitRows = 64 * 1024;
// Decoded batches that may wait for the window stage (the next waits to be pushed).
constexpr int kWindowBatchesWaiting = 1;
// Batches of window rows that may wait for the write stage (likewise).
constexpr int kWindowRowsWaiting = 1;

// What the state's meaning depends on: a state written under another window,
// lateness, keys or aggregates must not be restored.
std::string PlanFingerprint(const operators::WindowAggregateOptions& w) {
  std::string out =
      fmt::format("window {} {} {} {}; lateness {}; keys", static_cast<int>(w.window.kind),
                  w.window.size_us, w.window.slide_us, w.window.gap_us, w.allowed_lateness_us);
  for (const TypePtr& k : w.key_types) out += " " + k->ToString();
  out += "; aggregates";
  for (const operators::AggSpec& a : w.aggs) {
    out += fmt::format(" {}({})", static_cast<int>(a.kind), a.input ? a.input->ToString() : "*");
  }
  if (w.retracting) out += "; retracting";  // (its accumulators keep value counts)
  return out;
}

}  // namespace

void Pipeline::DeadLetterRow(std::string_view payload, const std::string& error,
                             const std::string& partition, int64_t offset, int64_t ingested_ms,
                             Batch* dead) {
  Status st = Status::Invalid("{}", error);
  AppendDeadLetter({payload, &st, source_description_, partition, offset, ingested_ms * 1000,
                    iceberg::NowMillis() * 1000, options_.name},
                   dead);
}

Status Pipeline::StartAggregate(const std::optional<CommittedCheckpoint>& committed) {
  operators::WindowAggregateOptions window = options_.aggregate->window;
  window.memory_budget = StateMemoryShare();
  window.spill_dir = options_.state_dir + "/spill";
  // The spill stores are caches of a run: what a killed run left is stale.
  window_.reset();
  std::error_code ec;
  std::filesystem::remove_all(window.spill_dir, ec);
  const int lanes = static_cast<int>(lanes_.size());
  // A shard per lane, by key; without a group key every row is the one
  // key's, so one shard's: more would only wake workers with nothing to do.
  const int shards = window.key_types.empty() ? 1 : lanes;
  shard_pool_ = std::make_unique<TaskPool>(shards - 1, "shard", options_.name);
  window_stage_ = lanes > 1 ? std::make_unique<SerialQueue>(kWindowBatchesWaiting,
                                                            ThreadName("window", 0, options_.name))
                            : nullptr;
  // (A GLOBAL aggregate's rows are written at checkpoints, on the pipeline's
  // thread: EmitUpdatedGroups.)
  write_stage_ =
      lanes > 1 && !options_.aggregate->updating()
          ? std::make_unique<SerialQueue>(kWindowRowsWaiting, ThreadName("write", 0, options_.name))
          : nullptr;
  ASSIGN_OR_RETURN(window_, operators::ShardedWindowAggregate::Make(std::move(window),
                                                                    shard_pool_.get(), shards));
  watermarks_ = std::make_unique<operators::WatermarkTracker>(options_.watermark_delay_us,
                                                              options_.idle_timeout_ms);
  window_state_.Clear();
  return RestoreWindows(committed);
}

Status Pipeline::RestoreWindows(const std::optional<CommittedCheckpoint>& committed) {
  const std::string name = state::WindowStateProperty(options_.name);
  const auto& props = table_->metadata().properties;
  auto it = props.find(name);
  if (it == props.end()) {
    if (committed) {
      return Status::Corruption(
          "table {} has checkpoint {} of pipeline {} but no window state ({}): it was not "
          "written by a windowed pipeline of this name",
          options_.target.ToString(), committed->checkpoint, options_.name, name);
    }
    return Status::OK();
  }
  auto decoded = state::StateProperty::Decode(name, it->second);
  RETURN_IF_ERROR_CTX(decoded.status(), "table {}", options_.target.ToString());
  state::StateProperty saved = std::move(*decoded);
  if (!saved.watermark) {
    return Status::Corruption("table {}: property {} has no watermark", options_.target.ToString(),
                              name);
  }
  std::string plan = PlanFingerprint(options_.aggregate->window);
  if (saved.plan && *saved.plan != plan) {
    return Status::Invalid(
        "table {}: the window state of pipeline {} was written by another definition ({}; now "
        "{}); give the pipeline a new name to start over",
        options_.target.ToString(), options_.name, *saved.plan, plan);
  }
  if (!committed || committed->checkpoint != saved.checkpoint) {
    return Status::Corruption(
        "table {}: the window state is of checkpoint {} but the table's newest checkpoint of "
        "pipeline {} is {} (was the table rolled back?); give the pipeline a new name to "
        "start over",
        options_.target.ToString(), saved.checkpoint, options_.name,
        committed ? committed->checkpoint : 0);
  }
  for (std::string& path : saved.files) {
    int64_t size = 0;
    auto open = [&] { return OpenStateFile(path, &size); };
    RETURN_IF_ERROR_CTX(window_->Restore(open), "window state file {}", path);
    window_state_.Add(std::move(path), size);
  }
  return watermarks_->Decode(*saved.watermark);
}

Status Pipeline::PrepareAggregate(Lane& lane, size_t first) {
  const sql::AggregatePlan& plan = *options_.aggregate;
  WindowInput in;
  in.first = first;
  in.rows = std::move(lane.rows);
  in.origins = std::move(lane.origins);
  in.records = std::move(lane.records);
  Batch& rows = in.rows;
  int64_t n = rows.num_rows();
  // WHERE and the operator's columns, with each row's index ($row).
  Column index(DataType::Long());
  index.ResizeFixed(n);
  for (int64_t i = 0; i < n; ++i) index.mutable_data<int64_t>()[i] = i;
  rows.columns.push_back(std::move(index));
  rows.schema = plan.pre.source_schema;
  std::vector<sql::RejectedRow> rejected;
  auto input = sql::ApplyPlanKeepingSource(plan.pre, rows, &rejected);
  rows.columns.pop_back();
  rows.schema = options_.source_schema;
  RETURN_IF_ERROR(input.status());
  in.input = std::move(*input);
  for (const sql::RejectedRow& r : rejected) {
    const RowOrigin& o = in.origins[r.row];
    // The record as it came (the decoded row lacks the columns not read).
    DeadLetterRow(flushing_.Value(in.records[r.row]), r.error, flushing_.partitions[o.partition],
                  o.offset, o.timestamp_ms, &lane.dead);
  }
  const Column& row_of = in.input.columns[0];
  in.row_of.assign(row_of.data<int64_t>(), row_of.data<int64_t>() + row_of.size());
  in.input.columns.erase(in.input.columns.begin());
  if (plan.window.retracting) {  // the last column says which rows a -U or -D takes back
    Column retract(DataType::Boolean());
    for (int64_t r : in.row_of) retract.AppendBool(lane.retracts[r]);
    in.input.columns.back() = std::move(retract);
  }
  // The operator's shards take their rows by key: the lanes find each row's
  // shard at once, so the window stage only hands the rows over.
  in.shard.resize(in.input.num_rows());
  if (window_->shards() > 1) window_->AssignShards(in.input, 0, in.input.num_rows(), &in.shard);
  lane.windows.push_back(std::move(in));
  return Status::OK();
}

Status Pipeline::FeedAggregate(const std::vector<WindowInput>& inputs, const RawBatch& raw) {
  const std::vector<std::string>& partitions = raw.partitions;
  const sql::AggregatePlan& plan = *options_.aggregate;
  // 1. The watermark before each row (every decoded row, filtered or not),
  //    advanced by each row's event time, run after run.
  std::vector<std::vector<int64_t>> watermarks(inputs.size());
  std::vector<operators::ShardedWindowAggregate::Part> parts(inputs.size());
  int64_t now = iceberg::NowMillis();
  static const std::string kOne;
  std::vector<int64_t> before;
  for (size_t p = 0; p < inputs.size(); ++p) {
    const WindowInput& in = inputs[p];
    const int64_t n = in.rows.num_rows();
    before.assign(n, INT64_MIN);
    const Column* time = plan.time_column >= 0 ? &in.rows.columns[plan.time_column] : nullptr;
    for (int64_t i = 0; time != nullptr && i < n; ++i) {
      before[i] = watermarks_->current();
      if (time->IsNull(i)) continue;
      const std::string& partition =
          options_.one_watermark_partition ? kOne : partitions[in.origins[i].partition];
      watermarks_->Observe(partition, time->Value<int64_t>(i), now);
    }
    // (Of the rows WHERE kept: the operator's input.)
    watermarks[p].resize(in.row_of.size());
    for (size_t i = 0; i < in.row_of.size(); ++i) watermarks[p][i] = before[in.row_of[i]];
    parts[p] = {&in.input, &watermarks[p], &in.shard};
  }

  // 2. Into the windows, the runs one after another with the shards started
  //    once; rows whose windows all closed are late.
  std::vector<std::vector<operators::LateRow>> late;
  RETURN_IF_ERROR(window_->AddParts(parts, &late));
  for (size_t p = 0; p < inputs.size(); ++p) {
    const WindowInput& in = inputs[p];
    for (const operators::LateRow& l : late[p]) {
      int64_t r = in.row_of[l.row];
      const RowOrigin& o = in.origins[r];
      DeadLetterRow(raw.Value(in.records[r]), l.reason, partitions[o.partition], o.offset,
                    o.timestamp_ms, &dead_rows_);
    }
  }
  return EmitWindows(watermarks_->current());
}

Status Pipeline::IdleCheckAggregate() {
  watermarks_->CheckIdle(iceberg::NowMillis());
  RETURN_IF_ERROR(EmitWindows(watermarks_->current()));
  stats_.state_groups = window_->groups();
  stats_.state_memory_bytes = window_->MemoryUsage();
  stats_.state_spills = window_->spills();
  return Status::OK();
}

Status Pipeline::EmitWindows(int64_t watermark) {
  for (bool done = false; !done;) {
    std::vector<operators::FailedGroup> failed;
    ASSIGN_OR_RETURN(Batch closed, window_->Emit(watermark, &failed, kEmitRows, &done));
    int64_t now = iceberg::NowMillis();
    for (const operators::FailedGroup& f : failed) {
      DeadLetterRow(f.payload, f.reason, "", -1, now, &dead_rows_);
    }
    if (closed.num_rows() == 0) continue;
    std::vector<sql::RejectedRow> rejected;
    ASSIGN_OR_RETURN(Batch out,
                     sql::ApplyPlan(options_.aggregate->post, std::move(closed), &rejected));
    for (const sql::RejectedRow& r : rejected) {
      DeadLetterRow(r.payload, r.error, "", -1, now, &dead_rows_);
    }
    if (out.num_rows() == 0) continue;
    RETURN_IF_ERROR(WriteWindowRows(std::move(out)));
  }
  return Status::OK();
}

Status Pipeline::WriteWindowRows(Batch rows) {
  // One writer, so that the table holds the windows in the order they closed.
  window_rows_ += rows.num_rows();
  if (!write_stage_) {
    RETURN_IF_ERROR_CTX(lanes_[0].writer->Write(rows), "writing to {}", options_.target.ToString());
    return Status::OK();
  }
  // (Counted now: a failed write fails the pipeline for good, uncounted rows
  // and all. The task holds the rows alone, so the stage frees them too.)
  write_stage_->Push([this, held = std::make_shared<Batch>(std::move(rows))] {
    if (!write_status_.ok()) return;  // a failed stage writes nothing more
    Status st = FailPoint("write_stage.batch");
    if (st.ok()) st = lanes_[0].writer->Write(*held);
    if (st.ok()) return;
    write_status_ = st.WithContextF("writing to {}", options_.target.ToString());
    window_failed_.store(true, std::memory_order_relaxed);
  });
  return Status::OK();
}

Status Pipeline::EmitUpdatedGroups() {
  const sql::AggregatePlan& plan = *options_.aggregate;
  std::vector<operators::FailedGroup> failed;
  Batch gone = Batch::Make(plan.window.output_schema);  // retracting: groups left without rows
  ASSIGN_OR_RETURN(Batch changed,
                   window_->EmitChanged(&failed, plan.window.retracting ? &gone : nullptr));
  int64_t now = iceberg::NowMillis();
  for (const operators::FailedGroup& f : failed) {
    DeadLetterRow(f.payload, f.reason, "", -1, now, &dead_rows_);
  }
  if (changed.num_rows() == 0 && gone.num_rows() == 0) return Status::OK();
  std::vector<sql::RejectedRow> rejected;
  std::vector<int64_t> kept;
  ASSIGN_OR_RETURN(Batch out, sql::ApplyPlanKeepingSource(plan.post, changed, &rejected, &kept));
  for (const sql::RejectedRow& r : rejected) {
    DeadLetterRow(r.payload, r.error, "", -1, now, &dead_rows_);
  }
  // The new rows replace the groups' rows; the groups HAVING drops (neither
  // kept nor rejected: their projection failed, so their row stays) and the
  // groups gone leave.
  Lane& lane = lanes_[0];
  RETURN_IF_ERROR(PrepareUpserts(lane, out));
  RETURN_IF_ERROR_CTX(lane.writer->Write(out, &lane.placements), "writing to {}",
                      options_.target.ToString());
  lane.file_paths = lane.writer->FilePaths();
  rows_pending_ += out.num_rows();
  std::vector<bool> dropped(changed.num_rows(), true);
  for (int64_t r : kept) dropped[r] = false;
  for (const sql::RejectedRow& r : rejected) dropped[r.row] = false;
  std::vector<uint32_t> rows;
  for (int64_t r = 0; r < changed.num_rows(); ++r) {
    if (dropped[r]) rows.push_back(static_cast<uint32_t>(r));
  }
  RETURN_IF_ERROR(DeleteGroupRows(lane, TakeRows(changed, rows)));
  RETURN_IF_ERROR(DeleteGroupRows(lane, gone));
  return FeedUpserts(lane);
}

Status Pipeline::DeleteGroupRows(Lane& lane, const Batch& groups) {
  if (groups.num_rows() == 0) return Status::OK();
  // The key plan takes the grouped columns as they are; it rejects only a
  // group with a NULL key column (the key is NOT NULL), which never had a row.
  const sql::AggregatePlan& plan = *options_.aggregate;
  std::vector<sql::RejectedRow> never_written;
  ASSIGN_OR_RETURN(Batch keys, sql::ApplyPlanKeepingSource(plan.key_plan, groups, &never_written));
  std::vector<int> columns(key_columns_.size());
  std::iota(columns.begin(), columns.end(), 0);
  for (int64_t r = 0; r < keys.num_rows(); ++r) {
    if (!operators::AppendKey(keys, columns, r, &lane.keys)) {
      return Status::Internal("pipeline {}: a group with a null key column", options_.name);
    }
    lane.key_ends.push_back(static_cast<uint32_t>(lane.keys.size()));
    lane.changes.push_back({-1, 0, {}});
  }
  return Status::OK();
}

Status Pipeline::FinishInput() {
  RETURN_IF_ERROR(checkpoint_failed_);
  RETURN_IF_ERROR(FlushRows());
  RETURN_IF_ERROR(FinishLanes());
  if (!window_) return Status::OK();
  RETURN_IF_ERROR(EmitWindows(INT64_MAX));
  RETURN_IF_ERROR(SettleWindows());  // its rows counted, its dead letters written
  // What was emitted is closed for good: later events for it are late.
  watermarks_->AdvanceTo(window_->emitted_below());
  dirty_ = true;
  return Status::OK();
}

Result<int64_t> Pipeline::WriteStateFile(const std::string& path,
                                         const std::function<Status(state::StateWriter*)>& write) {
  RETURN_IF_ERROR(RecordStaged(next_checkpoint_, path));
  ASSIGN_OR_RETURN(std::unique_ptr<OutputFile> out, io_.OpenOutput(path, /*overwrite=*/true));
  state::StateWriter writer([&out](std::string_view chunk) { return out->Append(chunk); });
  Status st = write(&writer);
  if (!st.ok()) {
    out->Abort();
    return st;
  }
  RETURN_IF_ERROR(out->Close());
  return writer.written();
}

Result<std::unique_ptr<state::StateReader>> Pipeline::OpenStateFile(const std::string& path,
                                                                    int64_t* bytes) {
  ASSIGN_OR_RETURN(std::shared_ptr<InputFile> in, io_.OpenInput(path));
  *bytes = in->size();
  return std::make_unique<state::StateReader>(
      [in](int64_t offset, int64_t length, std::string* out) {
        return in->ReadAt(offset, length, out);
      },
      *bytes);
}

Status Pipeline::SaveState(catalog::TableUpdate* update) {
  bool full = window_state_.NextIsBase();
  std::string path =
      StateFilePath(table_->metadata().location, options_.name, epoch_, next_checkpoint_, "", full);
  auto bytes =
      WriteStateFile(path, [&](state::StateWriter* w) { return window_->WriteState(full, w); });
  RETURN_IF_ERROR_CTX(bytes.status(), "window state file {}", path);
  KillPoint("pipeline.after_state_file");
  state::StateProperty saved;
  saved.checkpoint = next_checkpoint_;
  saved.epoch = epoch_;
  saved.files = window_state_.Stage(path, *bytes, full);
  saved.watermark = watermarks_->Encode();
  saved.plan = PlanFingerprint(options_.aggregate->window);
  update->update.set_properties[state::WindowStateProperty(options_.name)] = saved.Encode();
  return Status::OK();
}

}  // namespace sluice::pipeline
