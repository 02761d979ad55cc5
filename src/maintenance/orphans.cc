#include "maintenance/orphans.h"

#include <nlohmann/json.hpp>
#include <set>

#include "maintenance/files.h"

namespace sluice::maintenance {
namespace {

// Every file the table's metadata references.
Result<std::set<std::string>> Referenced(catalog::Table& table) {
  const iceberg::TableMetadata& m = table.metadata();
  FileIO& io = table.io();
  std::set<std::string> refs = {table.metadata_location()};
  for (const auto& e : m.metadata_log) refs.insert(e.metadata_file);
  Reach reach;
  for (const iceberg::Snapshot& s : m.snapshots) RETURN_IF_ERROR(AddReach(io, m, s, &reach));
  for (const auto* kind :
       {&reach.manifest_lists, &reach.manifests, &reach.data_files, &reach.delete_files}) {
    refs.insert(kind->begin(), kind->end());
  }
  // Window state of the pipelines writing the table (docs/state.md).
  for (const auto& [key, value] : m.properties) {
    if (key.rfind("sluice.state.", 0) != 0) continue;
    auto j = nlohmann::json::parse(value, nullptr, false);
    if (j.is_discarded() || !j.contains("files") || !j["files"].is_array()) {
      return Status::Corruption(
          "table property {} is not the state sluice writes: orphan "
          "cleanup cannot tell which state files are live",
          key);
    }
    for (const auto& f : j["files"]) {
      if (f.is_string()) refs.insert(f.get<std::string>());
    }
  }
  return refs;
}

Result<int64_t> MarginMs(const iceberg::TableMetadata& m) {
  auto it = m.properties.find("sluice.maintenance.orphan-margin-ms");
  if (it == m.properties.end()) return kDefaultOrphanMarginMs;
  char* end = nullptr;
  long long v = std::strtoll(it->second.c_str(), &end, 10);
  if (it->second.empty() || *end != '\0' || v < 0) {
    return Status::Invalid(
        "table property sluice.maintenance.orphan-margin-ms = '{}' is not a non-negative "
        "integer",
        it->second);
  }
  return static_cast<int64_t>(v);
}

}  // namespace

Result<OrphanResult> RemoveOrphans(catalog::Table& table, const OrphanOptions& options) {
  RETURN_IF_ERROR(table.Refresh());
  ASSIGN_OR_RETURN(int64_t margin, MarginMs(table.metadata()));
  const int64_t older_than = options.older_than_ms.value_or(options.now_ms - margin);
  // Listed first, referenced second: a file committed in between is both
  // listed and referenced (kept); one listed before its commit is young.
  std::string location = table.metadata().location;
  if (location.empty())
    return Status::Invalid("table {} has no location", table.ident().ToString());
  if (location.back() != '/') location += '/';
  ASSIGN_OR_RETURN(std::vector<FileStatus> files, table.io().ListStatus(location));
  RETURN_IF_ERROR(table.Refresh());
  ASSIGN_OR_RETURN(std::set<std::string> refs, Referenced(table));
  OrphanResult result;
  for (const FileStatus& f : files) {
    ++result.listed;
    if (refs.count(f.path) || f.path.ends_with("/metadata/version-hint.text")) {
      ++result.referenced;
    } else if (f.modified_ms < 0 || f.modified_ms >= older_than) {
      ++result.too_young;
    } else {
      result.orphans.push_back(f.path);
    }
  }
  if (options.dry_run) return result;
  DeleteFiles(table.io(), result.orphans, &result.deleted, &result.failures);
  return result;
}

}  // namespace sluice::maintenance
