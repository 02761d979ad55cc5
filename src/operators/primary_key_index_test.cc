#include "operators/primary_key_index.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>

#include "columnar/sql_schema.h"
#include "common/testing.h"
#include "state/spill_store.h"

namespace sluice::operators {
namespace {

// Every test runs twice: with the index in memory, and within a budget of a
// few keys (its committed layer spills to a store every dozen keys).
class PrimaryKeyIndexTest : public ::testing::TestWithParam<int64_t> {
 protected:
  std::unique_ptr<PrimaryKeyIndex> New() {
    return std::make_unique<PrimaryKeyIndex>(GetParam(),
                                             testing::TempPath(fmt::format("pk-{}", indexes_++)));
  }
  // A spilling run that never spilled tests nothing beyond memory.
  void ExpectSpilledWhenBounded(const PrimaryKeyIndex& index) {
    if (GetParam() > 0) {
      EXPECT_GT(index.spills(), 0);
    }
  }

 private:
  int indexes_ = 0;
};
using PrimaryKeyIndexStateTest = PrimaryKeyIndexTest;

INSTANTIATE_TEST_SUITE_P(InMemoryAndSpilled, PrimaryKeyIndexTest, ::testing::Values(0, 2048),
                         [](const auto& info) {
                           return info.param == 0 ? std::string("InMemory")
                                                  : std::string("Spilled");
                         });
INSTANTIATE_TEST_SUITE_P(InMemoryAndSpilled, PrimaryKeyIndexStateTest, ::testing::Values(0, 2048),
                         [](const auto& info) {
                           return info.param == 0 ? std::string("InMemory")
                                                  : std::string("Spilled");
                         });

std::vector<std::pair<std::string, int64_t>> Named(const PrimaryKeyIndex& index,
                                                   std::vector<RowLocation> rows) {
  std::vector<std::pair<std::string, int64_t>> out;
  for (const auto& r : rows) out.emplace_back(index.FilePath(r.file), r.pos);
  std::sort(out.begin(), out.end());
  return out;
}

// The rows the pending changes delete, by file name.
std::vector<std::pair<std::string, int64_t>> NamedDeletes(PrimaryKeyIndex& index) {
  auto rows = index.Deletes();
  EXPECT_OK(rows.status());
  return rows.ok() ? Named(index, *rows) : std::vector<std::pair<std::string, int64_t>>{};
}

// The key's committed row (none on an error, which fails the test).
std::optional<RowLocation> At(const PrimaryKeyIndex& index, std::string_view key) {
  auto at = index.Find(key);
  EXPECT_OK(at.status());
  return at.ok() ? *at : std::nullopt;
}

// CountIn, which counts as the committed layer changes, agrees with the
// committed rows read back: file by file, and in all (no file the rows left
// still counted).
void ExpectCountsMatchRows(const PrimaryKeyIndex& index) {
  std::map<std::string, int> keys;
  ASSERT_OK(index.ForEachRow([&](std::string_view key, RowLocation) { keys[std::string(key)]; }));
  std::map<uint32_t, size_t> rows;
  for (const auto& [key, unused] : keys) {
    ASSERT_OK_AND_ASSIGN(auto at, index.Find(key));
    ASSERT_TRUE(at.has_value()) << key;
    ++rows[at->file];
  }
  for (const auto& [file, n] : rows) {
    std::vector<bool> one(file + 1);
    one[file] = true;
    EXPECT_EQ(index.CountIn(one), n) << index.FilePath(file);
  }
  EXPECT_EQ(index.CountIn(std::vector<bool>(4096, true)), index.size());
}

// Loads keys "from".."to"-1 at positions from..to-1 of `file`.
Status LoadRange(PrimaryKeyIndex* index, uint32_t file, int from, int to) {
  for (int k = from; k < to; ++k) RETURN_IF_ERROR(index->Load(std::to_string(k), {file, k}));
  return Status::OK();
}

TEST_P(PrimaryKeyIndexTest, AChangedKeyDeletesItsCommittedRowAndItsEarlierVersionInTheCheckpoint) {
  auto index = New();
  uint32_t old_file = index->InternFile("old.parquet");
  ASSERT_OK(LoadRange(index.get(), old_file, 100, 150));  // (keys enough to spill)
  ASSERT_OK(index->Load("a", {old_file, 0}));
  ASSERT_OK(index->Load("b", {old_file, 1}));
  ASSERT_OK(index->Load("c", {old_file, 2}));
  uint32_t next = index->InternFile("new.parquet");
  index->Upsert("a", {next, 0});  // replaces a committed row
  index->Upsert("d", {next, 1});  // a new key
  index->Upsert("d", {next, 2});  // ... changed again: its first version goes
  index->Delete("b");             // a committed row goes
  index->Delete("zz");            // an unknown key: nothing to delete
  EXPECT_EQ(NamedDeletes(*index), (std::vector<std::pair<std::string, int64_t>>{
                                      {"new.parquet", 1}, {"old.parquet", 0}, {"old.parquet", 1}}));
  ASSERT_OK(index->CommitPending());
  EXPECT_EQ(index->size(), 53u);  // a, c, d and the 50
  EXPECT_EQ(At(*index, "a"), (RowLocation{next, 0}));
  EXPECT_EQ(At(*index, "d"), (RowLocation{next, 2}));
  EXPECT_EQ(At(*index, "120"), (RowLocation{old_file, 120}));
  EXPECT_FALSE(At(*index, "b").has_value());
  EXPECT_EQ(index->pending(), 0u);
  EXPECT_TRUE(NamedDeletes(*index).empty());
  ExpectSpilledWhenBounded(*index);
}

TEST_P(PrimaryKeyIndexTest, AKeyLoadedTwiceLosesBothRowsAtItsNextChange) {
  auto index = New();
  uint32_t f = index->InternFile("f.parquet");
  ASSERT_OK(index->Load("k", {f, 3}));
  ASSERT_OK(LoadRange(index.get(), f, 100, 150));  // (spills "k" when bounded)
  ASSERT_OK(index->Load("k", {f, 7}));             // another engine wrote the key twice
  EXPECT_EQ(index->duplicates(), 1u);
  index->Delete("k");
  EXPECT_EQ(NamedDeletes(*index),
            (std::vector<std::pair<std::string, int64_t>>{{"f.parquet", 3}, {"f.parquet", 7}}));
  ASSERT_OK(index->CommitPending());
  EXPECT_EQ(index->size(), 50u);
  EXPECT_EQ(index->duplicates(), 0u);
  ExpectSpilledWhenBounded(*index);
}

TEST_P(PrimaryKeyIndexTest, RebuildingTheCommittedLayerKeepsThePendingChanges) {
  auto index = New();
  ASSERT_OK(index->Load("a", {index->InternFile("gone.parquet"), 0}));
  ASSERT_OK(LoadRange(index.get(), index->InternFile("gone.parquet"), 100, 150));
  uint32_t next = index->InternFile("new.parquet");
  index->Upsert("a", {next, 0});
  index->Upsert("a", {next, 1});
  ExpectSpilledWhenBounded(*index);
  // A compaction rewrote gone.parquet: the index is loaded again.
  index->ClearCommitted();
  EXPECT_FALSE(index->spilled());
  ASSERT_OK(index->Load("a", {index->InternFile("compacted.parquet"), 5}));
  EXPECT_EQ(NamedDeletes(*index), (std::vector<std::pair<std::string, int64_t>>{
                                      {"compacted.parquet", 5}, {"new.parquet", 0}}));
  ASSERT_OK(index->CommitPending());
  ASSERT_TRUE(At(*index, "a").has_value());
  EXPECT_EQ(index->FilePath(At(*index, "a")->file), "new.parquet");
  EXPECT_EQ(At(*index, "a")->pos, 1);
  EXPECT_FALSE(At(*index, "120").has_value());
}

TEST_P(PrimaryKeyIndexTest, AnIndexRebuiltBetweenPlanAndCommitIsReadAgainAtTheCommit) {
  // Planned against 50 keys; then another writer's commit: the index is
  // loaded again without "120" (deleted) and with "new" (appended). The
  // commit must not trust what the plan found ("120" there, "new" not).
  auto index = New();
  const uint32_t f1 = index->InternFile("f1.parquet");
  ASSERT_OK(LoadRange(index.get(), f1, 100, 150));
  const uint32_t mine = index->InternFile("mine.parquet");
  index->Delete("120");
  index->Upsert("new", {mine, 0});
  EXPECT_EQ(NamedDeletes(*index),
            (std::vector<std::pair<std::string, int64_t>>{{"f1.parquet", 120}}));
  index->ClearCommitted();
  const uint32_t f1_again = index->InternFile("f1.parquet");
  ASSERT_OK(LoadRange(index.get(), f1_again, 100, 120));
  ASSERT_OK(LoadRange(index.get(), f1_again, 121, 150));
  ASSERT_OK(index->Load("new", {index->InternFile("theirs.parquet"), 7}));
  ExpectSpilledWhenBounded(*index);
  ASSERT_OK(index->CommitPending());
  EXPECT_EQ(index->size(), 50u);
  EXPECT_FALSE(At(*index, "120").has_value());
  ASSERT_TRUE(At(*index, "new").has_value());
  EXPECT_EQ(index->FilePath(At(*index, "new")->file), "mine.parquet");
  EXPECT_EQ(At(*index, "149")->pos, 149);
}

// Rows "a", "b" and "d" in f1 (a compaction's input), "c" and 50 more in f2.
std::unique_ptr<PrimaryKeyIndex> LoadForCompaction(std::unique_ptr<PrimaryKeyIndex> index) {
  uint32_t f1 = index->InternFile("f1.parquet"), f2 = index->InternFile("f2.parquet");
  EXPECT_OK(index->Load("a", {f1, 0}));
  EXPECT_OK(index->Load("b", {f1, 1}));
  EXPECT_OK(index->Load("c", {f2, 0}));
  EXPECT_OK(index->Load("d", {f1, 2}));
  EXPECT_OK(LoadRange(index.get(), f2, 100, 150));
  return index;
}

// Moves `keys` (out of order: a spilled index sorts them) to consecutive
// rows of compact-1.parquet.
Result<size_t> MoveTo(PrimaryKeyIndex& index, std::vector<std::string_view> keys,
                      const std::vector<bool>& inputs, bool* missed) {
  uint32_t out = index.InternFile("compact-1.parquet");
  std::vector<RowLocation> to;
  for (size_t i = 0; i < keys.size(); ++i) to.push_back({out, static_cast<int64_t>(i)});
  return index.Relocate(keys, to, inputs, missed);
}

TEST_P(PrimaryKeyIndexTest, RowsACompactionMovedAreRelocatedFromItsInputs) {
  auto index = LoadForCompaction(New());
  ASSERT_TRUE(index->FileId("f1.parquet").has_value());
  EXPECT_FALSE(index->FileId("other.parquet").has_value());
  std::vector<bool> inputs(*index->FileId("f1.parquet") + 1);
  inputs[*index->FileId("f1.parquet")] = true;
  EXPECT_EQ(index->CountIn(inputs), 3u);
  bool missed = true;
  ASSERT_OK_AND_ASSIGN(size_t moved, MoveTo(*index, {"d", "b"}, inputs, &missed));
  EXPECT_EQ(moved, 2u);
  EXPECT_FALSE(missed);
  ASSERT_OK_AND_ASSIGN(moved, MoveTo(*index, {"a"}, inputs, &missed));
  EXPECT_EQ(moved, 1u);
  EXPECT_FALSE(missed);
  EXPECT_EQ(index->FilePath(At(*index, "a")->file), "compact-1.parquet");
  EXPECT_EQ(At(*index, "a")->pos, 0);
  EXPECT_EQ(At(*index, "b")->pos, 1);
  EXPECT_EQ(At(*index, "d")->pos, 0);  // (each call from row 0)
  EXPECT_EQ(index->FilePath(At(*index, "c")->file), "f2.parquet");
  std::vector<bool> output(*index->FileId("compact-1.parquet") + 1);
  output.back() = true;
  EXPECT_EQ(index->CountIn(output), 3u);
  index->Vacated(inputs);
  EXPECT_EQ(index->CountIn(inputs), 0u);
  ExpectCountsMatchRows(*index);
  EXPECT_EQ(index->size(), 54u);
  ExpectSpilledWhenBounded(*index);
}

TEST_P(PrimaryKeyIndexTest, ACompactionTheIndexDoesNotExplainIsMissedOrMiscounted) {
  // What a compaction of f1 wrote, when the index is wrong about it: a row
  // of a key in another file, of a key it lacks, a key twice. An index in
  // memory says so; a spilled one (which reads no store to move a key)
  // leaves it to the count, which differs from CountIn before.
  const std::vector<std::vector<std::string_view>> written = {
      {"a", "b", "c", "d"}, {"a", "zz", "b", "d"}, {"a", "b", "d", "a"}};
  for (const auto& keys : written) {
    SCOPED_TRACE(fmt::format("{}", fmt::join(keys, ",")));
    auto index = LoadForCompaction(New());
    std::vector<bool> inputs(*index->FileId("f1.parquet") + 1);
    inputs[*index->FileId("f1.parquet")] = true;
    const size_t expected = index->CountIn(inputs);
    bool missed = false;
    ASSERT_OK_AND_ASSIGN(size_t moved, MoveTo(*index, keys, inputs, &missed));
    EXPECT_TRUE(missed || moved != expected);
    if (!index->spilled() || keys.back() == "a") {
      EXPECT_TRUE(missed);
    }
    if (!index->spilled()) {  // (stopped at the first such key)
      EXPECT_EQ(index->FilePath(At(*index, "c")->file), "f2.parquet");
      EXPECT_EQ(index->size(), 54u);
    }
  }
}

TEST(PrimaryKeyIndexKeyTest, KeysOfSeveralColumnsDoNotRunTogether) {
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

// Every committed row of the index (each key's row and any extra), by key.
std::map<std::string, std::vector<std::pair<std::string, int64_t>>> Rows(
    const PrimaryKeyIndex& index) {
  std::map<std::string, std::vector<std::pair<std::string, int64_t>>> out;
  EXPECT_OK(index.ForEachRow([&](std::string_view key, RowLocation at) {
    out[std::string(key)].emplace_back(index.FilePath(at.file), at.pos);
  }));
  for (auto& [key, rows] : out) std::sort(rows.begin(), rows.end());
  return out;
}

Result<std::string> StateOf(const PrimaryKeyIndex& index, bool full) {
  return state::WriteToString([&](state::StateWriter* w) { return index.WriteState(full, w); });
}

// `*deltas_spilled` (when given) counts the deltas restored into a spilled
// index (which applies them in key order).
Status RestoreInto(PrimaryKeyIndex* index, const std::vector<std::string>& files,
                   int* deltas_spilled = nullptr) {
  for (size_t i = 0; i < files.size(); ++i) {
    state::StateReader in = state::StateReader::Of(files[i]);
    if (deltas_spilled != nullptr && i > 0 && index->spilled()) ++*deltas_spilled;
    RETURN_IF_ERROR(index->Restore(&in, /*base=*/i == 0));
  }
  return Status::OK();
}

TEST_P(PrimaryKeyIndexStateTest, ABaseAndItsDeltasRestoreTheIndexEveryCommitLeft) {
  // A model run: checkpoints of random upserts and deletes over 60 keys,
  // compactions moving rows, now and then a rebuild; after each commit the
  // files written so far (the last base and the deltas after it) restore
  // exactly the index the commit left.
  std::mt19937 rng(20261202);
  constexpr int kKeys = 60;
  auto index = New();
  uint32_t first = index->InternFile("seed.parquet");
  for (int k = 0; k < kKeys; k += 2) ASSERT_OK(index->Load(std::to_string(k), {first, k}));
  ASSERT_OK(index->Load("4", {first, 1000}));  // a key another engine wrote twice
  std::vector<std::string> chain;
  int bases = 0, deltas = 0, deltas_spilled = 0;
  for (int checkpoint = 1; checkpoint <= 40; ++checkpoint) {
    uint32_t file = index->InternFile("data-" + std::to_string(checkpoint) + ".parquet");
    int changes = 1 + static_cast<int>(rng() % 8);
    for (int c = 0; c < changes; ++c) {
      std::string key = std::to_string(rng() % kKeys);
      if (rng() % 4 == 0) {
        index->Delete(key);
      } else {
        index->Upsert(key, {file, c});
      }
    }
    if (checkpoint % 7 == 0) {  // a compaction moved the rows of an older file
      std::vector<bool> inputs(file + 1);
      inputs[index->InternFile("data-" + std::to_string(checkpoint - 3) + ".parquet")] = true;
      uint32_t out = index->InternFile("compacted-" + std::to_string(checkpoint) + ".parquet");
      std::vector<std::string> names;
      std::vector<RowLocation> to;
      for (int k = 0; k < kKeys; ++k) {
        ASSERT_OK_AND_ASSIGN(auto at, index->Find(std::to_string(k)));
        if (!at || !inputs[at->file]) continue;
        names.push_back(std::to_string(k));
        to.push_back({out, k});
      }
      std::vector<std::string_view> keys(names.begin(), names.end());
      bool missed = true;
      ASSERT_OK_AND_ASSIGN(size_t moved, index->Relocate(keys, to, inputs, &missed));
      ASSERT_FALSE(missed);
      ASSERT_EQ(moved, keys.size());
      index->Vacated(inputs);
    }
    if (checkpoint % 13 == 0) {  // rebuilt (from the same rows, as a scan would)
      auto rows = Rows(*index);
      index->ClearCommitted();
      for (const auto& [key, places] : rows) {
        for (const auto& [path, pos] : places) {
          ASSERT_OK(index->Load(key, {index->InternFile(path), pos}));
        }
      }
    }
    // (Half the commits as a pipeline's: Deletes planned first, which a
    // spilled index's CommitPending then follows without reading its store.)
    if (checkpoint % 2 == 0) ASSERT_OK(index->Deletes().status());
    bool full = index->needs_full_state() || chain.size() > 5;
    ASSERT_OK_AND_ASSIGN(std::string bytes, StateOf(*index, full));
    if (full) chain.clear();
    chain.push_back(bytes);
    (full ? bases : deltas) += 1;
    ASSERT_OK(index->CommitPending());
    index->MarkSaved();
    auto restored = New();
    ASSERT_OK(RestoreInto(restored.get(), chain, &deltas_spilled));
    ASSERT_EQ(Rows(*restored), Rows(*index)) << "checkpoint " << checkpoint;
    ExpectCountsMatchRows(*index);
    ExpectCountsMatchRows(*restored);
    EXPECT_EQ(restored->size(), index->size());
    EXPECT_EQ(restored->duplicates(), index->duplicates());
  }
  EXPECT_GT(bases, 3);
  EXPECT_GT(deltas, 20);
  ExpectSpilledWhenBounded(*index);
  if (GetParam() > 0) {
    EXPECT_GT(deltas_spilled, 20);
  }
}

TEST_P(PrimaryKeyIndexStateTest, ADeltaHoldsOnlyTheKeysChangedSinceTheLastSave) {
  auto index = New();
  uint32_t f = index->InternFile("f.parquet");
  ASSERT_OK(LoadRange(index.get(), f, 0, 1000));
  ASSERT_TRUE(index->needs_full_state());
  ASSERT_OK_AND_ASSIGN(std::string base, StateOf(*index, true));
  index->MarkSaved();
  EXPECT_FALSE(index->needs_full_state());
  index->Upsert("7", {index->InternFile("g.parquet"), 0});
  index->Delete("8");
  EXPECT_EQ(index->unsaved(), 2u);
  ASSERT_OK_AND_ASSIGN(std::string delta, StateOf(*index, false));
  EXPECT_LT(delta.size() * 50, base.size());
  ASSERT_OK(index->CommitPending());
  index->MarkSaved();
  auto restored = New();
  ASSERT_OK(RestoreInto(restored.get(), {base, delta}));
  EXPECT_EQ(restored->size(), 999u);
  EXPECT_FALSE(At(*restored, "8").has_value());
  EXPECT_EQ(restored->FilePath(At(*restored, "7")->file), "g.parquet");
  EXPECT_EQ(At(*restored, "9")->pos, 9);
  ExpectSpilledWhenBounded(*restored);
}

// Keep keeps only a spilled index that is its last saved state (nothing
// pending, nothing since MarkSaved); Reopen over its store and manifest is
// that state again, reading none of the store, and a damaged manifest is
// kCorruption that leaves the index empty.
TEST_P(PrimaryKeyIndexStateTest, AKeptIndexReopensAsItsLastSavedStateAndOnlyThat) {
  const std::string dir = testing::TempPath("pk-kept");
  PrimaryKeyIndex index(GetParam(), dir);
  // (Files no row is in any more: their ids become gaps.)
  for (int i = 0; i < 3; ++i) index.InternFile(fmt::format("gone-{}.parquet", i));
  uint32_t f = index.InternFile("f.parquet");
  ASSERT_OK(LoadRange(&index, f, 0, 1000));
  ASSERT_OK(index.Load("5", {f, 1005}));  // a key loaded twice
  index.MarkSaved();
  index.Upsert("7", {index.InternFile("g.parquet"), 0});
  std::string manifest;
  ASSERT_OK_AND_ASSIGN(bool kept, index.Keep(&manifest));
  EXPECT_FALSE(kept) << "a change is pending";
  ASSERT_OK(index.CommitPending());
  ASSERT_OK_AND_ASSIGN(kept, index.Keep(&manifest));
  EXPECT_FALSE(kept) << "a change since the last save";
  index.MarkSaved();
  ASSERT_OK_AND_ASSIGN(kept, index.Keep(&manifest));
  EXPECT_EQ(kept, GetParam() > 0) << "only a spilled index keeps its store";
  EXPECT_EQ(index.size(), kept ? 0u : 1000u);
  if (!kept) return;

  PrimaryKeyIndex reopened(GetParam(), dir);
  std::string damaged = manifest;
  damaged[damaged.size() / 2] ^= 0x40;
  damaged.pop_back();
  EXPECT_EQ(reopened.Reopen(damaged).code(), StatusCode::kCorruption);
  EXPECT_EQ(reopened.size(), 0u);
  ASSERT_OK(reopened.Reopen(manifest));
  EXPECT_EQ(reopened.size(), 1000u);
  EXPECT_TRUE(reopened.spilled());
  EXPECT_FALSE(reopened.needs_full_state());
  EXPECT_EQ(reopened.unsaved(), 0u);
  EXPECT_EQ(reopened.FilePath(At(reopened, "7")->file), "g.parquet");
  EXPECT_EQ(At(reopened, "9")->pos, 9);
  EXPECT_EQ(At(reopened, "9")->file, f) << "ids keep their numbers";
  EXPECT_EQ(reopened.FilePath(f), "f.parquet");
  EXPECT_EQ(reopened.FilePath(0), "");
  EXPECT_FALSE(reopened.FileId("gone-0.parquet").has_value());
  EXPECT_GT(reopened.InternFile("new.parquet"), At(reopened, "7")->file);
  ExpectCountsMatchRows(reopened);
  // The duplicate came along: the key's next change deletes both rows.
  reopened.Upsert("5", {reopened.InternFile("h.parquet"), 0});
  EXPECT_EQ(NamedDeletes(reopened),
            (std::vector<std::pair<std::string, int64_t>>{{"f.parquet", 5}, {"f.parquet", 1005}}));

  // Kept again, but a store made since in its folder is not taken for it.
  reopened.DiscardPending();
  std::string again;
  ASSERT_OK_AND_ASSIGN(kept, reopened.Keep(&again));
  ASSERT_TRUE(kept);
  {
    ASSERT_OK_AND_ASSIGN(auto other, state::SpillStore::Open(dir, 1 << 20));
    ASSERT_OK(state::SpillStore::Keep(std::move(other)));
  }
  PrimaryKeyIndex third(GetParam(), dir);
  EXPECT_EQ(third.Reopen(again).code(), StatusCode::kCorruption);
  EXPECT_EQ(third.size(), 0u);
}

// The files of rows long compacted away keep their ids (the store's values
// hold them): an index whose ids are mostly such gaps is not kept, so that
// the next start's restore numbers its files anew.
TEST_P(PrimaryKeyIndexStateTest, AnIndexOfMostlyForgottenFilesIsNotKept) {
  if (GetParam() == 0) GTEST_SKIP() << "an index in memory keeps nothing";
  PrimaryKeyIndex index(GetParam(), testing::TempPath("pk-gaps"));
  for (int i = 0; i < 5000; ++i) index.InternFile(fmt::format("gone-{}.parquet", i));
  uint32_t f = index.InternFile("f.parquet");
  ASSERT_OK(LoadRange(&index, f, 0, 1000));
  index.MarkSaved();
  std::string manifest;
  ASSERT_OK_AND_ASSIGN(bool kept, index.Keep(&manifest));
  EXPECT_FALSE(kept);
  EXPECT_EQ(index.size(), 1000u);
}

TEST_P(PrimaryKeyIndexStateTest, ManyKeysChangedSinceTheLastSaveMakeTheNextStateABase) {
  auto index = New();
  uint32_t f = index->InternFile("f.parquet");
  ASSERT_OK(LoadRange(index.get(), f, 0, 20000));
  index->MarkSaved();
  uint32_t g = index->InternFile("g.parquet");
  for (int k = 0; k < 4000; ++k) index->Upsert(std::to_string(k), {g, k});
  ASSERT_OK(index->CommitPending());  // (no state written for it)
  EXPECT_FALSE(index->needs_full_state());
  EXPECT_EQ(index->unsaved(), 4000u);
  for (int k = 4000; k < 6000; ++k) index->Upsert(std::to_string(k), {g, k});
  ASSERT_OK(index->CommitPending());
  // A quarter of the keys: the set of them is dropped and a base follows.
  EXPECT_TRUE(index->needs_full_state());
  EXPECT_EQ(index->unsaved(), 0u);
  ASSERT_OK_AND_ASSIGN(std::string base, StateOf(*index, true));
  auto restored = New();
  ASSERT_OK(RestoreInto(restored.get(), {base}));
  EXPECT_EQ(restored->size(), 20000u);
  EXPECT_EQ(At(*restored, "5999"), (RowLocation{restored->FileId("g.parquet").value_or(99), 5999}));
  EXPECT_EQ(At(*restored, "6000")->pos, 6000);
}

TEST_P(PrimaryKeyIndexStateTest, ADeltaCannotFollowARebuild) {
  auto index = New();
  ASSERT_OK(index->Load("a", {index->InternFile("f.parquet"), 0}));
  ASSERT_ERROR(StateOf(*index, false), StatusCode::kInternal, "rebuilt");
}

TEST_P(PrimaryKeyIndexStateTest, ATruncatedOrDamagedStateIsCorruptionNamingTheRecord) {
  auto index = New();
  uint32_t f = index->InternFile("f.parquet");
  ASSERT_OK(LoadRange(index.get(), f, 0, 20));
  ASSERT_OK_AND_ASSIGN(std::string bytes, StateOf(*index, true));
  for (size_t n = 0; n < bytes.size(); ++n) {
    auto restored = New();
    Status st = RestoreInto(restored.get(), {bytes.substr(0, n)});
    ASSERT_EQ(st.code(), StatusCode::kCorruption) << n << ": " << st.ToString();
  }
  auto restored = New();
  ASSERT_ERROR(RestoreInto(restored.get(), {bytes + "x"}), StatusCode::kCorruption,
               "after the end");
  std::string unnamed = bytes;
  unnamed[5] = 2;  // the file record's tag: a row naming a file never named
  ASSERT_ERROR(RestoreInto(restored.get(), {unnamed}), StatusCode::kCorruption, "record 0");
  std::string header = bytes;
  header[4] = 9;  // no such kind
  ASSERT_ERROR(RestoreInto(restored.get(), {header}), StatusCode::kCorruption, "bad header");
  // A chain is a base, then deltas.
  ASSERT_ERROR(RestoreInto(restored.get(), {bytes, bytes}), StatusCode::kCorruption,
               "a base where a delta belongs");
  index->MarkSaved();
  ASSERT_OK_AND_ASSIGN(std::string delta, StateOf(*index, false));
  ASSERT_ERROR(RestoreInto(restored.get(), {delta}), StatusCode::kCorruption,
               "a delta where a base belongs");
}

}  // namespace
}  // namespace sluice::operators
