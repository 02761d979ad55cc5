#include "operators/primary_key_index.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "columnar/sql_schema.h"

namespace sluice::operators {
namespace {

std::vector<std::pair<std::string, int64_t>> Named(const PrimaryKeyIndex& index,
                                                   std::vector<RowLocation> rows) {
  std::vector<std::pair<std::string, int64_t>> out;
  for (const auto& r : rows) out.emplace_back(index.FilePath(r.file), r.pos);
  std::sort(out.begin(), out.end());
  return out;
}

TEST(PrimaryKeyIndexTest, AChangedKeyDeletesItsCommittedRowAndItsEarlierVersionInTheCheckpoint) {
  PrimaryKeyIndex index;
  uint32_t old_file = index.InternFile("old.parquet");
  index.Load("a", {old_file, 0});
  index.Load("b", {old_file, 1});
  index.Load("c", {old_file, 2});
  uint32_t next = index.InternFile("new.parquet");
  index.Upsert("a", {next, 0});  // replaces a committed row
  index.Upsert("d", {next, 1});  // a new key
  index.Upsert("d", {next, 2});  // ... changed again: its first version goes
  index.Delete("b");             // a committed row goes
  index.Delete("zz");            // an unknown key: nothing to delete
  EXPECT_EQ(Named(index, index.Deletes()),
            (std::vector<std::pair<std::string, int64_t>>{
                {"new.parquet", 1}, {"old.parquet", 0}, {"old.parquet", 1}}));
  index.CommitPending();
  EXPECT_EQ(index.size(), 3u);  // a, c, d
  EXPECT_EQ(index.Find("a"), (RowLocation{next, 0}));
  EXPECT_EQ(index.Find("d"), (RowLocation{next, 2}));
  EXPECT_FALSE(index.Find("b").has_value());
  EXPECT_EQ(index.pending(), 0u);
  EXPECT_TRUE(index.Deletes().empty());
}

TEST(PrimaryKeyIndexTest, AKeyLoadedTwiceLosesBothRowsAtItsNextChange) {
  PrimaryKeyIndex index;
  uint32_t f = index.InternFile("f.parquet");
  index.Load("k", {f, 3});
  index.Load("k", {f, 7});  // another engine wrote the key twice
  EXPECT_EQ(index.duplicates(), 1u);
  index.Delete("k");
  EXPECT_EQ(Named(index, index.Deletes()),
            (std::vector<std::pair<std::string, int64_t>>{{"f.parquet", 3}, {"f.parquet", 7}}));
  index.CommitPending();
  EXPECT_EQ(index.size(), 0u);
  EXPECT_EQ(index.duplicates(), 0u);
}

TEST(PrimaryKeyIndexTest, RebuildingTheCommittedLayerKeepsThePendingChanges) {
  PrimaryKeyIndex index;
  index.Load("a", {index.InternFile("gone.parquet"), 0});
  uint32_t next = index.InternFile("new.parquet");
  index.Upsert("a", {next, 0});
  index.Upsert("a", {next, 1});
  // A compaction rewrote gone.parquet: the index is loaded again.
  index.ClearCommitted();
  index.Load("a", {index.InternFile("compacted.parquet"), 5});
  EXPECT_EQ(Named(index, index.Deletes()), (std::vector<std::pair<std::string, int64_t>>{
                                               {"compacted.parquet", 5}, {"new.parquet", 0}}));
  index.CommitPending();
  ASSERT_TRUE(index.Find("a").has_value());
  EXPECT_EQ(index.FilePath(index.Find("a")->file), "new.parquet");
  EXPECT_EQ(index.Find("a")->pos, 1);
}

TEST(PrimaryKeyIndexTest, RowsACompactionMovedAreRelocatedOnlyFromItsInputs) {
  PrimaryKeyIndex index;
  uint32_t f1 = index.InternFile("f1.parquet"), f2 = index.InternFile("f2.parquet");
  index.Load("a", {f1, 0});
  index.Load("b", {f1, 1});
  index.Load("c", {f2, 0});
  ASSERT_TRUE(index.FileId("f1.parquet").has_value());
  EXPECT_FALSE(index.FileId("other.parquet").has_value());
  std::vector<bool> inputs(f1 + 1);
  inputs[f1] = true;
  EXPECT_EQ(index.CountIn(inputs), 2u);
  uint32_t out = index.InternFile("compact-1.parquet");
  EXPECT_TRUE(index.Relocate("a", inputs, {out, 0}));
  EXPECT_TRUE(index.Relocate("b", inputs, {out, 1}));
  EXPECT_FALSE(index.Relocate("c", inputs, {out, 2}));   // in f2: not an input
  EXPECT_FALSE(index.Relocate("zz", inputs, {out, 3}));  // unknown
  EXPECT_EQ(index.FilePath(index.Find("a")->file), "compact-1.parquet");
  EXPECT_EQ(index.Find("b")->pos, 1);
  EXPECT_EQ(index.FilePath(index.Find("c")->file), "f2.parquet");
  EXPECT_EQ(index.CountIn(inputs), 0u);
}

TEST(PrimaryKeyIndexTest, KeysOfSeveralColumnsDoNotRunTogether) {
  auto schema = std::make_shared<Schema>(*ParseColumnList("a STRING, b STRING, n BIGINT"));
  Batch b = Batch::Make(schema);
  b.columns[0].AppendBytes("ab");
  b.columns[1].AppendBytes("c");
  b.columns[2].Append<int64_t>(1);
  b.columns[0].AppendBytes("a");
  b.columns[1].AppendBytes("bc");
  b.columns[2].AppendNull();
  std::string k0, k1, k2;
  ASSERT_TRUE(AppendKey(b, {0, 1}, 0, &k0));
  ASSERT_TRUE(AppendKey(b, {0, 1}, 1, &k1));
  EXPECT_NE(k0, k1);
  k2 = "x";
  EXPECT_FALSE(AppendKey(b, {0, 2}, 1, &k2));  // a null key column
  EXPECT_EQ(k2, "x");
}

}  // namespace
}  // namespace sluice::operators
