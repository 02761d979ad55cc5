// RewriteManifests on a real table: nothing below the policy's count, a
// dry run that counts only, and a rewrite that leaves the rows and every
// later commit alone.
#include "maintenance/manifests.h"

#include "maintenance/test_util.h"

namespace sluice::maintenance {
namespace {

class ManifestsTest : public TableFixture {
 protected:
  void SetUp() override { MakeTable("id BIGINT NOT NULL, kind STRING", "kind"); }
};

TEST_F(ManifestsTest, RewritesOnlyAboveThePolicysCountAndKeepsEveryRow) {
  for (int i = 0; i < 6; ++i) Append(i * 10, i * 10 + 10, i % 2 ? "a" : "b");
  ManifestRewriteOptions o;
  o.max_manifests = 6;
  ASSERT_OK_AND_ASSIGN(ManifestRewriteResult r, RewriteManifests(*table_, o));
  EXPECT_EQ(r.manifests_before, 6);
  EXPECT_EQ(r.small_before, 6);
  EXPECT_FALSE(r.snapshot_id) << "6 is not above 6";

  o.max_manifests = 5;
  o.dry_run = true;
  ASSERT_OK_AND_ASSIGN(r, RewriteManifests(*table_, o));
  EXPECT_FALSE(r.snapshot_id) << "dry";
  EXPECT_EQ(table_->metadata().snapshots.size(), 6u);

  const std::set<int64_t> ids = Ids();
  o.dry_run = false;
  ASSERT_OK_AND_ASSIGN(r, RewriteManifests(*table_, o));
  ASSERT_TRUE(r.snapshot_id);
  EXPECT_EQ(r.manifests_after, 1) << "6 small manifests of 6 files: one";
  EXPECT_EQ(r.entries, 6);
  EXPECT_EQ(Ids(), ids);
  ASSERT_OK_AND_ASSIGN(ManifestCount c, CountManifests(*table_));
  EXPECT_EQ(c.all, 1);
  Append(100, 110, "a");
  ASSERT_OK(table_->Refresh());
  ASSERT_OK_AND_ASSIGN(c, CountManifests(*table_));
  EXPECT_EQ(c.all, 2);
}

TEST_F(ManifestsTest, ThePolicyComesFromTheTableAndABadValueIsNamed) {
  for (int i = 0; i < 3; ++i) Append(i * 10, i * 10 + 10, "a");
  ASSERT_OK(table_->UpdateMetadata([](const iceberg::TableMetadata& m) {
    iceberg::TableMetadata next = m;
    next.properties["sluice.maintenance.max-manifests"] = "2";
    return Result<iceberg::TableMetadata>(next);
  }));
  ASSERT_OK_AND_ASSIGN(ManifestRewriteResult r, RewriteManifests(*table_, {}));
  EXPECT_TRUE(r.snapshot_id) << "3 small manifests, 2 allowed";
  ASSERT_OK(table_->UpdateMetadata([](const iceberg::TableMetadata& m) {
    iceberg::TableMetadata next = m;
    next.properties["sluice.maintenance.max-manifests"] = "many";
    return Result<iceberg::TableMetadata>(next);
  }));
  ASSERT_ERROR(RewriteManifests(*table_, {}), StatusCode::kInvalidArgument,
               "sluice.maintenance.max-manifests");
}

}  // namespace
}  // namespace sluice::maintenance
