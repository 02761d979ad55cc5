// Manifests of commits: merged at commit time, rewritten (clustered by
// partition value, row lineage kept), and delete files dropped once dangling.
#include <cstring>
#include <map>
#include <set>

#include "catalog/table_test_util.h"

namespace sluice::catalog {
namespace {

// Many small commits: manifests are merged so the list stays short, and no
// file is lost or duplicated by merging.
TEST_F(TableTest, ManifestMergingKeepsEveryFileOnce) {
  auto t = MakeTable("");
  ASSERT_NE(t, nullptr);
  CommitOptions o;
  o.manifest_merge_min_count = 5;
  int64_t last = 0;
  for (int i = 0; i < 23; ++i) {
    ASSERT_OK_AND_ASSIGN(last, t->Append({File("f" + std::to_string(i), i + 1)}, {}, o));
  }
  auto list = iceberg::ReadManifestList(*io_, t->metadata().current_snapshot()->manifest_list, 2);
  ASSERT_OK(list);
  EXPECT_LT(list->size(), 7u);
  ASSERT_OK_AND_ASSIGN(auto live, t->LiveFiles(last));
  std::multiset<std::string> paths;
  int64_t rows = 0;
  for (const auto& e : live) {
    paths.insert(e.file.file_path);
    rows += e.file.record_count;
  }
  EXPECT_EQ(paths.size(), 23u);
  EXPECT_EQ(std::set<std::string>(paths.begin(), paths.end()).size(), 23u);
  EXPECT_EQ(rows, 23 * 24 / 2);
  EXPECT_EQ(t->metadata().current_snapshot()->summary.at("total-records"), std::to_string(rows));
}

// A manifest rewrite: every live file once, with its sequence number, the
// DELETED entries gone, and the entries sorted by partition value (not by
// byte: 256 is 00 01 00 00 little-endian, before 1's 01 00 00 00) so that
// each manifest covers its own range of partitions.
TEST_F(TableTest, RewritingManifestsClustersLiveFilesByPartitionValue) {
  auto t = MakeTable("id");
  ASSERT_NE(t, nullptr);
  auto value = [](int64_t v) {
    std::string b(8, '\0');
    std::memcpy(b.data(), &v, 8);
    return b;
  };
  auto decode = [](const std::string& b) {
    int64_t v = 0;
    std::memcpy(&v, b.data(), 8);
    return v;
  };
  const std::vector<int64_t> ids = {70000, 1, -5, 256};
  CommitOptions o;
  o.manifest_merge_min_count = 1000;
  for (int i = 0; i < 24; ++i) {
    std::vector<DataFile> files;
    for (int64_t id : ids) files.push_back(File(fmt::format("f{}-{}", i, id), 1, {value(id)}));
    ASSERT_OK(t->Append(files, {}, o));
  }
  SnapshotUpdate remove;
  remove.kind = ChangeKind::kRowDelta;
  remove.remove_paths = {"/data/f3-1", "/data/f7-256"};
  ASSERT_OK(t->Commit(remove, o));
  const iceberg::Snapshot* before = t->metadata().current_snapshot();
  ASSERT_OK_AND_ASSIGN(auto old_live, t->LiveFiles(before->snapshot_id));
  std::map<std::string, int64_t> want;  // path -> sequence number
  for (const auto& e : old_live) want[e.file.file_path] = *e.sequence_number;
  ASSERT_OK_AND_ASSIGN(auto old_list, iceberg::ReadManifestList(*io_, before->manifest_list, 2));
  ASSERT_EQ(old_list.size(), 24u);
  int64_t bytes = 0;
  for (const auto& m : old_list) bytes += m.manifest_length;

  SnapshotUpdate rewrite;
  rewrite.kind = ChangeKind::kRewriteManifests;
  o.manifest_target_bytes = bytes / 3;  // every manifest is small; a few come out
  ASSERT_OK_AND_ASSIGN(int64_t id, t->Commit(rewrite, o));
  const iceberg::Snapshot* snap = t->metadata().current_snapshot();
  EXPECT_EQ(snap->summary.at("operation"), "replace");
  EXPECT_EQ(snap->summary.at("manifests-replaced"), "24");
  EXPECT_EQ(snap->summary.at("entries-processed"), "94");
  EXPECT_EQ(snap->summary.at("total-data-files"), "94");
  ASSERT_OK_AND_ASSIGN(auto list, iceberg::ReadManifestList(*io_, snap->manifest_list, 2));
  EXPECT_GE(list.size(), 2u);
  EXPECT_LE(list.size(), 6u);
  EXPECT_EQ(snap->summary.at("manifests-created"), std::to_string(list.size()));
  std::optional<int64_t> prev_upper;
  for (const auto& m : list) {
    EXPECT_EQ(m.deleted_files_count, 0);
    EXPECT_EQ(m.added_files_count, 0);
    ASSERT_EQ(m.partitions.size(), 1u);
    int64_t lower = decode(*m.partitions[0].lower_bound);
    int64_t upper = decode(*m.partitions[0].upper_bound);
    if (prev_upper) {
      EXPECT_LE(*prev_upper, lower) << "ranges follow each other";
    }
    prev_upper = upper;
  }
  ASSERT_OK_AND_ASSIGN(auto live, t->LiveFiles(id));
  std::map<std::string, int64_t> got;
  for (const auto& e : live) {
    EXPECT_EQ(e.status, iceberg::EntryStatus::kExisting);
    got[e.file.file_path] = *e.sequence_number;
  }
  EXPECT_EQ(got, want);
  // Appends go on on top of it.
  ASSERT_OK(t->Append({File("after", 1, {value(1)})}, {}, o));
  ASSERT_OK_AND_ASSIGN(auto after, iceberg::ReadManifestList(
                                       *io_, t->metadata().current_snapshot()->manifest_list, 2));
  EXPECT_EQ(after.size(), list.size() + 1);
}

// remove_dangling_deletes: a delete file goes once no data file it could
// apply to is left live: for a position delete, none of a sequence number up
// to its own in its partition; for an equality delete, none below its own.
TEST_F(TableTest, DanglingDeleteFilesGoWithTheLastFileTheyCouldApplyTo) {
  auto t = MakeTable("kind");
  ASSERT_NE(t, nullptr);
  const iceberg::PartitionValues a = {std::string("a")};
  auto deletes = [&](const std::string& name, iceberg::FileContent content) {
    DataFile d = File(name, 1, a);
    d.content = content;
    if (content == iceberg::FileContent::kEqualityDeletes) d.equality_ids = {1};
    return d;
  };
  auto live = [&] {
    std::set<std::string> out;
    auto files = t->LiveFiles(*t->metadata().current_snapshot_id);
    EXPECT_TRUE(files.ok());
    for (const auto& e : *files) out.insert(e.file.file_path);
    return out;
  };
  auto commit = [&](std::vector<std::string> remove, std::vector<DataFile> add = {}) {
    SnapshotUpdate u;
    u.kind = ChangeKind::kRewriteFiles;
    u.remove_paths = std::move(remove);
    u.add_data = std::move(add);
    u.remove_dangling_deletes = true;
    return t->Commit(u).status();
  };
  ASSERT_OK(t->Append({File("d1", 5, a)}));  // sequence 1
  ASSERT_OK(t->Append({File("d2", 5, a)}));  // 2
  SnapshotUpdate del;
  del.kind = ChangeKind::kRowDelta;
  del.add_deletes = {deletes("pos3", iceberg::FileContent::kPositionDeletes)};  // 3
  ASSERT_OK(t->Commit(del));
  ASSERT_OK(t->Append({File("d4", 5, a)}));                                    // 4
  del.add_deletes = {deletes("eq5", iceberg::FileContent::kEqualityDeletes)};  // 5
  ASSERT_OK(t->Commit(del));
  ASSERT_OK(t->Append({File("other", 5, {std::string("b")})}));  // 6, another partition

  ASSERT_OK(commit({"/data/d1"}, {File("d1b", 4, a)}));
  EXPECT_TRUE(live().count("/data/pos3")) << "d2 (sequence 2) is still there for it";
  ASSERT_OK(commit({"/data/d2"}));
  EXPECT_FALSE(live().count("/data/pos3")) << "only d4 (4), d1b (7) are left: above 3";
  EXPECT_TRUE(live().count("/data/eq5")) << "d4 (4) is below 5";
  ASSERT_OK(commit({"/data/d4"}));
  EXPECT_EQ(live(), (std::set<std::string>{"/data/d1b", "/data/other"}));
  const auto& summary = t->metadata().current_snapshot()->summary;
  EXPECT_EQ(summary.at("removed-delete-files"), "1");
  EXPECT_EQ(summary.at("total-delete-files"), "0");
}

// An equality delete of a spec whose fields are all void applies to every
// partition of every spec (as the scan reads it): it is dangling only once no
// older data file is left anywhere, not just in its own (null) partition.
TEST_F(TableTest, AnEqualityDeleteOfAVoidSpecIsGlobalToTheDanglingRule) {
  auto t = MakeTable("void(kind)");
  ASSERT_NE(t, nullptr);
  ASSERT_OK(
      t->UpdateMetadata([](const iceberg::TableMetadata& m) -> Result<iceberg::TableMetadata> {
        iceberg::TableMetadata next = m;
        ASSIGN_OR_RETURN(iceberg::PartitionSpec spec,
                         iceberg::ParsePartitionSpec("kind", *m.current_schema(), 1, 1001));
        next.partition_specs.push_back(spec);
        next.default_spec_id = 1;
        next.last_partition_id = 1001;
        return next;
      }));
  DataFile in_a = File("a", 5, {std::string("a")});
  in_a.spec_id = 1;
  ASSERT_OK(t->Append({in_a}));  // sequence 1, spec 1
  DataFile void_data = File("v", 5, {std::nullopt});
  void_data.spec_id = 0;
  ASSERT_OK(t->Append({void_data}));  // 2, spec 0 (void)
  DataFile eq = File("eq", 1, {std::nullopt});
  eq.spec_id = 0;
  eq.content = iceberg::FileContent::kEqualityDeletes;
  eq.equality_ids = {1};
  SnapshotUpdate del;
  del.kind = ChangeKind::kRowDelta;
  del.add_deletes = {eq};
  ASSERT_OK(t->Commit(del));  // 3: applies to /data/a too
  SnapshotUpdate u;
  u.kind = ChangeKind::kRewriteFiles;
  u.remove_paths = {"/data/v"};
  u.remove_dangling_deletes = true;
  ASSERT_OK(t->Commit(u));
  ASSERT_OK_AND_ASSIGN(auto live, t->LiveFiles(*t->metadata().current_snapshot_id));
  std::set<std::string> paths;
  for (const auto& e : live) paths.insert(e.file.file_path);
  EXPECT_EQ(paths, (std::set<std::string>{"/data/a", "/data/eq"}))
      << "the void partition is empty, but /data/a (spec 1) is still subject to it";
}

// A manifest rewrite keeps each file's row lineage (v3): the entries it
// copies carry the first_row_id they inherited.
TEST_F(TableTest, RewritingManifestsKeepsRowLineage) {
  auto t = MakeTable("", 3);
  ASSERT_NE(t, nullptr);
  for (int i = 0; i < 4; ++i) ASSERT_OK(t->Append({File("f" + std::to_string(i), 10 + i)}));
  auto lineage = [&] {
    std::map<std::string, int64_t> out;
    auto live = t->LiveFiles(*t->metadata().current_snapshot_id);
    EXPECT_TRUE(live.ok());
    for (const auto& e : *live) out[e.file.file_path] = e.file.first_row_id.value_or(-1);
    return out;
  };
  const std::map<std::string, int64_t> before = lineage();
  EXPECT_EQ(before, (std::map<std::string, int64_t>{
                        {"/data/f0", 0}, {"/data/f1", 10}, {"/data/f2", 21}, {"/data/f3", 33}}));
  SnapshotUpdate rewrite;
  rewrite.kind = ChangeKind::kRewriteManifests;
  ASSERT_OK(t->Commit(rewrite));
  EXPECT_EQ(lineage(), before);
}

}  // namespace
}  // namespace sluice::catalog
