#include "maintenance/expire.h"

#include <algorithm>
#include <set>

#include "catalog/table_readers.h"
#include "common/kill_point.h"
#include "maintenance/files.h"

namespace sluice::maintenance {
namespace {

constexpr int64_t kDefaultMaxAgeMs = 5LL * 24 * 3600 * 1000;  // Iceberg's default, 5 days
constexpr int64_t kDefaultReaderMaxAgeMs = 7LL * 24 * 3600 * 1000;
constexpr int32_t kDefaultMinKeep = 1;

Result<Reach> ReachOf(FileIO& io, const iceberg::TableMetadata& m,
                      const std::vector<int64_t>& ids) {
  Reach reach;
  for (int64_t id : ids) {
    const iceberg::Snapshot* s = m.snapshot_by_id(id);
    if (s != nullptr) RETURN_IF_ERROR_CTX(AddReach(io, m, *s, &reach), "snapshot {}", id);
  }
  return reach;
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

Result<ExpireResult> ExpireSnapshots(catalog::Table& table, const ExpireOptions& given) {
  RETURN_IF_ERROR(table.Refresh());
  const iceberg::TableMetadata base = table.metadata();  // a copy: the commit replaces it
  ExpireOptions options = given;
  ExpireResult result;
  if (options.readers_catalog != nullptr) {
    ASSIGN_OR_RETURN(int64_t max_age, IntProperty(base, "sluice.maintenance.reader-max-age-ms",
                                                  kDefaultReaderMaxAgeMs, 0));
    ASSIGN_OR_RETURN(auto readers, catalog::FindTableReaders(*options.readers_catalog, table.io(),
                                                             table.ident(), options.readers_cache));
    for (const catalog::TableReader& r : readers) {
      std::string name = fmt::format("{}@{}", r.pipeline, r.snapshot_id);
      if (r.at_ms < options.now_ms - max_age) {
        result.stale_readers.push_back(name);
        continue;
      }
      options.held_snapshots.push_back(r.snapshot_id);
      result.holding_readers.push_back(name);
    }
  }
  ASSIGN_OR_RETURN(std::vector<int64_t> keep, RetainedSnapshots(base, options));
  std::set<int64_t> kept(keep.begin(), keep.end());
  std::vector<const iceberg::Snapshot*> expired;
  for (const iceberg::Snapshot& s : base.snapshots) {
    if (!kept.count(s.snapshot_id)) expired.push_back(&s);
  }
  std::sort(expired.begin(), expired.end(), [](const auto* a, const auto* b) {
    return a->timestamp_ms != b->timestamp_ms ? a->timestamp_ms < b->timestamp_ms
                                              : a->sequence_number < b->sequence_number;
  });
  for (const auto* s : expired) result.expired.push_back(s->snapshot_id);
  if (result.expired.empty()) return result;

  FileIO& io = table.io();
  ASSIGN_OR_RETURN(Reach candidates, ReachOf(io, base, result.expired));
  if (!options.dry_run) {
    std::set<int64_t> planned(result.expired.begin(), result.expired.end());
    RETURN_IF_ERROR(table.UpdateMetadata(
        [&](const iceberg::TableMetadata& now) -> Result<iceberg::TableMetadata> {
          // Re-judged on the refreshed metadata: a snapshot tagged or made
          // current meanwhile stays.
          ASSIGN_OR_RETURN(std::vector<int64_t> still, RetainedSnapshots(now, options));
          std::set<int64_t> stay(still.begin(), still.end());
          std::set<int64_t> gone;
          for (int64_t id : planned) {
            if (!stay.count(id)) gone.insert(id);
          }
          iceberg::TableMetadata m = now;
          m.RemoveSnapshots(gone);
          return m;
        }));
  }
  // What no snapshot of the (committed) metadata reaches any more.
  const iceberg::TableMetadata& after = table.metadata();
  std::vector<int64_t> remaining = options.dry_run ? keep : AllIds(after);
  ASSIGN_OR_RETURN(Reach live, ReachOf(io, options.dry_run ? base : after, remaining));
  if (!options.dry_run) {
    std::erase_if(result.expired, [&](int64_t id) { return after.snapshot_by_id(id) != nullptr; });
  }
  auto only_expired = [&](const std::set<std::string>& from, std::vector<std::string>* out) {
    for (const std::string& p : from) {
      if (!live.Has(p)) out->push_back(p);
    }
  };
  only_expired(candidates.data_files, &result.data_files);
  only_expired(candidates.delete_files, &result.delete_files);
  only_expired(candidates.manifests, &result.manifests);
  only_expired(candidates.manifest_lists, &result.manifest_lists);
  // Statistics files of the expired snapshots that no remaining one names.
  const iceberg::TableMetadata& kept_md = options.dry_run ? base : after;
  std::set<std::string> named, gone;
  std::set<int64_t> left(remaining.begin(), remaining.end());
  for (const auto* stats : {&kept_md.statistics, &kept_md.partition_statistics}) {
    for (const iceberg::StatisticsFile& f : *stats) {
      if (left.count(f.snapshot_id)) named.insert(f.path);
    }
  }
  std::set<int64_t> expired_ids(result.expired.begin(), result.expired.end());
  for (const auto* stats : {&base.statistics, &base.partition_statistics}) {
    for (const iceberg::StatisticsFile& f : *stats) {
      if (expired_ids.count(f.snapshot_id) && !named.count(f.path)) gone.insert(f.path);
    }
  }
  result.statistics_files.assign(gone.begin(), gone.end());
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
