#include "pipeline/pipeline.h"

#include <algorithm>
#include <cctype>
#include <chrono>

#include "catalog/table_readers.h"
#include "columnar/json_reader.h"
#include "columnar/sql_schema.h"
#include "common/kill_point.h"
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

int64_t NowMs() { return iceberg::NowMillis(); }

int64_t MonoMicros() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// The decoder names the line it was given; a dead letter has its offset in
// its own column, so the "line N: " prefix is dropped from its error.
std::string DeadLetterError(const Status& st) {
  // Only the decoder's "line N: " goes; a SQL position ("line 3, column 17: ",
  // from an expression of the pipeline) stays.
  std::string m = st.message();
  if (m.rfind("line ", 0) == 0) {
    size_t digits = 5;
    while (digits < m.size() && std::isdigit(static_cast<unsigned char>(m[digits]))) ++digits;
    if (digits > 5 && m.compare(digits, 2, ": ") == 0) m = m.substr(digits + 2);
  }
  return m;
}

}  // namespace

void AppendDeadLetter(const DeadLetter& d, Batch* batch) {
  auto& c = batch->columns;
  c[0].AppendBytes(d.payload);
  c[1].AppendBytes(DeadLetterError(*d.error));
  c[2].AppendBytes(d.source);
  c[3].AppendBytes(d.partition);
  c[4].Append<int64_t>(d.offset);
  c[5].Append<int64_t>(d.ingested_us);
  c[6].Append<int64_t>(d.failed_us);
  c[7].AppendBytes(d.pipeline);
}

TableIdent DeadLetterTable(const TableIdent& table) {
  return TableIdent{table.ns, table.name + "__dlq"};
}

Schema DeadLetterSchema() {
  auto s = ParseColumnList(
      "payload STRING, error STRING NOT NULL, source STRING NOT NULL, "
      "`partition` STRING NOT NULL, `offset` BIGINT NOT NULL, ingested_at TIMESTAMPTZ, "
      "failed_at TIMESTAMPTZ NOT NULL, pipeline STRING NOT NULL");
  return std::move(*s);  // a constant column list: parsing cannot fail (tested)
}

Status EnsureDeadLetterTable(catalog::Catalog& catalog, FileIO& io, const std::string& warehouse,
                             const TableIdent& table) {
  TableIdent dlq = DeadLetterTable(table);
  auto loc = catalog.LoadTable(dlq);
  if (loc.ok()) return Status::OK();
  if (loc.status().code() != StatusCode::kNotFound) return loc.status();
  Schema schema = DeadLetterSchema();
  ASSIGN_OR_RETURN(iceberg::PartitionSpec spec,
                   iceberg::ParsePartitionSpec("day(failed_at)", schema));
  ASSIGN_OR_RETURN(iceberg::TableMetadata md,
                   iceberg::NewTableMetadata(schema, spec, iceberg::SortOrder{},
                                             catalog::DefaultTableLocation(warehouse, dlq),
                                             iceberg::NewTableOptions{}));
  auto created = Table::Create(catalog, io, dlq, md);
  if (!created.ok() && created.status().code() != StatusCode::kAlreadyExists) {
    return created.status().WithContextF("dead-letter table {}", dlq.ToString());
  }
  return Status::OK();
}

Pipeline::Pipeline(catalog::Catalog& catalog, FileIO& io, PipelineOptions options,
                   std::unique_ptr<Source> source)
    : catalog_(catalog), io_(io), options_(std::move(options)), source_(std::move(source)) {}

Pipeline::~Pipeline() {
  if (pool_) pool_->Wait();  // lanes still running use the members
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

// Through a REST catalog a property change does not conflict with a commit in
// flight (the spec's requirements name refs and ids, not properties), so the
// new epoch moves main: an empty `replace` snapshot (no data changes; changelog
// and table-source readers skip it) carries it. An older run's commit, which
// asserts where main was, then fails and re-checks the epoch.
// A reader whose source table brings nothing new commits nothing, so its
// recorded position (sluice.reader.<pipeline>) would age past the source's
// reader-max-age-ms while it runs: renewed twice a day. Best effort: a failed
// renewal is tried again at the next idle checkpoint.
void Pipeline::RenewReaderHold() {
  constexpr int64_t kRenewMs = 12LL * 3600 * 1000;
  auto hold = source_->Hold();
  int64_t now = NowMs();
  if (!hold || now - hold_renewed_ms_ < kRenewMs) return;
  Status st = table_->UpdateMetadata(
      [&](const iceberg::TableMetadata& base) -> Result<iceberg::TableMetadata> {
        iceberg::TableMetadata next = base;
        next.properties[catalog::ReaderProperty(options_.name)] =
            catalog::EncodeReaderProperty(hold->table, hold->snapshot_id, now);
        return next;
      },
      options_.commit);
  if (st.ok()) hold_renewed_ms_ = now;
}

Result<int64_t> Pipeline::BumpEpochOnMain() {
  const std::string& name = options_.name;
  Status last;
  for (int round = 0; round < 20; ++round) {
    RETURN_IF_ERROR(table_->Refresh());
    ASSIGN_OR_RETURN(int64_t current, CurrentEpoch(table_->metadata(), name));
    catalog::SnapshotUpdate bump;
    bump.operation = "replace";
    bump.set_properties[EpochProperty(name)] = std::to_string(current + 1);
    bump.summary["sluice.epoch-of"] = name;
    auto committed = table_->Commit(bump, options_.commit, [&]() -> Status {
      ASSIGN_OR_RETURN(int64_t now, CurrentEpoch(table_->metadata(), name));
      if (now == current) return Status::OK();
      return Status::Conflict("pipeline {}: epoch {} taken meanwhile", name, now);
    });
    if (committed.ok()) return current + 1;
    if (committed.status().code() != StatusCode::kConflict) return committed.status();
    last = committed.status();
  }
  return last.WithContextF("pipeline {}: no new epoch after 20 rounds", name);
}

Status Pipeline::Recover() {
  const std::string& name = options_.name;
  ASSIGN_OR_RETURN(table_, Table::Load(catalog_, io_, options_.target));
  ASSIGN_OR_RETURN(dlq_table_, Table::Load(catalog_, io_, DeadLetterTable(options_.target)));

  // Where the last committed checkpoint left the source. Checked before the
  // epoch changes, so that a run that cannot start does not fence a healthy
  // one, and again after it (the fenced run may have committed meanwhile).
  auto resume_from = [&](const iceberg::TableMetadata& md)
      -> Result<std::pair<std::optional<CommittedCheckpoint>, Positions>> {
    ASSIGN_OR_RETURN(auto committed, FindCheckpoint(md, name));
    Positions resume;
    if (committed) {
      auto it = committed->offsets.find(options_.source_name);
      if (it == committed->offsets.end()) {
        // Offsets of another source: starting this one from its beginning
        // could load the same events twice (a renamed source). Refuse.
        std::string sources;
        for (const auto& [s, o] : committed->offsets) sources += (sources.empty() ? "" : ", ") + s;
        return Status::Invalid(
            "table {} holds this pipeline's offsets for source(s) {}, not for {}; a renamed "
            "source would be read again from its start (give the pipeline a new name to start "
            "a new one)",
            options_.target.ToString(), sources, options_.source_name);
      }
      resume = it->second;
    }
    return std::make_pair(std::move(committed), std::move(resume));
  };
  RETURN_IF_ERROR(resume_from(table_->metadata()).status());

  // 1. A new epoch fences every older run of this pipeline: their commits
  //    check the property and find a newer value.
  int64_t epoch = 0;
  if (catalog_.SwapsMetadataFiles()) {
    RETURN_IF_ERROR(table_->UpdateMetadata(
        [&](const iceberg::TableMetadata& base) -> Result<iceberg::TableMetadata> {
          ASSIGN_OR_RETURN(int64_t current, CurrentEpoch(base, name));
          epoch = current + 1;
          iceberg::TableMetadata next = base;
          next.properties[EpochProperty(name)] = std::to_string(epoch);
          return next;
        },
        options_.commit));
  } else {
    ASSIGN_OR_RETURN(epoch, BumpEpochOnMain());
  }
  epoch_ = epoch;
  stats_.epoch = epoch;

  // 2. The offsets to resume from, now that no older run can commit.
  ASSIGN_OR_RETURN(auto found, resume_from(table_->metadata()));
  const std::optional<CommittedCheckpoint>& committed = found.first;
  const Positions& resume = found.second;
  int64_t last = committed ? committed->checkpoint : 0;
  next_checkpoint_ = last + 1;
  stats_.checkpoint = last;

  // 3. Staged files of checkpoints that never committed are deleted; those of
  //    committed checkpoints are referenced by the table and stay.
  ASSIGN_OR_RETURN(journal_, StagedJournal::Open(options_.state_dir + "/staged.journal"));
  //    A file being written when the process died exists only under its
  //    temporary name (<path>.tmp-...): those go too.
  int deleted = 0;
  for (const auto& e : journal_->entries()) {
    // Committed: the last checkpoint, written by the epoch that committed it
    // (a fenced run elsewhere may have staged files under the same number),
    // or an older one (kept: never delete what might be referenced).
    bool committed_file = e.checkpoint < last || (committed && e.checkpoint == last &&
                                                  (e.epoch == 0 || e.epoch == committed->epoch));
    if (committed_file) continue;
    auto listed = io_.List(e.path);
    if (!listed.ok() && listed.status().code() != StatusCode::kNotFound) {
      return listed.status().WithContextF("listing staged file {}", e.path);
    }
    for (const std::string& f : listed.ValueOr({})) {
      if (f != e.path && f.rfind(e.path + ".tmp-", 0) != 0) continue;
      Status st = io_.Delete(f);
      if (!st.ok() && st.code() != StatusCode::kNotFound) {
        return st.WithContextF("deleting staged file {} of checkpoint {}", f, e.checkpoint);
      }
      if (++deleted == 1) KillPoint("pipeline.mid_recovery");
    }
  }
  RETURN_IF_ERROR(journal_->Clear());

  // 4. Resume the source.
  RETURN_IF_ERROR(source_->Seek(resume));
  committed_ = source_->CurrentPositions();
  int64_t sum = 0;
  for (const auto& [p, o] : committed_) sum += o;
  stats_.committed_offset_sum = sum;

  source_description_ = source_->Describe();
  int threads = options_.parallelism > 0 ? options_.parallelism : AvailableCores();
  threads = std::clamp(threads, 1, kMaxParallelism);
  // One lane runs on the pipeline's thread; more run on workers, while the
  // pipeline's thread polls on.
  pool_ = std::make_unique<TaskPool>(threads > 1 ? threads : 0);
  lanes_.resize(threads);
  RETURN_IF_ERROR(StartUpserts(committed));
  if (options_.aggregate) RETURN_IF_ERROR(StartAggregate(committed));
  for (Lane& lane : lanes_) {
    ASSIGN_OR_RETURN(lane.decoder, JsonDecoder::Make(options_.source_schema));
  }
  RETURN_IF_ERROR(StartChanges(committed));
  last_checkpoint_ms_ = NowMs();
  return StartWriters();
}

Status Pipeline::StartWriters() {
  // A windowed pipeline writes its windows through one writer (lane 0's, in
  // the order they close); otherwise every lane has one, and they share the
  // table's memory and open-file budgets (with the dead-letter writer).
  int writers = options_.aggregate ? 1 : static_cast<int>(lanes_.size());
  auto make = [&](const Table& t,
                  int memory_share) -> Result<std::unique_ptr<iceberg::DataWriter>> {
    ASSIGN_OR_RETURN(iceberg::DataWriterOptions o,
                     iceberg::DataWriterOptionsFromProperties(t.metadata().properties));
    o.memory_budget_bytes /= memory_share;
    o.max_open_files = std::max(1, o.max_open_files / memory_share);
    o.open_files_share = writers + 1;
    o.before_create = [this](const std::string& path) { return RecordStaged(path); };
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

Status Pipeline::RecordStaged(const std::string& path) {
  std::lock_guard<std::mutex> lock(journal_mu_);
  return journal_->Record(epoch_, next_checkpoint_, path);
}

void Pipeline::OnRecord(const SourceRecord& r) {
  stats_.records_in.fetch_add(1, std::memory_order_relaxed);
  stats_.bytes_in.fetch_add(static_cast<int64_t>(r.value.size()), std::memory_order_relaxed);
  dirty_ = true;
  newest_ingest_ms_ = std::max(newest_ingest_ms_, r.timestamp_ms);
  RawBatch& b = polling_;
  if (b.partitions.empty() || b.partitions[b.last_partition] != r.partition) {
    auto it = std::find(b.partitions.begin(), b.partitions.end(), r.partition);
    b.last_partition = static_cast<uint32_t>(it - b.partitions.begin());
    if (it == b.partitions.end()) b.partitions.push_back(r.partition);
  }
  // Message keys matter to change formats only.
  std::string_view key = options_.format == sources::ChangeFormat::kJson ? "" : r.key;
  b.records.push_back({b.raw.size(),
                       r.value.size(),
                       {b.last_partition, r.offset, r.timestamp_ms},
                       static_cast<uint32_t>(key.size()),
                       r.has_value});
  b.raw.append(r.value);
  b.raw.append(key);
}

Status Pipeline::RunLane(Lane& lane, size_t begin, size_t end) {
  if (options_.format != sources::ChangeFormat::kJson && !options_.aggregate) {
    return RunChangeLane(lane, begin, end);
  }
  lane.rows = Batch::Make(options_.source_schema);
  lane.origins.clear();
  lane.retracts.clear();
  lane.dead = Batch::Make(dead_schema_);
  const std::vector<std::string>& partitions = flushing_.partitions;
  lane.written = 0;
  // An aggregate over a changelog: +I and +U rows add, -U and -D rows retract.
  const bool changelog = options_.format == sources::ChangeFormat::kChangelog;
  for (size_t i = begin; i < end; ++i) {
    const RawRecord& r = flushing_.records[i];
    std::string_view value(flushing_.raw.data() + r.begin, r.size);
    int64_t before = lane.rows.num_rows();
    std::string_view row = value;
    sources::Change change;
    Status st;
    if (changelog) {
      st = lane.parser->Parse(value, {}, &change);
      if (st.ok() && change.kind == sources::Change::Kind::kNone) continue;
      row = change.image;
    }
    if (st.ok()) st = lane.decoder->DecodeLine(row, r.origin.offset, &lane.rows);
    if (st.ok()) {
      if (lane.rows.num_rows() > before) {
        lane.origins.push_back(r.origin);
        if (changelog) lane.retracts.push_back(change.kind == sources::Change::Kind::kDelete);
      }
      continue;
    }
    // The decoder left the rows unchanged: the record becomes a dead letter.
    AppendDeadLetter({value, &st, source_description_, partitions[r.origin.partition],
                      r.origin.offset, r.origin.timestamp_ms * 1000, NowMs() * 1000, options_.name},
                     &lane.dead);
  }
  if (options_.aggregate) return PrepareAggregate(lane);  // the windows write their own rows
  Batch b = std::move(lane.rows);
  if (options_.projection) {
    std::vector<sql::RejectedRow> rejected;
    ASSIGN_OR_RETURN(b, options_.projection(std::move(b), &rejected));
    int64_t now_us = NowMs() * 1000;
    for (const sql::RejectedRow& r : rejected) {
      Status error = Status::Invalid("{}", r.error);
      const RowOrigin& o = lane.origins[r.row];
      AppendDeadLetter({r.payload, &error, source_description_, partitions[o.partition], o.offset,
                        o.timestamp_ms * 1000, now_us, options_.name},
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
  lane.written = b.num_rows();
  return Status::OK();
}

Status Pipeline::FlushRows() {
  RETURN_IF_ERROR(FinishLanes());
  if (!polling_.records.empty()) {
    // Lanes of consecutive records: on the pipeline's thread alone, or on the
    // workers while it polls the next batch.
    std::swap(flushing_, polling_);
    polling_.Clear();
    size_t n = flushing_.records.size();
    int lanes = static_cast<int>(lanes_.size());
    lanes_running_ = static_cast<int>(std::clamp<size_t>(n / kMinRecordsPerLane, 1, lanes));
    int parts = lanes_running_;
    auto run = [this, n, parts](int i) {
      lanes_[i].status = RunLane(lanes_[i], n * i / parts, n * (i + 1) / parts);
    };
    if (lanes == 1) {
      run(0);
      RETURN_IF_ERROR(FinishLanes());
    } else {
      pool_->Start(parts, run);
    }
  }
  return WriteDeadLetters(dead_rows_);
}

Status Pipeline::WriteDeadLetters(Batch& dead) {
  if (dead.num_rows() == 0) return Status::OK();
  RETURN_IF_ERROR_CTX(dlq_writer_->Write(dead), "writing dead letters of {}",
                      options_.target.ToString());
  dead_pending_ += dead.num_rows();
  dead = Batch::Make(dead_schema_);
  return Status::OK();
}

Status Pipeline::FinishLanes() {
  if (lanes_running_ == 0) return Status::OK();
  pool_->Wait();
  // In source order: each lane's dead letters and (windowed) its rows into
  // the windows.
  Status st;
  for (int i = 0; i < lanes_running_ && st.ok(); ++i) {
    Lane& lane = lanes_[i];
    st = lane.status;
    rows_pending_ += lane.written;
    if (st.ok()) st = WriteDeadLetters(lane.dead);
    if (st.ok() && options_.aggregate) st = FeedAggregate(lane);
    if (st.ok() && keys_) st = FeedUpserts(lane);
  }
  for (int i = 0; i < lanes_running_; ++i) {
    lanes_[i].rows = Batch{};
    lanes_[i].input = Batch{};
  }
  if (st.ok() && options_.aggregate) st = IdleCheckAggregate();
  lanes_running_ = 0;
  flushing_.Clear();
  return st;
}

Result<int64_t> Pipeline::Step(int timeout_ms) {
  int64_t until_checkpoint = last_checkpoint_ms_ + options_.commit_interval_ms - NowMs();
  int wait = static_cast<int>(std::clamp<int64_t>(until_checkpoint, 0, timeout_ms));
  ASSIGN_OR_RETURN(int64_t n, source_->Poll(options_.poll_bytes, wait,
                                            [this](const SourceRecord& r) { OnRecord(r); }));
  int64_t lag = 0;
  for (const auto& [partition, n] : source_->Lag()) lag += n;
  stats_.source_lag = lag;
  if (static_cast<int64_t>(polling_.records.size()) + dead_rows_.num_rows() >=
          options_.batch_rows ||
      static_cast<int64_t>(polling_.raw.size()) >= options_.batch_bytes) {
    RETURN_IF_ERROR(FlushRows());
  }
  if (NowMs() - last_checkpoint_ms_ >= options_.commit_interval_ms) RETURN_IF_ERROR(Checkpoint());
  return n;
}

Status Pipeline::CheckEpoch() {
  ASSIGN_OR_RETURN(int64_t current, CurrentEpoch(table_->metadata(), options_.name));
  if (current != epoch_) {
    return Status::Fenced(
        "pipeline {}: epoch {} has taken over table {} (this run is epoch {}); stopping without "
        "committing",
        options_.name, current, options_.target.ToString(), epoch_);
  }
  return Status::OK();
}

Status Pipeline::Checkpoint() {
  last_checkpoint_ms_ = NowMs();
  if (!dirty_) {
    RenewReaderHold();
    return Status::OK();
  }
  int64_t started = MonoMicros();
  RETURN_IF_ERROR(FlushRows());
  RETURN_IF_ERROR(FinishLanes());
  // The groups changed since the last checkpoint, before its state is saved.
  if (window_ && options_.aggregate->updating()) RETURN_IF_ERROR(EmitUpdatedGroups());
  RETURN_IF_ERROR(WriteDeadLetters(dead_rows_));  // the windows' last ones
  // The lanes' files close at once (their last row groups are encoded here).
  int lanes = static_cast<int>(lanes_.size());
  std::vector<Result<std::vector<iceberg::DataFile>>> closed(lanes,
                                                             std::vector<iceberg::DataFile>{});
  pool_->Run(lanes, [&](int i) {
    if (lanes_[i].writer) closed[i] = lanes_[i].writer->Close();
  });
  std::vector<iceberg::DataFile> files;
  for (auto& c : closed) {
    RETURN_IF_ERROR(c.status());
    for (auto& f : *c) files.push_back(std::move(f));
  }
  ASSIGN_OR_RETURN(auto dead_files, dlq_writer_->Close());
  KillPoint("pipeline.after_data_files");

  Positions positions = source_->CurrentPositions();
  std::map<std::string, std::string> summary = {
      {kSummaryPipeline, options_.name},
      {kSummaryEpoch, std::to_string(epoch_)},
      {kSummaryCheckpoint, std::to_string(next_checkpoint_)},
      {kSummaryOffsets, EncodeOffsets({{options_.source_name, positions}})},
  };
  if (!change_positions_.empty()) {
    summary[kSummaryChangePositions] = EncodeChangePositions(change_positions_);
  }
  // The target table always gets the snapshot (it holds the offsets that
  // recovery reads); the dead-letter table only when there are dead letters.
  std::vector<catalog::TableUpdate> updates(1);
  updates[0].table = table_.get();
  updates[0].update.add_data = std::move(files);
  updates[0].update.summary = summary;
  updates[0].update.set_properties[CheckpointProperty(options_.name)] = EncodeCheckpointProperty(
      epoch_, next_checkpoint_, {{options_.source_name, positions}}, change_positions_);
  if (auto hold = source_->Hold()) {
    // Where this pipeline reads its source table: that table's snapshot
    // expiry keeps the snapshot (maintenance/expire.h, "readers").
    updates[0].update.set_properties[catalog::ReaderProperty(options_.name)] =
        catalog::EncodeReaderProperty(hold->table, hold->snapshot_id, NowMs());
    hold_renewed_ms_ = NowMs();  // (were the commit to fail, the next one renews it)
  }
  if (window_) RETURN_IF_ERROR(SaveState(&updates[0]));
  if (!dead_files.empty()) {
    catalog::TableUpdate u;
    u.table = dlq_table_.get();
    u.update.add_data = std::move(dead_files);
    u.update.summary = summary;
    updates.push_back(std::move(u));
  }
  int64_t commit_started = MonoMicros();
  auto committed = CommitCheckpoint(updates);
  if (!committed.ok()) {
    stats_.commit_failures.fetch_add(1);
    // The staged files stay in the journal: a restart's recovery commits
    // nothing twice and deletes them unless the table shows this checkpoint.
    return committed.status().WithContextF("pipeline {}: checkpoint {}", options_.name,
                                           next_checkpoint_);
  }
  int64_t commit_micros = MonoMicros() - commit_started;
  KillPoint("pipeline.after_commit");
  RETURN_IF_ERROR(journal_->Clear());
  // Files of the state the commit retired: no checkpoint refers to them now
  // (a crash before this leaves them for orphan cleanup).
  if (window_) {
    for (const std::string& f : window_state_.Commit()) (void)io_.Delete(f);
  }
  if (keys_) {
    keys_->CommitPending(/*state_saved=*/true);
    key_state_staged_.clear();
    for (const std::string& f : key_state_.Commit()) (void)io_.Delete(f);
    indexed_snapshot_ = (*committed)[0];
    stats_.upsert_deletes += pending_upsert_deletes_;
    stats_.change_deletes += pending_change_deletes_;
    stats_.changes_replayed += pending_changes_replayed_;
    stats_.key_index_keys = static_cast<int64_t>(keys_->size());
    pending_upsert_deletes_ = pending_change_deletes_ = pending_changes_replayed_ = 0;
  }

  int64_t files_added = 0;
  for (const auto& u : updates) files_added += static_cast<int64_t>(u.update.add_data.size());
  stats_.files_committed += files_added;
  stats_.records_committed += rows_pending_;
  stats_.dead_letters_committed += dead_pending_;
  stats_.commits += 1;
  stats_.last_commit_micros = commit_micros;
  stats_.commit_micros_total += commit_micros;
  stats_.checkpoint = next_checkpoint_;
  stats_.newest_committed_ingest_ms = newest_ingest_ms_;
  int64_t sum = 0;
  for (const auto& [p, o] : positions) sum += o;
  stats_.committed_offset_sum = sum;
  committed_ = std::move(positions);
  CheckpointReport report{next_checkpoint_, rows_pending_,       dead_pending_,
                          files_added,      commit_micros / 1e6, 0};
  rows_pending_ = dead_pending_ = 0;
  dirty_ = false;
  ++next_checkpoint_;
  RETURN_IF_ERROR(StartWriters());
  stats_.last_checkpoint_micros = MonoMicros() - started;
  report.checkpoint_seconds = static_cast<double>(stats_.last_checkpoint_micros) / 1e6;
  if (options_.on_checkpoint) options_.on_checkpoint(report);
  return Status::OK();
}

Result<std::vector<int64_t>> Pipeline::CommitCheckpoint(
    std::vector<catalog::TableUpdate>& updates) {
  auto check = [this] { return CheckEpoch(); };
  if (!keys_) return Table::CommitAll(catalog_, updates, options_.commit, check);
  // An upsert plans its deletes on the table's current snapshot, and commits
  // only onto that snapshot: a commit of another writer in between (new keys,
  // files rewritten, deletes) makes it plan again on the new one.
  catalog::SnapshotUpdate& u = updates[0].update;
  Status last;
  for (int attempt = 0; attempt < options_.commit.max_attempts; ++attempt) {
    if (attempt > 0) options_.commit.BackOff(attempt);
    Status planned = PlanUpsertDeletes(u.add_data, &u);
    if (planned.ok()) planned = SaveKeyIndex(&updates[0]);
    if (planned.ok()) {
      auto committed = Table::CommitAll(catalog_, updates, options_.commit, [this, check] {
        RETURN_IF_ERROR(check());
        if (table_->metadata().current_snapshot_id != indexed_snapshot_) {
          return Status::Conflict("table {} changed while the upserts were planned",
                                  options_.target.ToString());
        }
        return Status::OK();
      });
      if (committed.ok() || committed.status().code() != StatusCode::kConflict) return committed;
      planned = committed.status();
    }
    if (planned.code() != StatusCode::kConflict) return planned;
    last = planned;
    DiscardUpsertDeletes(&u);
    DropStagedKeyIndex();
  }
  return last.WithContextF("re-planned the upserts {} times", options_.commit.max_attempts);
}

Status Pipeline::Run() {
  while (!stop_.load()) {
    auto n = Step(100);
    if (!n.ok()) return n.status();
  }
  return Checkpoint();
}

}  // namespace sluice::pipeline
