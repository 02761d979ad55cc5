// CommittedKeys: the same answers in memory and spilled, within its budget.
#include "operators/committed_keys.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <random>
#include <set>

#include "common/testing.h"

namespace sluice::operators {
namespace {

std::map<std::string, RowLocation> Contents(const CommittedKeys& keys) {
  std::map<std::string, RowLocation> out;
  EXPECT_OK(keys.ForEach([&](std::string_view key, RowLocation at) {
    EXPECT_TRUE(out.emplace(std::string(key), at).second) << "twice: " << key;
  }));
  return out;
}

TEST(CommittedKeysTest, ARandomRunAgreesWithAMapInMemoryAndSpilled) {
  // 20,000 operations over 3,000 keys against a std::map, within a budget of
  // 64 KiB (the front holds a few hundred keys): every answer, the size and
  // the contents agree, and the memory stays within the budget.
  constexpr int64_t kBudget = 64 << 10;
  std::mt19937 rng(20261203);
  CommittedKeys memory, spilled(kBudget, testing::TempPath("committed-model"));
  std::map<std::string, RowLocation> model;
  for (int op = 0; op < 20000; ++op) {
    std::string key = "k" + std::to_string(rng() % 3000);
    RowLocation at{static_cast<uint32_t>(rng() % 50), static_cast<int64_t>(op)};
    auto it = model.find(key);
    for (CommittedKeys* keys : {&memory, &spilled}) {
      uint64_t hash = keys->HashOf(key);
      switch (op % 5) {
        case 0: {
          ASSERT_OK(keys->Assign(key, hash, at));
          break;
        }
        case 1: {
          RowLocation existing;
          ASSERT_OK_AND_ASSIGN(bool added, keys->Add(key, hash, at, &existing));
          ASSERT_EQ(added, it == model.end()) << key;
          if (!added) {
            ASSERT_EQ(existing, it->second) << key;
          }
          break;
        }
        case 2: {
          ASSERT_OK(keys->Erase(key, hash));
          break;
        }
        case 3:
        case 4: {  // Find, then Fetch
          ASSERT_OK_AND_ASSIGN(auto found,
                               op % 5 == 3 ? keys->Find(key, hash) : keys->Fetch(key, hash));
          ASSERT_EQ(found.has_value(), it != model.end()) << key;
          if (found) {
            ASSERT_EQ(*found, it->second) << key;
          }
          break;
        }
      }
    }
    if (op % 5 == 0 || (op % 5 == 1 && it == model.end())) model[key] = at;
    if (op % 5 == 2) model.erase(key);
    ASSERT_EQ(memory.size(), model.size()) << "op " << op;
    ASSERT_EQ(spilled.size(), model.size()) << "op " << op;
    ASSERT_LE(spilled.bytes(), kBudget) << "op " << op;
    if (op % 2500 == 0) {
      ASSERT_EQ(Contents(spilled), model) << "op " << op;
      ASSERT_EQ(Contents(memory), model) << "op " << op;
    }
  }
  EXPECT_EQ(Contents(spilled), model);
  EXPECT_FALSE(memory.spilled());
  EXPECT_TRUE(spilled.spilled());
  EXPECT_GT(spilled.spills(), 10);
  spilled.Clear();
  EXPECT_EQ(spilled.size(), 0u);
  EXPECT_FALSE(spilled.spilled());
  EXPECT_FALSE(std::filesystem::exists(testing::TempPath("committed-model")));
  EXPECT_TRUE(Contents(spilled).empty());
}

TEST(CommittedKeysTest, SortedFindsAndBlindPutsAgreeWithAMapDenseOrSparse) {
  // Random changes over 20,000 keys within 64 KiB (most of them in the
  // store, some changed or erased in the front since), and now and then, as
  // a checkpoint does, a sorted find of some keys (present, erased, never
  // there), then a Put of each of them that trusts what the find said. The
  // find is dense, 6,000 keys (more than one in 4 of the live keys: the
  // store read by a cursor), or sparse, 300 (point reads in two batches).
  // Every answer, the size and the contents
  // agree with the map; a Put that marked a key's store copy wrongly would
  // bring an erased key back or lose one.
  constexpr int64_t kBudget = 64 << 10;
  std::mt19937 rng(20261204);
  CommittedKeys keys(kBudget, testing::TempPath("committed-sorted"));
  std::map<std::string, RowLocation> model;
  int64_t spills_while_putting = 0;
  for (int op = 1; op <= 60000; ++op) {
    std::string key = fmt::format("k{}", rng() % 20000);
    uint64_t hash = keys.HashOf(key);
    if (rng() % 4 == 0) {
      ASSERT_OK(keys.Erase(key, hash));
      model.erase(key);
    } else {
      RowLocation at{static_cast<uint32_t>(rng() % 50), static_cast<int64_t>(op)};
      ASSERT_OK(keys.Assign(key, hash, at));
      model[key] = at;
    }
    if (op % 1000 != 0) continue;
    const bool dense = op % 2000 == 0;
    std::set<std::string> asked;
    while (asked.size() < (dense ? 6000u : 300u)) asked.insert(fmt::format("k{}", rng() % 22000));
    std::vector<std::string_view> sorted(asked.begin(), asked.end());
    std::vector<uint64_t> hashes;
    for (std::string_view k : sorted) hashes.push_back(keys.HashOf(k));
    const uint64_t version = keys.version();
    std::vector<int> answered(sorted.size());
    std::vector<bool> live(sorted.size());
    ASSERT_OK(keys.FindSorted(sorted, hashes, [&](size_t i, const std::optional<RowLocation>& at) {
      ++answered[i];
      live[i] = at.has_value();
      auto it = model.find(std::string(sorted[i]));
      ASSERT_EQ(at.has_value(), it != model.end()) << sorted[i] << " at op " << op;
      if (at) {
        ASSERT_EQ(*at, it->second) << sorted[i] << " at op " << op;
      }
    }));
    ASSERT_EQ(answered, std::vector<int>(sorted.size(), 1));
    ASSERT_EQ(keys.version(), version) << "a find changes nothing";
    const int64_t spills = keys.spills();
    for (size_t i = 0; i < sorted.size(); ++i) {
      std::string k(sorted[i]);
      std::optional<RowLocation> to;
      if (rng() % 3 != 0) to = RowLocation{static_cast<uint32_t>(rng() % 50), op + 100000};
      ASSERT_OK(keys.Put(k, keys.HashOf(k), to, live[i]));
      if (to) {
        model[k] = *to;
      } else {
        model.erase(k);
      }
    }
    spills_while_putting += keys.spills() - spills;
    ASSERT_EQ(keys.size(), model.size()) << "op " << op;
    ASSERT_LE(keys.bytes(), kBudget);
    if (op % 10000 == 0) {
      ASSERT_EQ(Contents(keys), model) << "op " << op;
    }
  }
  EXPECT_EQ(Contents(keys), model);
  EXPECT_GT(spills_while_putting, 30) << "the puts spilled as they went";
}

TEST(CommittedKeysTest, LongKeysKeepWithinTheBudgetToo) {
  // 300-byte keys: the front's arena, not its slots, reaches the budget.
  constexpr int64_t kBudget = 256 << 10;
  CommittedKeys keys(kBudget, testing::TempPath("committed-long"));
  for (int k = 0; k < 5000; ++k) {
    std::string key = std::string(300, 'k') + std::to_string(k);
    ASSERT_OK(keys.Assign(key, keys.HashOf(key), {1, k}));
    ASSERT_LE(keys.bytes(), kBudget) << "key " << k;
  }
  EXPECT_GT(keys.spills(), 5);
  EXPECT_EQ(keys.size(), 5000u);
  std::string last = std::string(300, 'k') + "17";
  ASSERT_OK_AND_ASSIGN(auto found, keys.Find(last, keys.HashOf(last)));
  EXPECT_EQ(found, (RowLocation{1, 17}));
}

TEST(CommittedKeysTest, AReservedFrontStaysWithinItsHalfOfTheBudget) {
  // 1,000-byte keys: the front's arena holds most of its bytes, and keeps
  // its room across spills. A reservation for many more keys (as a commit of
  // many changes makes) must leave room for that arena, whether it is told
  // the keys' size or guesses one too small.
  constexpr int64_t kBudget = 240 << 10;
  CommittedKeys keys(kBudget, testing::TempPath("committed-reserved"));
  auto key_of = [](int k) { return std::string(1000, 'k') + std::to_string(k); };
  for (int k = 0; k < 1500; ++k) {
    if (k % 37 == 36) {
      keys.Reserve(5000, k < 750 ? 16 : 1004);
      // (The front's bytes: the store's half counts once it is open.)
      ASSERT_LE(keys.bytes() - (keys.spilled() ? kBudget / 2 : 0), kBudget / 2)
          << "reserved at key " << k;
    }
    std::string key = key_of(k);
    ASSERT_OK(keys.Assign(key, keys.HashOf(key), {1, k}));
  }
  EXPECT_EQ(keys.size(), 1500u);
  int64_t found = 0;
  ASSERT_OK(keys.ForEach([&](std::string_view key, RowLocation at) {
    found += key == key_of(static_cast<int>(at.pos)) ? 1 : 0;
  }));
  EXPECT_EQ(found, 1500);
}

TEST(CommittedKeysTest, KeysWithinTheBudgetNeverOpenAStore) {
  CommittedKeys keys(int64_t{64} << 20, testing::TempPath("committed-within"));
  keys.Reserve(10000);
  for (int k = 0; k < 10000; ++k) {
    std::string key = std::to_string(k);
    ASSERT_OK(keys.Assign(key, keys.HashOf(key), {1, k}));
  }
  EXPECT_EQ(keys.size(), 10000u);
  EXPECT_FALSE(keys.spilled());
  EXPECT_FALSE(std::filesystem::exists(testing::TempPath("committed-within")));
}

TEST(CommittedKeysTest, AFailedSpillFailsEveryCallUntilCleared) {
  // The store's folder cannot be made (its parent is a file).
  CommittedKeys keys(1 << 10, "/dev/null/spill");
  Status failed;
  for (int k = 0; k < 1000 && failed.ok(); ++k) {
    std::string key = std::to_string(k);
    failed = keys.Assign(key, keys.HashOf(key), {1, k});
  }
  ASSERT_EQ(failed.code(), StatusCode::kIOError) << failed.ToString();
  EXPECT_NE(failed.message().find("/dev/null/spill"), std::string::npos) << failed.ToString();
  ASSERT_ERROR(keys.Find("0", keys.HashOf("0")).status(), StatusCode::kIOError, "spill failed");
  ASSERT_ERROR(keys.ForEach([](std::string_view, RowLocation) {}), StatusCode::kIOError,
               "spill failed");
  ASSERT_ERROR(keys.Erase("0", keys.HashOf("0")), StatusCode::kIOError, "spill failed");
  // (Keys the front still holds too.)
  for (int k = 0; k < 20; ++k) {
    std::string key = std::to_string(k);
    ASSERT_ERROR(keys.Assign(key, keys.HashOf(key), {2, k}), StatusCode::kIOError, "spill failed");
    ASSERT_ERROR(keys.Fetch(key, keys.HashOf(key)).status(), StatusCode::kIOError, "spill failed");
  }
  keys.Clear();
  ASSERT_OK_AND_ASSIGN(auto found, keys.Find("0", keys.HashOf("0")));
  EXPECT_FALSE(found.has_value());
  ASSERT_OK(keys.Assign("a", keys.HashOf("a"), {1, 1}));
  EXPECT_EQ(keys.size(), 1u);
}

}  // namespace
}  // namespace sluice::operators
