// VerifyTable on real tables: a healthy history verifies with each file
// checked once; a missing, cut or damaged file, manifest or manifest list is
// named once, under the first snapshot that reaches it.
#include "maintenance/verify.h"

#include <filesystem>
#include <fstream>

#include "catalog/row_delete.h"
#include "common/testing.h"
#include "io/remap_file_io.h"
#include "maintenance/compact.h"
#include "maintenance/expire_test_util.h"
#include "maintenance/manifests.h"

namespace sluice::maintenance {
namespace {

class VerifyTest : public TableFixture, public ::testing::WithParamInterface<int> {
 protected:
  void SetUp() override { MakeTable("id BIGINT NOT NULL", "", "", GetParam()); }

  VerifyReport Verify(bool read_data) {
    EXPECT_OK(table_->Refresh());
    VerifyOptions o;
    o.read_data = read_data;
    auto r = VerifyTable(*io_, table_->metadata(), o);
    EXPECT_OK(r);
    return r.ok() ? *r : VerifyReport{};
  }

  // The one data file snapshot `index` (0 = the first) added.
  std::string DataFileAddedBy(size_t index) {
    EXPECT_OK(table_->Refresh());
    const iceberg::TableMetadata& m = table_->metadata();
    const iceberg::Snapshot& s = m.snapshots.at(index);
    auto manifests = iceberg::ReadManifestList(*io_, s.manifest_list, m.format_version);
    EXPECT_OK(manifests);
    for (const iceberg::ManifestFile& mf : *manifests) {
      auto entries = iceberg::ReadManifest(*io_, mf, m.format_version);
      EXPECT_OK(entries);
      for (const iceberg::ManifestEntry& e : *entries) {
        if (e.snapshot_id == s.snapshot_id && e.status == iceberg::EntryStatus::kAdded &&
            e.file.content == iceberg::FileContent::kData) {
          return OnDisk(e.file.file_path);
        }
      }
    }
    ADD_FAILURE() << "snapshot " << index << " added no data file";
    return "";
  }
};

TEST_P(VerifyTest, EverySnapshotOfAHealthyHistoryVerifiesEachFileCheckedOnce) {
  AppendIds(0, 10);
  AppendIds(10, 20);
  ASSERT_OK(catalog::DeleteWhere(*table_, "id IN (3, 14)").status());
  AppendIds(20, 30);
  ASSERT_OK(CompactTable(*table_, RewriteAll()));  // three files and the deletes become one
  const size_t files_on_disk = Files("data").size();

  for (bool read_data : {false, true}) {
    VerifyReport r = Verify(read_data);
    EXPECT_TRUE(r.problems.empty()) << r.problems.front();
    ASSERT_EQ(r.snapshots.size(), 5u);
    // Rows each snapshot reads: records less deletes (no row is deleted twice here).
    const std::vector<int64_t> rows = {10, 20, 18, 28, 28};
    for (size_t i = 0; i < rows.size(); ++i) {
      EXPECT_EQ(r.snapshots[i].records - r.snapshots[i].deletes, rows[i]) << "snapshot " << i;
      EXPECT_EQ(r.snapshots[i].snapshot_id, table_->metadata().snapshots[i].snapshot_id);
      EXPECT_EQ(r.snapshots[i].operation, table_->metadata().snapshots[i].operation());
    }
    EXPECT_EQ(r.snapshots[4].operation, "replace");
    EXPECT_EQ(r.snapshots[4].data_files, 1);
    EXPECT_EQ(r.snapshots[4].delete_files, 0);
    // Every data and delete file the history holds, once, though most are in
    // several snapshots.
    EXPECT_EQ(r.files, static_cast<int64_t>(files_on_disk));
    EXPECT_EQ(r.manifest_lists, 5);
    EXPECT_EQ(r.bytes_read > 0, read_data);
  }
}

TEST_P(VerifyTest, AMissingDataFileIsNamedOnceUnderTheFirstSnapshotThatReachesIt) {
  AppendIds(0, 10);
  AppendIds(10, 20);
  AppendIds(20, 30);
  const std::string gone = DataFileAddedBy(1);
  ASSERT_TRUE(std::filesystem::remove(gone));

  VerifyReport r = Verify(false);
  ASSERT_EQ(r.problems.size(), 1u);
  EXPECT_NE(r.problems[0].find(std::to_string(table_->metadata().snapshots[1].snapshot_id)),
            std::string::npos)
      << r.problems[0];
  EXPECT_NE(r.problems[0].find("data file"), std::string::npos) << r.problems[0];
  EXPECT_NE(r.problems[0].find(gone), std::string::npos) << r.problems[0];
  EXPECT_NE(r.problems[0].find("missing"), std::string::npos) << r.problems[0];
  EXPECT_EQ(r.snapshots[0].problems, 0);
  EXPECT_EQ(r.snapshots[1].problems, 1);
  EXPECT_EQ(r.snapshots[2].problems, 0) << "reported once, under the first snapshot";
}

TEST_P(VerifyTest, AFileCutShortFailsTheSizeCheckAndADamagedFooterOnlyTheRead) {
  AppendIds(0, 10);
  AppendIds(10, 20);
  const std::string cut = DataFileAddedBy(0), damaged = DataFileAddedBy(1);
  std::filesystem::resize_file(cut, std::filesystem::file_size(cut) - 1);
  {
    std::fstream f(damaged, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(-4, std::ios::end);
    f.write("XXXX", 4);  // the closing magic
  }
  VerifyReport shallow = Verify(false);
  ASSERT_EQ(shallow.problems.size(), 1u);
  EXPECT_NE(shallow.problems[0].find(cut), std::string::npos) << shallow.problems[0];
  EXPECT_NE(shallow.problems[0].find("its manifest records"), std::string::npos);

  // Read, the cut file fails to decode too (what it holds tells what happened).
  VerifyReport deep = Verify(true);
  ASSERT_EQ(deep.problems.size(), 3u);
  EXPECT_NE(deep.problems[1].find(cut), std::string::npos) << deep.problems[1];
  EXPECT_NE(deep.problems[2].find(damaged), std::string::npos) << deep.problems[2];
  EXPECT_EQ(deep.snapshots[0].problems, 2);
  EXPECT_EQ(deep.snapshots[1].problems, 1);
}

TEST_P(VerifyTest, ADamagedDeletionVectorFailsOnlyTheRead) {
  if (GetParam() < 3) GTEST_SKIP() << "deletion vectors are format v3's";
  AppendIds(0, 10);
  AppendIds(10, 20);
  ASSERT_OK(catalog::DeleteWhere(*table_, "id IN (3, 14)").status());  // one Puffin file, two DVs
  ASSERT_OK(table_->Refresh());
  const iceberg::TableMetadata& m = table_->metadata();
  std::vector<iceberg::DataFile> dvs;
  auto manifests = iceberg::ReadManifestList(*io_, m.current_snapshot()->manifest_list, 3);
  ASSERT_OK(manifests);
  for (const iceberg::ManifestFile& mf : *manifests) {
    ASSERT_OK_AND_ASSIGN(auto entries, iceberg::ReadManifest(*io_, mf, 3));
    for (const auto& e : entries) {
      if (e.file.content_offset) dvs.push_back(e.file);
    }
  }
  ASSERT_EQ(dvs.size(), 2u);
  ASSERT_EQ(dvs[0].file_path, dvs[1].file_path);
  {  // a bit of the second blob's bitmap flips
    std::fstream f(OnDisk(dvs[1].file_path), std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(*dvs[1].content_offset + 10);
    char c = 0;
    f.read(&c, 1);
    c ^= 0x10;
    f.seekp(*dvs[1].content_offset + 10);
    f.write(&c, 1);
  }
  EXPECT_TRUE(Verify(false).problems.empty()) << "sizes and blob ranges hold";
  VerifyReport deep = Verify(true);
  ASSERT_EQ(deep.problems.size(), 1u);
  EXPECT_NE(deep.problems[0].find("deletion vector " + dvs[1].file_path), std::string::npos)
      << deep.problems[0];
  EXPECT_EQ(deep.files, 3) << "two data files and one Puffin file";
}

TEST_P(VerifyTest, AMissingManifestOrManifestListFailsItsSnapshots) {
  AppendIds(0, 10);
  AppendIds(10, 20);
  AppendIds(20, 30);
  ASSERT_OK(table_->Refresh());
  const iceberg::TableMetadata m = table_->metadata();
  // The second snapshot's list goes; the first snapshot's manifest (which
  // the later lists carry over) goes too.
  ASSERT_TRUE(std::filesystem::remove(OnDisk(m.snapshots[1].manifest_list)));
  auto first = iceberg::ReadManifestList(*io_, m.snapshots[0].manifest_list, m.format_version);
  ASSERT_OK(first);
  ASSERT_EQ(first->size(), 1u);
  ASSERT_TRUE(std::filesystem::remove(OnDisk((*first)[0].manifest_path)));

  VerifyReport r = Verify(false);
  ASSERT_EQ(r.problems.size(), 2u);
  EXPECT_NE(r.problems[0].find("manifest " + (*first)[0].manifest_path), std::string::npos)
      << r.problems[0];
  EXPECT_NE(r.problems[1].find("manifest list " + m.snapshots[1].manifest_list), std::string::npos)
      << r.problems[1];
  EXPECT_EQ(r.snapshots[0].problems, 1);
  EXPECT_EQ(r.snapshots[1].problems, 1);
  EXPECT_EQ(r.snapshots[2].problems, 0) << "its other manifests read; the gone one was named";
  EXPECT_EQ(r.snapshots[2].data_files, 2);
}

// A file is opened once, but every manifest entry that names it is checked:
// a rewritten manifest that records another size and row count for a file
// an earlier manifest recorded rightly is named, under the first snapshot
// that holds it.
TEST_P(VerifyTest, ALaterManifestRecordingAnotherSizeForAFileIsNamed) {
  AppendIds(0, 10);
  AppendIds(10, 20);
  ManifestRewriteOptions rewrite;
  rewrite.force = true;
  ASSERT_OK_AND_ASSIGN(ManifestRewriteResult r, RewriteManifests(*table_, rewrite));
  ASSERT_TRUE(r.snapshot_id.has_value());
  ASSERT_OK(table_->Refresh());
  const iceberg::TableMetadata& m = table_->metadata();
  ASSERT_EQ(m.snapshots.size(), 3u);
  ASSERT_OK_AND_ASSIGN(auto manifests, iceberg::ReadManifestList(
                                           *io_, m.current_snapshot()->manifest_list, GetParam()));
  ASSERT_EQ(manifests.size(), 1u) << "both files in one manifest";
  ASSERT_OK_AND_ASSIGN(auto entries, iceberg::ReadManifest(*io_, manifests[0], GetParam()));
  ASSERT_EQ(entries.size(), 2u);
  // The rewritten manifest, written again in place: its first file's entry
  // records 7 more bytes and 1 more row.
  std::string changed = entries[0].file.file_path;
  entries[0].file.file_size_in_bytes += 7;
  entries[0].file.record_count += 1;
  iceberg::ManifestWriterOptions w;
  w.format_version = GetParam();
  w.snapshot_id = *r.snapshot_id;
  const std::string again = manifests[0].manifest_path + ".again.avro";
  ASSERT_OK_AND_ASSIGN(auto writer,
                       iceberg::ManifestWriter::Open(*io_, again, *m.current_schema(),
                                                     *m.spec_by_id(m.default_spec_id), w));
  for (const auto& e : entries) ASSERT_OK(writer->Add(e));
  ASSERT_OK(writer->Close().status());
  std::filesystem::rename(OnDisk(again), OnDisk(manifests[0].manifest_path));

  VerifyReport shallow = Verify(false);
  ASSERT_EQ(shallow.problems.size(), 1u);
  EXPECT_NE(shallow.problems[0].find(changed), std::string::npos) << shallow.problems[0];
  EXPECT_NE(shallow.problems[0].find("its manifest records " +
                                     std::to_string(entries[0].file.file_size_in_bytes)),
            std::string::npos)
      << shallow.problems[0];
  EXPECT_EQ(shallow.snapshots[0].problems + shallow.snapshots[1].problems, 0)
      << "their manifests record the file rightly";
  EXPECT_EQ(shallow.snapshots[2].problems, 1);
  EXPECT_EQ(shallow.files, 2) << "each file opened once";
  VerifyReport deep = Verify(true);
  ASSERT_EQ(deep.problems.size(), 2u) << "its size and its rows";
  EXPECT_NE(deep.problems[1].find("10 rows decoded, its manifest records 11"), std::string::npos)
      << deep.problems[1];
}

// Every file of every fixture table another engine wrote (Spark, Java
// Iceberg, pyiceberg, DuckDB) decodes to the rows its manifest records. The
// problems it may report: files the fixtures do not ship, and sizes that
// differ from what the manifests record: several of duckdb-iceberg's tables
// (partition_*, hive_partitioned_table, name_mapping) ship data files of
// other sizes than their manifests say (the Hadoop .crc siblings of the
// partition_* files checksum files of the recorded size: the data files
// were written again after the manifests). A reader that trusts the recorded
// size to find the footer fails on those; sluice's reads the file's own.
TEST(VerifyFixtureTest, EveryFileOfEveryFixtureTableDecodesToItsRecordedRows) {
  namespace fs = std::filesystem;
  auto local = MakeLocalFileIO();
  int clean = 0, files = 0, resized_files = 0;
  for (const auto& e : fs::recursive_directory_iterator("../shared/fixtures/iceberg")) {
    const std::string path = e.path().string();
    if (!e.is_regular_file() || !path.ends_with(".metadata.json")) continue;
    auto md = iceberg::ParseTableMetadata(testing::ReadFileBytes(path), path);
    if (!md.ok()) continue;  // (not every JSON file there is a table's)
    auto io =
        MakeRemapFileIO(*local, {{md->location, e.path().parent_path().parent_path().string()}});
    VerifyOptions o;
    o.read_data = true;
    ASSERT_OK_AND_ASSIGN(VerifyReport r, VerifyTable(*io, *md, o));
    for (const std::string& p : r.problems) {
      const bool resized = p.find("bytes, its manifest records") != std::string::npos &&
                           path.find("/duckdb-iceberg/") != std::string::npos;
      const bool not_shipped =
          p.ends_with(": Not found: missing") || p.ends_with("No such file or directory");
      resized_files += resized ? 1 : 0;
      EXPECT_TRUE(not_shipped || resized) << path << ": " << p;
    }
    clean += r.problems.empty() && !r.snapshots.empty() ? 1 : 0;
    files += static_cast<int>(r.files);
  }
  EXPECT_GT(clean, 20) << "fixture tables with every snapshot whole";
  EXPECT_GT(files, 100);
  EXPECT_GT(resized_files, 0) << "the check of sizes found what it finds in these fixtures";
}

INSTANTIATE_TEST_SUITE_P(Formats, VerifyTest, ::testing::Values(2, 3),
                         [](const auto& info) { return "v" + std::to_string(info.param); });

}  // namespace
}  // namespace sluice::maintenance
