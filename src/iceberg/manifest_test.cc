#include "iceberg/manifest.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "columnar/sql_schema.h"
#include "common/testing.h"

namespace sluice::iceberg {
namespace {

namespace fs = std::filesystem;

// Maps a location written on another machine to the fixture folder: the
// part from "/metadata/" or "/data/" on is kept, the table folder is `root`.
std::string Remap(const std::string& location, const std::string& root) {
  for (const char* marker : {"/metadata/", "/data/"}) {
    size_t pos = location.rfind(marker);
    if (pos != std::string::npos) return root + location.substr(pos);
  }
  return location;
}

// Every snapshot of every fixture table: the manifest list and its manifests
// decode, with inheritance applied, and the list's counts match the entries.
TEST(ManifestTest, FixtureTablesDecodeConsistently) {
  auto io = MakeLocalFileIO();
  int manifests_read = 0;
  for (const auto& e : fs::recursive_directory_iterator("../shared/fixtures/iceberg")) {
    std::string path = e.path().string();
    if (!e.is_regular_file() || !path.ends_with(".metadata.json")) continue;
    std::string root = e.path().parent_path().parent_path().string();
    auto md = ParseTableMetadata(testing::ReadFileBytes(path), path);
    if (!md.ok()) continue;  // covered by table_metadata_test
    for (const Snapshot& snap : md->snapshots) {
      std::string list_path = Remap(snap.manifest_list, root);
      if (!fs::exists(list_path)) continue;  // not every fixture ships every snapshot
      ASSERT_OK_AND_ASSIGN(auto list, ReadManifestList(*io, list_path, md->format_version));
      for (ManifestFile m : list) {
        m.manifest_path = Remap(m.manifest_path, root);
        if (!fs::exists(m.manifest_path)) continue;
        auto entries = ReadManifest(*io, m, md->format_version);
        ASSERT_TRUE(entries.ok()) << m.manifest_path << ": " << entries.status().ToString();
        int added = 0, existing = 0, deleted = 0;
        int64_t added_rows = 0;
        for (const ManifestEntry& en : *entries) {
          EXPECT_TRUE(en.snapshot_id.has_value());
          EXPECT_TRUE(en.sequence_number.has_value());
          EXPECT_LE(*en.sequence_number, snap.sequence_number) << m.manifest_path;
          EXPECT_FALSE(en.file.file_path.empty());
          if (en.status == EntryStatus::kAdded) {
            ++added;
            added_rows += en.file.record_count;
          }
          existing += en.status == EntryStatus::kExisting;
          deleted += en.status == EntryStatus::kDeleted;
        }
        if (m.sequence_number == 0) continue;  // v1 lists: counts are optional and unreliable
        EXPECT_EQ(added, m.added_files_count) << m.manifest_path;
        EXPECT_EQ(existing, m.existing_files_count) << m.manifest_path;
        EXPECT_EQ(deleted, m.deleted_files_count) << m.manifest_path;
        EXPECT_EQ(added_rows, m.added_rows_count) << m.manifest_path;
        ++manifests_read;
      }
    }
  }
  EXPECT_GT(manifests_read, 40);
}

class ManifestRoundTrip : public ::testing::TestWithParam<int> {};

TEST_P(ManifestRoundTrip, WriteReadWithInheritance) {
  const int version = GetParam();
  auto io = MakeMemoryFileIO();
  ASSERT_OK_AND_ASSIGN(Schema schema,
                       ParseColumnList("id BIGINT NOT NULL, ts TIMESTAMPTZ, kind STRING"));
  PartitionSpec spec;
  spec.spec_id = 1;
  spec.fields = {{2, 1000, "ts_day", *Transform::Parse("day")},
                 {3, 1001, "kind_bucket", *Transform::Parse("bucket[8]")}};
  ManifestWriterOptions wo;
  wo.format_version = version;
  wo.snapshot_id = 42;
  ASSERT_OK_AND_ASSIGN(auto w, ManifestWriter::Open(*io, "/t/metadata/m0.avro", schema, spec, wo));

  auto int_bytes = [](int32_t v) { return std::string(reinterpret_cast<char*>(&v), 4); };
  std::vector<ManifestEntry> in;
  for (int i = 0; i < 3; ++i) {
    ManifestEntry e;
    e.status = i == 2 ? EntryStatus::kExisting : EntryStatus::kAdded;
    if (i == 2) {
      e.snapshot_id = 7;
      e.sequence_number = 3;
      e.file_sequence_number = 4;
    }
    e.file.file_path = "/t/data/f" + std::to_string(i) + ".parquet";
    e.file.partition = {int_bytes(19000 + i),
                        i == 1 ? std::nullopt : std::optional<std::string>(int_bytes(i))};
    e.file.record_count = 100 + i;
    e.file.file_size_in_bytes = 5000 + i;
    e.file.column_sizes = {{1, 10}, {2, 20}};
    e.file.value_counts = {{1, 100}};
    e.file.null_value_counts = {{2, 0}};
    e.file.lower_bounds = {{1, std::string(8, '\0')}};
    e.file.upper_bounds = {{1, std::string(8, '\x7f')}};
    e.file.split_offsets = {4, 1000};
    e.file.sort_order_id = 0;
    ASSERT_OK(w->Add(e));
    in.push_back(e);
  }
  // A bad partition value fails that Add and leaves the manifest intact.
  ManifestEntry bad = in[0];
  bad.file.partition[0] = "xyz";
  ASSERT_ERROR(w->Add(bad), StatusCode::kCorruption, "ts_day");
  ASSERT_OK_AND_ASSIGN(ManifestFile m, w->Close());
  EXPECT_EQ(m.added_files_count, 2);
  EXPECT_EQ(m.existing_files_count, 1);
  EXPECT_EQ(m.added_rows_count, 201);
  EXPECT_EQ(m.min_sequence_number, 3);
  ASSERT_EQ(m.partitions.size(), 2u);
  EXPECT_EQ(m.partitions[0].lower_bound, int_bytes(19000));
  EXPECT_EQ(m.partitions[0].upper_bound, int_bytes(19002));
  EXPECT_TRUE(m.partitions[1].contains_null);

  ManifestListOptions lo;
  lo.format_version = version;
  lo.snapshot_id = 42;
  lo.parent_snapshot_id = 7;
  lo.sequence_number = 9;
  lo.first_row_id = 1000;
  ASSERT_OK_AND_ASSIGN(int64_t assigned, WriteManifestList(*io, "/t/metadata/snap.avro", {m}, lo));
  EXPECT_EQ(assigned, version >= 3 ? 303 : 0);  // added + existing rows

  ASSERT_OK_AND_ASSIGN(auto list, ReadManifestList(*io, "/t/metadata/snap.avro", version));
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0].sequence_number, 9);
  EXPECT_EQ(list[0].min_sequence_number, 3);
  EXPECT_EQ(list[0].manifest_length, m.manifest_length);
  if (version >= 3) {
    EXPECT_EQ(list[0].first_row_id, 1000);
  }
  ASSERT_OK_AND_ASSIGN(auto out, ReadManifest(*io, list[0], version));
  ASSERT_EQ(out.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    const ManifestEntry& e = out[i];
    EXPECT_EQ(e.file.file_path, in[i].file.file_path);
    EXPECT_EQ(e.file.partition, in[i].file.partition);
    EXPECT_EQ(e.file.record_count, in[i].file.record_count);
    EXPECT_EQ(e.file.column_sizes, in[i].file.column_sizes);
    EXPECT_EQ(e.file.lower_bounds, in[i].file.lower_bounds);
    EXPECT_EQ(e.file.upper_bounds, in[i].file.upper_bounds);
    EXPECT_EQ(e.file.split_offsets, in[i].file.split_offsets);
    EXPECT_EQ(e.file.spec_id, 1);
  }
  // Inherited from the list for ADDED entries, explicit for EXISTING.
  EXPECT_EQ(out[0].snapshot_id, 42);
  EXPECT_EQ(out[0].sequence_number, 9);
  EXPECT_EQ(out[0].file_sequence_number, 9);
  EXPECT_EQ(out[2].snapshot_id, 7);
  EXPECT_EQ(out[2].sequence_number, 3);
  EXPECT_EQ(out[2].file_sequence_number, 4);

  // Without column statistics: the same entries, their statistics left empty.
  ManifestReadOptions no_stats;
  no_stats.column_stats = false;
  ASSERT_OK_AND_ASSIGN(auto lean, ReadManifest(*io, list[0], version, no_stats));
  ASSERT_EQ(lean.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(lean[i].file.file_path, in[i].file.file_path);
    EXPECT_EQ(lean[i].file.partition, in[i].file.partition);
    EXPECT_EQ(lean[i].sequence_number, out[i].sequence_number);
    EXPECT_EQ(lean[i].file.split_offsets, in[i].file.split_offsets);
    EXPECT_TRUE(lean[i].file.column_sizes.empty());
    EXPECT_TRUE(lean[i].file.value_counts.empty());
    EXPECT_TRUE(lean[i].file.lower_bounds.empty());
    EXPECT_TRUE(lean[i].file.upper_bounds.empty());
  }
}

INSTANTIATE_TEST_SUITE_P(FormatVersions, ManifestRoundTrip, ::testing::Values(2, 3));

TEST(ManifestTest, LiveOnlyLeavesDeletedEntriesOutAndTheRowIdsOfTheRestAsTheyWere) {
  // v3: a file without a first_row_id inherits the manifest's plus the rows
  // of the files before it (a DELETED one included, as when it is read).
  auto io = MakeMemoryFileIO();
  ASSERT_OK_AND_ASSIGN(Schema schema, ParseColumnList("id BIGINT NOT NULL"));
  ManifestWriterOptions wo;
  wo.format_version = 3;
  wo.snapshot_id = 42;
  ASSERT_OK_AND_ASSIGN(
      auto w, ManifestWriter::Open(*io, "/t/metadata/m.avro", schema, PartitionSpec{}, wo));
  const EntryStatus statuses[] = {EntryStatus::kAdded, EntryStatus::kDeleted, EntryStatus::kAdded,
                                  EntryStatus::kDeleted};
  for (int i = 0; i < 4; ++i) {
    ManifestEntry e;
    e.status = statuses[i];
    if (e.status == EntryStatus::kDeleted) {
      e.snapshot_id = 42;
      e.sequence_number = 1;
      e.file_sequence_number = 1;
    }
    e.file.file_path = "/t/data/f" + std::to_string(i) + ".parquet";
    e.file.record_count = 10 * (i + 1);
    e.file.file_size_in_bytes = 100;
    ASSERT_OK(w->Add(e));
  }
  ASSERT_OK_AND_ASSIGN(ManifestFile m, w->Close());
  m.sequence_number = 2;
  m.first_row_id = 1000;
  ASSERT_OK_AND_ASSIGN(auto all, ReadManifest(*io, m, 3));
  ManifestReadOptions live;
  live.live_only = true;
  live.column_stats = false;
  ASSERT_OK_AND_ASSIGN(auto kept, ReadManifest(*io, m, 3, live));
  ASSERT_EQ(all.size(), 4u);
  ASSERT_EQ(kept.size(), 2u);
  EXPECT_EQ(kept[0].file.file_path, "/t/data/f0.parquet");
  EXPECT_EQ(kept[1].file.file_path, "/t/data/f2.parquet");
  EXPECT_EQ(kept[0].file.first_row_id, all[0].file.first_row_id);
  EXPECT_EQ(kept[1].file.first_row_id, all[2].file.first_row_id);
  EXPECT_EQ(kept[1].file.first_row_id, 1000 + 10 + 20);
}

TEST(ManifestTest, CorruptManifestIsAClearError) {
  auto io = MakeMemoryFileIO();
  ASSERT_OK(io->WriteFile("/t/bad.avro", "Obj\x01garbage"));
  ManifestFile m;
  m.manifest_path = "/t/bad.avro";
  auto r = ReadManifest(*io, m, 2);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kCorruption) << r.status().ToString();
  EXPECT_NE(r.status().message().find("/t/bad.avro"), std::string::npos) << r.status().ToString();
  ASSERT_ERROR(ReadManifestList(*io, "/t/missing.avro", 2), StatusCode::kNotFound, "missing");

  // An entry whose content is no kind of file the spec has (a scan would
  // otherwise match it to data files as some kind of delete).
  ASSERT_OK_AND_ASSIGN(Schema schema, ParseColumnList("id BIGINT NOT NULL"));
  ManifestWriterOptions wo;
  wo.snapshot_id = 1;
  wo.content = ManifestContent::kDeletes;
  ASSERT_OK_AND_ASSIGN(auto w,
                       ManifestWriter::Open(*io, "/t/odd.avro", schema, PartitionSpec{}, wo));
  ManifestEntry e;
  e.file.content = static_cast<FileContent>(3);
  e.file.file_path = "/t/data/d.parquet";
  ASSERT_OK(w->Add(e));
  ASSERT_OK_AND_ASSIGN(ManifestFile odd, w->Close());
  ASSERT_ERROR(ReadManifest(*io, odd, 2), StatusCode::kCorruption, "entry 0: content 3");
}

TEST(ManifestTest, ManifestsReadOnSeveralThreadsComeBackInOrderAndTheFirstFailureWins) {
  auto io = MakeMemoryFileIO();
  ASSERT_OK_AND_ASSIGN(Schema schema, ParseColumnList("id BIGINT NOT NULL"));
  PartitionSpec spec;  // unpartitioned
  std::vector<ManifestFile> manifests;
  for (int m = 0; m < 12; ++m) {
    ManifestWriterOptions wo;
    wo.snapshot_id = 1;
    std::string path = "/t/metadata/m" + std::to_string(m) + ".avro";
    ASSERT_OK_AND_ASSIGN(auto w, ManifestWriter::Open(*io, path, schema, spec, wo));
    for (int i = 0; i <= m; ++i) {  // manifest m holds m + 1 files
      ManifestEntry e;
      e.status = EntryStatus::kAdded;
      e.file.file_path = "/t/data/" + std::to_string(m) + "-" + std::to_string(i) + ".parquet";
      e.file.record_count = 1;
      e.file.file_size_in_bytes = 10;
      ASSERT_OK(w->Add(e));
    }
    ASSERT_OK_AND_ASSIGN(ManifestFile f, w->Close());
    f.sequence_number = 1;
    manifests.push_back(f);
  }
  for (int threads : {1, 3, 0}) {
    ASSERT_OK_AND_ASSIGN(auto read, ReadManifests(*io, manifests, 2, {}, threads));
    ASSERT_EQ(read.size(), manifests.size());
    for (size_t m = 0; m < read.size(); ++m) {
      ASSERT_EQ(read[m].size(), m + 1) << "threads " << threads;
      EXPECT_EQ(read[m].back().file.file_path,
                "/t/data/" + std::to_string(m) + "-" + std::to_string(m) + ".parquet");
    }
  }
  // Two broken manifests: the first of them (in the list's order) is reported.
  ASSERT_OK(io->Delete("/t/metadata/m4.avro"));
  ASSERT_OK(io->WriteFile("/t/metadata/m4.avro", "Obj\x01garbage"));
  ASSERT_OK(io->Delete("/t/metadata/m9.avro"));
  for (int threads : {1, 4}) {
    auto r = ReadManifests(*io, manifests, 2, {}, threads);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.status().message().find("m4.avro"), std::string::npos) << r.status().ToString();
  }
}

}  // namespace
}  // namespace sluice::iceberg
