#include "operators/primary_key_index.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>

#include "columnar/sql_schema.h"
#include "common/testing.h"

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

// Every row of each of `keys` (its committed row and any extra), by file name.
std::map<std::string, std::vector<std::pair<std::string, int64_t>>> Rows(
    const PrimaryKeyIndex& index, int keys) {
  std::map<std::string, std::vector<std::pair<std::string, int64_t>>> out;
  for (int k = 0; k < keys; ++k) {
    PrimaryKeyIndex probe = index;  // (a delete of the key lists its rows)
    probe.DiscardPending();
    probe.Delete(std::to_string(k));
    auto rows = Named(probe, probe.Deletes());
    if (!rows.empty()) out[std::to_string(k)] = rows;
  }
  return out;
}

Result<std::string> StateOf(const PrimaryKeyIndex& index, bool full) {
  return state::WriteToString([&](state::StateWriter* w) { return index.WriteState(full, w); });
}

Status RestoreInto(PrimaryKeyIndex* index, const std::vector<std::string>& files) {
  for (size_t i = 0; i < files.size(); ++i) {
    state::StateReader in = state::StateReader::Of(files[i]);
    RETURN_IF_ERROR(index->Restore(&in, /*base=*/i == 0));
  }
  return Status::OK();
}

TEST(PrimaryKeyIndexStateTest, ABaseAndItsDeltasRestoreTheIndexEveryCommitLeft) {
  // A model run: checkpoints of random upserts and deletes over 60 keys,
  // compactions moving rows, now and then a rebuild; after each commit the
  // files written so far (the last base and the deltas after it) restore
  // exactly the index the commit left.
  std::mt19937 rng(20261202);
  constexpr int kKeys = 60;
  PrimaryKeyIndex index;
  uint32_t first = index.InternFile("seed.parquet");
  for (int k = 0; k < kKeys; k += 2) index.Load(std::to_string(k), {first, k});
  index.Load("4", {first, 1000});  // a key another engine wrote twice
  std::vector<std::string> chain;
  int bases = 0, deltas = 0;
  for (int checkpoint = 1; checkpoint <= 40; ++checkpoint) {
    uint32_t file = index.InternFile("data-" + std::to_string(checkpoint) + ".parquet");
    int changes = 1 + static_cast<int>(rng() % 8);
    for (int c = 0; c < changes; ++c) {
      std::string key = std::to_string(rng() % kKeys);
      if (rng() % 4 == 0) {
        index.Delete(key);
      } else {
        index.Upsert(key, {file, c});
      }
    }
    if (checkpoint % 7 == 0) {  // a compaction moved the rows of an older file
      std::vector<bool> inputs(file + 1);
      inputs[index.InternFile("data-" + std::to_string(checkpoint - 3) + ".parquet")] = true;
      uint32_t out = index.InternFile("compacted-" + std::to_string(checkpoint) + ".parquet");
      for (int k = 0; k < kKeys; ++k) index.Relocate(std::to_string(k), inputs, {out, k});
    }
    if (checkpoint % 13 == 0) {  // rebuilt (from the same rows, as a scan would)
      PrimaryKeyIndex before = index;
      before.DiscardPending();
      auto rows = Rows(before, kKeys);
      index.ClearCommitted();
      for (const auto& [key, places] : rows) {
        for (const auto& [path, pos] : places) index.Load(key, {index.InternFile(path), pos});
      }
    }
    bool full = index.needs_full_state() || chain.size() > 5;
    ASSERT_OK_AND_ASSIGN(std::string bytes, StateOf(index, full));
    if (full) chain.clear();
    chain.push_back(bytes);
    (full ? bases : deltas) += 1;
    index.CommitPending();
    index.MarkSaved();
    PrimaryKeyIndex restored;
    ASSERT_OK(RestoreInto(&restored, chain));
    ASSERT_EQ(Rows(restored, kKeys), Rows(index, kKeys)) << "checkpoint " << checkpoint;
    EXPECT_EQ(restored.size(), index.size());
    EXPECT_EQ(restored.duplicates(), index.duplicates());
  }
  EXPECT_GT(bases, 3);
  EXPECT_GT(deltas, 20);
}

TEST(PrimaryKeyIndexStateTest, ADeltaHoldsOnlyTheKeysChangedSinceTheLastSave) {
  PrimaryKeyIndex index;
  uint32_t f = index.InternFile("f.parquet");
  for (int k = 0; k < 1000; ++k) index.Load(std::to_string(k), {f, k});
  ASSERT_TRUE(index.needs_full_state());
  ASSERT_OK_AND_ASSIGN(std::string base, StateOf(index, true));
  index.MarkSaved();
  EXPECT_FALSE(index.needs_full_state());
  index.Upsert("7", {index.InternFile("g.parquet"), 0});
  index.Delete("8");
  EXPECT_EQ(index.unsaved(), 2u);
  ASSERT_OK_AND_ASSIGN(std::string delta, StateOf(index, false));
  EXPECT_LT(delta.size() * 50, base.size());
  index.CommitPending();
  index.MarkSaved();
  PrimaryKeyIndex restored;
  ASSERT_OK(RestoreInto(&restored, {base, delta}));
  EXPECT_EQ(restored.size(), 999u);
  EXPECT_FALSE(restored.Find("8").has_value());
  EXPECT_EQ(restored.FilePath(restored.Find("7")->file), "g.parquet");
  EXPECT_EQ(restored.Find("9")->pos, 9);
}

TEST(PrimaryKeyIndexStateTest, ADeltaCannotFollowARebuild) {
  PrimaryKeyIndex index;
  index.Load("a", {index.InternFile("f.parquet"), 0});
  ASSERT_ERROR(StateOf(index, false), StatusCode::kInternal, "rebuilt");
}

TEST(PrimaryKeyIndexStateTest, ATruncatedOrDamagedStateIsCorruptionNamingTheRecord) {
  PrimaryKeyIndex index;
  uint32_t f = index.InternFile("f.parquet");
  for (int k = 0; k < 20; ++k) index.Load(std::to_string(k), {f, k});
  ASSERT_OK_AND_ASSIGN(std::string bytes, StateOf(index, true));
  for (size_t n = 0; n < bytes.size(); ++n) {
    PrimaryKeyIndex restored;
    Status st = RestoreInto(&restored, {bytes.substr(0, n)});
    ASSERT_EQ(st.code(), StatusCode::kCorruption) << n << ": " << st.ToString();
  }
  PrimaryKeyIndex restored;
  ASSERT_ERROR(RestoreInto(&restored, {bytes + "x"}), StatusCode::kCorruption, "after the end");
  std::string unnamed = bytes;
  unnamed[5] = 2;  // the file record's tag: a row naming a file never named
  ASSERT_ERROR(RestoreInto(&restored, {unnamed}), StatusCode::kCorruption, "record 0");
  std::string header = bytes;
  header[4] = 9;  // no such kind
  ASSERT_ERROR(RestoreInto(&restored, {header}), StatusCode::kCorruption, "bad header");
  // A chain is a base, then deltas.
  ASSERT_ERROR(RestoreInto(&restored, {bytes, bytes}), StatusCode::kCorruption,
               "a base where a delta belongs");
  index.MarkSaved();
  ASSERT_OK_AND_ASSIGN(std::string delta, StateOf(index, false));
  ASSERT_ERROR(RestoreInto(&restored, {delta}), StatusCode::kCorruption,
               "a delta where a base belongs");
}

}  // namespace
}  // namespace sluice::operators
