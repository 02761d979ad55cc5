// ExpireSnapshots on a real table: what it keeps (the newest, refs, the
// retention), what it deletes (exactly what only expired snapshots reach),
// and a dry run that changes nothing.
#include "maintenance/expire.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "catalog/row_delete.h"
#include "catalog/table_readers.h"
#include "io/fault_injection_file_io.h"
#include "maintenance/compact.h"
#include "maintenance/expire_test_util.h"
#include "maintenance/manifest_cache.h"
#include "maintenance/manifests.h"

namespace sluice::maintenance {
namespace {

TEST_F(ExpireTest, OldSnapshotsGoWithTheFilesOnlyTheyReach) {
  AppendIds(0, 10);
  AppendIds(10, 20);
  AppendIds(20, 30);
  ASSERT_OK(CompactTable(*table_, RewriteAll()));  // the three files become one
  AppendIds(30, 40);
  ASSERT_EQ(table_->metadata().snapshots.size(), 5u);
  std::set<std::string> before = Files();
  std::set<int64_t> ids = Ids();

  ExpireOptions o;
  o.now_ms = Newest() + 1;
  o.older_than_ms = Newest() + 1;  // everything is old: only what must stay stays
  ASSERT_OK_AND_ASSIGN(ExpireResult r, ExpireSnapshots(*table_, o));
  EXPECT_EQ(r.expired.size(), 4u) << "all but the current snapshot (min-snapshots-to-keep 1)";
  ASSERT_EQ(table_->metadata().snapshots.size(), 1u);
  EXPECT_EQ(r.data_files.size(), 3u) << "the three files the rewrite replaced";
  EXPECT_EQ(r.manifest_lists.size(), 4u);
  EXPECT_TRUE(r.failures.empty());
  EXPECT_EQ(r.deleted, static_cast<int64_t>(r.data_files.size() + r.delete_files.size() +
                                            r.manifests.size() + r.manifest_lists.size()));
  for (const auto* files : {&r.data_files, &r.manifests, &r.manifest_lists}) {
    for (const std::string& p : *files) EXPECT_FALSE(std::filesystem::exists(OnDisk(p))) << p;
  }
  EXPECT_EQ(Ids(), ids) << "the current snapshot reads the same rows";
  // Nothing else went, and only the expiry's own metadata file came.
  std::set<std::string> after = Files();
  EXPECT_EQ(after.size(), before.size() - static_cast<size_t>(r.deleted) + 1);
  int fresh = 0;
  for (const std::string& f : after) fresh += before.count(f) ? 0 : 1;
  EXPECT_EQ(fresh, 1);
  // The snapshot log names no expired snapshot.
  for (const auto& e : table_->metadata().snapshot_log) {
    EXPECT_NE(table_->metadata().snapshot_by_id(e.snapshot_id), nullptr);
  }
}

// Statistics files (another engine's ANALYZE) go with the snapshots they
// describe, unless a snapshot that stays names the same file; sluice's own
// commits keep them in the metadata meanwhile.
TEST_F(ExpireTest, StatisticsFilesGoWithTheirSnapshots) {
  AppendIds(0, 10);
  AppendIds(10, 20);
  const std::string dir = OnDisk(table_->metadata().location) + "/metadata/";
  auto stats_of = [&](int64_t snapshot, const std::string& name) {
    std::string path = table_->metadata().location + "/metadata/" + name;
    EXPECT_OK(io_->WriteFile(path, "PUFFIN"));
    nlohmann::json j = {{"snapshot-id", snapshot},
                        {"statistics-path", path},
                        {"file-size-in-bytes", 6},
                        {"file-footer-size-in-bytes", 0},
                        {"blob-metadata", nlohmann::json::array()}};
    return iceberg::StatisticsFile{snapshot, path, j.dump()};
  };
  const int64_t first = table_->metadata().snapshots[0].snapshot_id;
  const int64_t second = table_->metadata().snapshots[1].snapshot_id;
  iceberg::StatisticsFile a = stats_of(first, "a.stats");
  iceberg::StatisticsFile shared = stats_of(first, "shared.pstats");
  iceberg::StatisticsFile shared_too = shared;
  shared_too.snapshot_id = second;
  ASSERT_OK(table_->UpdateMetadata([&](const iceberg::TableMetadata& m) {
    iceberg::TableMetadata next = m;
    next.statistics = {a};
    next.partition_statistics = {shared, shared_too};
    return Result<iceberg::TableMetadata>(next);
  }));
  AppendIds(20, 30);  // a commit of sluice's own keeps them
  ASSERT_EQ(table_->metadata().statistics.size(), 1u);
  ASSERT_EQ(table_->metadata().partition_statistics.size(), 2u);

  ExpireOptions o;
  o.now_ms = Newest() + 1;
  o.older_than_ms = Newest() + 1;
  o.retain_last = 2;  // the second and third stay
  ASSERT_OK_AND_ASSIGN(ExpireResult r, ExpireSnapshots(*table_, o));
  ASSERT_EQ(r.expired, std::vector<int64_t>{first});
  EXPECT_EQ(r.statistics_files, std::vector<std::string>{a.path}) << "shared is still named";
  EXPECT_FALSE(std::filesystem::exists(dir + "a.stats"));
  EXPECT_TRUE(std::filesystem::exists(dir + "shared.pstats"));
  EXPECT_TRUE(table_->metadata().statistics.empty());
  ASSERT_EQ(table_->metadata().partition_statistics.size(), 1u);
  EXPECT_EQ(table_->metadata().partition_statistics[0].snapshot_id, second);
}

// A downstream pipeline reading db.events FROM TABLE records where it stands
// in its own table (catalog/table_readers.h): that snapshot, its parent and
// every newer one stay, however old; a reader silent for longer than the age
// limit holds nothing.
TEST_F(ExpireTest, SnapshotsAReaderStillNeedsStay) {
  for (int i = 0; i < 6; ++i) AppendIds(i * 10, i * 10 + 10);
  std::vector<int64_t> chain;  // oldest first
  for (const auto* s : table_->metadata().Ancestry(*table_->metadata().current_snapshot_id)) {
    chain.insert(chain.begin(), s->snapshot_id);
  }
  ASSERT_EQ(chain.size(), 6u);
  // The reader's own table, holding its position at the third snapshot.
  auto schema = ParseColumnList("n BIGINT");
  ASSERT_OK(schema);
  catalog::TableIdent downstream{{"db"}, "per_minute"};
  ASSERT_OK_AND_ASSIGN(
      auto md, iceberg::NewTableMetadata(
                   *schema, {}, {}, catalog::DefaultTableLocation(dir_.string(), downstream), {}));
  ASSERT_OK_AND_ASSIGN(auto holder, catalog::Table::Create(*catalog_, *io_, downstream, md));
  int64_t now = Newest() + 1;
  auto hold = [&](int64_t at_ms) {
    ASSERT_OK(holder->UpdateMetadata([&](const iceberg::TableMetadata& base) {
      iceberg::TableMetadata m = base;
      m.properties[catalog::ReaderProperty("rollup")] =
          catalog::EncodeReaderProperty("db.events", chain[2], at_ms);
      return Result<iceberg::TableMetadata>(m);
    }));
  };
  hold(now - 1000);

  ExpireOptions o;
  o.now_ms = now;
  o.older_than_ms = now;  // everything is old
  o.readers_catalog = catalog_.get();
  ASSERT_OK_AND_ASSIGN(ExpireResult r, ExpireSnapshots(*table_, o));
  EXPECT_EQ(r.holding_readers, std::vector<std::string>{fmt::format("rollup@{}", chain[2])});
  EXPECT_EQ(r.expired, std::vector<int64_t>{chain[0]}) << "all but the reader's parent and on";
  for (size_t i = 1; i < chain.size(); ++i) {
    EXPECT_NE(table_->metadata().snapshot_by_id(chain[i]), nullptr) << i;
  }
  // The reader has not committed for 8 days: it no longer holds the history.
  hold(now - 8LL * 24 * 3600 * 1000);
  ASSERT_OK_AND_ASSIGN(r, ExpireSnapshots(*table_, o));
  EXPECT_EQ(r.stale_readers.size(), 1u);
  EXPECT_EQ(r.expired.size(), 4u);
  EXPECT_EQ(table_->metadata().snapshots.size(), 1u);
}

// Expiries sharing a readers cache read a table's metadata for its readers
// only when the table was committed to since: its readers are those of the
// metadata file the catalog names now, never a remembered older one.
TEST_F(ExpireTest, ACacheReadsTheReadersOfOnlyTheTablesCommittedToSince) {
  AppendIds(0, 10);
  AppendIds(10, 20);
  auto schema = ParseColumnList("n BIGINT");
  ASSERT_OK(schema);
  std::vector<std::unique_ptr<catalog::Table>> holders;
  for (const char* name : {"a", "b", "c"}) {
    catalog::TableIdent ident{{"db"}, name};
    ASSERT_OK_AND_ASSIGN(
        auto md, iceberg::NewTableMetadata(
                     *schema, {}, {}, catalog::DefaultTableLocation(dir_.string(), ident), {}));
    ASSERT_OK_AND_ASSIGN(auto t, catalog::Table::Create(*catalog_, *io_, ident, md));
    holders.push_back(std::move(t));
  }
  const int64_t snapshot = *table_->metadata().current_snapshot_id;
  auto hold = [&](catalog::Table& holder, const std::string& pipeline) {
    ASSERT_OK(holder.UpdateMetadata([&](const iceberg::TableMetadata& base) {
      iceberg::TableMetadata m = base;
      m.properties[catalog::ReaderProperty(pipeline)] =
          catalog::EncodeReaderProperty("db.events", snapshot, Newest());
      return Result<iceberg::TableMetadata>(m);
    }));
  };
  hold(*holders[0], "first");
  catalog::TableReadersCache cache;
  auto readers = [&] {
    auto found = catalog::FindTableReaders(*catalog_, *io_, table_->ident(), &cache);
    EXPECT_TRUE(found.ok()) << found.status().ToString();
    std::vector<std::string> out;
    for (const auto& r : found.ValueOr({})) out.push_back(r.pipeline + "@" + r.holder.name);
    std::sort(out.begin(), out.end());
    return out;
  };
  const int64_t tables = 4;  // db.events and the three holders
  EXPECT_EQ(readers(), std::vector<std::string>{"first@a"});
  EXPECT_EQ(cache.metadata_reads(), tables);
  EXPECT_EQ(readers(), std::vector<std::string>{"first@a"});
  EXPECT_EQ(cache.metadata_reads(), tables) << "nothing committed since: nothing read";
  hold(*holders[2], "second");
  EXPECT_EQ(readers(), (std::vector<std::string>{"first@a", "second@c"}));
  EXPECT_EQ(cache.metadata_reads(), tables + 1) << "only db.c read again";
  ASSERT_OK(catalog_->DropTable(holders[0]->ident()));
  EXPECT_EQ(readers(), std::vector<std::string>{"second@c"});
  EXPECT_EQ(cache.metadata_reads(), tables + 1);
  // An expiry through the cache keeps what the reader holds, as without it.
  ExpireOptions o;
  o.now_ms = Newest() + 1;
  o.older_than_ms = o.now_ms;
  o.readers_catalog = catalog_.get();
  o.readers_cache = &cache;
  ASSERT_OK_AND_ASSIGN(ExpireResult r, ExpireSnapshots(*table_, o));
  EXPECT_EQ(r.holding_readers, std::vector<std::string>{fmt::format("second@{}", snapshot)});
}

// After a manifest rewrite, the old manifests are reached only by the
// snapshots before it, but the files they list are live in the merged one:
// expiring those snapshots deletes the old manifests and keeps every file,
// with a cache an earlier expiry filled (the service's) as without one.
TEST_F(ExpireTest, FilesAManifestRewriteMovedStayWhenTheirOldManifestsGo) {
  ASSERT_NO_FATAL_FAILURE(AppendsRewrittenThenOneMore());
  ManifestCache cache;
  ExpireOptions o = EverythingOld();
  o.retain_last = 2;
  o.manifest_cache = &cache;
  ASSERT_OK_AND_ASSIGN(ExpireResult first, ExpireSnapshots(*table_, o));
  ASSERT_EQ(first.data_files.size(), 4u) << "the files the rewrite replaced";
  ASSERT_GT(cache.manifests(), 0u) << "the live manifests' files, read to keep live ones";

  ManifestRewriteOptions merge;
  merge.force = true;
  ASSERT_OK_AND_ASSIGN(ManifestRewriteResult merged, RewriteManifests(*table_, merge));
  ASSERT_TRUE(merged.snapshot_id.has_value());
  ASSERT_EQ(merged.manifests_after, 1);
  AppendIds(50, 60);
  const std::set<int64_t> ids = Ids();
  o.now_ms = o.older_than_ms.emplace(Newest() + 1);
  ExpireOptions dry = o;
  dry.dry_run = true;
  dry.manifest_cache = nullptr;
  ASSERT_OK_AND_ASSIGN(ExpireResult plan, ExpireSnapshots(*table_, dry));
  ASSERT_OK_AND_ASSIGN(ExpireResult r, ExpireSnapshots(*table_, o));
  EXPECT_EQ(r.expired.size(), 2u) << "the compaction and the append before the rewrite";
  EXPECT_EQ(r.expired, plan.expired);
  EXPECT_GE(r.manifests.size(), 2u) << "their manifests, merged into one";
  EXPECT_EQ(r.manifests, plan.manifests);
  EXPECT_TRUE(r.data_files.empty()) << "every data file is live in the merged manifest";
  EXPECT_TRUE(plan.data_files.empty());
  ExpectEverythingTheSnapshotsReachExists();
  EXPECT_EQ(Ids(), ids);
}

// The service keeps a ManifestCache per table: an expiry reads only the
// manifest lists and manifests committed since the one before, and deletes
// what an expiry without the cache deletes.
TEST_F(ExpireTest, AnExpiryThroughTheManifestCacheReadsOnlyWhatWasCommittedSince) {
  ASSERT_NO_FATAL_FAILURE(AppendsRewrittenThenOneMore());
  const std::set<int64_t> ids = Ids();
  FaultInjectingFileIO counted(io_.get());
  ASSERT_OK_AND_ASSIGN(auto view, catalog::Table::Load(*catalog_, counted, id_));
  ManifestCache cache;
  ExpireOptions o = EverythingOld();
  o.retain_last = 2;
  o.dry_run = true;
  auto opens = [&](ManifestCache* with) {
    counted.ResetCounts();
    o.manifest_cache = with;
    auto r = ExpireSnapshots(*view, o);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return std::make_pair(counted.calls(FileOp::kOpenInput), r.ValueOr({}));
  };
  const auto [uncached, plan] = opens(nullptr);
  EXPECT_EQ(plan.expired.size(), 4u);
  EXPECT_EQ(plan.data_files.size(), 4u) << "the files the rewrite replaced";
  const auto [cold, cold_plan] = opens(&cache);
  EXPECT_EQ(cold, uncached);
  const int64_t read = cache.files_read();
  EXPECT_GT(read, 2);
  const auto [warm, warm_plan] = opens(&cache);
  EXPECT_EQ(cache.files_read(), read) << "nothing committed since: no list or manifest read again";
  EXPECT_LT(warm, cold);
  EXPECT_EQ(warm_plan.data_files, plan.data_files);
  EXPECT_EQ(warm_plan.manifests, plan.manifests);
  EXPECT_EQ(warm_plan.manifest_lists, plan.manifest_lists);

  o.dry_run = false;
  o.manifest_cache = &cache;
  ASSERT_OK_AND_ASSIGN(ExpireResult real, ExpireSnapshots(*view, o));
  EXPECT_EQ(real.expired, plan.expired);
  EXPECT_EQ(real.data_files, plan.data_files);
  EXPECT_EQ(real.manifests, plan.manifests);
  EXPECT_EQ(real.manifest_lists, plan.manifest_lists);
  EXPECT_TRUE(real.failures.empty());
  EXPECT_EQ(cache.lists(), 2u) << "the expired snapshots' lists are forgotten";
  for (const std::string& p : real.data_files) {
    EXPECT_FALSE(std::filesystem::exists(OnDisk(p))) << p;
  }
  AppendIds(50, 60);
  o.now_ms = o.older_than_ms.emplace(Newest() + 1);
  ASSERT_OK_AND_ASSIGN(ExpireResult next, ExpireSnapshots(*view, o));
  EXPECT_EQ(next.expired.size(), 1u);
  EXPECT_EQ(cache.lists(), 2u);
  ExpectEverythingTheSnapshotsReachExists();
  std::set<int64_t> want = ids;
  for (int64_t id = 50; id < 60; ++id) want.insert(id);
  EXPECT_EQ(Ids(), want);
}

// A cache belongs to the table it was filled from: bound to another (a
// table dropped and created again under the same name has a new uuid), it
// starts empty.
TEST_F(ExpireTest, AManifestCacheForgetsWhatItReadOfAnotherTable) {
  for (int64_t i = 0; i < 3; ++i) AppendIds(i * 10, i * 10 + 10);
  ManifestCache cache;
  ExpireOptions o = EverythingOld();
  o.retain_last = 2;
  o.dry_run = true;
  o.manifest_cache = &cache;
  ASSERT_OK(ExpireSnapshots(*table_, o));
  ASSERT_EQ(cache.lists(), 3u) << "a dry run forgets nothing";
  cache.BindTo(table_->metadata());
  EXPECT_EQ(cache.lists(), 3u) << "the same table";
  iceberg::TableMetadata other = table_->metadata();
  other.table_uuid = "another-uuid";
  cache.BindTo(other);
  EXPECT_EQ(cache.lists(), 0u);
  EXPECT_EQ(cache.manifests(), 0u);
}

// Format v3: row deletes are deletion vectors in Puffin files, a file's
// vector replaced by a merged one at each delete of its rows. Expiring the
// snapshots before the last deletes removes the Puffin files only they
// reach, through a cache filled before those deletes as without one, and the
// rows stay deleted.
class ExpireV3Test : public ExpireTest {
 protected:
  void SetUp() override { MakeTable("id BIGINT NOT NULL", "", "", 3); }
};

TEST_F(ExpireV3Test, DeletionVectorsOnlyExpiredSnapshotsReachGoAndTheRowsStayDeleted) {
  AppendIds(0, 10);
  AppendIds(10, 20);
  ManifestCache cache;
  ExpireOptions o = EverythingOld();
  o.retain_last = 1;
  o.dry_run = true;
  o.manifest_cache = &cache;
  ASSERT_OK(ExpireSnapshots(*table_, o));  // (fills the cache)
  for (const char* filter : {"id = 3", "id = 13", "id IN (4, 14)", "id = 5"}) {
    SCOPED_TRACE(filter);
    ASSERT_OK(catalog::DeleteWhere(*table_, filter).status());
  }
  std::set<int64_t> want;
  for (int64_t id = 0; id < 20; ++id) want.insert(id);
  for (int64_t id : {3, 13, 4, 14, 5}) want.erase(id);
  ASSERT_EQ(Ids(), want);
  o.now_ms = o.older_than_ms.emplace(Newest() + 1);
  ExpireOptions dry = o;
  dry.manifest_cache = nullptr;
  ASSERT_OK_AND_ASSIGN(ExpireResult plan, ExpireSnapshots(*table_, dry));
  o.dry_run = false;
  ASSERT_OK_AND_ASSIGN(ExpireResult r, ExpireSnapshots(*table_, o));
  EXPECT_EQ(r.expired.size(), 5u);
  EXPECT_FALSE(r.delete_files.empty()) << "the vectors the later deletes replaced";
  EXPECT_EQ(r.delete_files, plan.delete_files);
  EXPECT_TRUE(r.data_files.empty());
  EXPECT_TRUE(r.failures.empty());
  ExpectEverythingTheSnapshotsReachExists();
  EXPECT_EQ(Ids(), want);
}

TEST_F(ExpireTest, ADryRunListsThePlanAndChangesNothing) {
  AppendIds(0, 10);
  AppendIds(10, 20);
  ASSERT_OK(CompactTable(*table_, RewriteAll()));
  std::set<std::string> before = Files();
  std::string metadata = table_->metadata_location();
  ExpireOptions o = EverythingOld();
  o.dry_run = true;
  ASSERT_OK_AND_ASSIGN(ExpireResult dry, ExpireSnapshots(*table_, o));
  EXPECT_EQ(dry.expired.size(), 2u);
  EXPECT_EQ(dry.data_files.size(), 2u);
  EXPECT_EQ(dry.deleted, 0);
  EXPECT_EQ(Files(), before);
  ASSERT_OK(table_->Refresh());
  EXPECT_EQ(table_->metadata_location(), metadata) << "no commit";
  o.dry_run = false;
  ASSERT_OK_AND_ASSIGN(ExpireResult real, ExpireSnapshots(*table_, o));
  EXPECT_EQ(real.expired, dry.expired);
  EXPECT_EQ(real.data_files, dry.data_files);
  EXPECT_EQ(real.manifest_lists, dry.manifest_lists);
}

TEST_F(ExpireTest, RefsTheRetainedCountAndTheCutoffKeepSnapshots) {
  for (int i = 0; i < 6; ++i) AppendIds(i * 10, i * 10 + 10);
  const std::vector<iceberg::Snapshot> snaps =
      table_->metadata().snapshots;  // a copy: commits replace the metadata
  int64_t tagged = snaps[1].snapshot_id;
  ASSERT_OK(table_->UpdateMetadata(
      [&](const iceberg::TableMetadata& m) -> Result<iceberg::TableMetadata> {
        iceberg::TableMetadata out = m;
        iceberg::SnapshotRef tag;
        tag.snapshot_id = tagged;
        tag.is_branch = false;
        out.refs["audit"] = tag;
        return out;
      }));
  ExpireOptions o;
  o.now_ms = Newest() + 1;
  o.older_than_ms = Newest() + 1;
  o.retain_last = 3;
  ASSERT_OK_AND_ASSIGN(auto keep, RetainedSnapshots(table_->metadata(), o));
  std::vector<int64_t> want = {tagged, snaps[3].snapshot_id, snaps[4].snapshot_id,
                               snaps[5].snapshot_id};
  std::sort(want.begin(), want.end());
  EXPECT_EQ(keep, want) << "the tag and the three newest";
  // A cutoff before every snapshot keeps them all.
  o.retain_last.reset();
  o.older_than_ms = snaps[0].timestamp_ms;
  ASSERT_OK_AND_ASSIGN(keep, RetainedSnapshots(table_->metadata(), o));
  EXPECT_EQ(keep.size(), 6u);
  // The table's own properties: keep 2 of main.
  ASSERT_OK(table_->UpdateMetadata(
      [&](const iceberg::TableMetadata& m) -> Result<iceberg::TableMetadata> {
        iceberg::TableMetadata out = m;
        out.properties["history.expire.min-snapshots-to-keep"] = "2";
        out.properties["history.expire.max-snapshot-age-ms"] = "0";
        return out;
      }));
  ExpireOptions by_table;
  by_table.now_ms = Newest() + 1;
  ASSERT_OK_AND_ASSIGN(ExpireResult r, ExpireSnapshots(*table_, by_table));
  EXPECT_EQ(r.expired.size(), 3u) << "6 less the tag and the two newest";
  EXPECT_EQ(table_->metadata().snapshots.size(), 3u);
  EXPECT_TRUE(r.data_files.empty()) << "appends only: every data file is still live";
  EXPECT_NE(table_->metadata().snapshot_by_id(tagged), nullptr);
  std::set<int64_t> all;
  for (int64_t i = 0; i < 60; ++i) all.insert(i);
  EXPECT_EQ(Ids(), all);
}

TEST_F(ExpireTest, ABadRetentionPropertyIsRefusedNamingIt) {
  AppendIds(0, 10);
  ASSERT_OK(table_->UpdateMetadata(
      [&](const iceberg::TableMetadata& m) -> Result<iceberg::TableMetadata> {
        iceberg::TableMetadata out = m;
        out.properties["history.expire.min-snapshots-to-keep"] = "many";
        return out;
      }));
  ExpireOptions o;
  o.now_ms = Newest();
  ASSERT_ERROR(ExpireSnapshots(*table_, o), StatusCode::kInvalidArgument,
               "history.expire.min-snapshots-to-keep");
}

}  // namespace
}  // namespace sluice::maintenance
