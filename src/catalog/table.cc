#include "catalog/table.h"

#include <algorithm>
#include <chrono>
#include <random>
#include <thread>

#include "common/uuid.h"
#include "iceberg/table_builder.h"

namespace sluice::catalog {

using iceberg::DataFile;
using iceberg::EntryStatus;
using iceberg::ManifestContent;
using iceberg::ManifestEntry;
using iceberg::ManifestFile;
using iceberg::Snapshot;
using iceberg::TableMetadata;

std::string DefaultTableLocation(const std::string& warehouse, const TableIdent& ident) {
  std::string loc = warehouse;
  while (loc.size() > 1 && loc.back() == '/') loc.pop_back();
  for (const auto& level : ident.ns) loc += "/" + level;
  return loc + "/" + ident.name;
}

Status Table::LoadMetadata(const std::string& location) {
  ASSIGN_OR_RETURN(std::string text, io_->ReadFile(location));
  ASSIGN_OR_RETURN(TableMetadata m, iceberg::ParseTableMetadata(text, location));
  metadata_ = std::make_shared<const TableMetadata>(std::move(m));
  metadata_location_ = location;
  return Status::OK();
}

Result<std::unique_ptr<Table>> Table::Create(Catalog& catalog, FileIO& io, const TableIdent& ident,
                                             const TableMetadata& metadata) {
  std::unique_ptr<Table> t(new Table(&catalog, &io, ident));
  std::string path = t->NewMetadataPath(metadata);
  RETURN_IF_ERROR(io.WriteFile(path, iceberg::TableMetadataToJson(metadata)));
  Status st = catalog.CreateTable(ident, path);
  if (!st.ok()) {
    (void)io.Delete(path);  // never registered: safe to remove
    return st;
  }
  RETURN_IF_ERROR(t->LoadMetadata(path));
  return t;
}

Result<std::unique_ptr<Table>> Table::Load(Catalog& catalog, FileIO& io, const TableIdent& ident) {
  std::unique_ptr<Table> t(new Table(&catalog, &io, ident));
  RETURN_IF_ERROR(t->Refresh());
  return t;
}

Result<std::unique_ptr<Table>> Table::LoadFromMetadataFile(FileIO& io, const std::string& path) {
  std::unique_ptr<Table> t(new Table(nullptr, &io, TableIdent{{}, path}));
  RETURN_IF_ERROR(t->LoadMetadata(path));
  return t;
}

Status Table::Refresh() {
  if (catalog_ == nullptr) return LoadMetadata(metadata_location_);
  ASSIGN_OR_RETURN(std::string location, catalog_->LoadTable(ident_));
  if (location == metadata_location_) return Status::OK();
  std::string uuid = metadata_ ? metadata_->table_uuid : "";
  RETURN_IF_ERROR_CTX(LoadMetadata(location), "table {}", ident_.ToString());
  if (!uuid.empty() && metadata_->table_uuid != uuid) {
    return Status::Conflict("table {}: uuid changed from {} to {} (dropped and re-created?)",
                            ident_.ToString(), uuid, metadata_->table_uuid);
  }
  return Status::OK();
}

std::string Table::DataLocation() const { return metadata_->location + "/data"; }

std::string Table::NewMetadataPath(const TableMetadata& base) const {
  // Version = one past the current file's NNNNN prefix (or the log length).
  int64_t version = static_cast<int64_t>(base.metadata_log.size());
  if (!metadata_location_.empty()) {
    size_t slash = metadata_location_.rfind('/');
    std::string name = metadata_location_.substr(slash + 1);
    size_t dash = name.find('-');
    if (dash != std::string::npos && dash > 0 &&
        std::all_of(name.begin(), name.begin() + dash, ::isdigit)) {
      version = std::stoll(name.substr(0, dash)) + 1;
    } else {
      version = static_cast<int64_t>(base.metadata_log.size()) + 1;
    }
  }
  return fmt::format("{}/metadata/{:05d}-{}.metadata.json", base.location, version, NewUuid());
}

Result<std::vector<ManifestEntry>> Table::LiveFiles(int64_t snapshot_id) const {
  const Snapshot* snap = metadata_->snapshot_by_id(snapshot_id);
  if (snap == nullptr) {
    return Status::NotFound("table {}: no snapshot {}", ident_.ToString(), snapshot_id);
  }
  ASSIGN_OR_RETURN(auto manifests,
                   iceberg::ReadManifestList(*io_, snap->manifest_list, metadata_->format_version));
  std::vector<ManifestEntry> out;
  for (const auto& m : manifests) {
    ASSIGN_OR_RETURN(auto entries, iceberg::ReadManifest(*io_, m, metadata_->format_version));
    for (auto& e : entries) {
      if (e.status != EntryStatus::kDeleted) out.push_back(std::move(e));
    }
  }
  return out;
}

namespace {

int64_t SummaryValue(const Snapshot* s, const std::string& key) {
  if (s == nullptr) return 0;
  auto it = s->summary.find(key);
  if (it == s->summary.end()) return 0;
  return std::strtoll(it->second.c_str(), nullptr, 10);
}

// Files written by one commit attempt, removed if the attempt does not land.
struct AttemptFiles {
  FileIO* io;
  std::vector<std::string> paths;
  void DeleteAll() {
    for (const auto& p : paths) (void)io->Delete(p);
    paths.clear();
  }
};

// Merges the small manifests of each (spec, content) group into one when a
// group has more than `min_count` manifests, so planning stays fast after
// thousands of commits. Merged entries become EXISTING with their sequence
// numbers; DELETED entries of earlier snapshots are dropped.
Result<std::vector<ManifestFile>> MergeManifests(FileIO& io, const TableMetadata& base,
                                                 std::vector<ManifestFile> manifests,
                                                 int64_t snapshot_id, const CommitOptions& o,
                                                 AttemptFiles* written) {
  std::map<std::pair<int32_t, int>, std::vector<size_t>> groups;
  for (size_t i = 0; i < manifests.size(); ++i) {
    const auto& m = manifests[i];
    if (m.added_snapshot_id == snapshot_id) continue;  // this commit's own manifests
    if (m.manifest_length >= o.manifest_target_bytes) continue;
    groups[{m.partition_spec_id, static_cast<int>(m.content)}].push_back(i);
  }
  std::vector<bool> merged(manifests.size(), false);
  std::vector<ManifestFile> out;
  for (const auto& [key, idx] : groups) {
    if (static_cast<int>(idx.size()) < o.manifest_merge_min_count) continue;
    const iceberg::PartitionSpec* spec = base.spec_by_id(key.first);
    if (spec == nullptr) continue;
    iceberg::ManifestWriterOptions wo;
    wo.format_version = base.format_version;
    wo.content = static_cast<ManifestContent>(key.second);
    wo.snapshot_id = snapshot_id;
    std::string path = fmt::format("{}/metadata/{}-m-merged.avro", base.location, NewUuid());
    ASSIGN_OR_RETURN(auto w,
                     iceberg::ManifestWriter::Open(io, path, *base.current_schema(), *spec, wo));
    written->paths.push_back(path);
    for (size_t i : idx) {
      ASSIGN_OR_RETURN(auto entries, iceberg::ReadManifest(io, manifests[i], base.format_version));
      for (auto& e : entries) {
        if (e.status == EntryStatus::kDeleted) continue;
        e.status = EntryStatus::kExisting;
        RETURN_IF_ERROR(w->Add(e));
      }
      merged[i] = true;
    }
    ASSIGN_OR_RETURN(ManifestFile mf, w->Close());
    out.push_back(std::move(mf));
  }
  for (size_t i = 0; i < manifests.size(); ++i) {
    if (!merged[i]) out.push_back(std::move(manifests[i]));
  }
  return out;
}

}  // namespace

Result<int64_t> Table::Append(const std::vector<DataFile>& files,
                              const std::map<std::string, std::string>& extra_summary,
                              const CommitOptions& options) {
  if (catalog_ == nullptr) return Status::Invalid("table {} is read-only", ident_.ToString());
  const int64_t snapshot_id = NewSnapshotId();
  const std::string commit_uuid = NewUuid();

  // The new manifest is written once and reused by every attempt.
  const TableMetadata& first = *metadata_;
  AttemptFiles manifests_written{io_, {}};
  std::vector<ManifestFile> new_manifests;
  int64_t added_records = 0, added_size = 0;
  if (!files.empty()) {
    const iceberg::PartitionSpec* spec = first.spec_by_id(first.default_spec_id);
    iceberg::ManifestWriterOptions wo;
    wo.format_version = first.format_version;
    wo.snapshot_id = snapshot_id;
    std::string path = fmt::format("{}/metadata/{}-m0.avro", first.location, commit_uuid);
    auto w = iceberg::ManifestWriter::Open(*io_, path, *first.current_schema(), *spec, wo);
    if (!w.ok()) return w.status().WithContextF("table {}", ident_.ToString());
    manifests_written.paths.push_back(path);
    for (const DataFile& f : files) {
      ManifestEntry e;
      e.status = EntryStatus::kAdded;
      e.file = f;
      Status st = (*w)->Add(e);
      if (!st.ok()) {
        manifests_written.DeleteAll();
        return st.WithContextF("table {}", ident_.ToString());
      }
      added_records += f.record_count;
      added_size += f.file_size_in_bytes;
    }
    auto mf = (*w)->Close();
    if (!mf.ok()) {
      manifests_written.DeleteAll();
      return mf.status();
    }
    new_manifests.push_back(*mf);
  }

  std::mt19937 rng(static_cast<uint32_t>(snapshot_id));
  Status last;
  for (int attempt = 0; attempt < options.max_attempts; ++attempt) {
    if (attempt > 0) {
      int cap = std::min(options.max_backoff_ms, options.min_backoff_ms << std::min(attempt, 10));
      std::this_thread::sleep_for(std::chrono::milliseconds(
          std::uniform_int_distribution<int>(options.min_backoff_ms, std::max(cap, 1))(rng)));
      Status st = Refresh();
      if (!st.ok()) {
        manifests_written.DeleteAll();
        return st;
      }
    }
    const TableMetadata& base = *metadata_;
    const Snapshot* parent = base.current_snapshot();
    AttemptFiles attempt_files{io_, {}};
    auto fail = [&](const Status& st) {
      attempt_files.DeleteAll();
      manifests_written.DeleteAll();
      return st.WithContextF("table {}: commit", ident_.ToString());
    };

    std::vector<ManifestFile> manifests = new_manifests;
    if (parent != nullptr) {
      auto prev = iceberg::ReadManifestList(*io_, parent->manifest_list, base.format_version);
      if (!prev.ok()) return fail(prev.status());
      manifests.insert(manifests.end(), prev->begin(), prev->end());
    }
    auto merged =
        MergeManifests(*io_, base, std::move(manifests), snapshot_id, options, &attempt_files);
    if (!merged.ok()) return fail(merged.status());

    Snapshot snap;
    snap.snapshot_id = snapshot_id;
    if (parent) snap.parent_snapshot_id = parent->snapshot_id;
    snap.sequence_number = base.last_sequence_number + 1;
    snap.timestamp_ms = std::max(iceberg::NowMillis(), base.last_updated_ms);
    snap.schema_id = base.current_schema_id;
    snap.manifest_list = fmt::format("{}/metadata/snap-{}-{}-{}.avro", base.location, snapshot_id,
                                     attempt, commit_uuid);
    iceberg::ManifestListOptions lo;
    lo.format_version = base.format_version;
    lo.snapshot_id = snapshot_id;
    lo.parent_snapshot_id = snap.parent_snapshot_id;
    lo.sequence_number = snap.sequence_number;
    if (base.format_version >= 3) lo.first_row_id = base.next_row_id.value_or(0);
    attempt_files.paths.push_back(snap.manifest_list);
    auto added_rows = iceberg::WriteManifestList(*io_, snap.manifest_list, *merged, lo);
    if (!added_rows.ok()) return fail(added_rows.status());

    snap.summary = extra_summary;
    snap.summary["operation"] = "append";
    snap.summary["added-data-files"] = std::to_string(files.size());
    snap.summary["added-records"] = std::to_string(added_records);
    snap.summary["added-files-size"] = std::to_string(added_size);
    snap.summary["total-data-files"] = std::to_string(SummaryValue(parent, "total-data-files") +
                                                      static_cast<int64_t>(files.size()));
    snap.summary["total-records"] =
        std::to_string(SummaryValue(parent, "total-records") + added_records);
    snap.summary["total-files-size"] =
        std::to_string(SummaryValue(parent, "total-files-size") + added_size);
    for (const char* k :
         {"total-delete-files", "total-position-deletes", "total-equality-deletes"}) {
      snap.summary[k] = std::to_string(SummaryValue(parent, k));
    }
    if (base.format_version >= 3) {
      snap.first_row_id = lo.first_row_id;
      snap.added_rows = *added_rows;
    }

    TableMetadata next = base;
    next.last_sequence_number = snap.sequence_number;
    next.last_updated_ms = snap.timestamp_ms;
    next.current_snapshot_id = snapshot_id;
    next.refs["main"] = iceberg::SnapshotRef{snapshot_id, true, {}, {}, {}};
    next.snapshot_log.push_back({snapshot_id, snap.timestamp_ms});
    next.metadata_log.push_back({metadata_location_, base.last_updated_ms});
    const size_t kMaxLog = 100;  // write.metadata.previous-versions-max
    if (next.metadata_log.size() > kMaxLog) {
      next.metadata_log.erase(next.metadata_log.begin(),
                              next.metadata_log.end() - static_cast<long>(kMaxLog));
    }
    if (snap.added_rows) next.next_row_id = base.next_row_id.value_or(0) + *snap.added_rows;
    next.snapshots.push_back(snap);

    std::string path = NewMetadataPath(base);
    attempt_files.paths.push_back(path);
    Status st = io_->WriteFile(path, iceberg::TableMetadataToJson(next));
    if (!st.ok()) return fail(st);

    st = catalog_->CommitTable({ident_, metadata_location_, path});
    if (st.ok()) {
      metadata_ = std::make_shared<const TableMetadata>(std::move(next));
      metadata_location_ = path;
      return snapshot_id;
    }
    if (st.code() == StatusCode::kCommitStateUnknown) {
      return st.WithContextF("table {}: commit of snapshot {}", ident_.ToString(), snapshot_id);
    }
    if (st.code() != StatusCode::kConflict && !st.retryable()) return fail(st);
    attempt_files.DeleteAll();  // this attempt lost; its list and metadata are unreferenced
    last = st;
  }
  manifests_written.DeleteAll();
  return last.WithContextF("table {}: gave up after {} attempts", ident_.ToString(),
                           options.max_attempts);
}

}  // namespace sluice::catalog
