// Internal to src/catalog: the manifests of a commit (table_commit.cc),
// written, merged at commit time (commit.manifest.min-count-to-merge) and
// clustered by partition (ChangeKind::kRewriteManifests).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "catalog/table.h"
#include "iceberg/manifest.h"
#include "iceberg/table_metadata.h"
#include "io/file_io.h"

namespace sluice::catalog::internal {

// Files written by a commit, removed if the commit does not land.
struct WrittenFiles {
  FileIO* io;
  std::vector<std::string> paths;
  void DeleteAll() {
    for (const auto& p : paths) (void)io->Delete(p);
    paths.clear();
  }
};

// A manifest of `entries` for `spec_id`, written for `snapshot_id` under the
// table's metadata folder (its path added to `written`).
Result<iceberg::ManifestFile> WriteManifest(FileIO& io, const iceberg::TableMetadata& base,
                                            int32_t spec_id, iceberg::ManifestContent content,
                                            int64_t snapshot_id,
                                            const std::vector<iceberg::ManifestEntry>& entries,
                                            WrittenFiles* written);

// Merges the small manifests of each (spec, content) group into one when a
// group has more than `min_count` manifests, so planning stays fast after
// thousands of commits. Merged entries become EXISTING with their sequence
// numbers; DELETED entries of earlier snapshots are dropped.
Result<std::vector<iceberg::ManifestFile>> MergeManifests(
    FileIO& io, const iceberg::TableMetadata& base, std::vector<iceberg::ManifestFile> manifests,
    int64_t snapshot_id, const CommitOptions& o, WrittenFiles* written);

// What ClusterManifests did, for the snapshot summary.
struct ManifestChange {
  int64_t created = 0, replaced = 0, kept = 0, entries = 0;
};

// ChangeKind::kRewriteManifests: the small manifests of each (spec,
// content) group, their live entries (EXISTING, sequence numbers and row
// lineage kept; DELETED entries dropped) sorted by partition and cut into
// manifests of at most about the target size, judged by the bytes per entry
// of the manifests read (an overestimate for manifests of few entries: the
// next rewrite merges what came out small).
Result<std::vector<iceberg::ManifestFile>> ClusterManifests(
    FileIO& io, const iceberg::TableMetadata& base, std::vector<iceberg::ManifestFile> manifests,
    int64_t snapshot_id, const CommitOptions& o, WrittenFiles* written, ManifestChange* change);

}  // namespace sluice::catalog::internal
