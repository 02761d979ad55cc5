// ExpireSnapshots: removes the snapshots past a table's retention from its
// metadata and deletes the files that only they reach (docs/maintenance.md).
//
// Retention, as Iceberg defines it:
//   - every snapshot a ref (branch or tag) points at is kept;
//   - along each branch's ancestry, the newest `min_snapshots_to_keep` (the
//     ref's own, else `history.expire.min-snapshots-to-keep`, default 1, or
//     `retain_last`: the largest of them) and every snapshot newer than the
//     cutoff (the ref's `max-snapshot-age-ms`, else `older_than_ms`, else now
//     minus `history.expire.max-snapshot-age-ms`, default 5 days) are kept;
//   - a snapshot on no branch is kept while newer than the cutoff.
// Everything else expires. The files deleted are exactly those reachable
// from the expired snapshots (manifest lists, manifests, data and delete
// files) and from no snapshot the committed metadata still holds: they are
// computed again from the table after the commit, so a snapshot a
// concurrent writer tagged meanwhile keeps its files. Only the manifests no
// remaining snapshot lists are read whole: a file a manifest both sides list
// is live. Whether a file of theirs is still live elsewhere is told by the
// hashes of what the remaining manifests list (ManifestCache), so a
// collision can keep a file, never delete a live one.
//
// A pipeline's recovery does not need old snapshots (its checkpoint is also
// a table property); a downstream table source positioned at an expired
// snapshot fails at start (kOutOfRange) and must be re-pointed.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "catalog/table.h"
#include "catalog/table_readers.h"

namespace sluice::maintenance {

class ManifestCache;

struct ExpireOptions {
  int64_t now_ms = 0;                    // the clock (injected)
  std::optional<int64_t> older_than_ms;  // the cutoff, instead of the table's max age
  std::optional<int32_t> retain_last;    // at least this many of each branch's newest
  bool dry_run = false;                  // plan only: commit and delete nothing
  // Pipelines reading the table FROM TABLE (catalog/table_readers.h): when
  // set, ExpireSnapshots finds them in this catalog's tables and keeps the
  // snapshot each stands at, its parent and every newer snapshot of main —
  // unless the reader last committed longer ago than the table's
  // sluice.maintenance.reader-max-age-ms (default 7 days: a pipeline long gone
  // must not hold the table's history forever).
  catalog::Catalog* readers_catalog = nullptr;
  // Remembers the readers of tables not committed to since (a service's
  // expiries of many tables share one); optional.
  catalog::TableReadersCache* readers_cache = nullptr;
  // The snapshots readers stand at (filled from readers_catalog, or given).
  std::vector<int64_t> held_snapshots;
  // What the table's manifest lists and manifests list, kept from one expiry
  // of the table to the next (the service's): each reads only the metadata
  // committed since. Optional: without, every list and manifest the table
  // reaches is read once.
  ManifestCache* manifest_cache = nullptr;
  // Called after the plan's files are read, before the metadata commit
  // (tests: a concurrent writer's moment).
  std::function<void()> before_commit;
};

struct ExpireResult {
  std::vector<int64_t> expired;  // snapshot ids, oldest first
  // Files the expiry deletes (or, dry, would delete), by kind.
  std::vector<std::string> manifest_lists, manifests, data_files, delete_files;
  // Statistics and partition statistics files of expired snapshots that no
  // snapshot left names.
  std::vector<std::string> statistics_files;
  int64_t deleted = 0;                // files deleted (0 when dry)
  std::vector<std::string> failures;  // files that could not be deleted (left for orphan cleanup)
  // Readers whose positions kept snapshots ("pipeline@snapshot"), and those
  // ignored as older than the reader age limit.
  std::vector<std::string> holding_readers, stale_readers;
};

Result<ExpireResult> ExpireSnapshots(catalog::Table& table, const ExpireOptions& options);

// The snapshot ids `metadata` retains under `options` (exposed for tests).
Result<std::vector<int64_t>> RetainedSnapshots(const iceberg::TableMetadata& metadata,
                                               const ExpireOptions& options);

}  // namespace sluice::maintenance
