// ExpireSnapshots racing other writers: what another writer or another
// expiry commits between an expiry's plan and its commit.
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "maintenance/expire.h"
#include "maintenance/expire_test_util.h"
#include "maintenance/manifest_cache.h"

namespace sluice::maintenance {
namespace {

// What another writer commits between an expiry's plan and its commit: a
// tag on a snapshot the plan expires keeps it and its files; an append
// keeps its files; another expiry that removed more than this one planned
// (deleting their files) leaves this one nothing to delete twice and no
// error.
TEST_F(ExpireTest, WhatAnotherWriterCommitsBeforeTheExpiryCommitsIsKept) {
  ASSERT_NO_FATAL_FAILURE(AppendsRewrittenThenOneMore());
  ASSERT_OK_AND_ASSIGN(auto other, catalog::Table::Load(*catalog_, *io_, id_));
  const std::vector<iceberg::Snapshot> snapshots = table_->metadata().snapshots;
  ASSERT_EQ(snapshots.size(), 6u);
  ManifestCache cache;
  ExpireOptions o = EverythingOld();
  o.retain_last = 3;  // plans to expire the first three appends
  o.manifest_cache = &cache;
  const int64_t tagged = snapshots[1].snapshot_id;
  o.before_commit = [&] {
    ASSERT_OK(other->UpdateMetadata([&](const iceberg::TableMetadata& base) {
      iceberg::TableMetadata m = base;
      iceberg::SnapshotRef tag;
      tag.snapshot_id = tagged;
      tag.is_branch = false;
      m.refs["audit"] = tag;
      return Result<iceberg::TableMetadata>(m);
    }));
    ASSERT_OK(other->Refresh());
    AppendRows([](Batch* b) { b->columns[0].Append<int64_t>(50); });
  };
  ASSERT_OK_AND_ASSIGN(ExpireResult r, ExpireSnapshots(*table_, o));
  EXPECT_EQ(r.expired, (std::vector<int64_t>{snapshots[0].snapshot_id, snapshots[2].snapshot_id}));
  ASSERT_OK(table_->Refresh());
  EXPECT_NE(table_->metadata().snapshot_by_id(tagged), nullptr) << "tagged meanwhile: kept";
  EXPECT_EQ(table_->metadata().snapshots.size(), 5u);  // 7, less the two
  EXPECT_TRUE(r.data_files.empty()) << "the tagged snapshot still reaches the replaced files";
  ExpectEverythingTheSnapshotsReachExists();

  // Another expiry, between this one's plan and its commit, removes every
  // snapshot but the current one and deletes what they reached.
  AppendIds(60, 70);
  std::set<int64_t> ids = Ids();
  ASSERT_OK(other->UpdateMetadata([&](const iceberg::TableMetadata& base) {
    iceberg::TableMetadata m = base;
    m.refs.erase("audit");
    return Result<iceberg::TableMetadata>(m);
  }));
  o.now_ms = o.older_than_ms.emplace(Newest() + 1);
  o.retain_last = 4;
  o.before_commit = [&] {
    ExpireOptions all;
    all.now_ms = all.older_than_ms.emplace(o.now_ms);
    ASSERT_OK_AND_ASSIGN(ExpireResult first, ExpireSnapshots(*other, all));
    EXPECT_FALSE(first.data_files.empty());
  };
  ASSERT_OK_AND_ASSIGN(ExpireResult late, ExpireSnapshots(*table_, o));
  EXPECT_TRUE(late.failures.empty());
  ASSERT_OK(table_->Refresh());
  EXPECT_EQ(table_->metadata().snapshots.size(), 1u);
  ExpectEverythingTheSnapshotsReachExists();
  EXPECT_EQ(Ids(), ids);
}

// An expiry whose commit finds that a concurrent expiry removed more
// snapshots than it planned must read, after its commit, the manifests that
// only its expired snapshots now reach, and the other expiry already deleted
// them. It fails there, after the commit and before deleting anything: the
// table stays whole, and the next expiry (same cache) goes through.
TEST_F(ExpireTest, AManifestAConcurrentExpiryDeletedFailsTheLaterOneAfterItsCommitDeletingNothing) {
  ASSERT_NO_FATAL_FAILURE(AppendsRewrittenThenOneMore());
  const std::set<int64_t> ids = Ids();
  const std::vector<iceberg::Snapshot> snapshots = table_->metadata().snapshots;
  ASSERT_EQ(snapshots.size(), 6u);
  ASSERT_OK_AND_ASSIGN(auto first_list,
                       iceberg::ReadManifestList(*io_, snapshots[0].manifest_list, 2));
  ASSERT_EQ(first_list.size(), 1u);
  const std::string first_manifest = OnDisk(first_list[0].manifest_path);
  ASSERT_OK_AND_ASSIGN(auto other, catalog::Table::Load(*catalog_, *io_, id_));
  ManifestCache cache;
  ExpireOptions o = EverythingOld();
  o.retain_last = 5;  // plans to expire the first append, whose manifest the next three list
  o.manifest_cache = &cache;
  ExpireResult r;  // the other expiry's
  o.before_commit = [&] {
    ExpireOptions two = EverythingOld();
    two.retain_last = 2;  // the four appends the compaction replaced
    ASSERT_OK_AND_ASSIGN(r, ExpireSnapshots(*other, two));
    ASSERT_EQ(r.expired.size(), 4u);
    ASSERT_EQ(r.data_files.size(), 4u);
    ASSERT_FALSE(std::filesystem::exists(first_manifest)) << "the other expiry deleted it";
  };
  std::set<std::string> before;
  for (const auto& e :
       std::filesystem::recursive_directory_iterator(OnDisk(table_->metadata().location))) {
    before.insert(e.path().string());
  }
  Result<ExpireResult> late = ExpireSnapshots(*table_, o);
  ASSERT_FALSE(late.ok()) << "a manifest it must read is gone";
  EXPECT_NE(late.status().message().find(first_manifest), std::string::npos)
      << late.status().ToString();
  EXPECT_NE(late.status().message().find("deleted no file"), std::string::npos)
      << late.status().ToString();
  ASSERT_OK(table_->Refresh());
  EXPECT_EQ(table_->metadata().snapshots.size(), 2u);
  for (const auto& e :
       std::filesystem::recursive_directory_iterator(OnDisk(table_->metadata().location))) {
    before.erase(e.path().string());
  }
  // What is gone since the later expiry started is what the other one
  // deleted: the four appends' lists, manifests and replaced data files.
  std::set<std::string> others;
  for (const auto* files : {&r.manifest_lists, &r.manifests, &r.data_files}) {
    for (const std::string& f : *files) others.insert(OnDisk(f));
  }
  EXPECT_EQ(others.size(), 4u + 4u + 4u);
  EXPECT_EQ(before, others) << "nothing more";
  ExpectEverythingTheSnapshotsReachExists();
  EXPECT_EQ(Ids(), ids);

  AppendIds(50, 60);
  o.before_commit = nullptr;
  o.now_ms = o.older_than_ms.emplace(Newest() + 1);
  o.retain_last = 1;
  ASSERT_OK_AND_ASSIGN(ExpireResult next, ExpireSnapshots(*table_, o));
  EXPECT_EQ(next.expired.size(), 2u);
  EXPECT_TRUE(next.failures.empty());
  ExpectEverythingTheSnapshotsReachExists();
  EXPECT_EQ(Ids().size(), ids.size() + 10);
}

}  // namespace
}  // namespace sluice::maintenance
