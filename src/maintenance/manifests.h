// RewriteManifests: keeps the number of manifests planning opens bounded.
//
// Every commit adds a manifest, and every compaction rewrites the manifests
// that held the files it replaced: a streaming table gathers hundreds of
// small manifests, and planning opens them all, filling the DELETED entries
// of compactions along the way. Once the current snapshot has more small
// manifests (catalog::IsSmallManifest: below half the target size) than the policy's
// `max_manifests`, they are rewritten into few, their live entries sorted by
// partition so that each covers a narrow range of partitions (a selective
// scan then skips most by their bounds), in one `replace` snapshot that adds
// and removes no file (ChangeKind::kRewriteManifests). The rewrite is
// staged on the metadata each commit attempt refreshes to: ingest commits
// landing meanwhile are never undone and never conflict with it.
#pragma once

#include <cstdint>
#include <optional>

#include "catalog/table.h"

namespace sluice::maintenance {

struct ManifestRewriteOptions {
  // Rewrite above this many small manifests (the policy's max_manifests when unset).
  std::optional<int64_t> max_manifests;
  bool force = false;    // rewrite whatever the count (while a rewrite would merge some)
  bool dry_run = false;  // count only
};

struct ManifestRewriteResult {
  int64_t manifests_before = 0;        // in the current snapshot, data and deletes
  int64_t small_before = 0;            // of them, small (catalog::IsSmallManifest)
  int64_t manifests_after = 0;         // in the rewrite's snapshot (0 when none)
  int64_t entries = 0;                 // live entries rewritten
  std::optional<int64_t> snapshot_id;  // the rewrite's, when one was committed
};

// The small manifests of `table`'s current snapshot (as loaded), and all of them.
struct ManifestCount {
  int64_t all = 0, small = 0;
  // (spec, content) groups among the small ones: a rewrite leaves at least
  // one manifest per group, so it gains nothing unless small > small_groups.
  int64_t small_groups = 0;
};
Result<ManifestCount> CountManifests(const catalog::Table& table,
                                     const catalog::CommitOptions& commit = {});

Result<ManifestRewriteResult> RewriteManifests(catalog::Table& table,
                                               const ManifestRewriteOptions& options,
                                               const catalog::CommitOptions& commit = {});

}  // namespace sluice::maintenance
