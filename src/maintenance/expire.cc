#include "maintenance/expire.h"

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <unordered_set>

#include "catalog/table_readers.h"
#include "common/kill_point.h"
#include "maintenance/files.h"
#include "maintenance/manifest_cache.h"

namespace sluice::maintenance {
namespace {

constexpr int64_t kDefaultMaxAgeMs = 5LL * 24 * 3600 * 1000;  // Iceberg's default, 5 days
constexpr int64_t kDefaultReaderMaxAgeMs = 7LL * 24 * 3600 * 1000;
constexpr int32_t kDefaultMinKeep = 1;

// What snapshots list: their manifest lists and the manifests in those, by
// their paths in one form (NormalizePath): a file two lists name in two
// forms is one file.
struct Listed {
  std::map<std::string, std::string> lists;  // the path as a snapshot names it
  std::map<std::string, std::shared_ptr<const iceberg::ManifestFile>> manifests;

  std::set<std::string> NamedLists() const {
    std::set<std::string> paths;
    for (const auto& [key, named] : lists) paths.insert(named);
    return paths;
  }
  std::set<std::string> NamedManifests() const {
    std::set<std::string> paths;
    for (const auto& [key, mf] : manifests) paths.insert(mf->manifest_path);
    return paths;
  }
};

Result<Listed> ListedBy(ManifestCache& cache, FileIO& io, const iceberg::TableMetadata& m,
                        const std::vector<int64_t>& ids) {
  Listed out;
  for (int64_t id : ids) {
    const iceberg::Snapshot* s = m.snapshot_by_id(id);
    if (s == nullptr) continue;
    auto manifests = cache.ManifestsOf(io, m, *s);
    if (!manifests.ok()) return manifests.status().WithContextF("snapshot {}", id);
    out.lists.emplace(NormalizePath(s->manifest_list), s->manifest_list);
    for (const auto& mf : **manifests) out.manifests.emplace(NormalizePath(mf->manifest_path), mf);
  }
  return out;
}

// The data and delete files a manifest lists as live.
struct LiveFiles {
  std::vector<std::string> data_files, delete_files;
};
using ManifestFiles = std::map<std::string, LiveFiles>;  // by Listed's key

// Reads whole the manifests `expired` lists and `live` does not (only expired
// snapshots reach them), those `read` does not hold yet. One at a time: the
// service's CPU budget counts its own thread.
Status ReadOnlyExpired(FileIO& io, int format_version, const Listed& expired, const Listed& live,
                       ManifestFiles* read) {
  std::vector<std::string> keys;
  std::vector<iceberg::ManifestFile> todo;
  for (const auto& [key, mf] : expired.manifests) {
    if (live.manifests.count(key) || read->count(key)) continue;
    keys.push_back(key);
    todo.push_back(*mf);
  }
  if (todo.empty()) return Status::OK();
  iceberg::ManifestReadOptions options;
  options.column_stats = false;
  ASSIGN_OR_RETURN(auto entries,
                   iceberg::ReadManifests(io, todo, format_version, options, /*threads=*/1));
  for (size_t i = 0; i < todo.size(); ++i) {
    LiveFiles& files = (*read)[keys[i]];
    for (iceberg::ManifestEntry& e : entries[i]) {
      if (e.status == iceberg::EntryStatus::kDeleted) continue;  // gone in this one
      (e.file.content == iceberg::FileContent::kData ? files.data_files : files.delete_files)
          .push_back(std::move(e.file.file_path));
    }
  }
  return Status::OK();
}

// Drops from each of `candidates` every file a manifest of `live` lists as
// live (by hash: a collision keeps a file).
Status DropLive(ManifestCache& cache, FileIO& io, int format_version, const Listed& live,
                const std::vector<std::set<std::string>*>& candidates) {
  std::unordered_set<uint64_t> wanted, found;
  for (const auto* set : candidates) {
    for (const std::string& p : *set) wanted.insert(ManifestCache::FileHash(p));
  }
  for (const auto& [key, mf] : live.manifests) {
    if (found.size() == wanted.size()) break;  // (every candidate is live)
    ASSIGN_OR_RETURN(const std::vector<uint64_t>* hashes,
                     cache.LiveHashesOf(io, *mf, format_version));
    for (uint64_t h : *hashes) {
      if (wanted.count(h)) found.insert(h);
    }
  }
  for (auto* set : candidates) {
    std::erase_if(*set,
                  [&](const std::string& p) { return found.count(ManifestCache::FileHash(p)); });
  }
  return Status::OK();
}

std::vector<int64_t> AllIds(const iceberg::TableMetadata& m) {
  std::vector<int64_t> ids;
  for (const iceberg::Snapshot& s : m.snapshots) ids.push_back(s.snapshot_id);
  return ids;
}

}  // namespace

Result<std::vector<int64_t>> RetainedSnapshots(const iceberg::TableMetadata& m,
                                               const ExpireOptions& options) {
  ASSIGN_OR_RETURN(int64_t max_age,
                   IntProperty(m, "history.expire.max-snapshot-age-ms", kDefaultMaxAgeMs, 0));
  ASSIGN_OR_RETURN(int64_t min_keep,
                   IntProperty(m, "history.expire.min-snapshots-to-keep", kDefaultMinKeep, 0));
  int64_t cutoff = options.older_than_ms.value_or(options.now_ms - max_age);
  std::set<int64_t> retained, on_branch;
  if (m.current_snapshot_id) retained.insert(*m.current_snapshot_id);
  for (const auto& [name, ref] : m.refs) {
    retained.insert(ref.snapshot_id);
    if (!ref.is_branch) continue;
    int64_t keep = std::max<int64_t>(
        {ref.min_snapshots_to_keep.value_or(0), min_keep, options.retain_last.value_or(0)});
    int64_t branch_cutoff =
        ref.max_snapshot_age_ms ? options.now_ms - *ref.max_snapshot_age_ms : cutoff;
    int64_t i = 0;
    for (const iceberg::Snapshot* s : m.Ancestry(ref.snapshot_id)) {
      on_branch.insert(s->snapshot_id);
      if (i++ < keep || s->timestamp_ms >= branch_cutoff) retained.insert(s->snapshot_id);
    }
  }
  for (const iceberg::Snapshot& s : m.snapshots) {
    if (!on_branch.count(s.snapshot_id) && s.timestamp_ms >= cutoff) retained.insert(s.snapshot_id);
  }
  // What readers still have to read: from main's head back to where each
  // stands, and the parent there (a changelog reader diffs against it).
  for (int64_t held : options.held_snapshots) {
    const iceberg::Snapshot* h = m.snapshot_by_id(held);
    if (h == nullptr) continue;
    retained.insert(held);
    if (h->parent_snapshot_id && m.snapshot_by_id(*h->parent_snapshot_id)) {
      retained.insert(*h->parent_snapshot_id);
    }
    if (!m.current_snapshot_id) continue;
    auto chain = m.Ancestry(*m.current_snapshot_id);
    bool on_main = std::any_of(chain.begin(), chain.end(),
                               [&](const iceberg::Snapshot* s) { return s->snapshot_id == held; });
    if (!on_main) continue;
    for (const iceberg::Snapshot* s : chain) {
      if (s->snapshot_id == held) break;
      retained.insert(s->snapshot_id);
    }
  }
  return std::vector<int64_t>(retained.begin(), retained.end());
}

namespace {

// Holds the snapshots the table's FROM TABLE readers stand at
// (options->held_snapshots), but those of readers past the age limit; names
// both kinds in `result`.
Status HoldReaders(catalog::Table& table, const iceberg::TableMetadata& base,
                   ExpireOptions* options, ExpireResult* result) {
  if (options->readers_catalog == nullptr) return Status::OK();
  ASSIGN_OR_RETURN(int64_t max_age, IntProperty(base, "sluice.maintenance.reader-max-age-ms",
                                                kDefaultReaderMaxAgeMs, 0));
  ASSIGN_OR_RETURN(auto readers, catalog::FindTableReaders(*options->readers_catalog, table.io(),
                                                           table.ident(), options->readers_cache));
  for (const catalog::TableReader& r : readers) {
    std::string name = fmt::format("{}@{}", r.pipeline, r.snapshot_id);
    if (r.at_ms < options->now_ms - max_age) {
      result->stale_readers.push_back(name);
      continue;
    }
    options->held_snapshots.push_back(r.snapshot_id);
    result->holding_readers.push_back(name);
  }
  return Status::OK();
}

// The snapshots of `m` that `keep` does not name, oldest first.
std::vector<int64_t> Unkept(const iceberg::TableMetadata& m, const std::vector<int64_t>& keep) {
  std::set<int64_t> kept(keep.begin(), keep.end());
  std::vector<const iceberg::Snapshot*> expired;
  for (const iceberg::Snapshot& s : m.snapshots) {
    if (!kept.count(s.snapshot_id)) expired.push_back(&s);
  }
  std::sort(expired.begin(), expired.end(), [](const auto* a, const auto* b) {
    return a->timestamp_ms != b->timestamp_ms ? a->timestamp_ms < b->timestamp_ms
                                              : a->sequence_number < b->sequence_number;
  });
  std::vector<int64_t> ids;
  for (const auto* s : expired) ids.push_back(s->snapshot_id);
  return ids;
}

// Removes the `planned` snapshots from the table's metadata, in one commit,
// but those the refreshed metadata retains (tagged or made current meanwhile).
Status CommitRemoval(catalog::Table& table, const std::vector<int64_t>& planned,
                     const ExpireOptions& options) {
  return table.UpdateMetadata(
      [&](const iceberg::TableMetadata& now) -> Result<iceberg::TableMetadata> {
        ASSIGN_OR_RETURN(std::vector<int64_t> still, RetainedSnapshots(now, options));
        std::set<int64_t> stay(still.begin(), still.end());
        std::set<int64_t> gone;
        for (int64_t id : planned) {
          if (!stay.count(id)) gone.insert(id);
        }
        iceberg::TableMetadata m = now;
        m.RemoveSnapshots(gone);
        return m;
      });
}

// Sets the files of `result` that the `expired` snapshots reached and the
// `live` ones do not: manifest lists, manifests (read whole in
// `only_expired`), and the data and delete files those list that no live
// manifest lists.
Status SetUnreached(ManifestCache& cache, FileIO& io, int format_version, const Listed& expired,
                    const Listed& live, const ManifestFiles& only_expired, ExpireResult* result) {
  for (const auto& [key, named] : expired.lists) {
    if (!live.lists.count(key)) result->manifest_lists.push_back(named);
  }
  std::set<std::string> data_files, delete_files;
  for (const auto& [key, mf] : expired.manifests) {
    if (live.manifests.count(key)) continue;  // (and so is every file it lists as live)
    result->manifests.push_back(mf->manifest_path);
    const LiveFiles& files = only_expired.at(key);
    data_files.insert(files.data_files.begin(), files.data_files.end());
    delete_files.insert(files.delete_files.begin(), files.delete_files.end());
  }
  RETURN_IF_ERROR(DropLive(cache, io, format_version, live, {&data_files, &delete_files}));
  result->data_files.assign(data_files.begin(), data_files.end());
  result->delete_files.assign(delete_files.begin(), delete_files.end());
  return Status::OK();
}

// Statistics files of the `expired` snapshots of `base` that no snapshot of
// `remaining` (in `kept`) names.
std::vector<std::string> StatisticsGone(const iceberg::TableMetadata& base,
                                        const iceberg::TableMetadata& kept,
                                        const std::vector<int64_t>& remaining,
                                        const std::vector<int64_t>& expired) {
  std::set<std::string> named, gone;
  std::set<int64_t> left(remaining.begin(), remaining.end());
  for (const auto* stats : {&kept.statistics, &kept.partition_statistics}) {
    for (const iceberg::StatisticsFile& f : *stats) {
      if (left.count(f.snapshot_id)) named.insert(f.path);
    }
  }
  std::set<int64_t> expired_ids(expired.begin(), expired.end());
  for (const auto* stats : {&base.statistics, &base.partition_statistics}) {
    for (const iceberg::StatisticsFile& f : *stats) {
      if (expired_ids.count(f.snapshot_id) && !named.count(f.path)) gone.insert(f.path);
    }
  }
  return std::vector<std::string>(gone.begin(), gone.end());
}

}  // namespace

Result<ExpireResult> ExpireSnapshots(catalog::Table& table, const ExpireOptions& given) {
  RETURN_IF_ERROR(table.Refresh());
  const iceberg::TableMetadata base = table.metadata();  // a copy: the commit replaces it
  ExpireOptions options = given;
  ExpireResult result;
  RETURN_IF_ERROR(HoldReaders(table, base, &options, &result));
  ASSIGN_OR_RETURN(std::vector<int64_t> keep, RetainedSnapshots(base, options));
  result.expired = Unkept(base, keep);
  if (result.expired.empty()) return result;

  FileIO& io = table.io();
  ManifestCache own;
  ManifestCache& cache = options.manifest_cache != nullptr ? *options.manifest_cache : own;
  cache.BindTo(base);
  // Read before the commit: a manifest list, or a manifest only expired
  // snapshots reach, that cannot be read refuses the expiry instead of
  // committing one that cannot tell what to delete. (What is read after it,
  // the lists and manifests that remain, failing leaves files for orphan
  // cleanup, never deletes one.)
  ASSIGN_OR_RETURN(Listed expired, ListedBy(cache, io, base, result.expired));
  ASSIGN_OR_RETURN(Listed live, ListedBy(cache, io, base, keep));
  ManifestFiles only_expired;
  RETURN_IF_ERROR(ReadOnlyExpired(io, base.format_version, expired, live, &only_expired));
  std::vector<int64_t> remaining = keep;
  if (!options.dry_run) {
    if (options.before_commit) options.before_commit();
    RETURN_IF_ERROR(CommitRemoval(table, result.expired, options));
    // What no snapshot of the committed metadata reaches any more.
    const iceberg::TableMetadata& after = table.metadata();
    remaining = AllIds(after);
    ASSIGN_OR_RETURN(live, ListedBy(cache, io, after, remaining));
    std::erase_if(result.expired, [&](int64_t id) { return after.snapshot_by_id(id) != nullptr; });
    // (a manifest that a concurrent expiry left to the expired snapshots
    // alone; gone if that expiry deleted it: then nothing is deleted here)
    RETURN_IF_ERROR_CTX(
        ReadOnlyExpired(io, after.format_version, expired, live, &only_expired),
        "the expiry committed but deleted no file: a manifest only expired snapshots reach "
        "could not be read (another expiry may have deleted it; orphan cleanup takes what is "
        "left)");
  }
  const iceberg::TableMetadata& kept_md = options.dry_run ? base : table.metadata();
  RETURN_IF_ERROR(
      SetUnreached(cache, io, kept_md.format_version, expired, live, only_expired, &result));
  if (!options.dry_run) cache.Retain(live.NamedLists(), live.NamedManifests());  // (dry: all stay)
  result.statistics_files = StatisticsGone(base, kept_md, remaining, result.expired);
  if (options.dry_run) return result;
  // Contents before the files that list them: a crash midway leaves orphans,
  // never a manifest naming a deleted file.
  KillPoint("maintenance.expire.before_delete");
  for (const auto* files : {&result.data_files, &result.delete_files, &result.statistics_files,
                            &result.manifests, &result.manifest_lists}) {
    DeleteFiles(io, *files, &result.deleted, &result.failures);
  }
  return result;
}

}  // namespace sluice::maintenance
