// CompactTable on a real partitioned table: only partitions with enough small
// files, the same rows after, deletes kept deleted, a dry run that changes
// nothing, and concurrent deletes carried onto the output (or, when they
// cannot be, the partition's commit stepping aside) instead of resurrecting
// a row.
#include "maintenance/compact.h"

#include <algorithm>
#include <atomic>
#include <map>
#include <thread>

#include "catalog/row_delete.h"
#include "maintenance/health.h"
#include "maintenance/policy.h"
#include "maintenance/test_util.h"

namespace sluice::maintenance {
namespace {

class CompactTest : public TableFixture {
 protected:
  void SetUp() override { MakeTable("id BIGINT NOT NULL, kind STRING", "kind"); }

  // Live data files per partition path.
  std::map<std::string, int> FilesPerPartition() {
    EXPECT_TRUE(table_->Refresh().ok());
    std::map<std::string, int> out;
    auto live = table_->LiveFiles(*table_->metadata().current_snapshot_id);
    EXPECT_TRUE(live.ok());
    for (const auto& e : *live) {
      if (e.file.content == iceberg::FileContent::kData) ++out[*e.file.partition[0]];
    }
    return out;
  }

  using Rows = std::vector<std::pair<int64_t, std::string>>;  // (id, kind)

  // The files (one per kind) `rows` make in `t`, written but not committed.
  std::vector<iceberg::DataFile> WriteRows(catalog::Table& t, const Rows& rows) {
    Batch b = Batch::Make(std::make_shared<const Schema>(*t.metadata().current_schema()));
    for (const auto& [id, kind] : rows) {
      b.columns[0].Append<int64_t>(id);
      b.columns[1].AppendBytes(kind);
    }
    auto w = iceberg::DataWriter::Make(*io_, t.metadata());
    EXPECT_TRUE(w.ok()) << w.status().ToString();
    if (!w.ok()) return {};
    Status written = (*w)->Write(b);
    EXPECT_TRUE(written.ok()) << written.ToString();
    if (!written.ok()) return {};
    auto files = (*w)->Close();
    EXPECT_TRUE(files.ok()) << files.status().ToString();
    return files.ok() ? *files : std::vector<iceberg::DataFile>{};
  }

  // Commits through `t` an equality delete of `rows` by the id column (field
  // 1), as Flink writes them.
  void EqualityDelete(catalog::Table& t, const Rows& rows) {
    catalog::SnapshotUpdate u;
    u.operation = "delete";
    for (auto& f : WriteRows(t, rows)) {
      f.content = iceberg::FileContent::kEqualityDeletes;
      f.equality_ids = {1};
      u.add_deletes.push_back(f);
    }
    ASSERT_FALSE(u.add_deletes.empty());
    ASSERT_OK(t.Commit(u).status());
  }

  // Appends `rows` through `t` as one commit.
  void AppendVia(catalog::Table& t, const Rows& rows) {
    std::vector<iceberg::DataFile> files = WriteRows(t, rows);
    ASSERT_FALSE(files.empty());
    ASSERT_OK(t.Append(files).status());
  }

  // The live files' data sequence numbers, by path.
  std::map<std::string, int64_t> LiveSequences() {
    EXPECT_TRUE(table_->Refresh().ok());
    std::map<std::string, int64_t> out;
    auto live = table_->LiveFiles(*table_->metadata().current_snapshot_id);
    EXPECT_TRUE(live.ok());
    for (const auto& e : *live) out[e.file.file_path] = e.sequence_number.value_or(-1);
    return out;
  }

  // The table's small appends: 6 into kind=a, 2 into kind=b.
  void SmallAppends() {
    for (int i = 0; i < 6; ++i) Append(i * 10, i * 10 + 10, "a");
    Append(100, 110, "b");
    Append(110, 120, "b");
  }
};

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
  EXPECT_EQ(r.partitions[0].rows, static_cast<int64_t>(std::count_if(
                                      ids.begin(), ids.end(), [](int64_t id) { return id < 60; })));
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

TEST_F(CompactTest, ADeleteThatLandsDuringCompactionIsCarriedOntoItsOutput) {
  SmallAppends();
  ASSERT_OK(catalog::DeleteWhere(*table_, "id = 44").status());  // before: applied by the rewrite
  ASSERT_OK_AND_ASSIGN(auto other, catalog::Table::Load(*catalog_, *io_, id_));
  CompactOptions o;
  int commits = 0;
  o.before_commit = [&] {
    // Twice: the carried commit finds a second delete and carries it too.
    if (commits == 0) ASSERT_OK(catalog::DeleteWhere(*other, "id IN (3, 17, 44, 59, 105)"));
    if (commits == 1) ASSERT_OK(catalog::DeleteWhere(*other, "id = 31"));
    ++commits;
  };
  ASSERT_OK_AND_ASSIGN(CompactResult r, CompactTable(*table_, o));
  ASSERT_EQ(r.partitions.size(), 1u);
  EXPECT_EQ(r.commits, 1);
  EXPECT_EQ(r.conflicts, 0);
  EXPECT_EQ(commits, 3);
  EXPECT_EQ(r.carried_deletes, 4) << "3, 17, 59 and 31 (44 was gone before, 105 is in kind=b)";
  EXPECT_TRUE(r.partitions[0].skipped.empty());
  std::set<int64_t> ids = Ids();
  EXPECT_EQ(ids.size(), 80u - 6);
  for (int64_t id : {3, 17, 31, 44, 59, 105}) EXPECT_FALSE(ids.count(id)) << id;
  EXPECT_EQ(FilesPerPartition(), (std::map<std::string, int>{{"a", 1}, {"b", 2}}));
  EXPECT_EQ(table_->metadata().current_snapshot()->summary.at("sluice.carried-deletes"), "4");
  // The next compaction folds the carried deletes into its output.
  CompactOptions all;
  all.all_files = true;
  ASSERT_OK(CompactTable(*table_, all).status());
  EXPECT_EQ(Ids(), ids);
  EXPECT_EQ(table_->metadata().current_snapshot()->summary.at("total-delete-files"), "0");
}

// Equality deletes (another engine's: Flink writes them) that land while a
// compaction writes apply to its output as they did to its inputs: the new
// file keeps the data sequence number of the snapshot the compaction read,
// below theirs, so the commit neither conflicts nor brings a row back. The
// one committed before the plan was applied by the rewrite and, applying to
// nothing live any more, goes.
TEST_F(CompactTest, AnEqualityDeleteThatLandsDuringCompactionStillDeletesItsRows) {
  SmallAppends();
  ASSERT_OK_AND_ASSIGN(auto other, catalog::Table::Load(*catalog_, *io_, id_));
  EqualityDelete(*other, {{44, "a"}});
  ASSERT_OK(table_->Refresh());
  const int64_t plan_seq = table_->metadata().current_snapshot()->sequence_number;
  CompactOptions o;
  int commits = 0;
  o.before_commit = [&] {
    if (commits++ > 0) return;
    EqualityDelete(*other, {{3, "a"}, {17, "a"}, {105, "b"}});
    AppendVia(*other, {{3, "a"}});  // id 3 again, after the delete: it stays
  };
  ASSERT_OK_AND_ASSIGN(CompactResult r, CompactTable(*table_, o));
  ASSERT_EQ(r.partitions.size(), 1u);
  EXPECT_EQ(r.commits, 1);
  EXPECT_EQ(r.conflicts, 0);
  EXPECT_EQ(commits, 1) << "no conflict, so no second attempt";
  std::set<int64_t> ids = Ids();
  EXPECT_EQ(ids.size(), 80u - 4 + 1);
  for (int64_t id : {17, 44, 105}) EXPECT_FALSE(ids.count(id)) << id;
  EXPECT_TRUE(ids.count(3)) << "the row appended after the delete";
  EXPECT_EQ(FilesPerPartition(), (std::map<std::string, int>{{"a", 2}, {"b", 2}}));
  int compacted = 0, newer = 0;
  for (const auto& [path, seq] : LiveSequences()) {
    if (path.find("/compact-") != std::string::npos) {
      ++compacted;
      EXPECT_EQ(seq, plan_seq) << path;
    } else if (seq > plan_seq) {
      ++newer;  // the two files of the delete that landed meanwhile, and the append
    } else {
      EXPECT_LT(seq, plan_seq) << path << ": only kind=b's appends are older";
    }
  }
  EXPECT_EQ(compacted, 1);
  EXPECT_EQ(newer, 3);
  // The next compaction of everything applies them and leaves no delete.
  CompactOptions all;
  all.all_files = true;
  ASSERT_OK(CompactTable(*table_, all).status());
  EXPECT_EQ(Ids(), ids);
  EXPECT_EQ(table_->metadata().current_snapshot()->summary.at("total-delete-files"), "0");
}

// A position delete and an equality delete landing together: the commit
// conflicts on the position delete, which is carried onto the new file; the
// equality delete applies to it by its sequence number.
TEST_F(CompactTest, EqualityAndPositionDeletesLandingTogetherAreBothHonoured) {
  SmallAppends();
  ASSERT_OK_AND_ASSIGN(auto other, catalog::Table::Load(*catalog_, *io_, id_));
  EqualityDelete(*other, {{44, "a"}});
  CompactOptions o;
  int commits = 0;
  o.before_commit = [&] {
    if (commits++ > 0) return;
    EqualityDelete(*other, {{3, "a"}});
    ASSERT_OK(catalog::DeleteWhere(*other, "id = 25").status());
  };
  ASSERT_OK_AND_ASSIGN(CompactResult r, CompactTable(*table_, o));
  EXPECT_EQ(r.commits, 1);
  EXPECT_EQ(r.conflicts, 0);
  EXPECT_EQ(commits, 2) << "carried once";
  EXPECT_EQ(r.carried_deletes, 1);
  std::set<int64_t> ids = Ids();
  EXPECT_EQ(ids.size(), 80u - 3);
  for (int64_t id : {3, 25, 44}) EXPECT_FALSE(ids.count(id)) << id;
  EXPECT_EQ(FilesPerPartition(), (std::map<std::string, int>{{"a", 1}, {"b", 2}}));
}

// Rows of an older partition spec are rewritten into the current one: there
// an equality delete committed meanwhile, in the current spec's partition,
// never applied to them, and must not once they move. The new files take the
// commit's sequence number, not the read's.
TEST_F(CompactTest, RowsMovingToTheCurrentSpecMeetNoDeleteThatNeverAppliedToThem) {
  SmallAppends();
  ASSERT_OK_AND_ASSIGN(auto other, catalog::Table::Load(*catalog_, *io_, id_));
  EqualityDelete(*other, {{44, "a"}});  // the table has equality deletes
  ASSERT_OK(
      table_->UpdateMetadata([](const iceberg::TableMetadata& m) -> Result<iceberg::TableMetadata> {
        iceberg::TableMetadata next = m;
        ASSIGN_OR_RETURN(iceberg::PartitionSpec spec,
                         iceberg::ParsePartitionSpec("bucket(4, id)", *m.current_schema(), 1,
                                                     m.last_partition_id + 1));
        next.partition_specs.push_back(spec);
        next.default_spec_id = 1;
        next.last_partition_id = spec.fields[0].field_id;
        return next;
      }));
  ASSERT_OK(other->Refresh());
  CompactOptions o;
  int commits = 0;
  o.before_commit = [&] {
    if (commits++ == 0) EqualityDelete(*other, {{3, "a"}});  // bucket(4, 3), spec 1
  };
  ASSERT_OK_AND_ASSIGN(CompactResult r, CompactTable(*table_, o));
  ASSERT_EQ(r.partitions.size(), 1u);
  EXPECT_EQ(r.commits, 1);
  std::set<int64_t> ids = Ids();
  EXPECT_EQ(ids.size(), 80u - 1);
  EXPECT_FALSE(ids.count(44));
  EXPECT_TRUE(ids.count(3)) << "the delete of spec 1 never applied to the row of spec 0";
  const int64_t commit_seq = table_->metadata().current_snapshot()->sequence_number;
  for (const auto& [path, seq] : LiveSequences()) {
    if (path.find("/compact-") != std::string::npos) {
      EXPECT_EQ(seq, commit_seq) << path;
    }
  }
}

// An input whose rows were all deleted while the compaction wrote is gone
// from the table (the delete removed the file): its rows are deleted from the
// output, and the other inputs are still replaced.
TEST_F(CompactTest, AnInputRemovedDuringCompactionHasItsRowsDeletedFromTheOutput) {
  SmallAppends();
  ASSERT_OK_AND_ASSIGN(auto other, catalog::Table::Load(*catalog_, *io_, id_));
  CompactOptions o;
  bool deleted = false;
  o.before_commit = [&] {
    if (!deleted) ASSERT_OK(catalog::DeleteWhere(*other, "id >= 10 AND id < 20 OR id = 25"));
    deleted = true;
  };
  ASSERT_OK_AND_ASSIGN(CompactResult r, CompactTable(*table_, o));
  EXPECT_EQ(r.commits, 1);
  EXPECT_EQ(r.carried_deletes, 11);
  std::set<int64_t> ids = Ids();
  EXPECT_EQ(ids.size(), 80u - 11);
  for (int64_t id = 10; id < 20; ++id) EXPECT_FALSE(ids.count(id)) << id;
  EXPECT_FALSE(ids.count(25));
  EXPECT_EQ(FilesPerPartition(), (std::map<std::string, int>{{"a", 1}, {"b", 2}}));
}

// Two compactions of one partition: the one committing second finds every
// input gone (the first replaced them) and steps aside; each row stays once.
TEST_F(CompactTest, ACompactionWhoseInputsWereAllRewrittenStepsAside) {
  SmallAppends();
  const std::set<int64_t> ids = Ids();
  ASSERT_OK_AND_ASSIGN(auto other, catalog::Table::Load(*catalog_, *io_, id_));
  CompactOptions o;
  bool compacted = false;
  o.before_commit = [&] {
    if (compacted) return;
    compacted = true;
    auto first = CompactTable(*other, {});
    ASSERT_OK(first.status());
    EXPECT_EQ(first->commits, 1);
  };
  ASSERT_OK_AND_ASSIGN(CompactResult r, CompactTable(*table_, o));
  EXPECT_EQ(r.commits, 0);
  EXPECT_EQ(r.conflicts, 1);
  EXPECT_EQ(Ids(), ids);
  EXPECT_EQ(FilesPerPartition(), (std::map<std::string, int>{{"a", 1}, {"b", 2}}));
}

// With no carrying allowed (max_carries 0) a delete that lands during the
// compaction makes the partition step aside instead of resurrecting the row.
TEST_F(CompactTest, ADeleteThatCannotBeCarriedMakesItStepAsideNotResurrect) {
  SmallAppends();
  ASSERT_OK_AND_ASSIGN(auto other, catalog::Table::Load(*catalog_, *io_, id_));
  CompactOptions o;
  o.max_carries = 0;
  o.before_commit = [&] { ASSERT_OK(catalog::DeleteWhere(*other, "id = 3")); };
  std::set<std::string> before = Files("data");
  ASSERT_OK_AND_ASSIGN(CompactResult r, CompactTable(*table_, o));
  ASSERT_EQ(r.partitions.size(), 1u);
  EXPECT_EQ(r.conflicts, 1);
  EXPECT_EQ(r.commits, 0);
  EXPECT_FALSE(r.partitions[0].skipped.empty());
  std::set<int64_t> ids = Ids();
  EXPECT_EQ(ids.size(), 79u);
  EXPECT_FALSE(ids.count(3)) << "the concurrent delete holds";
  EXPECT_EQ(FilesPerPartition(), (std::map<std::string, int>{{"a", 6}, {"b", 2}}));
  // The compaction's own files went; only the delete's file came.
  int fresh = 0;
  for (const std::string& f : Files("data")) fresh += before.count(f) ? 0 : 1;
  EXPECT_EQ(fresh, 1);
}

// An in-process writer committing back to back, as a pipeline does, never
// starves a compaction: they take turns at the table (catalog/table.h), so
// the compaction's longer staging does not lose every race.
TEST_F(CompactTest, ACompactionCommitsWhileAWriterAppendsBackToBack) {
  for (int i = 0; i < 10; ++i) Append(i * 10, i * 10 + 10, "a");
  std::atomic<bool> done{false};
  std::atomic<int64_t> appended{0};
  std::thread writer([&] {
    ASSERT_OK_AND_ASSIGN(auto t, catalog::Table::Load(*catalog_, *io_, id_));
    for (int64_t i = 0; !done.load() || i < 5; ++i) {
      Batch b = Batch::Make(std::make_shared<const Schema>(*t->metadata().current_schema()));
      b.columns[0].Append<int64_t>(1000 + i);
      b.columns[1].AppendBytes("b");
      ASSERT_OK_AND_ASSIGN(auto w, iceberg::DataWriter::Make(*io_, t->metadata()));
      ASSERT_OK(w->Write(b));
      ASSERT_OK_AND_ASSIGN(auto files, w->Close());
      ASSERT_OK(t->Append(files).status());
      appended = i + 1;
    }
  });
  for (int i = 0; i < 10'000 && appended.load() < 5; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  CompactOptions o;
  o.partitions = {{0, {std::string("a")}}};
  auto r = CompactTable(*table_, o);
  done = true;
  writer.join();
  ASSERT_OK(r.status());
  EXPECT_EQ(r->commits, 1);
  EXPECT_EQ(r->conflicts, 0);
  EXPECT_EQ(Ids().size(), 100u + static_cast<size_t>(appended.load()));
}

// Partitions commit in groups; a delete that lands in one of them during
// the group's commit is carried onto the group's output in the same commit.
TEST_F(CompactTest, AGroupCarriesADeleteInOneOfItsPartitions) {
  SmallAppends();
  for (int i = 0; i < 5; ++i) Append(200 + i * 10, 210 + i * 10, "c");
  ASSERT_OK_AND_ASSIGN(auto other, catalog::Table::Load(*catalog_, *io_, id_));
  CompactOptions o;
  bool deleted = false;
  o.before_commit = [&] {
    if (!deleted) ASSERT_OK(catalog::DeleteWhere(*other, "id IN (3, 222)"));
    deleted = true;
  };
  ASSERT_OK_AND_ASSIGN(CompactResult r, CompactTable(*table_, o));
  ASSERT_EQ(r.partitions.size(), 2u);
  EXPECT_EQ(r.commits, 1) << "one group";
  EXPECT_EQ(r.conflicts, 0);
  EXPECT_EQ(r.carried_deletes, 2);
  std::set<int64_t> ids = Ids();
  EXPECT_EQ(ids.size(), 80u + 50u - 2u);
  EXPECT_FALSE(ids.count(3));
  EXPECT_FALSE(ids.count(222));
  EXPECT_EQ(FilesPerPartition(), (std::map<std::string, int>{{"a", 1}, {"b", 2}, {"c", 1}}));
}

// When the delete cannot be carried (max_carries 0), the group commits its
// partitions one by one: only the one with the delete steps aside.
TEST_F(CompactTest, AGroupInConflictCommitsItsOtherPartitionsAlone) {
  SmallAppends();
  for (int i = 0; i < 5; ++i) Append(200 + i * 10, 210 + i * 10, "c");
  ASSERT_OK_AND_ASSIGN(auto other, catalog::Table::Load(*catalog_, *io_, id_));
  CompactOptions o;
  o.max_carries = 0;
  bool deleted = false;
  o.before_commit = [&] {
    if (!deleted) ASSERT_OK(catalog::DeleteWhere(*other, "id = 3"));  // kind=a
    deleted = true;
  };
  ASSERT_OK_AND_ASSIGN(CompactResult r, CompactTable(*table_, o));
  ASSERT_EQ(r.partitions.size(), 2u) << "a (6 small files) and c (5)";
  EXPECT_EQ(r.commits, 1) << "c alone, after the group of both conflicted";
  EXPECT_EQ(r.conflicts, 1);
  for (const PartitionCompaction& p : r.partitions) {
    EXPECT_EQ(p.skipped.empty(), p.partition == "kind=c") << p.partition;
  }
  std::set<int64_t> ids = Ids();
  EXPECT_EQ(ids.size(), 80u + 50u - 1u);
  EXPECT_FALSE(ids.count(3));
  EXPECT_EQ(FilesPerPartition(), (std::map<std::string, int>{{"a", 6}, {"b", 2}, {"c", 1}}));
}

}  // namespace
}  // namespace sluice::maintenance

namespace sluice::maintenance {
namespace {

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
