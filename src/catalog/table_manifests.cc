#include "catalog/table_manifests.h"

#include <algorithm>
#include <functional>
#include <map>

#include "columnar/single_value.h"
#include "common/uuid.h"

namespace sluice::catalog {

using iceberg::EntryStatus;
using iceberg::ManifestContent;
using iceberg::ManifestEntry;
using iceberg::ManifestFile;
using iceberg::TableMetadata;

namespace internal {

Result<ManifestFile> WriteManifest(FileIO& io, const TableMetadata& base, int32_t spec_id,
                                   ManifestContent content, int64_t snapshot_id,
                                   const std::vector<ManifestEntry>& entries,
                                   WrittenFiles* written) {
  const iceberg::PartitionSpec* spec = base.spec_by_id(spec_id);
  if (spec == nullptr) return Status::Invalid("no partition spec {}", spec_id);
  iceberg::ManifestWriterOptions wo;
  wo.format_version = base.format_version;
  wo.content = content;
  wo.snapshot_id = snapshot_id;
  std::string path =
      fmt::format("{}/metadata/{}-m{}.avro", base.location, NewUuid(), written->paths.size());
  ASSIGN_OR_RETURN(auto w,
                   iceberg::ManifestWriter::Open(io, path, *base.current_schema(), *spec, wo));
  written->paths.push_back(path);
  for (const auto& e : entries) RETURN_IF_ERROR(w->Add(e));
  return w->Close();
}

Result<std::vector<ManifestFile>> MergeManifests(FileIO& io, const TableMetadata& base,
                                                 std::vector<ManifestFile> manifests,
                                                 int64_t snapshot_id, const CommitOptions& o,
                                                 WrittenFiles* written) {
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
    std::vector<ManifestEntry> entries;
    for (size_t i : idx) {
      ASSIGN_OR_RETURN(auto es, iceberg::ReadManifest(io, manifests[i], base.format_version));
      for (auto& e : es) {
        if (e.status == EntryStatus::kDeleted) continue;
        e.status = EntryStatus::kExisting;
        entries.push_back(std::move(e));
      }
      merged[i] = true;
    }
    ASSIGN_OR_RETURN(ManifestFile mf,
                     WriteManifest(io, base, key.first, static_cast<ManifestContent>(key.second),
                                   snapshot_id, entries, written));
    out.push_back(std::move(mf));
  }
  for (size_t i = 0; i < manifests.size(); ++i) {
    if (!merged[i]) out.push_back(std::move(manifests[i]));
  }
  return out;
}

namespace {

// The partition tuples of one spec in value order (nulls first), so that
// manifests cut from a sorted run cover narrow ranges.
Result<std::function<bool(const ManifestEntry&, const ManifestEntry&)>> PartitionOrder(
    const TableMetadata& base, int32_t spec_id) {
  const iceberg::PartitionSpec* spec = base.spec_by_id(spec_id);
  const Schema* schema = base.current_schema();
  if (spec == nullptr || schema == nullptr) return Status::Invalid("no partition spec {}", spec_id);
  ASSIGN_OR_RETURN(TypePtr type, iceberg::PartitionType(*spec, *schema));
  using Order = std::function<bool(const ManifestEntry&, const ManifestEntry&)>;
  return Order([type](const ManifestEntry& a, const ManifestEntry& b) {
    const auto& x = a.file.partition;
    const auto& y = b.file.partition;
    for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
      if (x[i].has_value() != y[i].has_value()) return !x[i].has_value();
      if (!x[i]) continue;
      int c = CompareSingleValues(*type->fields()[i].type, *x[i], *y[i]);
      if (c != 0) return c < 0;
    }
    return x.size() < y.size();
  });
}

}  // namespace

}  // namespace internal

bool IsSmallManifest(const ManifestFile& m, const CommitOptions& o) {
  return m.manifest_length < o.manifest_target_bytes / 2;
}

namespace internal {

Result<std::vector<ManifestFile>> ClusterManifests(FileIO& io, const TableMetadata& base,
                                                   std::vector<ManifestFile> manifests,
                                                   int64_t snapshot_id, const CommitOptions& o,
                                                   WrittenFiles* written, ManifestChange* change) {
  std::map<std::pair<int32_t, int>, std::vector<size_t>> groups;
  std::vector<ManifestFile> out;
  for (size_t i = 0; i < manifests.size(); ++i) {
    const auto& m = manifests[i];
    if (!IsSmallManifest(m, o) || m.added_snapshot_id == snapshot_id) {
      out.push_back(m);  // (this commit's own manifests are not rewritten)
      continue;
    }
    groups[{m.partition_spec_id, static_cast<int>(m.content)}].push_back(i);
  }
  for (const auto& [key, idx] : groups) {
    if (idx.size() == 1 && manifests[idx[0]].deleted_files_count == 0) {
      out.push_back(manifests[idx[0]]);  // nothing to gain
      continue;
    }
    std::vector<ManifestEntry> entries;
    // Bytes per entry: the least of the manifests read (a small manifest's
    // header would inflate an average).
    int64_t per_entry = o.manifest_target_bytes;
    for (size_t i : idx) {
      ASSIGN_OR_RETURN(auto es, iceberg::ReadManifest(io, manifests[i], base.format_version));
      if (!es.empty()) {
        per_entry =
            std::min(per_entry, manifests[i].manifest_length / static_cast<int64_t>(es.size()));
      }
      for (auto& e : es) {
        if (e.status == EntryStatus::kDeleted) continue;
        e.status = EntryStatus::kExisting;
        entries.push_back(std::move(e));
      }
    }
    change->replaced += static_cast<int64_t>(idx.size());
    change->entries += static_cast<int64_t>(entries.size());
    if (entries.empty()) continue;
    ASSIGN_OR_RETURN(auto order, PartitionOrder(base, key.first));
    std::stable_sort(entries.begin(), entries.end(), order);
    const size_t per_manifest = static_cast<size_t>(
        std::max<int64_t>(1, o.manifest_target_bytes / std::max<int64_t>(1, per_entry)));
    for (size_t begin = 0; begin < entries.size(); begin += per_manifest) {
      std::vector<ManifestEntry> chunk(
          entries.begin() + static_cast<std::ptrdiff_t>(begin),
          entries.begin() +
              static_cast<std::ptrdiff_t>(std::min(entries.size(), begin + per_manifest)));
      ASSIGN_OR_RETURN(ManifestFile mf,
                       WriteManifest(io, base, key.first, static_cast<ManifestContent>(key.second),
                                     snapshot_id, chunk, written));
      out.push_back(std::move(mf));
      ++change->created;
    }
  }
  change->kept = static_cast<int64_t>(out.size()) - change->created;
  return out;
}

}  // namespace internal
}  // namespace sluice::catalog
