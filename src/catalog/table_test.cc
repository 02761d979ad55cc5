#include "catalog/table.h"

#include <unistd.h>

#include <filesystem>
#include <functional>
#include <set>
#include <thread>

#include "catalog/table_test_util.h"
#include "columnar/sql_schema.h"
#include "common/testing.h"
#include "iceberg/table_builder.h"

namespace sluice::catalog {
namespace {

TEST_F(TableTest, CreateAppendAndReload) {
  auto t = MakeTable("");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->metadata().snapshots.size(), 0u);
  EXPECT_NE(t->metadata_location().find("/db/events/metadata/00000-"), std::string::npos);
  ASSERT_OK_AND_ASSIGN(int64_t s1,
                       t->Append({File("a", 10), File("b", 5)}, {{"sluice.checkpoint", "1"}}));
  ASSERT_OK_AND_ASSIGN(int64_t s2, t->Append({File("c", 7)}));
  EXPECT_NE(t->metadata_location().find("/metadata/00002-"), std::string::npos);

  ASSERT_OK_AND_ASSIGN(auto again, Table::Load(*catalog_, *io_, TableIdent{{"db"}, "events"}));
  const auto& md = again->metadata();
  ASSERT_EQ(md.snapshots.size(), 2u);
  EXPECT_EQ(md.current_snapshot_id, s2);
  EXPECT_EQ(md.snapshots[1].parent_snapshot_id, s1);
  EXPECT_EQ(md.snapshots[1].sequence_number, 2);
  EXPECT_EQ(md.snapshots[0].summary.at("sluice.checkpoint"), "1");
  EXPECT_EQ(md.snapshots[1].summary.at("total-records"), "22");
  EXPECT_EQ(md.snapshots[1].summary.at("total-data-files"), "3");
  EXPECT_EQ(md.metadata_log.size(), 2u);
  ASSERT_OK_AND_ASSIGN(auto live, again->LiveFiles(s2));
  std::set<std::string> paths;
  for (const auto& e : live) paths.insert(e.file.file_path);
  EXPECT_EQ(paths, (std::set<std::string>{"/data/a", "/data/b", "/data/c"}));
  for (const auto& e : live) {
    EXPECT_EQ(*e.sequence_number, e.file.file_path == "/data/c" ? 2 : 1);
  }
}

TEST_F(TableTest, PartitionValuesAndV3RowLineage) {
  auto t = MakeTable("day(ts), bucket(4, id)", 3);
  ASSERT_NE(t, nullptr);
  std::string day(4, '\0'), bucket(4, '\0');
  day[0] = 7;
  bucket[0] = 3;
  ASSERT_OK(t->Append({File("a", 10, {day, bucket}), File("b", 5, {std::nullopt, bucket})}));
  ASSERT_OK_AND_ASSIGN(int64_t s2, t->Append({File("c", 1, {day, std::nullopt})}));
  EXPECT_EQ(t->metadata().next_row_id, 16);
  EXPECT_EQ(t->metadata().snapshots[1].first_row_id, 15);
  ASSERT_OK_AND_ASSIGN(auto live, t->LiveFiles(s2));
  ASSERT_EQ(live.size(), 3u);
  for (const auto& e : live) {
    if (e.file.file_path == "/data/b") {
      EXPECT_FALSE(e.file.partition[0].has_value());
      EXPECT_EQ(e.file.partition[1], bucket);
    }
  }
  // A partition tuple of the wrong arity is refused before anything is committed.
  ASSERT_ERROR(t->Append({File("d", 1, {day})}), StatusCode::kInvalidArgument, "partition");
  EXPECT_EQ(t->metadata().snapshots.size(), 2u);
}

// Concurrent writers through separate catalog connections: every append
// lands exactly once, each as its own snapshot.
TEST_F(TableTest, ConcurrentAppendsLoseNothing) {
  ASSERT_NE(MakeTable(""), nullptr);
  constexpr int kWriters = 4, kCommits = 15;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int w = 0; w < kWriters; ++w) {
    threads.emplace_back([&, w] {
      auto c = OpenCatalog(catalog_path_);
      auto io = MakeLocalFileIO();
      if (!c.ok()) return void(++failures);
      auto t = Table::Load(**c, *io, TableIdent{{"db"}, "events"});
      if (!t.ok()) return void(++failures);
      for (int i = 0; i < kCommits; ++i) {
        auto r = (*t)->Append({File(fmt::format("w{}-{}", w, i), 1)});
        if (!r.ok()) {
          ADD_FAILURE() << r.status().ToString();
          ++failures;
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  ASSERT_EQ(failures.load(), 0);
  ASSERT_OK_AND_ASSIGN(auto t, Table::Load(*catalog_, *io_, TableIdent{{"db"}, "events"}));
  EXPECT_EQ(t->metadata().snapshots.size(), static_cast<size_t>(kWriters * kCommits));
  ASSERT_OK_AND_ASSIGN(auto live, t->LiveFiles(*t->metadata().current_snapshot_id));
  std::set<std::string> paths;
  for (const auto& e : live) paths.insert(e.file.file_path);
  EXPECT_EQ(paths.size(), static_cast<size_t>(kWriters * kCommits));
  EXPECT_EQ(live.size(), paths.size());
  // The whole ancestry chain is intact and every metadata file parses.
  EXPECT_EQ(t->metadata().Ancestry(*t->metadata().current_snapshot_id).size(),
            static_cast<size_t>(kWriters * kCommits));
}

size_t FilesIn(const fs::path& dir) {
  size_t n = 0;
  for (const auto& e : fs::recursive_directory_iterator(dir)) n += e.is_regular_file();
  return n;
}

// CommitAll swaps both tables in one transaction, re-stages both after a
// conflict on one of them, and runs `check` before every attempt.
TEST_F(TableTest, CommitAllLandsOnEveryTableOrNone) {
  auto a = MakeTable("");
  auto b = MakeTable("", 2, "events__dlq");
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  // Another writer (another catalog connection: another process, as far as
  // turns go) commits to b during our first attempt, after its refresh: that
  // attempt's swap conflicts.
  ASSERT_OK_AND_ASSIGN(auto other_catalog, OpenCatalog(catalog_path_));
  ASSERT_OK_AND_ASSIGN(auto other,
                       Table::Load(*other_catalog, *io_, TableIdent{{"db"}, "events__dlq"}));
  int checks = 0;
  std::vector<TableUpdate> updates(2);
  updates[0].table = a.get();
  updates[0].update.add_data = {File("a1", 3)};
  updates[0].update.summary = {{"sluice.checkpoint", "7"}};
  updates[1].table = b.get();
  updates[1].update.add_data = {File("b1", 1)};
  updates[1].update.summary = {{"sluice.checkpoint", "7"}};
  ASSERT_OK_AND_ASSIGN(auto ids, Table::CommitAll(*catalog_, updates, {}, [&] {
                         if (++checks == 1) return other->Append({File("other", 1)}).status();
                         return Status::OK();
                       }));
  EXPECT_EQ(checks, 2);  // the first attempt lost on b
  ASSERT_EQ(ids.size(), 2u);
  for (const char* name : {"events", "events__dlq"}) {
    ASSERT_OK_AND_ASSIGN(auto t, Table::Load(*catalog_, *io_, TableIdent{{"db"}, name}));
    const auto* snap = t->metadata().current_snapshot();
    ASSERT_NE(snap, nullptr) << name;
    EXPECT_EQ(snap->snapshot_id, ids[std::string(name) == "events" ? 0 : 1]);
    EXPECT_EQ(snap->summary.at("sluice.checkpoint"), "7");
  }
  ASSERT_OK_AND_ASSIGN(auto bl, Table::Load(*catalog_, *io_, TableIdent{{"db"}, "events__dlq"}));
  EXPECT_EQ(bl->metadata().snapshots.size(), 2u);  // the other writer's append survived

  // A failing check stops the commit: nothing lands, nothing it wrote remains.
  size_t files_before = FilesIn(dir_ / "db");
  updates[0].update.add_data = {File("a2", 3)};
  updates[1].update.add_data = {File("b2", 3)};
  ASSERT_ERROR(
      Table::CommitAll(*catalog_, updates, {}, [] { return Status::Fenced("fenced by epoch 9"); }),
      StatusCode::kFenced, "fenced");
  EXPECT_EQ(FilesIn(dir_ / "db"), files_before);
  ASSERT_OK_AND_ASSIGN(auto al, Table::Load(*catalog_, *io_, TableIdent{{"db"}, "events"}));
  EXPECT_EQ(al->metadata().snapshots.size(), 1u);
}

// write.metadata.previous-versions-max cuts the metadata log, for snapshot
// commits and metadata-only ones alike; with delete-after-commit the files
// cut off go, the others stay.
TEST_F(TableTest, TheMetadataLogKeepsItsMaximumAndDropsTheRestWhenAsked) {
  auto t = MakeTable("");
  ASSERT_NE(t, nullptr);
  auto set = [&](const std::string& key, const std::string& value) {
    return t->UpdateMetadata(
        [&](const iceberg::TableMetadata& m) -> Result<iceberg::TableMetadata> {
          iceberg::TableMetadata next = m;
          next.properties[key] = value;
          return next;
        });
  };
  ASSERT_OK(set("write.metadata.previous-versions-max", "3"));
  for (int i = 0; i < 4; ++i) ASSERT_OK(t->Append({File("a" + std::to_string(i), 1)}).status());
  EXPECT_EQ(t->metadata().metadata_log.size(), 3u);
  auto json_files = [&] {
    size_t n = 0;
    for (const auto& e : fs::directory_iterator(dir_ / "db" / "events" / "metadata")) {
      n += e.path().string().ends_with(".metadata.json");
    }
    return n;
  };
  EXPECT_EQ(json_files(), 6u)
      << "created, property, 4 appends: all kept without delete-after-commit";
  ASSERT_OK(set("write.metadata.delete-after-commit.enabled", "true"));
  ASSERT_OK(t->Append({File("b", 1)}).status());
  EXPECT_EQ(t->metadata().metadata_log.size(), 3u);
  EXPECT_EQ(json_files(), 6u) << "the current file and the 3 listed, plus the 2 cut off before";
  ASSERT_ERROR(set("write.metadata.previous-versions-max", "x"), StatusCode::kInvalidArgument,
               "write.metadata.previous-versions-max");
  ASSERT_OK_AND_ASSIGN(auto reloaded, Table::Load(*catalog_, *io_, TableIdent{{"db"}, "events"}));
  EXPECT_EQ(reloaded->metadata().snapshots.size(), 5u);
}

TEST_F(TableTest, BadInput) {
  auto schema = ParseColumnList("id BIGINT, ts TIMESTAMP");
  ASSERT_OK(schema);
  ASSERT_ERROR(iceberg::ParsePartitionSpec("hour(id)", *schema), StatusCode::kInvalidArgument,
               "hour cannot apply to a long");
  ASSERT_ERROR(iceberg::ParsePartitionSpec("bucket(id)", *schema), StatusCode::kInvalidArgument,
               "two arguments");
  ASSERT_ERROR(iceberg::ParsePartitionSpec("zorder(id)", *schema), StatusCode::kInvalidArgument,
               "unknown transform");
  ASSERT_ERROR(iceberg::ParsePartitionSpec("nope", *schema), StatusCode::kInvalidArgument,
               "no column named 'nope'");
  ASSERT_OK_AND_ASSIGN(auto spec,
                       iceberg::ParsePartitionSpec("day(ts), bucket(16, id), id", *schema));
  EXPECT_EQ(spec.fields[0].name, "ts_day");
  EXPECT_EQ(spec.fields[1].name, "id_bucket");
  EXPECT_EQ(spec.fields[1].field_id, 1001);
  EXPECT_EQ(spec.fields[2].name, "id");
  ASSERT_OK_AND_ASSIGN(auto order, iceberg::ParseSortOrder("id, ts DESC NULLS FIRST", *schema));
  EXPECT_TRUE(order.fields[1].descending);
  EXPECT_TRUE(order.fields[1].nulls_first);
  ASSERT_ERROR(Table::Load(*catalog_, *io_, TableIdent{{"db"}, "missing"}), StatusCode::kNotFound,
               "db.missing");
}

// A change of one kind that sets another kind's field is refused before any
// file is written, naming the field; the operation follows the kind and what
// the change holds.
TEST_F(TableTest, EachKindOfChangeTakesOnlyItsOwnFields) {
  auto t = MakeTable("");
  ASSERT_NE(t, nullptr);
  ASSERT_OK(t->Append({File("a", 3)}));
  const fs::path metadata_dir = dir_ / "db" / "events" / "metadata";
  auto files_in_metadata = [&] {
    size_t n = 0;
    for ([[maybe_unused]] const auto& e : fs::directory_iterator(metadata_dir)) ++n;
    return n;
  };
  const size_t before = files_in_metadata();
  struct Case {
    ChangeKind kind;
    std::function<void(SnapshotUpdate&)> set;
    std::string error;
  };
  const std::vector<Case> refused = {
      {ChangeKind::kAppend, [](SnapshotUpdate& u) { u.remove_paths = {"/data/a"}; },
       "an append takes no files to remove"},
      {ChangeKind::kAppend, [](SnapshotUpdate& u) { u.fail_on_new_deletes = true; },
       "an append takes no fail_on_new_deletes"},
      {ChangeKind::kRowDelta, [](SnapshotUpdate& u) { u.data_sequence_number = 1; },
       "a row delta takes no data sequence number"},
      {ChangeKind::kRowDelta, [](SnapshotUpdate& u) { u.remove_dangling_deletes = true; },
       "a row delta takes no remove_dangling_deletes"},
      {ChangeKind::kRewriteFiles, [](SnapshotUpdate& u) { u.require_paths = {"/data/a"}; },
       "a file rewrite takes no required files"},
      {ChangeKind::kRewriteFiles, [](SnapshotUpdate& u) { u.add_data = {File("b", 3)}; },
       "adds files only in place of others"},
      {ChangeKind::kRewriteManifests, [](SnapshotUpdate& u) { u.add_data = {File("b", 3)}; },
       "a manifest rewrite takes no data files to add"},
  };
  for (const Case& c : refused) {
    SnapshotUpdate u;
    u.kind = c.kind;
    c.set(u);
    ASSERT_ERROR(t->Commit(u), StatusCode::kInvalidArgument, c.error);
  }
  EXPECT_EQ(files_in_metadata(), before) << "a refused change wrote no manifest";
  EXPECT_EQ(t->metadata().snapshots.size(), 1u);

  SnapshotUpdate u;
  EXPECT_EQ(u.Operation(), "append");
  u.kind = ChangeKind::kRowDelta;
  u.add_data = {File("b", 3)};
  EXPECT_EQ(u.Operation(), "append") << "a row delta that deletes nothing only appends";
  u.remove_paths = {"/data/a"};
  EXPECT_EQ(u.Operation(), "overwrite");
  u.add_data.clear();
  EXPECT_EQ(u.Operation(), "delete");
  ASSERT_OK(t->Commit(u).status());
  EXPECT_EQ(t->metadata().current_snapshot()->operation(), "delete");
  u.kind = ChangeKind::kRewriteFiles;
  EXPECT_EQ(u.Operation(), "replace");
}

}  // namespace
}  // namespace sluice::catalog

#include "catalog/row_delete.h"
#include "columnar/json_writer.h"
#include "iceberg/data_writer.h"
#include "iceberg/scan.h"

namespace sluice::catalog {
namespace {

class TableDataTest : public TableTest {
 protected:
  // Appends rows with ids [from, to) in one commit.
  void AppendIds(Table& t, int64_t from, int64_t to) {
    auto schema = std::make_shared<const Schema>(*t.metadata().current_schema());
    Batch b = Batch::Make(schema);
    for (int64_t id = from; id < to; ++id) {
      b.columns[0].Append<int64_t>(id);
      b.columns[1].Append<int64_t>(1704067200000000LL + (id % 3) * 86400000000LL);  // ts
      b.columns[2].AppendBytes(id % 2 ? "odd" : "even");                            // kind
      for (size_t c = 3; c < b.columns.size(); ++c) b.columns[c].AppendNull();      // added later
    }
    auto w = iceberg::DataWriter::Make(*io_, t.metadata());
    ASSERT_OK(w);
    ASSERT_OK((*w)->Write(b));
    auto files = (*w)->Close();
    ASSERT_OK(files);
    ASSERT_OK(t.Append(*files));
  }

  std::set<int64_t> Ids(Table& t) {
    std::set<int64_t> ids;
    auto md = std::make_shared<const iceberg::TableMetadata>(t.metadata());
    iceberg::ScanOptions o;
    o.columns = {"id"};
    auto scan = iceberg::TableScan::Make(*io_, md, o);
    EXPECT_TRUE(scan.ok());
    Batch b;
    while (true) {
      auto more = (*scan)->Next(&b);
      EXPECT_TRUE(more.ok()) << more.status().ToString();
      if (!more.ok() || !*more) break;
      for (int64_t i = 0; i < b.num_rows(); ++i) {
        EXPECT_TRUE(ids.insert(b.columns[0].Value<int64_t>(i)).second) << "duplicate row";
      }
    }
    return ids;
  }
};

TEST_F(TableDataTest, DeleteWhereRemovesWholeFilesOrWritesDeletes) {
  auto t = MakeTable("day(ts)");
  ASSERT_NE(t, nullptr);
  AppendIds(*t, 0, 100);
  AppendIds(*t, 100, 200);
  // A delete matching whole files removes them instead of adding deletes.
  ASSERT_OK_AND_ASSIGN(auto r, DeleteWhere(*t, "id >= 100"));
  EXPECT_EQ(r.rows_deleted, 100);
  EXPECT_EQ(r.files_removed, 3);  // the second append's three day partitions
  EXPECT_EQ(r.delete_files_added, 0);
  ASSERT_OK_AND_ASSIGN(r, DeleteWhere(*t, "kind = 'odd' AND id < 50"));
  EXPECT_EQ(r.rows_deleted, 25);
  EXPECT_GT(r.delete_files_added, 0);
  std::set<int64_t> want;
  for (int64_t id = 0; id < 100; ++id) {
    if (!(id % 2 == 1 && id < 50)) want.insert(id);
  }
  EXPECT_EQ(Ids(*t), want);
  EXPECT_EQ(t->metadata().current_snapshot()->operation(), "delete");
  ASSERT_ERROR(DeleteWhere(*t, ""), StatusCode::kInvalidArgument, "filter");
}

// Format v2: a file's earlier position deletes are read only when they and
// the new ones may delete every row (their record counts say so); a file
// whose rows are then all gone is removed, also when its delete files hold
// other files' rows too.
TEST_F(TableDataTest, V2DeletesThatLeaveNoRowRemoveTheFile) {
  // One file: deletes that cannot empty it even with every earlier one
  // (10, then 20 of 100 rows) are written without reading those; the last
  // can, and reads them.
  auto one = MakeTable("", 2, "one_file");
  ASSERT_NE(one, nullptr);
  AppendIds(*one, 0, 100);
  ASSERT_OK_AND_ASSIGN(auto r, DeleteWhere(*one, "id < 10"));
  EXPECT_EQ(r.delete_files_added, 1);
  ASSERT_OK_AND_ASSIGN(r, DeleteWhere(*one, "id >= 10 AND id < 30"));
  EXPECT_EQ(r.rows_deleted, 20);
  EXPECT_EQ(r.files_removed, 0);
  std::set<int64_t> left;
  for (int64_t id = 30; id < 100; ++id) left.insert(id);
  EXPECT_EQ(Ids(*one), left);
  ASSERT_OK_AND_ASSIGN(r, DeleteWhere(*one, "id >= 30"));
  EXPECT_EQ(r.rows_deleted, 70);
  EXPECT_EQ(r.files_removed, 1);
  EXPECT_EQ(r.delete_files_added, 0);
  EXPECT_TRUE(Ids(*one).empty());

  auto t = MakeTable("");
  ASSERT_NE(t, nullptr);
  AppendIds(*t, 0, 100);
  AppendIds(*t, 100, 200);
  // Two files, one delete file for both (100 rows), then deletes that cannot
  // empty a file without it: its record count bounds each file's deletes.
  ASSERT_OK_AND_ASSIGN(r, DeleteWhere(*t, "kind = 'even'"));
  EXPECT_EQ(r.delete_files_added, 1);
  ASSERT_OK_AND_ASSIGN(r, DeleteWhere(*t, "id >= 100 AND id < 120 AND kind = 'odd'"));
  EXPECT_EQ(r.files_removed, 0);
  // The first file's odd rows: every row gone, the file removed.
  ASSERT_OK_AND_ASSIGN(r, DeleteWhere(*t, "id < 100 AND kind = 'odd'"));
  EXPECT_EQ(r.rows_deleted, 50);
  EXPECT_EQ(r.files_removed, 1);
  EXPECT_EQ(r.delete_files_added, 0);
  // The second's: 40 of its 100 rows are left.
  ASSERT_OK_AND_ASSIGN(r, DeleteWhere(*t, "id >= 120 AND id < 140"));
  EXPECT_EQ(r.files_removed, 0);
  std::set<int64_t> want;
  for (int64_t id = 141; id < 200; id += 2) want.insert(id);
  EXPECT_EQ(Ids(*t), want);
  ASSERT_OK_AND_ASSIGN(r, DeleteWhere(*t, "id > 140"));
  EXPECT_EQ(r.rows_deleted, 30);
  EXPECT_EQ(r.files_removed, 1);
  EXPECT_TRUE(Ids(*t).empty());
}

// A rewrite planned before a concurrent delete must not commit: otherwise the
// deleted rows would come back in the rewritten files.
TEST_F(TableDataTest, RewriteNeverResurrectsConcurrentDeletes) {
  auto t = MakeTable("");
  ASSERT_NE(t, nullptr);
  AppendIds(*t, 0, 50);
  ASSERT_OK_AND_ASSIGN(auto other, Table::Load(*catalog_, *io_, t->ident()));

  // The rewrite plans on the current snapshot; meanwhile another writer
  // deletes rows and appends more. Simulate the interleaving with the update
  // API: plan (remove the current files), then let the delete land first.
  ASSERT_OK_AND_ASSIGN(auto live, t->LiveFiles(*t->metadata().current_snapshot_id));
  SnapshotUpdate rewrite;
  rewrite.kind = ChangeKind::kRewriteFiles;
  for (const auto& e : live) rewrite.remove_paths.push_back(e.file.file_path);
  rewrite.add_data = {File("rewritten.parquet", 50)};
  rewrite.fail_on_new_deletes = true;
  rewrite.base_snapshot_id = t->metadata().current_snapshot_id;

  ASSERT_OK(DeleteWhere(*other, "id < 10"));
  AppendIds(*other, 50, 60);
  ASSERT_ERROR(t->Commit(rewrite), StatusCode::kConflict, "was added for");
  ASSERT_OK(t->Refresh());
  std::set<int64_t> want;
  for (int64_t id = 10; id < 60; ++id) want.insert(id);
  EXPECT_EQ(Ids(*t), want);
}

}  // namespace
}  // namespace sluice::catalog

namespace sluice::catalog {
namespace {

// Format v3: deletes become deletion vectors; a second delete on the same
// file merges into one new DV and removes the old one.
// Two planned deletes of the same rows (v2 position deletes): with
// fail_on_new_deletes the one committing second conflicts, so work keyed on
// "the rows I deleted" (dead-letter replay) cannot happen twice.
TEST_F(TableDataTest, PlannedDeleteConflictsWithANewerDeleteOfItsFiles) {
  auto t = MakeTable("");
  ASSERT_NE(t, nullptr);
  AppendIds(*t, 0, 50);
  ASSERT_OK_AND_ASSIGN(PlannedDelete first, PlanDelete(*t, "id < 5"));
  ASSERT_OK_AND_ASSIGN(auto other, Table::Load(*catalog_, *io_, t->ident()));
  ASSERT_OK(DeleteWhere(*other, "id < 5"));
  first.update.fail_on_new_deletes = true;
  ASSERT_ERROR(t->Commit(first.update), StatusCode::kConflict, "was added for");
  DiscardPlannedDelete(*t, first);
  // An append in between does not conflict.
  ASSERT_OK(t->Refresh());
  ASSERT_OK_AND_ASSIGN(PlannedDelete second, PlanDelete(*t, "id >= 45"));
  AppendIds(*other, 50, 55);
  second.update.fail_on_new_deletes = true;
  ASSERT_OK(t->Commit(second.update).status());
  std::set<int64_t> want;
  for (int64_t id = 5; id < 55; ++id) {
    if (id < 45 || id >= 50) want.insert(id);
  }
  EXPECT_EQ(Ids(*t), want);
}

TEST_F(TableDataTest, V3DeletionVectorsMergeAndRewrite) {
  auto t = MakeTable("", 3);
  ASSERT_NE(t, nullptr);
  AppendIds(*t, 0, 100);
  ASSERT_OK(DeleteWhere(*t, "id < 10"));
  ASSERT_OK(DeleteWhere(*t, "id >= 90"));
  std::set<int64_t> want;
  for (int64_t id = 10; id < 90; ++id) want.insert(id);
  EXPECT_EQ(Ids(*t), want);
  ASSERT_OK_AND_ASSIGN(auto live, t->LiveFiles(*t->metadata().current_snapshot_id));
  int dvs = 0;
  for (const auto& e : live) {
    if (e.file.content_offset) {
      ++dvs;
      EXPECT_EQ(e.file.record_count, 20);  // both deletes, merged
      EXPECT_EQ(e.file.file_format, "puffin");
    }
  }
  EXPECT_EQ(dvs, 1);
  // Deleting the rest removes the data file, and its DV with it.
  ASSERT_OK_AND_ASSIGN(auto r, DeleteWhere(*t, "id >= 10"));
  EXPECT_EQ(r.files_removed, 1);
  ASSERT_OK_AND_ASSIGN(live, t->LiveFiles(*t->metadata().current_snapshot_id));
  EXPECT_TRUE(live.empty());
}

}  // namespace
}  // namespace sluice::catalog

#include "iceberg/schema_update.h"

namespace sluice::catalog {
namespace {

// Schema evolution by field id: old files read under the new schema.
TEST_F(TableDataTest, SchemaAndPartitionEvolution) {
  auto t = MakeTable("day(ts)");
  ASSERT_NE(t, nullptr);
  AppendIds(*t, 0, 10);
  ASSERT_OK(t->UpdateMetadata([](const iceberg::TableMetadata& m) {
    return iceberg::RenameColumn(m, "kind", "category");
  }));
  ASSERT_OK(t->UpdateMetadata([](const iceberg::TableMetadata& m) {
    return iceberg::AddColumn(m, Field{0, "score", DataType::Int(), false, ""});
  }));
  ASSERT_OK(t->UpdateMetadata(
      [](const iceberg::TableMetadata& m) { return iceberg::MakeOptional(m, "id"); }));
  ASSERT_OK(t->UpdateMetadata([](const iceberg::TableMetadata& m) {
    return iceberg::WidenColumn(m, "score", DataType::Long());
  }));
  ASSERT_OK(t->UpdateMetadata([](const iceberg::TableMetadata& m) {
    return iceberg::SetPartitionSpec(m, "day(ts), bucket(4, id)");
  }));
  const auto& md = t->metadata();
  EXPECT_EQ(md.current_schema()->fields[2].name, "category");
  EXPECT_EQ(md.current_schema()->fields[2].id, 3);  // same id as "kind"
  EXPECT_EQ(md.current_schema()->fields[3].id, 4);  // fresh id
  EXPECT_EQ(md.last_column_id, 4);
  EXPECT_EQ(md.default_spec_id, 1);
  EXPECT_EQ(md.spec_by_id(1)->fields[0].field_id, 1000);  // day(ts) keeps its id
  EXPECT_EQ(md.spec_by_id(1)->fields[1].field_id, 1001);

  ASSERT_ERROR(t->UpdateMetadata([](const iceberg::TableMetadata& m) {
    return iceberg::WidenColumn(m, "score", DataType::Int());
  }),
               StatusCode::kInvalidArgument, "cannot change from long to int");
  ASSERT_ERROR(t->UpdateMetadata(
                   [](const iceberg::TableMetadata& m) { return iceberg::DropColumn(m, "ts"); }),
               StatusCode::kInvalidArgument, "partition field");

  // Old files (written under spec 0, before the rename and the new column) read by id.
  auto shared = std::make_shared<const iceberg::TableMetadata>(md);
  iceberg::ScanOptions o;
  o.filter = "category = 'odd' AND score IS NULL";
  ASSERT_OK_AND_ASSIGN(auto scan, iceberg::TableScan::Make(*io_, shared, o));
  Batch b;
  int64_t rows = 0;
  while (true) {
    ASSERT_OK_AND_ASSIGN(bool more, scan->Next(&b));
    if (!more) break;
    rows += b.num_rows();
    EXPECT_EQ(b.schema->fields[2].name, "category");
  }
  EXPECT_EQ(rows, 5);
  // New data goes to the new spec.
  AppendIds(*t, 10, 20);
  ASSERT_OK_AND_ASSIGN(auto live, t->LiveFiles(*t->metadata().current_snapshot_id));
  std::set<int32_t> specs;
  for (const auto& e : live) specs.insert(e.file.spec_id);
  EXPECT_EQ(specs, (std::set<int32_t>{0, 1}));
}

}  // namespace
}  // namespace sluice::catalog
