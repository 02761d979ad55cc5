#include "maintenance/manifest_cache.h"

#include <functional>

#include "maintenance/files.h"

namespace sluice::maintenance {

uint64_t ManifestCache::FileHash(std::string_view path) {
  return std::hash<std::string>{}(NormalizePath(path));
}

void ManifestCache::BindTo(const iceberg::TableMetadata& m) {
  if (m.table_uuid == table_uuid_ && m.location == location_) return;
  lists_.clear();
  interned_.clear();
  live_.clear();
  table_uuid_ = m.table_uuid;
  location_ = m.location;
}

Result<const ManifestCache::Manifests*> ManifestCache::ManifestsOf(FileIO& io,
                                                                   const iceberg::TableMetadata& m,
                                                                   const iceberg::Snapshot& s) {
  RETURN_IF_ERROR(RequireManifestList(s));
  if (auto it = lists_.find(s.manifest_list); it != lists_.end()) return &it->second;
  ASSIGN_OR_RETURN(std::vector<iceberg::ManifestFile> read,
                   iceberg::ReadManifestList(io, s.manifest_list, m.format_version));
  ++files_read_;
  Manifests manifests;
  manifests.reserve(read.size());
  for (iceberg::ManifestFile& mf : read) {
    auto it = interned_.find(mf.manifest_path);
    if (it == interned_.end()) {
      std::string path = mf.manifest_path;
      it = interned_
               .emplace(std::move(path),
                        std::make_shared<const iceberg::ManifestFile>(std::move(mf)))
               .first;
    }
    manifests.push_back(it->second);
  }
  return &lists_.emplace(s.manifest_list, std::move(manifests)).first->second;
}

Result<const std::vector<uint64_t>*> ManifestCache::LiveHashesOf(
    FileIO& io, const iceberg::ManifestFile& manifest, int format_version) {
  if (auto it = live_.find(manifest.manifest_path); it != live_.end()) return &it->second;
  iceberg::ManifestReadOptions options;
  options.column_stats = false;  // paths and statuses are all an expiry needs
  ASSIGN_OR_RETURN(std::vector<iceberg::ManifestEntry> entries,
                   iceberg::ReadManifest(io, manifest, format_version, options));
  ++files_read_;
  std::vector<uint64_t> hashes;
  hashes.reserve(entries.size());
  for (const iceberg::ManifestEntry& e : entries) {
    if (e.status != iceberg::EntryStatus::kDeleted) hashes.push_back(FileHash(e.file.file_path));
  }
  return &live_.emplace(manifest.manifest_path, std::move(hashes)).first->second;
}

void ManifestCache::Retain(const std::set<std::string>& lists,
                           const std::set<std::string>& manifests) {
  std::erase_if(lists_, [&](const auto& kv) { return !lists.count(kv.first); });
  std::erase_if(live_, [&](const auto& kv) { return !manifests.count(kv.first); });
  std::erase_if(interned_, [&](const auto& kv) { return !manifests.count(kv.first); });
}

}  // namespace sluice::maintenance
