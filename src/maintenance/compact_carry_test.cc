// CompactTable while other writers commit: deletes that land during a
// rewrite (position deletes, equality deletes, inputs removed or rewritten)
// carried onto its output, or, when they cannot be, the partition's commit
// stepping aside, never a resurrected row; and a compaction that commits
// while a writer appends back to back.
#include <atomic>
#include <map>
#include <thread>

#include "catalog/row_delete.h"
#include "iceberg/schema_update.h"
#include "io/fault_injection_file_io.h"
#include "maintenance/compact.h"
#include "maintenance/compact_test_util.h"

namespace sluice::maintenance {
namespace {

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

// A row delete that loses to compactions (kConflict: the files it planned
// were rewritten) plans again reading only the files that changed: each
// compaction's output, and a file that gained deletes meanwhile. Format v2
// (position delete files) and v3 (deletion vectors).
class DeleteDuringCompactionsTest : public CompactTest, public ::testing::WithParamInterface<int> {
 protected:
  void SetUp() override { MakeTable("id BIGINT NOT NULL, kind STRING", "kind", "", GetParam()); }
};

TEST_P(DeleteDuringCompactionsTest, ADeleteThatLosesToCompactionsReadsOnlyWhatChangedAgain) {
  SmallAppends();  // kind=a: ids 0-59 in 6 files; kind=b: 100-119 in 2
  // The deleting writer's storage runs, as it creates its first delete file
  // (its plan done, its commit next), a compaction of kind=a after an append
  // there: three times.
  FaultInjectingFileIO io(io_.get());
  ASSERT_OK_AND_ASSIGN(auto deleter, catalog::Table::Load(*catalog_, io, id_));
  int compactions = 0;
  io.BeforeEach(FileOp::kOpenOutput, [&](std::string_view path) {
    bool first_delete_file = path.ends_with("-dv.puffin") || (path.ends_with("-deletes.parquet") &&
                                                              path.find("/00000-") != path.npos);
    if (!first_delete_file || compactions == 3) return;
    ++compactions;
    Append(190 + compactions * 10, 200 + compactions * 10, "a");  // never matched: 200-229
    // Before the second, another writer deletes one of the rows the delete
    // matched, in kind=b's second file: that file is read again (its row
    // gone, the delete no longer matches it).
    if (compactions == 2) ASSERT_OK(catalog::DeleteWhere(*table_, "id = 115").status());
    // Before the third, the schema changes: the filter binds anew, and the
    // next plan reads every file (what it found is kept per schema).
    if (compactions == 3) {
      ASSERT_OK(table_->UpdateMetadata([](const iceberg::TableMetadata& m) {
        return iceberg::AddColumn(m, Field{0, "note", DataType::String(), false, ""});
      }));
    }
    CompactOptions o;
    o.all_files = true;
    o.partitions = {{0, {std::string("a")}}};
    ASSERT_OK_AND_ASSIGN(CompactResult r, CompactTable(*table_, o));
    ASSERT_EQ(r.commits, 1);
  });
  // The data files the deleting writer opens (all its scans').
  int data_files_opened = 0;
  io.BeforeEach(FileOp::kOpenInput, [&](std::string_view path) {
    data_files_opened += path.ends_with(".parquet") && !path.ends_with("-deletes.parquet");
  });
  ASSERT_OK_AND_ASSIGN(catalog::DeleteResult r,
                       catalog::DeleteWhere(*deleter, "id IN (3, 13, 23, 33, 43, 53, 105, 115)"));
  EXPECT_EQ(compactions, 3);
  EXPECT_EQ(r.plans, 4);
  EXPECT_EQ(r.rows_deleted, 7) << "115 was deleted by the other writer";
  // The first plan reads the 8 files; then kind=a's new file each time, and
  // the second time kind=b's second file too; the last, under the new
  // schema, all 3. (Reading the table again would be 8 + 3 + 3 + 3.)
  EXPECT_EQ(r.files_read, 8 + 1 + 2 + 3);
  EXPECT_EQ(data_files_opened, 8 + 1 + 2 + 3);
  std::set<int64_t> want;
  for (int64_t id = 0; id < 60; ++id) want.insert(id);
  for (int64_t id = 100; id < 120; ++id) want.insert(id);
  for (int64_t id = 200; id < 230; ++id) want.insert(id);
  for (int64_t id : {3, 13, 23, 33, 43, 53, 105, 115}) want.erase(id);
  EXPECT_EQ(Ids(), want);
  // The failed plans' delete files were removed: every one on disk is one a
  // snapshot holds.
  std::set<std::string> committed;
  for (const auto& snapshot : table_->metadata().snapshots) {
    ASSERT_OK_AND_ASSIGN(auto live, table_->LiveFiles(snapshot.snapshot_id));
    for (const auto& e : live) {
      if (e.file.content != iceberg::FileContent::kData) committed.insert(e.file.file_path);
    }
  }
  std::set<std::string> on_disk;
  for (const std::string& f : Files("data")) {
    if (f.ends_with("-dv.puffin") || f.ends_with("-deletes.parquet")) on_disk.insert(f);
  }
  EXPECT_EQ(on_disk.size(), committed.size());
}

INSTANTIATE_TEST_SUITE_P(Formats, DeleteDuringCompactionsTest, ::testing::Values(2, 3),
                         [](const auto& info) { return "v" + std::to_string(info.param); });

}  // namespace
}  // namespace sluice::maintenance
