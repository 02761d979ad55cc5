// The upsert path of a pipeline into a primary-key table (docs/upserts.md):
// the key index, the deletes each checkpoint commits with its rows, and the
// index's refresh when another writer changed the table.
#include <fmt/format.h>

#include <filesystem>

#include "catalog/row_delete.h"
#include "columnar/column_ops.h"
#include "common/kill_point.h"
#include "iceberg/changelog.h"
#include "iceberg/scan.h"
#include "operators/primary_key_index.h"
#include "pipeline/pipeline.h"
#include "state/state_property.h"

namespace sluice::pipeline {

namespace {
// The key of change positions when a source's partitions are one stream.
constexpr char kOneStream[] = "*";
// Keys a compaction moved, relocated in the key index at once: a batch
// holds about 130 bytes a key at its peak (the keys, their places, the
// sort), so 256 K keys take about 32 MiB beside state.memory.
constexpr size_t kRelocateBatch = 256 << 10;

}  // namespace

Status Pipeline::StartUpserts(const std::optional<CommittedCheckpoint>& committed) {
  const Schema& schema = *table_->metadata().current_schema();
  // (Windows are append-only: a windowed pipeline into a keyed table appends.)
  if (schema.identifier_field_ids.empty() ||
      (options_.aggregate && !options_.aggregate->updating())) {
    // (No key index now: what an earlier run kept goes.)
    std::error_code ec;
    std::filesystem::remove(KeptKeyIndexPath(), ec);
    std::filesystem::remove_all(KeySpillDir(), ec);
    return Status::OK();
  }
  for (int32_t id : schema.identifier_field_ids) {
    auto it = std::find_if(schema.fields.begin(), schema.fields.end(),
                           [&](const Field& f) { return f.id == id; });
    if (it == schema.fields.end()) {
      return Status::NotImplemented("table {}: primary key field {} is not a top-level column",
                                    options_.target.ToString(), id);
    }
    key_columns_.push_back(static_cast<int>(it - schema.fields.begin()));
    key_names_.push_back(it->name);
    key_fingerprint_ +=
        fmt::format("{}{}:{}", key_fingerprint_.empty() ? "" : ",", id, it->type->ToString());
  }
  keys_.reset();
  keys_ = std::make_unique<operators::PrimaryKeyIndex>(StateMemoryShare(), KeySpillDir());
  key_state_.Clear();
  // The store a clean stop kept for this checkpoint; else the spill store is
  // a cache of a run, and what an earlier run left is stale.
  ASSIGN_OR_RETURN(bool restored, ReopenKeptKeyIndex(committed));
  if (!restored) {
    std::error_code ec;
    std::filesystem::remove_all(KeySpillDir(), ec);
    if (committed) {
      ASSIGN_OR_RETURN(restored, RestoreKeyIndex(*committed));
    }
  }
  // (Following what other writers did since: compactions, or a load.)
  if (restored) return RefreshKeyIndex();
  return LoadKeyIndex();
}

bool Pipeline::KeyChangesFull() const {
  const int64_t share = StateMemoryShare();
  return keys_ != nullptr && share > 0 &&
         keys_->PendingBytes() > std::max<int64_t>(share, int64_t{64} << 10);
}

Result<std::optional<Pipeline::SavedKeyIndex>> Pipeline::SavedKeyIndexProperty(
    const CommittedCheckpoint& committed) const {
  const iceberg::TableMetadata& md = table_->metadata();
  auto it = md.properties.find(state::KeyIndexProperty(options_.name));
  // The files describe the index as of the checkpoint's snapshot: without
  // that snapshot in the table's history there is nothing to follow from.
  using Found = std::optional<SavedKeyIndex>;
  if (it == md.properties.end() || committed.snapshot_id == 0) return Found();
  ASSIGN_OR_RETURN(state::StateProperty saved, state::StateProperty::Decode(it->first, it->second));
  // Another checkpoint's index (the table was rolled back, maybe to a
  // checkpoint of the same number that another epoch committed), or keys
  // encoded for other key columns or types (the schema changed): loaded
  // afresh.
  if (saved.checkpoint != committed.checkpoint || saved.epoch != committed.epoch ||
      saved.key != key_fingerprint_) {
    return Found();
  }
  if (saved.files.empty()) return Status::Corruption("property {}: no files", it->first);
  return Found(SavedKeyIndex{std::move(saved), it->second});
}

Result<bool> Pipeline::RestoreKeyIndex(const CommittedCheckpoint& committed) {
  auto unreadable = [&](const Status& why) {
    fmt::print(stderr, "sluice: pipeline {}: key index state unreadable ({}); loading it from {}\n",
               options_.name, why.ToString(), options_.target.ToString());
    key_state_.Clear();
    return false;
  };
  auto found = SavedKeyIndexProperty(committed);
  if (!found.ok()) return unreadable(found.status());
  if (!found->has_value()) return false;
  const state::StateProperty& saved = (*found)->property;
  for (const std::string& path : saved.files) {
    int64_t size = 0;
    auto reader = OpenStateFile(path, &size);
    Status st = reader.status();
    if (st.ok()) st = keys_->Restore(reader->get(), /*base=*/key_state_.files().empty());
    if (st.code() == StatusCode::kCorruption || st.code() == StatusCode::kNotFound) {
      keys_->ClearCommitted();
      return unreadable(st.WithContextF("key index state file {}", path));
    }
    RETURN_IF_ERROR_CTX(st, "key index state file {}", path);
    key_state_.Add(path, size);
  }
  indexed_snapshot_ = committed.snapshot_id;
  key_index_stale_ = false;
  stats_.key_index_restores += 1;
  CountKeyIndex();
  return true;
}

void Pipeline::CountKeyIndex() {
  stats_.key_index_keys = static_cast<int64_t>(keys_->size());
  stats_.key_index_memory_bytes = keys_->ApproxBytes();
  stats_.key_index_spills = keys_->spills();
}

Status Pipeline::SaveKeyIndex(catalog::TableUpdate* update) {
  DropStagedKeyIndex();
  bool full = keys_->needs_full_state() || key_state_.NextIsBase();
  state::StateProperty saved;
  saved.checkpoint = next_checkpoint_;
  saved.epoch = epoch_;
  saved.key = key_fingerprint_;
  if (!full && keys_->unsaved() == 0) {
    saved.files = key_state_.Stage();  // nothing changed: the same files
  } else {
    std::string path = StateFilePath(table_->metadata().location, options_.name, epoch_,
                                     next_checkpoint_, "keys-", full);
    auto bytes =
        WriteStateFile(path, [&](state::StateWriter* w) { return keys_->WriteState(full, w); });
    RETURN_IF_ERROR_CTX(bytes.status(), "key index state file {}", path);
    KillPoint("pipeline.after_key_state_file");
    key_state_staged_ = path;
    saved.files = key_state_.Stage(path, *bytes, full);
  }
  update->update.set_properties[state::KeyIndexProperty(options_.name)] = saved.Encode();
  return Status::OK();
}

void Pipeline::DropStagedKeyIndex() {
  // (Recorded in the journal: a failure to delete it leaves it to recovery.)
  if (!key_state_staged_.empty()) (void)io_.Delete(key_state_staged_);
  key_state_staged_.clear();
}

Status Pipeline::ScanKeys(
    const std::set<std::string>& only_files, bool reserve,
    const std::function<Result<bool>(std::string_view key, operators::RowLocation at)>& row) {
  iceberg::ScanOptions o;
  o.columns = key_names_;
  o.with_pos = true;
  o.only_files = only_files;
  auto shared = std::make_shared<const iceberg::TableMetadata>(table_->metadata());
  ASSIGN_OR_RETURN(auto scan, iceberg::TableScan::Make(io_, shared, o));
  if (reserve) {
    RETURN_IF_ERROR(scan->Plan());
    int64_t rows = 0;
    for (const auto& t : scan->tasks()) rows += t.file.record_count;
    keys_->Reserve(static_cast<size_t>(rows));
  }
  std::vector<int> key_columns(key_columns_.size());
  for (size_t i = 0; i < key_columns.size(); ++i) key_columns[i] = static_cast<int>(i);
  Batch b;
  std::string key;
  while (true) {
    ASSIGN_OR_RETURN(bool more, scan->Next(&b));
    if (!more) break;
    uint32_t file = keys_->InternFile(scan->current_file());
    const Column* pos = FindColumnById(b, iceberg::kPosFieldId);
    for (int64_t i = 0; i < b.num_rows(); ++i) {
      key.clear();
      if (!operators::AppendKey(b, key_columns, i, &key)) {
        return Status::Corruption("table {}: a row of {} has a null primary key column",
                                  options_.target.ToString(), scan->current_file());
      }
      ASSIGN_OR_RETURN(bool more_rows, row(key, {file, pos->Value<int64_t>(i)}));
      if (!more_rows) return Status::OK();
    }
  }
  return Status::OK();
}

Status Pipeline::LoadKeyIndex() {
  keys_->ClearCommitted();
  const iceberg::TableMetadata& md = table_->metadata();
  stats_.key_index_loads += 1;
  stats_.key_index_keys = 0;
  // (Stale until the scan completes: a load that fails halfway is done again.)
  key_index_stale_ = true;
  if (md.current_snapshot_id) {
    RETURN_IF_ERROR(
        ScanKeys({}, /*reserve=*/true,
                 [this](std::string_view key, operators::RowLocation at) -> Result<bool> {
                   RETURN_IF_ERROR(keys_->Load(key, at));
                   return true;
                 }));
  }
  indexed_snapshot_ = md.current_snapshot_id;
  key_index_stale_ = false;
  CountKeyIndex();
  return Status::OK();
}

Status Pipeline::RefreshKeyIndex() {
  RETURN_IF_ERROR(table_->Refresh());
  std::vector<const iceberg::Snapshot*> compactions;
  switch (KeyIndexState(&compactions)) {
    case KeyIndex::kCurrent: break;
    case KeyIndex::kCompacted: return CatchUpCompactions(compactions);
    case KeyIndex::kStale: return LoadKeyIndex();
  }
  indexed_snapshot_ = table_->metadata().current_snapshot_id;
  return Status::OK();
}

Pipeline::KeyIndex Pipeline::KeyIndexState(
    std::vector<const iceberg::Snapshot*>* compactions) const {
  if (key_index_stale_) return KeyIndex::kStale;
  // Current when every snapshot since the one it reflects is this pipeline's
  // own; compacted when the others only moved rows (replace: compactions,
  // manifest rewrites); stale when another writer may have added keys,
  // deleted rows or rolled the table back.
  const iceberg::TableMetadata& md = table_->metadata();
  for (auto id = md.current_snapshot_id; id != indexed_snapshot_;) {
    const iceberg::Snapshot* s = id ? md.snapshot_by_id(*id) : nullptr;
    if (s == nullptr) return KeyIndex::kStale;  // the indexed snapshot is not an ancestor
    auto it = s->summary.find(kSummaryPipeline);
    if (it == s->summary.end() || it->second != options_.name) {
      if (s->operation() != "replace") return KeyIndex::kStale;
      compactions->push_back(s);
    }
    id = s->parent_snapshot_id;
  }
  std::reverse(compactions->begin(), compactions->end());
  return compactions->empty() ? KeyIndex::kCurrent : KeyIndex::kCompacted;
}

Status Pipeline::CatchUpCompactions(const std::vector<const iceberg::Snapshot*>& compactions) {
  // The files the compactions removed and the files they wrote (a file one
  // wrote and a later one removed is neither).
  const iceberg::TableMetadata& md = table_->metadata();
  std::set<std::string> removed, added;
  for (const iceberg::Snapshot* s : compactions) {
    ASSIGN_OR_RETURN(iceberg::SnapshotFiles files, iceberg::FilesOfSnapshot(io_, md, *s));
    if (files.equality_deletes) return LoadKeyIndex();
    for (const std::string& f : files.removed_data) {
      if (added.erase(f) == 0) removed.insert(f);
    }
    added.insert(files.added_data.begin(), files.added_data.end());
  }
  if (keys_->duplicates() > 0) return LoadKeyIndex();  // (their rows may have moved too)
  std::vector<bool> moved_from;
  for (const std::string& f : removed) {
    if (auto id = keys_->FileId(f)) {
      if (moved_from.size() <= *id) moved_from.resize(*id + 1);
      moved_from[*id] = true;
    }
  }
  // (A failure halfway leaves some keys moved: the index is loaded again.)
  Result<bool> followed = RelocateCompacted(moved_from, added);
  if (!followed.ok()) key_index_stale_ = true;
  RETURN_IF_ERROR(followed.status());
  if (!*followed) return LoadKeyIndex();
  keys_->Vacated(moved_from);
  indexed_snapshot_ = md.current_snapshot_id;
  stats_.key_index_catchups += 1;
  return Status::OK();
}

Result<bool> Pipeline::RelocateCompacted(const std::vector<bool>& moved_from,
                                         const std::set<std::string>& added) {
  // Keys whose row was in a removed file move to where the compaction wrote
  // it; any other row in the written files means the index missed something.
  const size_t expected = keys_->CountIn(moved_from);
  size_t relocated = 0, scanned = 0;
  bool missed = false;
  if (!added.empty()) {
    // In batches of the written rows' keys (a spilled index reads them in
    // key order).
    std::string arena;
    std::vector<size_t> ends;
    std::vector<operators::RowLocation> to;
    auto relocate = [&]() -> Status {
      std::vector<std::string_view> keys(ends.size());
      for (size_t i = 0, begin = 0; i < ends.size(); begin = ends[i++]) {
        keys[i] = std::string_view(arena).substr(begin, ends[i] - begin);
      }
      ASSIGN_OR_RETURN(size_t moved, keys_->Relocate(keys, to, moved_from, &missed));
      relocated += moved;
      arena.clear();
      ends.clear();
      to.clear();
      return Status::OK();
    };
    RETURN_IF_ERROR(ScanKeys(added, /*reserve=*/false,
                             [&](std::string_view key, operators::RowLocation at) -> Result<bool> {
                               // (More rows than the index had there:
                               // no use moving the rest.)
                               if (++scanned > expected) {
                                 missed = true;
                                 return false;
                               }
                               arena.append(key);
                               ends.push_back(arena.size());
                               to.push_back(at);
                               if (to.size() >= kRelocateBatch) RETURN_IF_ERROR(relocate());
                               return !missed;
                             }));
    if (!missed && !to.empty()) RETURN_IF_ERROR(relocate());
  }
  // (A spilled index trusts the keys it moves: the count is the check. A
  // compaction keeps every live row, so a key the index lacks or has
  // elsewhere is a moved row that `expected` does not count, and the counts
  // differ unless the index is also wrong the other way: a row it has that
  // the compaction did not write.)
  if (missed || relocated != expected) {
    fmt::print(stderr,
               "sluice: pipeline {}: the key index does not account for the rows a compaction "
               "of {} moved ({} of them read, {} indexed in the files it compacted); loading it "
               "from {}\n",
               options_.name, options_.target.ToString(), scanned, expected,
               options_.target.ToString());
    return false;
  }
  return true;
}

Status Pipeline::FeedUpserts(Lane& lane) {
  std::vector<uint32_t> file_ids(lane.file_paths.size());
  for (size_t i = 0; i < file_ids.size(); ++i) file_ids[i] = keys_->InternFile(lane.file_paths[i]);
  auto location = [&](int64_t row) {
    const iceberg::RowPlacement& at = lane.placements[row];
    return operators::RowLocation{file_ids[at.file], at.pos};
  };
  constexpr size_t kAhead = 8;  // changes whose slots are read ahead
  auto key_of = [&](size_t i) {
    uint32_t begin = i == 0 ? 0 : lane.key_ends[i - 1];
    return std::string_view(lane.keys.data() + begin, lane.key_ends[i] - begin);
  };
  for (size_t i = 0; i < std::min(kAhead, lane.changes.size()); ++i) {
    keys_->PrefetchPending(key_of(i));
  }
  for (size_t i = 0; i < lane.changes.size(); ++i) {
    if (i + kAhead < lane.changes.size()) keys_->PrefetchPending(key_of(i + kAhead));
    std::string_view key = key_of(i);
    Lane::KeyChange& c = lane.changes[i];
    if (!c.position.empty()) {
      // A change below the log position applied from its partition was
      // applied before (the producer sent it again): skipped. The partitions
      // of an ordered connector (the files of a folder) are one stream.
      std::string& applied =
          change_positions_[options_.one_watermark_partition ? std::string(kOneStream)
                                                             : flushing_.partitions[c.partition]];
      if (sources::ChangeReplayed(applied, c.position)) {
        ++pending_changes_replayed_;
        if (c.row >= 0) keys_->Discard(location(c.row));
        continue;
      }
      sources::AdvanceChangePosition(c.position, &applied);
    }
    if (c.row >= 0) {
      keys_->Upsert(key, location(c.row));
    } else {
      keys_->Delete(key);
      ++pending_change_deletes_;
    }
  }
  lane.changes.clear();
  lane.keys.clear();
  lane.key_ends.clear();
  return Status::OK();
}

Status Pipeline::PrepareUpserts(Lane& lane, const Batch& rows) {
  lane.changes.clear();
  lane.keys.clear();
  lane.key_ends.clear();
  for (int64_t i = 0; i < rows.num_rows(); ++i) {
    if (!operators::AppendKey(rows, key_columns_, i, &lane.keys)) {
      // The projection refuses nulls in NOT NULL columns, and key columns are.
      return Status::Internal(
          "pipeline {}: a row with a null primary key column reached the writer", options_.name);
    }
    lane.key_ends.push_back(static_cast<uint32_t>(lane.keys.size()));
    lane.changes.push_back({i, 0, {}});
  }
  return Status::OK();
}

Status Pipeline::PlanUpsertDeletes(const std::vector<iceberg::DataFile>& added,
                                   catalog::SnapshotUpdate* u) {
  RETURN_IF_ERROR(RefreshKeyIndex());
  const iceberg::TableMetadata& md = table_->metadata();
  // The rows to delete by file: sorted first, so that each file's positions
  // come out sorted in one pass (a file id names one path: each path is
  // assigned once).
  ASSIGN_OR_RETURN(std::vector<operators::RowLocation> deletes, keys_->Deletes());
  std::sort(deletes.begin(), deletes.end(),
            [](const operators::RowLocation& a, const operators::RowLocation& b) {
              return a.file != b.file ? a.file < b.file : a.pos < b.pos;
            });
  std::map<std::string, iceberg::PositionSet> positions;
  for (size_t i = 0; i < deletes.size();) {
    size_t j = i;
    while (j < deletes.size() && deletes[j].file == deletes[i].file) ++j;
    std::vector<int64_t> file(j - i);
    for (size_t k = i; k < j; ++k) file[k - i] = deletes[k].pos;
    positions[keys_->FilePath(deletes[i].file)] = iceberg::PositionSet(std::move(file));
    i = j;
  }
  if (positions.empty()) return Status::OK();

  std::map<std::string, iceberg::DataFile> files;
  for (const auto& f : added) files[f.file_path] = f;
  // The table's files among them: planned with the deletes they have.
  iceberg::ScanOptions o;
  for (const auto& [path, pos] : positions) {
    if (!files.count(path)) o.only_files.insert(path);
  }
  std::unique_ptr<iceberg::TableScan> scan;  // (its tasks are used below)
  std::map<std::string, const iceberg::FileScanTask*> tasks;
  if (!o.only_files.empty()) {
    auto shared = std::make_shared<const iceberg::TableMetadata>(md);
    ASSIGN_OR_RETURN(scan, iceberg::TableScan::Make(io_, shared, o));
    RETURN_IF_ERROR(scan->Plan());
    for (const auto& t : scan->tasks()) tasks[t.file.file_path] = &t;
    for (const std::string& path : o.only_files) {
      if (!tasks.count(path)) {
        // Gone although the index looked current: load it again.
        key_index_stale_ = true;
        return Status::Conflict("table {}: {} is no longer in the table",
                                options_.target.ToString(), path);
      }
    }
  }
  for (const auto& [path, pos] : positions)
    pending_upsert_deletes_ += static_cast<int64_t>(pos.size());
  RETURN_IF_ERROR(catalog::StageRowDeletes(
      io_, md, std::move(positions), tasks, files,
      [this](const std::string& path) { return RecordStaged(next_checkpoint_, path); }, u));
  u->kind = catalog::ChangeKind::kRowDelta;
  u->base_snapshot_id = md.current_snapshot_id;
  // A DV replaces the file's earlier one: a delete committed meanwhile by
  // another writer must be merged in, so the commit fails and plans again.
  u->fail_on_new_deletes = md.format_version >= 3;
  return Status::OK();
}

void Pipeline::DiscardUpsertDeletes(catalog::SnapshotUpdate* u) {
  std::set<std::string> written;
  for (const auto& d : u->add_deletes) written.insert(d.file_path);
  for (const auto& p : written) (void)io_.Delete(p);
  u->add_deletes.clear();
  u->remove_paths.clear();
  u->require_paths.clear();
  u->remove_dvs.clear();
  u->kind = catalog::ChangeKind::kAppend;
  u->fail_on_new_deletes = false;
  pending_upsert_deletes_ = 0;
}

}  // namespace sluice::pipeline
