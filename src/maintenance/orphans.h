// RemoveOrphans: deletes the files under a table's location that nothing
// references and that are older than a safety margin (docs/maintenance.md).
//
// Referenced: every snapshot's manifest list, manifests and live data and
// delete files (those by the hash of their path: a collision keeps a file); the current metadata
// file and those in the metadata log; the state files (window state, key indexes) the table's
// `sluice.state.*` and `sluice.keys.*` properties name; `metadata/version-hint.text`, and the
// statistics files the current metadata names. Paths are compared in one form (no "file:" scheme,
// no doubled slashes); if a file the table referenced before the listing is not in it, the table
// names its files in another form and nothing is deleted. A table with another table under its
// location is refused. A file younger than the margin (default 1 h) is never deleted, referenced or
// not: it may belong to a commit in flight (a pipeline's staged files, another engine's), and the
// margin must exceed the longest such commit. A file whose age the store cannot tell is kept.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "catalog/catalog.h"
#include "catalog/table.h"

namespace sluice::maintenance {

class ManifestCache;

struct OrphanOptions {
  int64_t now_ms = 0;  // the clock (injected)
  // Only files last modified before this (default: now minus the table's
  // sluice.maintenance.orphan-margin-ms, else kDefaultOrphanMarginMs).
  std::optional<int64_t> older_than_ms;
  // At least this margin, whatever the table property or older_than_ms say:
  // a runtime whose pipelines may hold closed, uncommitted files longer than
  // the table's margin (long commit intervals) raises it.
  int64_t min_margin_ms = 0;
  bool dry_run = false;
  // Where the catalog's other tables live: cleanup refuses a table with one
  // of them under its location (their files would look like orphans).
  std::vector<std::string> other_table_locations;
  // What the table's manifest lists and manifests list, shared with its
  // expiries (the service's): only what was committed since is read.
  // Optional: without, each list and manifest is read once.
  ManifestCache* manifest_cache = nullptr;
};

struct OrphanResult {
  int64_t listed = 0, referenced = 0, too_young = 0;
  std::vector<std::string> orphans;  // deleted (or, dry, to delete)
  int64_t deleted = 0;
  std::vector<std::string> failures;  // could not be deleted
};

// The default margin: files must be this old to be removed.
constexpr int64_t kDefaultOrphanMarginMs = 3600 * 1000;

Result<OrphanResult> RemoveOrphans(catalog::Table& table, const OrphanOptions& options);

// Where every table of `catalog` lives, by name ("ns.table"), each loaded once.
Result<std::map<std::string, std::string>> CatalogTableLocations(catalog::Catalog& catalog,
                                                                 FileIO& io);

// The locations in `locations` other than `self`'s: what
// OrphanOptions::other_table_locations wants.
std::vector<std::string> OtherTableLocations(const std::map<std::string, std::string>& locations,
                                             const catalog::TableIdent& self);

}  // namespace sluice::maintenance
