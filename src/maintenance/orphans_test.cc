// RemoveOrphans on a real table: old unreferenced files go; referenced and
// young files stay; a dry run deletes nothing; a writer committing all along
// loses nothing.
#include "maintenance/orphans.h"

#include <atomic>
#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "common/clock.h"
#include "maintenance/expire.h"
#include "maintenance/manifest_cache.h"
#include "maintenance/test_util.h"

namespace sluice::maintenance {
namespace {

class OrphanTest : public TableFixture {
 protected:
  void SetUp() override { MakeTable("id BIGINT NOT NULL", ""); }

  // A stray file under the table, last modified `age_ms` ago.
  std::string Stray(const std::string& sub, int64_t age_ms) {
    std::filesystem::path p = dir_ / "db" / "events" / sub;
    std::filesystem::create_directories(p.parent_path());
    { std::ofstream(p) << "stray"; }
    std::filesystem::last_write_time(
        p, std::filesystem::file_time_type::clock::now() - std::chrono::milliseconds(age_ms));
    return p.string();
  }

  // Every live file of the current snapshot still exists.
  void ExpectReferencedFilesExist() {
    ASSERT_OK(table_->Refresh());
    auto live = table_->LiveFiles(*table_->metadata().current_snapshot_id);
    ASSERT_OK(live);
    for (const auto& e : *live) {
      std::string p = e.file.file_path;
      if (p.rfind("file://", 0) == 0) p = p.substr(7);
      EXPECT_TRUE(std::filesystem::exists(p)) << p;
    }
  }
};

// The service's cleanup reads through the table's manifest cache, which its
// expiries filled: it finds the orphans a cleanup without it finds, and
// keeps every referenced file however old (the cache holds data files as
// hashes of their paths).
TEST_F(OrphanTest, ThroughAWarmManifestCacheTheSameOrphansGoAndReferencedFilesStay) {
  for (int64_t i = 0; i < 3; ++i) AppendIds(i * 10, i * 10 + 10);
  ManifestCache cache;
  ExpireOptions e;
  e.now_ms = e.older_than_ms.emplace(table_->metadata().snapshots.back().timestamp_ms + 1);
  e.retain_last = 2;
  e.manifest_cache = &cache;
  ASSERT_OK(ExpireSnapshots(*table_, e));
  AppendIds(30, 40);
  const std::set<int64_t> ids = Ids();
  std::string old_data = Stray("data/00000-stray.parquet", 2 * 3600 * 1000);
  std::string old_meta = Stray("metadata/99999-stray.metadata.json", 2 * 3600 * 1000);
  OrphanOptions o;
  o.now_ms = WallMillis() + 60 * 1000;  // every file old enough, referenced or not
  o.older_than_ms = o.now_ms;
  o.dry_run = true;
  ASSERT_OK_AND_ASSIGN(OrphanResult plan, RemoveOrphans(*table_, o));
  o.dry_run = false;
  o.manifest_cache = &cache;
  ASSERT_OK_AND_ASSIGN(OrphanResult r, RemoveOrphans(*table_, o));
  EXPECT_EQ(r.orphans, plan.orphans);
  EXPECT_EQ(r.orphans.size(), 2u) << "the strays; the expiry deleted what it made unreachable";
  EXPECT_EQ(r.deleted, 2);
  EXPECT_EQ(r.too_young, 0);
  EXPECT_FALSE(std::filesystem::exists(old_data));
  EXPECT_FALSE(std::filesystem::exists(old_meta));
  ExpectReferencedFilesExist();
  EXPECT_EQ(Ids(), ids);
}

TEST_F(OrphanTest, OldUnreferencedFilesGoReferencedAndYoungOnesStay) {
  AppendIds(0, 10);
  AppendIds(10, 20);
  std::set<int64_t> ids = Ids();
  std::string old_data = Stray("data/00000-stray.parquet", 2 * 3600 * 1000);
  std::string old_meta = Stray("metadata/99999-stray.metadata.json", 2 * 3600 * 1000);
  std::string young = Stray("data/00000-young.parquet", 60 * 1000);
  std::string hint = Stray("metadata/version-hint.text", 2 * 3600 * 1000);
  OrphanOptions o;
  o.now_ms = WallMillis();
  o.older_than_ms = o.now_ms - kDefaultOrphanMarginMs;
  o.dry_run = true;
  ASSERT_OK_AND_ASSIGN(OrphanResult dry, RemoveOrphans(*table_, o));
  ASSERT_EQ(dry.orphans.size(), 2u);
  EXPECT_EQ(dry.deleted, 0);
  EXPECT_TRUE(std::filesystem::exists(old_data));
  o.dry_run = false;
  ASSERT_OK_AND_ASSIGN(OrphanResult r, RemoveOrphans(*table_, o));
  EXPECT_EQ(r.orphans, dry.orphans);
  EXPECT_EQ(r.deleted, 2);
  EXPECT_EQ(r.too_young, 1);
  EXPECT_FALSE(std::filesystem::exists(old_data));
  EXPECT_FALSE(std::filesystem::exists(old_meta));
  EXPECT_TRUE(std::filesystem::exists(young)) << "younger than the margin";
  EXPECT_TRUE(std::filesystem::exists(hint));
  EXPECT_EQ(r.referenced, r.listed - 3);
  EXPECT_EQ(Ids(), ids);
  ExpectReferencedFilesExist();
}

TEST_F(OrphanTest, TheTablesMarginPropertyDecidesWhatIsOldEnough) {
  AppendIds(0, 10);
  std::string minute_old = Stray("data/00000-stray.parquet", 60 * 1000);
  OrphanOptions o;
  o.now_ms = WallMillis();
  ASSERT_OK_AND_ASSIGN(OrphanResult kept, RemoveOrphans(*table_, o));
  EXPECT_EQ(kept.deleted, 0) << "under the default hour";
  auto set_margin = [&](const std::string& v) {
    return table_->UpdateMetadata(
        [&](const iceberg::TableMetadata& m) -> Result<iceberg::TableMetadata> {
          iceberg::TableMetadata out = m;
          out.properties["sluice.maintenance.orphan-margin-ms"] = v;
          return out;
        });
  };
  ASSERT_OK(set_margin("30000"));
  ASSERT_OK_AND_ASSIGN(OrphanResult r, RemoveOrphans(*table_, o));
  EXPECT_EQ(r.deleted, 1);
  EXPECT_FALSE(std::filesystem::exists(minute_old));
  ASSERT_OK(set_margin("soon"));
  ASSERT_ERROR(RemoveOrphans(*table_, o), StatusCode::kInvalidArgument,
               "sluice.maintenance.orphan-margin-ms");
}

TEST_F(OrphanTest, StateFilesThePipelinesPropertiesNameStayAndRetiredOnesGo) {
  AppendIds(0, 10);
  const int64_t old = 2 * 3600 * 1000;
  std::string window = Stray("state/p/000001-00000002-base.state", old);
  std::string keys_base = Stray("state/p/000001-00000002-keys-base.state", old);
  std::string keys_delta = Stray("state/p/000001-00000003-keys-delta.state", old);
  std::string retired = Stray("state/p/000001-00000001-keys-base.state", old);
  ASSERT_OK(table_->UpdateMetadata(
      [&](const iceberg::TableMetadata& m) -> Result<iceberg::TableMetadata> {
        iceberg::TableMetadata out = m;
        out.properties["sluice.state.p"] =
            nlohmann::json{{"checkpoint", 3}, {"files", {window}}, {"watermark", ""}}.dump();
        out.properties["sluice.keys.p"] =
            nlohmann::json{{"checkpoint", 3}, {"files", {keys_base, keys_delta}}}.dump();
        return out;
      }));
  OrphanOptions o;
  o.now_ms = WallMillis();
  ASSERT_OK_AND_ASSIGN(OrphanResult r, RemoveOrphans(*table_, o));
  EXPECT_EQ(r.deleted, 1);
  EXPECT_FALSE(std::filesystem::exists(retired));
  EXPECT_TRUE(std::filesystem::exists(window));
  EXPECT_TRUE(std::filesystem::exists(keys_base));
  EXPECT_TRUE(std::filesystem::exists(keys_delta));
}

TEST_F(OrphanTest, AStatePropertyThatDoesNotParseRefusesTheCleanupAndDeletesNothing) {
  AppendIds(0, 10);
  std::string state = Stray("state/p/000001-00000002-base.state", 2 * 3600 * 1000);
  ASSERT_OK(table_->UpdateMetadata(
      [&](const iceberg::TableMetadata& m) -> Result<iceberg::TableMetadata> {
        iceberg::TableMetadata out = m;
        // A file name that is not a string: which files are live is unknown.
        out.properties["sluice.state.p"] =
            nlohmann::json{{"checkpoint", 3}, {"files", {state, 7}}}.dump();
        return out;
      }));
  OrphanOptions o;
  o.now_ms = WallMillis();
  ASSERT_ERROR(RemoveOrphans(*table_, o), StatusCode::kCorruption, "sluice.state.p");
  ASSERT_ERROR(RemoveOrphans(*table_, o), StatusCode::kCorruption,
               "cannot tell which state files are live");
  EXPECT_TRUE(std::filesystem::exists(state));
}

TEST_F(OrphanTest, ATableWithAnotherUnderItsLocationIsRefused) {
  AppendIds(0, 10);
  std::string old = Stray("data/00000-stray.parquet", 2 * 3600 * 1000);
  OrphanOptions o;
  o.now_ms = WallMillis();
  o.other_table_locations = {"/elsewhere/t", table_->metadata().location + "/clicks"};
  ASSERT_ERROR(RemoveOrphans(*table_, o), StatusCode::kInvalidArgument, "another table lives");
  EXPECT_TRUE(std::filesystem::exists(old)) << "nothing deleted";
  o.other_table_locations = {table_->metadata().location + "_dlq"};  // beside it, not under
  ASSERT_OK_AND_ASSIGN(OrphanResult r, RemoveOrphans(*table_, o));
  EXPECT_EQ(r.deleted, 1);
}

TEST_F(OrphanTest, PathsWrittenInAnotherFormAreStillTheTablesFiles) {
  // A location given with a trailing slash: the table names its files
  // ".../t//data/..." while listing finds ".../t/data/...".
  auto schema = ParseColumnList("id BIGINT NOT NULL");
  ASSERT_OK(schema);
  ASSERT_OK_AND_ASSIGN(auto spec, iceberg::ParsePartitionSpec("", *schema));
  catalog::TableIdent id{{"db"}, "slashed"};
  ASSERT_OK_AND_ASSIGN(auto md, iceberg::NewTableMetadata(*schema, spec, iceberg::SortOrder{},
                                                          (dir_ / "slashed").string() + "/", {}));
  ASSERT_OK_AND_ASSIGN(table_, catalog::Table::Create(*catalog_, *io_, id, md));
  AppendIds(0, 10);
  AppendIds(10, 20);
  OrphanOptions o;
  o.now_ms = WallMillis();
  o.older_than_ms = o.now_ms + 1000;  // every file is old enough
  ASSERT_OK_AND_ASSIGN(OrphanResult r, RemoveOrphans(*table_, o));
  EXPECT_EQ(r.deleted, 0) << "every file is referenced";
  EXPECT_EQ(r.referenced, r.listed);
  EXPECT_EQ(Ids().size(), 20u);
}

TEST_F(OrphanTest, AReferencedFileTheListingLacksStopsEverything) {
  AppendIds(0, 10);
  std::string old = Stray("data/00000-stray.parquet", 2 * 3600 * 1000);
  std::string list = table_->metadata().current_snapshot()->manifest_list;
  if (list.rfind("file://", 0) == 0) list = list.substr(7);
  std::filesystem::remove(list);
  OrphanOptions o;
  o.now_ms = WallMillis();
  ASSERT_ERROR(RemoveOrphans(*table_, o), StatusCode::kCorruption, "does not find it");
  EXPECT_TRUE(std::filesystem::exists(old)) << "nothing deleted";
}

TEST_F(OrphanTest, FilesOfExpiredSnapshotsLeftByACrashAreCleanedUp) {
  AppendIds(0, 10);
  AppendIds(10, 20);
  // Expiry's commit, then a crash before its deletions: simulated by an
  // expiry whose files we put back as they were (old, unreferenced).
  ExpireOptions e;
  e.now_ms = e.older_than_ms.emplace(WallMillis() + 1);
  ASSERT_OK_AND_ASSIGN(ExpireResult expired, ExpireSnapshots(*table_, e));
  ASSERT_EQ(expired.manifest_lists.size(), 1u);
  std::string list = expired.manifest_lists[0];
  if (list.rfind("file://", 0) == 0) list = list.substr(7);
  { std::ofstream(list) << "left by a crash"; }
  std::filesystem::last_write_time(
      list, std::filesystem::file_time_type::clock::now() - std::chrono::hours(2));
  OrphanOptions o;
  o.now_ms = WallMillis();
  o.older_than_ms = o.now_ms - kDefaultOrphanMarginMs;
  ASSERT_OK_AND_ASSIGN(OrphanResult r, RemoveOrphans(*table_, o));
  EXPECT_EQ(r.deleted, 1);
  EXPECT_FALSE(std::filesystem::exists(list));
  ExpectReferencedFilesExist();
}

TEST_F(OrphanTest, AWriterCommittingAllAlongLosesNothing) {
  std::atomic<bool> done{false};
  std::atomic<int64_t> deleted{0};
  std::thread cleaner([&] {
    auto t = catalog::Table::Load(*catalog_, *io_, id_);
    ASSERT_OK(t);
    while (!done) {
      OrphanOptions o;
      o.now_ms = WallMillis();
      o.older_than_ms = o.now_ms - 2000;  // a margin far above one commit's duration
      auto r = RemoveOrphans(**t, o);
      ASSERT_OK(r);
      deleted += r->deleted;
    }
  });
  for (int i = 0; i < 30; ++i) AppendIds(i * 10, i * 10 + 10);
  done = true;
  cleaner.join();
  EXPECT_EQ(deleted, 0);
  EXPECT_EQ(Ids().size(), 300u);
  ExpectReferencedFilesExist();
}

}  // namespace
}  // namespace sluice::maintenance
