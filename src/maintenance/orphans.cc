#include "maintenance/orphans.h"

#include <algorithm>
#include <set>
#include <unordered_set>

#include "maintenance/files.h"
#include "maintenance/manifest_cache.h"
#include "state/state_property.h"

namespace sluice::maintenance {
namespace {

// What the table's metadata references, in one form (NormalizePath): the
// metadata, manifest lists, manifests, statistics and state files by path,
// the data and delete files by hash (a collision keeps a file).
struct References {
  std::set<std::string> paths;
  std::unordered_set<uint64_t> files;
  bool Has(const std::string& normalized) const {
    return paths.count(normalized) || files.count(ManifestCache::FileHash(normalized));
  }
};

Result<References> Referenced(catalog::Table& table, ManifestCache& cache) {
  const iceberg::TableMetadata& m = table.metadata();
  FileIO& io = table.io();
  References refs;
  refs.paths.insert(NormalizePath(table.metadata_location()));
  for (const auto& e : m.metadata_log) refs.paths.insert(NormalizePath(e.metadata_file));
  cache.BindTo(m);
  for (const iceberg::Snapshot& s : m.snapshots) {
    auto manifests = cache.ManifestsOf(io, m, s);
    if (!manifests.ok()) return manifests.status().WithContextF("snapshot {}", s.snapshot_id);
    refs.paths.insert(NormalizePath(s.manifest_list));
    for (const auto& mf : **manifests) {
      if (!refs.paths.insert(NormalizePath(mf->manifest_path)).second) continue;
      ASSIGN_OR_RETURN(const std::vector<uint64_t>* hashes,
                       cache.LiveHashesOf(io, *mf, m.format_version));
      refs.files.insert(hashes->begin(), hashes->end());
    }
  }
  // Statistics files (other engines write them).
  for (const auto* stats : {&m.statistics, &m.partition_statistics}) {
    for (const iceberg::StatisticsFile& f : *stats) refs.paths.insert(NormalizePath(f.path));
  }
  // Window state and key indexes of the pipelines writing the table
  // (docs/state.md).
  for (const auto& [key, value] : m.properties) {
    if (!state::IsStateProperty(key)) continue;
    auto state = state::StateProperty::Decode(key, value);
    RETURN_IF_ERROR_CTX(state.status(), "orphan cleanup cannot tell which state files are live");
    for (const std::string& f : state->files) refs.paths.insert(NormalizePath(f));
  }
  return refs;
}

}  // namespace

Result<OrphanResult> RemoveOrphans(catalog::Table& table, const OrphanOptions& options) {
  RETURN_IF_ERROR(table.Refresh());
  ASSIGN_OR_RETURN(int64_t margin,
                   IntProperty(table.metadata(), "sluice.maintenance.orphan-margin-ms",
                               kDefaultOrphanMarginMs, 0));
  const int64_t older_than = std::min(options.older_than_ms.value_or(options.now_ms - margin),
                                      options.now_ms - options.min_margin_ms);
  std::string location = NormalizePath(table.metadata().location);
  if (location.empty() || location == "/") {
    return Status::Invalid("table {} has no location of its own", table.ident().ToString());
  }
  if (location.back() != '/') location += '/';
  // Another table under this one's location would look like orphans.
  for (const std::string& other : options.other_table_locations) {
    std::string o = NormalizePath(other);
    if (o.back() != '/') o += '/';
    if (o.rfind(location, 0) == 0) {
      return Status::Invalid(
          "table {}: another table lives under its location ({} in {}); orphan cleanup would "
          "take that table's files for orphans, so it refuses (nothing deleted)",
          table.ident().ToString(), other, table.metadata().location);
    }
  }
  // Listed first, referenced second: a file committed in between is both
  // listed and referenced (kept); one listed before its commit is young.
  const std::string known_metadata = NormalizePath(table.metadata_location());
  const iceberg::Snapshot* current = table.metadata().current_snapshot();
  const std::string known_list = current ? NormalizePath(current->manifest_list) : "";
  ASSIGN_OR_RETURN(std::vector<FileStatus> files, table.io().ListStatus(location));
  std::set<std::string> listed;
  for (const FileStatus& f : files) listed.insert(NormalizePath(f.path));
  // Files older than the listing must be in it: if not, the table names its
  // files in a form the listing does not give (or they are missing), and
  // every file would look like an orphan.
  for (const std::string& known : {known_metadata, known_list}) {
    if (!known.empty() && !listed.count(known)) {
      return Status::Corruption(
          "table {}: {} is referenced but listing {} does not find it (missing, or named in "
          "another form): orphan cleanup refuses (nothing deleted)",
          table.ident().ToString(), known, location);
    }
  }
  RETURN_IF_ERROR(table.Refresh());
  ManifestCache own;
  ASSIGN_OR_RETURN(References refs,
                   Referenced(table, options.manifest_cache ? *options.manifest_cache : own));
  OrphanResult result;
  for (const FileStatus& f : files) {
    ++result.listed;
    std::string path = NormalizePath(f.path);
    if (refs.Has(path) || path.ends_with("/metadata/version-hint.text")) {
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

Result<std::map<std::string, std::string>> CatalogTableLocations(catalog::Catalog& catalog,
                                                                 FileIO& io) {
  std::map<std::string, std::string> out;
  ASSIGN_OR_RETURN(auto namespaces, catalog.ListNamespaces());
  for (const auto& ns : namespaces) {
    ASSIGN_OR_RETURN(auto idents, catalog.ListTables(ns));
    for (const catalog::TableIdent& id : idents) {
      auto t = catalog::Table::Load(catalog, io, id);
      if (t.ok()) {
        out[id.ToString()] = (*t)->metadata().location;
        continue;
      }
      if (t.status().code() == StatusCode::kNotFound) continue;  // dropped meanwhile
      // Unreadable from here (a store this process has no settings for): the
      // table is where its metadata file is, <location>/metadata/<file>.
      auto metadata = catalog.LoadTable(id);
      size_t folder = metadata.ok() ? metadata->rfind("/metadata/") : std::string::npos;
      if (folder == std::string::npos) {
        return t.status().WithContextF("loading table {}", id.ToString());
      }
      out[id.ToString()] = metadata->substr(0, folder);
    }
  }
  return out;
}

std::vector<std::string> OtherTableLocations(const std::map<std::string, std::string>& locations,
                                             const catalog::TableIdent& self) {
  std::vector<std::string> out;
  for (const auto& [name, location] : locations) {
    if (name != self.ToString()) out.push_back(location);
  }
  return out;
}

}  // namespace sluice::maintenance
