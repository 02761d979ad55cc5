// CompactTable on a real partitioned table: only partitions with enough small
// files, the same rows after, deletes kept deleted, a dry run that changes
// nothing, row lineage kept, and output sorted by the table's sort order.
// (Deletes that land during a compaction: compact_carry_test.cc.)
#include "maintenance/compact.h"

#include <algorithm>
#include <map>

#include "catalog/row_delete.h"
#include "maintenance/compact_test_util.h"
#include "maintenance/health.h"
#include "maintenance/policy.h"
#include "parquet/reader.h"

namespace sluice::maintenance {
namespace {

// `sluice table rewrite`: every file of every partition, big or alone, its
// deletes applied; the delete files, applying to nothing live any more, go.
TEST_F(CompactTest, RewritingEveryFileAppliesTheDeletesAndDropsTheDeleteFiles) {
  SmallAppends();
  ASSERT_OK(catalog::DeleteWhere(*table_, "id < 5 OR id = 111").status());
  std::set<int64_t> ids = Ids();
  ASSERT_EQ(ids.size(), 80u - 6);
  CompactOptions o;
  o.all_files = true;
  ASSERT_OK_AND_ASSIGN(CompactResult r, CompactTable(*table_, o));
  EXPECT_EQ(r.partitions.size(), 2u) << "kind=b too, with its 2 files";
  EXPECT_EQ(r.commits, 1) << "one group";
  EXPECT_EQ(FilesPerPartition(), (std::map<std::string, int>{{"a", 1}, {"b", 1}}));
  EXPECT_EQ(Ids(), ids);
  const iceberg::Snapshot* s = table_->metadata().current_snapshot();
  EXPECT_EQ(s->summary.at("total-delete-files"), "0");
  EXPECT_EQ(s->summary.at("removed-delete-files"), "2") << "one per partition";
  // Once more: a partition of one file is rewritten too (a rewrite is asked for).
  ASSERT_OK_AND_ASSIGN(r, CompactTable(*table_, o));
  EXPECT_EQ(r.commits, 1);
  EXPECT_EQ(Ids(), ids);
}

TEST_F(CompactTest, OnlyPartitionsWithEnoughSmallFilesAreRewrittenToTheSameRows) {
  SmallAppends();
  std::set<int64_t> ids = Ids();
  ASSERT_EQ(ids.size(), 80u);
  ASSERT_OK_AND_ASSIGN(CompactResult r, CompactTable(*table_, {}));
  EXPECT_EQ(r.partitions_seen, 2);
  EXPECT_EQ(r.small_files, 8);
  ASSERT_EQ(r.partitions.size(), 1u) << "kind=b has 2 small files, under the 5 it takes";
  EXPECT_EQ(r.partitions[0].partition, "kind=a");
  EXPECT_EQ(r.partitions[0].inputs.size(), 6u);
  EXPECT_EQ(r.partitions[0].outputs, 1);
  EXPECT_EQ(r.partitions[0].rows, 60);
  EXPECT_GT(r.partitions[0].copied_bytes, 0) << "id's pages, without a dictionary, are copied";
  EXPECT_LT(r.partitions[0].copied_bytes, r.partitions[0].output_bytes) << "kind's are not";
  EXPECT_EQ(r.bytes_copied, r.partitions[0].copied_bytes);
  EXPECT_TRUE(r.partitions[0].skipped.empty());
  EXPECT_EQ(r.commits, 1);
  EXPECT_EQ(FilesPerPartition(), (std::map<std::string, int>{{"a", 1}, {"b", 2}}));
  EXPECT_EQ(Ids(), ids);
  const iceberg::Snapshot* s = table_->metadata().current_snapshot();
  EXPECT_EQ(s->operation(), "replace");
  EXPECT_EQ(s->summary.at("sluice.maintenance"), "compact");
  // Nothing is left to do: a second run plans nothing.
  ASSERT_OK_AND_ASSIGN(CompactResult again, CompactTable(*table_, {}));
  EXPECT_TRUE(again.partitions.empty());
}

TEST_F(CompactTest, ADryRunPlansAndChangesNothing) {
  SmallAppends();
  std::string metadata = table_->metadata_location();
  CompactOptions o;
  o.dry_run = true;
  o.min_input_files = 2;
  ASSERT_OK_AND_ASSIGN(CompactResult r, CompactTable(*table_, o));
  ASSERT_EQ(r.partitions.size(), 2u);
  EXPECT_EQ(r.partitions[0].partition, "kind=a") << "the worst partition first";
  EXPECT_EQ(r.partitions[1].partition, "kind=b");
  EXPECT_EQ(r.commits, 0);
  EXPECT_EQ(r.partitions[0].outputs, 0);
  ASSERT_OK(table_->Refresh());
  EXPECT_EQ(table_->metadata_location(), metadata);
  EXPECT_EQ(FilesPerPartition(), (std::map<std::string, int>{{"a", 6}, {"b", 2}}));
}

TEST_F(CompactTest, DeletedRowsStayDeletedThroughCompaction) {
  SmallAppends();
  ASSERT_OK(catalog::DeleteWhere(*table_, "id IN (0, 7, 14, 21, 28, 35, 42, 49, 56, 105)"));
  std::set<int64_t> ids = Ids();
  ASSERT_LT(ids.size(), 80u);
  ASSERT_OK_AND_ASSIGN(CompactResult r, CompactTable(*table_, {}));
  ASSERT_EQ(r.commits, 1);
  EXPECT_EQ(r.bytes_copied, 0) << "files with deletes are decoded to drop the deleted rows";
  EXPECT_EQ(r.partitions[0].rows, static_cast<int64_t>(std::count_if(
                                      ids.begin(), ids.end(), [](int64_t id) { return id < 60; })));
  EXPECT_EQ(Ids(), ids);
}

// Copying pages, output files rolling at a tiny target (a file for each
// input's row group) keep every row once, where the compaction says it went.
TEST_F(CompactTest, CopiedPagesKeepTheRowsAcrossRolledOutputFiles) {
  SmallAppends();
  const std::set<int64_t> ids = Ids();
  CompactOptions o;
  o.target_file_bytes = 1;
  o.small_file_bytes = int64_t{1} << 20;
  ASSERT_OK_AND_ASSIGN(CompactResult r, CompactTable(*table_, o));
  ASSERT_EQ(r.commits, 1);
  ASSERT_EQ(r.partitions.size(), 1u);
  EXPECT_GT(r.partitions[0].copied_bytes, 0);
  EXPECT_EQ(r.partitions[0].outputs, 6) << "one per input";
  EXPECT_EQ(Ids(), ids);
}

// A corrupt page in one input stops the compaction with an error naming it;
// nothing is committed and the files it wrote are gone.
TEST_F(CompactTest, ACorruptInputPageFailsTheCompactionAndLeavesTheTableAsItWas) {
  SmallAppends();
  const std::string metadata = table_->metadata_location();
  const auto before = LiveSequences();
  // The third kind=a file's id chunk: its first page's body, overwritten.
  std::vector<std::string> a_files;
  for (const auto& [path, seq] : before) {
    if (path.find("kind=a") != std::string::npos) a_files.push_back(path);
  }
  ASSERT_EQ(a_files.size(), 6u);
  const std::string victim = a_files[2];
  ASSERT_OK_AND_ASSIGN(auto in, io_->OpenInput(victim));
  ASSERT_OK_AND_ASSIGN(auto reader, parquet::ParquetReader::Open(std::move(in)));
  const parquet::ColumnMetaData& id = *reader->metadata().row_groups[0].columns[0].meta_data;
  ASSERT_OK_AND_ASSIGN(std::string bytes, io_->ReadFile(victim));
  const size_t body_end = static_cast<size_t>(id.data_page_offset + id.total_compressed_size);
  for (size_t k = body_end - 8; k < body_end; ++k) bytes[k] = '\x5a';  // (the zstd frame's end)
  ASSERT_OK(io_->WriteFile(victim, bytes, true));

  auto r = CompactTable(*table_, {});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kCorruption) << r.status().ToString();
  EXPECT_NE(r.status().message().find(victim.substr(victim.rfind('/') + 1) + ": column id: page 0"),
            std::string::npos)
      << r.status().ToString();
  ASSERT_OK(table_->Refresh());
  EXPECT_EQ(table_->metadata_location(), metadata);
  EXPECT_EQ(LiveSequences(), before);
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir_)) {
    EXPECT_EQ(e.path().filename().string().rfind("compact-", 0), std::string::npos) << e.path();
  }
}

// A struct column is decoded (nested leaves are never copied) beside the
// copied ones.
class CompactStructTest : public TableFixture {
 protected:
  void SetUp() override {
    MakeTable("id BIGINT NOT NULL, s STRUCT<a: INT, b: STRING>, kind STRING", "", "", 2,
              {{"write.parquet.page-size-bytes", "64"}});
  }
};

TEST_F(CompactStructTest, AStructColumnIsDecodedBesideCopiedPages) {
  for (int f = 0; f < 5; ++f) {
    AppendRows([&](Batch* b) {
      for (int i = 0; i < 20; ++i) {
        const int id = f * 20 + i;
        b->columns[0].Append<int64_t>(id);
        Column& s = b->columns[1];
        s.mutable_child(0)->Append<int32_t>(id * 3);
        s.mutable_child(1)->AppendBytes("b" + std::to_string(id));
        s.FinishNested();
        b->columns[2].AppendBytes(id % 2 ? "x" : "y");
      }
    });
  }
  const std::set<int64_t> ids = Ids();
  ASSERT_OK_AND_ASSIGN(CompactResult r, CompactTable(*table_, {}));
  ASSERT_EQ(r.commits, 1);
  EXPECT_GT(r.bytes_copied, 0);
  EXPECT_EQ(Ids(), ids);
  ASSERT_OK_AND_ASSIGN(
      auto scan, iceberg::TableScan::Make(
                     *io_, std::make_shared<const iceberg::TableMetadata>(table_->metadata()), {}));
  Batch b;
  int64_t rows = 0;
  while (true) {
    ASSERT_OK_AND_ASSIGN(bool more, scan->Next(&b));
    if (!more) break;
    for (int64_t i = 0; i < b.num_rows(); ++i, ++rows) {
      const int64_t id = b.columns[0].Value<int64_t>(i);
      EXPECT_EQ(b.columns[1].child(0).Value<int32_t>(i), id * 3);
      EXPECT_EQ(b.columns[1].child(1).GetBytes(i), "b" + std::to_string(id));
    }
  }
  EXPECT_EQ(rows, 100);
}

// With the default page size (1 MiB), chunks of a few rows are decoded and
// encoded anew: copied, a streaming commit's tiny pages would stay tiny.
class CompactDefaultPagesTest : public CompactTest {
 protected:
  void SetUp() override { MakeTable("id BIGINT NOT NULL, kind STRING", "kind"); }
};

TEST_F(CompactDefaultPagesTest, TheTinyPagesOfSmallCommitsAreEncodedAnewNotCopied) {
  SmallAppends();
  const std::set<int64_t> ids = Ids();
  ASSERT_OK_AND_ASSIGN(CompactResult r, CompactTable(*table_, {}));
  ASSERT_EQ(r.commits, 1);
  EXPECT_EQ(r.bytes_copied, 0);
  EXPECT_EQ(Ids(), ids);
}

// A file with the delete ratio of its rows deleted (a v3 table's deletion
// vectors name their file) is rewritten alone, by the service's tiered
// compaction too; one with fewer deleted rows is left as it is.
class CompactV3Test : public CompactTest {
 protected:
  void SetUp() override { MakeTable("id BIGINT NOT NULL, kind STRING", "kind", "", 3); }
};

TEST_F(CompactV3Test, AMostlyDeletedFileIsRewrittenAloneAndALightlyDeletedOneIsNot) {
  Append(0, 100, "a");
  Append(100, 200, "b");
  ASSERT_OK(catalog::DeleteWhere(*table_, "id < 40 OR (id >= 100 AND id < 110)").status());
  std::set<int64_t> ids = Ids();
  ASSERT_EQ(ids.size(), 150u);
  ASSERT_OK_AND_ASSIGN(Policy policy, PolicyOf(table_->metadata()));
  EXPECT_EQ(policy.delete_ratio, 0.3);
  ASSERT_OK_AND_ASSIGN(TableHealth h, AssessTable(*table_, policy));
  std::map<std::string, int64_t> deleted;
  for (const PartitionHealth& p : h.partitions) deleted[p.partition] = p.mostly_deleted_files;
  EXPECT_EQ(deleted, (std::map<std::string, int64_t>{{"kind=a", 1}, {"kind=b", 0}}));

  CompactOptions o;
  o.tiered = true;
  o.small_file_bytes = 1;  // no file is small: only deletes can make a partition due
  ASSERT_OK_AND_ASSIGN(CompactResult r, CompactTable(*table_, o));
  ASSERT_EQ(r.partitions.size(), 1u);
  EXPECT_EQ(r.partitions[0].partition, "kind=a");
  EXPECT_EQ(r.partitions[0].rows, 60);
  EXPECT_EQ(r.commits, 1);
  EXPECT_EQ(Ids(), ids);
  ASSERT_OK_AND_ASSIGN(h, AssessTable(*table_, policy));
  for (const PartitionHealth& p : h.partitions) {
    EXPECT_EQ(p.mostly_deleted_files, 0) << p.partition;
    EXPECT_EQ(p.delete_files, p.partition == "kind=b" ? 1 : 0) << p.partition;
  }
  // Nothing is due any more; a lower ratio makes kind=b's file due.
  ASSERT_OK_AND_ASSIGN(r, CompactTable(*table_, o));
  EXPECT_EQ(r.partitions.size(), 0u);
  o.delete_ratio = 0.05;
  ASSERT_OK_AND_ASSIGN(r, CompactTable(*table_, o));
  ASSERT_EQ(r.partitions.size(), 1u);
  EXPECT_EQ(r.partitions[0].partition, "kind=b");
  EXPECT_EQ(Ids(), ids);
}

// Rows deleted while the compaction writes (a row delete, a dead-letter
// replay) are deleted from its output by its commit: it knows where each input
// row went, so the compaction lands and no deleted row comes back.
// Format v3: a rewritten row keeps its _row_id and _last_updated_sequence_number
// (stored in the new file, as the spec asks of rows moved between files), through
// a second rewrite too; rows appended later get ids above every earlier one.
TEST_F(CompactV3Test, CompactionKeepsEachRowsLineage) {
  for (int i = 0; i < 6; ++i) Append(i * 10, i * 10 + 10, "a");
  ASSERT_OK(catalog::DeleteWhere(*table_, "id = 3 OR id = 44").status());
  const auto before = Lineage();
  ASSERT_EQ(before.size(), 58u);
  std::set<int64_t> row_ids, seqs;
  for (const auto& [id, lineage] : before) {
    row_ids.insert(lineage.first);
    seqs.insert(lineage.second);
  }
  EXPECT_EQ(row_ids.size(), 58u);
  EXPECT_EQ(*row_ids.rbegin(), 59) << "first_row_id + position, from 0";
  EXPECT_EQ(seqs, (std::set<int64_t>{1, 2, 3, 4, 5, 6})) << "one per append";
  ASSERT_OK_AND_ASSIGN(CompactResult r, CompactTable(*table_, {}));
  ASSERT_EQ(r.commits, 1);
  EXPECT_EQ(FilesPerPartition(), (std::map<std::string, int>{{"a", 1}}));
  EXPECT_EQ(Lineage(), before);
  CompactOptions all;
  all.all_files = true;
  ASSERT_OK_AND_ASSIGN(r, CompactTable(*table_, all));
  ASSERT_EQ(r.commits, 1);
  EXPECT_EQ(r.bytes_copied, 0) << "v3 files get lineage columns their inputs' pages lack";
  EXPECT_EQ(Lineage(), before) << "the stored values are copied again";
  Append(100, 110, "a");
  const auto after = Lineage();
  for (int64_t id = 100; id < 110; ++id) {
    EXPECT_GT(after.at(id).first, 59) << id;
    EXPECT_EQ(after.at(id).second, table_->metadata().current_snapshot()->sequence_number);
  }
}

// A struct column among the table's (the scan moves file columns out while
// it looks for the stored lineage: it must look first), and a row lineage
// that survives compaction there too.
class CompactV3StructTest : public TableFixture {
 protected:
  void SetUp() override {
    MakeTable("id BIGINT NOT NULL, s STRUCT<a: INT, b: STRING>, kind STRING", "", "", 3);
  }
};

TEST_F(CompactV3StructTest, ATableWithAStructColumnKeepsItsLineageThroughCompaction) {
  for (int c = 0; c < 5; ++c) {
    AppendRows([&](Batch* b) {
      for (int64_t id = c * 10; id < c * 10 + 10; ++id) {
        b->columns[0].Append<int64_t>(id);
        Column& s = b->columns[1];
        s.mutable_child(0)->Append<int32_t>(static_cast<int32_t>(id));
        s.mutable_child(1)->AppendBytes("x" + std::to_string(id));
        s.FinishNested();
        b->columns[2].AppendBytes("k");
      }
    });
  }
  const auto before = Lineage();
  ASSERT_EQ(before.size(), 50u);
  ASSERT_OK_AND_ASSIGN(CompactResult r, CompactTable(*table_, {}));
  ASSERT_EQ(r.commits, 1);
  EXPECT_EQ(Lineage(), before);
  CompactOptions all;
  all.all_files = true;
  ASSERT_OK_AND_ASSIGN(r, CompactTable(*table_, all));
  EXPECT_EQ(Lineage(), before) << "read back from the stored columns, past the struct";
}

class SortedCompactTest : public TableFixture {
 protected:
  void SetUp() override { MakeTable("id BIGINT NOT NULL, kind STRING", "", "kind DESC, id"); }

  // (kind, id) of the rows of each live data file, in file order, and each
  // file's sort order id.
  std::vector<std::pair<std::vector<std::pair<std::string, int64_t>>, std::optional<int32_t>>>
  RowsPerFile() {
    EXPECT_TRUE(table_->Refresh().ok());
    std::vector<std::pair<std::vector<std::pair<std::string, int64_t>>, std::optional<int32_t>>>
        out;
    auto live = table_->LiveFiles(*table_->metadata().current_snapshot_id);
    EXPECT_TRUE(live.ok());
    auto md = std::make_shared<const iceberg::TableMetadata>(table_->metadata());
    for (const auto& e : *live) {
      iceberg::ScanOptions o;
      o.only_files = {e.file.file_path};
      auto scan = iceberg::TableScan::Make(*io_, md, o);
      EXPECT_TRUE(scan.ok());
      std::vector<std::pair<std::string, int64_t>> rows;
      Batch b;
      while (true) {
        auto more = (*scan)->Next(&b);
        EXPECT_TRUE(more.ok());
        if (!more.ok() || !*more) break;
        for (int64_t i = 0; i < b.num_rows(); ++i) {
          rows.emplace_back(std::string(b.columns[1].GetBytes(i)), b.columns[0].Value<int64_t>(i));
        }
      }
      out.emplace_back(std::move(rows), e.file.sort_order_id);
    }
    return out;
  }

  // 6 appends of ids i, i+6, ... with kinds a to d by id % 4.
  void Appends() {
    for (int c = 0; c < 6; ++c) {
      AppendRows([&](Batch* b) {
        for (int64_t id = c; id < 60; id += 6) {
          b->columns[0].Append<int64_t>(id);
          b->columns[1].AppendBytes(std::string(1, static_cast<char>('a' + id % 4)));
        }
      });
    }
  }
};

bool SortedByKindDescThenId(const std::vector<std::pair<std::string, int64_t>>& rows) {
  return std::is_sorted(rows.begin(), rows.end(), [](const auto& x, const auto& y) {
    return x.first != y.first ? x.first > y.first : x.second < y.second;
  });
}

TEST_F(SortedCompactTest, OutputFilesAreSortedByTheTablesSortOrder) {
  Appends();
  const std::set<int64_t> ids = Ids();
  ASSERT_FALSE(SortedByKindDescThenId(RowsPerFile()[0].first)) << "appends are not sorted";
  ASSERT_OK_AND_ASSIGN(CompactResult r, CompactTable(*table_, {}));
  EXPECT_EQ(r.commits, 1);
  EXPECT_EQ(r.bytes_copied, 0) << "sorted rows are decoded";
  auto files = RowsPerFile();
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(files[0].first.size(), 60u);
  EXPECT_TRUE(SortedByKindDescThenId(files[0].first));
  EXPECT_EQ(files[0].second, table_->metadata().default_sort_order_id);
  EXPECT_EQ(Ids(), ids);
}

TEST_F(SortedCompactTest, ARunBoundSortsEachRunIntoItsOwnFiles) {
  Appends();
  const std::set<int64_t> ids = Ids();
  CompactOptions o;
  o.all_files = true;    // (else a run is at least twice the small-file size)
  o.sort_run_bytes = 1;  // every input file is a run
  ASSERT_OK_AND_ASSIGN(CompactResult r, CompactTable(*table_, o));
  auto files = RowsPerFile();
  ASSERT_EQ(files.size(), 6u) << "one output per run";
  for (const auto& [rows, order] : files) {
    EXPECT_EQ(rows.size(), 10u);
    EXPECT_TRUE(SortedByKindDescThenId(rows));
  }
  EXPECT_EQ(Ids(), ids);
}

// A sorted compaction moves rows to new positions; a delete during it is
// carried to where each row went (v3: as a deletion vector of the output).
class SortedCompactV3Test : public SortedCompactTest {
 protected:
  void SetUp() override { MakeTable("id BIGINT NOT NULL, kind STRING", "", "kind DESC, id", 3); }
};

TEST_F(SortedCompactV3Test, ADeleteDuringASortedCompactionFollowsTheRowsToTheirNewPlaces) {
  Appends();
  auto lineage = Lineage();
  ASSERT_OK_AND_ASSIGN(auto other, catalog::Table::Load(*catalog_, *io_, id_));
  CompactOptions o;
  bool deleted = false;
  o.before_commit = [&] {
    if (!deleted) ASSERT_OK(catalog::DeleteWhere(*other, "id IN (0, 13, 26, 39, 52)"));
    deleted = true;
  };
  ASSERT_OK_AND_ASSIGN(CompactResult r, CompactTable(*table_, o));
  EXPECT_EQ(r.commits, 1);
  EXPECT_EQ(r.carried_deletes, 5);
  std::set<int64_t> ids = Ids();
  EXPECT_EQ(ids.size(), 55u);
  for (int64_t id : {0, 13, 26, 39, 52}) EXPECT_FALSE(ids.count(id)) << id;
  for (int64_t id : {0, 13, 26, 39, 52}) lineage.erase(id);
  EXPECT_EQ(Lineage(), lineage) << "sorted rows keep their lineage";
  const iceberg::Snapshot* s = table_->metadata().current_snapshot();
  EXPECT_EQ(s->summary.at("total-data-files"), "1");
  EXPECT_EQ(s->summary.at("total-delete-files"), "1") << "the output's deletion vector";
  size_t rows = 0;
  for (const auto& [file_rows, order] : RowsPerFile()) {  // (the DV's entry reads no row)
    rows += file_rows.size();
    EXPECT_TRUE(SortedByKindDescThenId(file_rows));
  }
  EXPECT_EQ(rows, 55u);
}

}  // namespace
}  // namespace sluice::maintenance
