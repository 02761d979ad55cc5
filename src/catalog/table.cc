#include "catalog/table.h"

#include <strings.h>

#include <algorithm>
#include <chrono>
#include <random>
#include <thread>

#include "common/uuid.h"
#include "iceberg/table_builder.h"

namespace sluice::catalog {

void CommitOptions::BackOff(int attempt) const {
  thread_local std::mt19937 rng(std::random_device{}());
  int cap = std::min(max_backoff_ms, min_backoff_ms << std::min(attempt, 10));
  std::uniform_int_distribution<int> wait(std::min(min_backoff_ms, std::max(cap, 1)),
                                          std::max(cap, 1));
  std::this_thread::sleep_for(std::chrono::milliseconds(wait(rng)));
}

using iceberg::DataFile;
using iceberg::EntryStatus;
using iceberg::ManifestContent;
using iceberg::ManifestEntry;
using iceberg::ManifestFile;
using iceberg::Snapshot;
using iceberg::TableMetadata;

std::string DefaultTableLocation(const std::string& warehouse, const TableIdent& ident) {
  // Local tables get file:// URIs, the fully qualified form other engines expect.
  std::string loc = warehouse.starts_with("/") ? "file://" + warehouse : warehouse;
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
    // Never registered: safe to remove (unless the catalog cannot tell).
    if (st.code() != StatusCode::kCommitStateUnknown) (void)io.Delete(path);
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

Result<std::unique_ptr<Table>> Table::Register(Catalog& catalog, FileIO& io,
                                               const TableIdent& ident,
                                               const std::string& location) {
  ASSIGN_OR_RETURN(auto table, LoadFromMetadataFile(io, location));
  RETURN_IF_ERROR(catalog.CreateTable(ident, location));
  return Load(catalog, io, ident);
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

std::mutex& Table::CommitTurn() const {
  // Never destroyed: a thread may still hold a turn while the process exits.
  static auto* mu = new std::mutex;
  static auto* turns = new std::map<std::string, std::unique_ptr<std::mutex>>;  // by catalog, table
  std::lock_guard<std::mutex> lock(*mu);
  auto& turn =
      (*turns)[fmt::format("{}\n{}", static_cast<const void*>(catalog_), ident_.ToString())];
  if (!turn) turn = std::make_unique<std::mutex>();
  return *turn;
}

void Table::AdoptCommitted() {
  std::string staged = metadata_location_;
  // Best effort: if the catalog cannot be read now, the next refresh loads
  // what it holds (its location differs from the staged file's), and the
  // staged file is an orphan for orphan cleanup.
  if (Refresh().ok() && metadata_location_ != staged) (void)io_->Delete(staged);
}

Status Table::UpdateMetadata(const MetadataChangeFn& change, const CommitOptions& options) {
  if (catalog_ == nullptr) return Status::Invalid("table {} is read-only", ident_.ToString());
  return UpdateMetadataAll(*catalog_, {MetadataChange{this, change}}, options);
}

Status Table::UpdateMetadataAll(Catalog& catalog, const std::vector<MetadataChange>& changes,
                                const CommitOptions& options) {
  std::vector<std::mutex*> turns;  // taken in one order, as CommitAll does
  for (const MetadataChange& c : changes) {
    if (c.table->catalog_ != &catalog) {
      return Status::Invalid("table {} does not belong to catalog {}", c.table->ident_.ToString(),
                             catalog.name());
    }
    turns.push_back(&c.table->CommitTurn());
  }
  std::sort(turns.begin(), turns.end(), std::less<>());
  turns.erase(std::unique(turns.begin(), turns.end()), turns.end());
  std::string what = changes.size() == 1 ? changes[0].table->ident_.ToString() : "transaction";
  Status last;
  for (int attempt = 0; attempt < options.max_attempts; ++attempt) {
    if (attempt > 0) options.BackOff(attempt);
    std::vector<std::unique_lock<std::mutex>> held;
    for (std::mutex* m : turns) held.emplace_back(*m);
    struct Staged {
      TableMetadata next;
      std::string path;
      std::vector<std::string> dropped;
    };
    std::vector<Staged> staged;
    std::vector<TableCommit> commits;
    Status st;
    for (const MetadataChange& c : changes) {
      Table& t = *c.table;
      auto discard = [&] {
        for (size_t i = 0; i < staged.size(); ++i) {
          (void)changes[i].table->io_->Delete(staged[i].path);
        }
      };
      // A failed refresh stops the commit (a dropped and re-made table is
      // not the one the change was meant for), as does a change that refuses
      // the metadata: no retry helps either.
      if (Status refreshed = t.Refresh(); !refreshed.ok()) {
        discard();
        return refreshed;
      }
      auto next = c.change(*t.metadata_);
      if (!next.ok()) {
        discard();
        return next.status();
      }
      Staged s{std::move(*next), t.NewMetadataPath(*t.metadata_), {}};
      // Never before the newest snapshot-log entry: readers refuse that.
      s.next.last_updated_ms = std::max(iceberg::NowMillis(), t.metadata_->last_updated_ms);
      if (!s.next.snapshot_log.empty()) {
        s.next.last_updated_ms =
            std::max(s.next.last_updated_ms, s.next.snapshot_log.back().timestamp_ms);
      }
      st = ExtendMetadataLog(&s.next, t.metadata_location_, t.metadata_->last_updated_ms,
                             &s.dropped);
      if (st.ok()) st = t.io_->WriteFile(s.path, iceberg::TableMetadataToJson(s.next));
      if (!st.ok()) break;
      commits.push_back({t.ident_, t.metadata_location_, s.path});
      staged.push_back(std::move(s));
    }
    if (st.ok()) st = catalog.CommitTables(commits);
    if (st.ok()) {
      for (size_t i = 0; i < changes.size(); ++i) {
        Table& t = *changes[i].table;
        t.metadata_ = std::make_shared<const TableMetadata>(std::move(staged[i].next));
        t.metadata_location_ = staged[i].path;
        DeleteDroppedMetadata(*t.io_, *t.metadata_, staged[i].dropped);
        if (!catalog.SwapsMetadataFiles()) t.AdoptCommitted();
      }
      return Status::OK();
    }
    if (st.code() == StatusCode::kCommitStateUnknown) return st;
    for (size_t i = 0; i < staged.size(); ++i) (void)changes[i].table->io_->Delete(staged[i].path);
    if (st.code() != StatusCode::kConflict) return st;
    last = st;
  }
  return last.WithContextF("{}: gave up after {} attempts", what, options.max_attempts);
}

Result<int64_t> Table::Append(const std::vector<DataFile>& files,
                              const std::map<std::string, std::string>& summary,
                              const CommitOptions& options) {
  SnapshotUpdate u;
  u.add_data = files;
  u.summary = summary;
  return Commit(u, options);
}

Status ExtendMetadataLog(TableMetadata* next, const std::string& previous, int64_t updated_ms,
                         std::vector<std::string>* dropped) {
  int64_t max = 100;
  auto it = next->properties.find("write.metadata.previous-versions-max");
  if (it != next->properties.end()) {
    char* end = nullptr;
    long long v = std::strtoll(it->second.c_str(), &end, 10);
    if (it->second.empty() || *end != '\0') {
      return Status::Invalid(
          "table property write.metadata.previous-versions-max = '{}' is not an integer",
          it->second);
    }
    max = std::max<long long>(1, v);  // as Iceberg's Java library reads it
  }
  if (!previous.empty()) next->metadata_log.push_back({previous, updated_ms});
  while (static_cast<int64_t>(next->metadata_log.size()) > max) {
    dropped->push_back(next->metadata_log.front().metadata_file);
    next->metadata_log.erase(next->metadata_log.begin());
  }
  return Status::OK();
}

void DeleteDroppedMetadata(FileIO& io, const TableMetadata& committed,
                           const std::vector<std::string>& dropped) {
  auto it = committed.properties.find("write.metadata.delete-after-commit.enabled");
  if (it == committed.properties.end() || strcasecmp(it->second.c_str(), "true") != 0) return;
  for (const std::string& f : dropped) (void)io.Delete(f);
}

}  // namespace sluice::catalog
