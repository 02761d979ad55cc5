#include "maintenance/manifests.h"

#include <set>
#include <utility>

#include "iceberg/manifest.h"
#include "maintenance/policy.h"

namespace sluice::maintenance {

Result<ManifestCount> CountManifests(const catalog::Table& table,
                                     const catalog::CommitOptions& commit) {
  ManifestCount c;
  const iceberg::TableMetadata& md = table.metadata();
  const iceberg::Snapshot* snap = md.current_snapshot();
  if (snap == nullptr) return c;
  ASSIGN_OR_RETURN(auto list,
                   iceberg::ReadManifestList(table.io(), snap->manifest_list, md.format_version));
  std::set<std::pair<int32_t, int>> groups;
  for (const iceberg::ManifestFile& m : list) {
    ++c.all;
    if (catalog::IsSmallManifest(m, commit)) {
      ++c.small;
      groups.insert({m.partition_spec_id, static_cast<int>(m.content)});
    }
  }
  c.small_groups = static_cast<int64_t>(groups.size());
  return c;
}

Result<ManifestRewriteResult> RewriteManifests(catalog::Table& table,
                                               const ManifestRewriteOptions& options,
                                               const catalog::CommitOptions& commit) {
  const std::string where = "table " + table.ident().ToString();
  ManifestRewriteResult r;
  auto counted = CountManifests(table, commit);
  if (!counted.ok()) return counted.status().WithContext(where);
  const ManifestCount count = *counted;
  r.manifests_before = count.all;
  r.small_before = count.small;
  int64_t max = 0;
  if (options.max_manifests) {
    max = *options.max_manifests;
  } else {
    auto policy = PolicyOf(table.metadata());
    if (!policy.ok()) return policy.status().WithContext(where);
    max = policy->max_manifests;
  }
  // Never a rewrite that cannot merge anything (one small manifest per group
  // left already): it would commit a snapshot that changes nothing.
  const bool due = count.small > count.small_groups && (options.force || count.small > max);
  if (!due || options.dry_run) return r;
  catalog::SnapshotUpdate u;
  u.kind = catalog::ChangeKind::kRewriteManifests;
  ASSIGN_OR_RETURN(int64_t id, table.Commit(u, commit));
  r.snapshot_id = id;
  const iceberg::Snapshot* snap = table.metadata().snapshot_by_id(id);
  if (snap != nullptr) {
    auto num = [&](const char* key) -> int64_t {
      auto it = snap->summary.find(key);
      return it == snap->summary.end() ? 0 : std::strtoll(it->second.c_str(), nullptr, 10);
    };
    r.entries = num("entries-processed");
    r.manifests_after = num("manifests-created") + num("manifests-kept");
  }
  return r;
}

}  // namespace sluice::maintenance
