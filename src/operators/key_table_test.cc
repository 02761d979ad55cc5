// KeyTable against a std::unordered_map model: random inserts, updates and
// erases (probe runs that wrap, erased slots moved back, the arena
// compacted), and keys of any length.
#include "operators/key_table.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <unordered_map>

namespace sluice::operators {
namespace {

void ExpectSame(const KeyTable& table, const std::unordered_map<std::string, RowLocation>& model) {
  ASSERT_EQ(table.size(), model.size());
  for (const auto& [key, at] : model) {
    const RowLocation* found = table.Find(key);
    ASSERT_NE(found, nullptr) << key;
    EXPECT_EQ(*found, at) << key;
  }
  size_t seen = 0;
  table.ForEach([&](std::string_view key, const RowLocation& at) {
    ++seen;
    auto it = model.find(std::string(key));
    ASSERT_NE(it, model.end()) << key;
    EXPECT_EQ(it->second, at);
  });
  EXPECT_EQ(seen, model.size());
}

TEST(KeyTableTest, SeededHashDependsOnEveryByteOfKeysOfEveryLength) {
  // Lengths past two words cover each tail (n % 8 of 0..7) after whole words.
  std::mt19937_64 random(7);
  for (size_t n = 0; n <= 24; ++n) {
    std::string key(n, '\0');
    for (char& c : key) c = static_cast<char>(random());
    const uint64_t h = SeededHash(42, key);
    EXPECT_NE(h, 0u);
    EXPECT_EQ(SeededHash(42, key), h) << n;
    EXPECT_NE(SeededHash(43, key), h) << n;
    for (size_t i = 0; i < n; ++i) {
      for (int bit : {0, 7}) {
        std::string changed = key;
        changed[i] = static_cast<char>(changed[i] ^ (1 << bit));
        EXPECT_NE(SeededHash(42, changed), h)
            << "length " << n << ", byte " << i << ", bit " << bit;
      }
    }
    // A key and the same key with a zero byte more differ (the length counts).
    EXPECT_NE(SeededHash(42, key + std::string(1, '\0')), h) << n;
  }
}

TEST(KeyTableTest, TheHashOfAValidValueIsTheHashOfTheKeyBuiltFromIt) {
  // The key AppendValueKey builds: a byte 1, then the value's bytes.
  auto built = [](const void* value, size_t width) {
    std::string key(1, '\1');
    key.append(static_cast<const char*>(value), width);
    return key;
  };
  std::mt19937_64 random(11);
  std::vector<uint64_t> values = {
      0, 1, 0xff, uint64_t{1} << 56, ~uint64_t{0}, uint64_t{0x8000000000000000}};
  for (int i = 0; i < 1000; ++i) values.push_back(random());
  for (uint64_t seed : {uint64_t{0}, uint64_t{42}, ~uint64_t{0}}) {
    for (uint64_t v : values) {
      EXPECT_EQ(SeededHashOfValidValue<8>(seed, v), SeededHash(seed, built(&v, 8)))
          << "seed " << seed << ", 8 bytes " << v;
      const uint32_t narrow = static_cast<uint32_t>(v >> 7);
      EXPECT_EQ(SeededHashOfValidValue<4>(seed, narrow), SeededHash(seed, built(&narrow, 4)))
          << "seed " << seed << ", 4 bytes " << narrow;
    }
  }
}

TEST(KeyTableTest, AgreesWithAMapThroughInsertsUpdatesAndErases) {
  std::mt19937_64 rng(42);
  KeyTable table;
  std::unordered_map<std::string, RowLocation> model;
  for (int step = 0; step < 400'000; ++step) {
    // Few distinct keys at first (long runs, wrapping probes), then many.
    uint64_t range = step < 100'000 ? 300 : 50'000;
    std::string key = "k" + std::to_string(rng() % range);
    if (rng() % 8 == 0) key += std::string(rng() % 40, 'x');  // longer keys too
    RowLocation at{static_cast<uint32_t>(rng() % 7), static_cast<int64_t>(step)};
    switch (rng() % 3) {
      case 0: {
        auto [row, added] = table.Insert(key, at);
        auto [it, model_added] = model.try_emplace(key, at);
        ASSERT_EQ(added, model_added) << key;
        ASSERT_EQ(*row, it->second);
        break;
      }
      case 1:
        if (RowLocation* row = table.Find(key)) {
          *row = at;
          model.at(key) = at;
        } else {
          ASSERT_EQ(model.count(key), 0u) << key;
        }
        break;
      default: ASSERT_EQ(table.Erase(key), model.erase(key) == 1) << key;
    }
    if (step % 50'000 == 0) ExpectSame(table, model);
  }
  ExpectSame(table, model);
  // Erasing nearly everything compacts the arena; what is left is intact.
  std::vector<std::string> keys;
  for (const auto& [key, at] : model) keys.push_back(key);
  for (size_t i = 0; i + 10 < keys.size(); ++i) {
    ASSERT_TRUE(table.Erase(keys[i]));
    model.erase(keys[i]);
  }
  ExpectSame(table, model);
  table.Clear();
  EXPECT_EQ(table.size(), 0u);
  EXPECT_EQ(table.Find(keys.back()), nullptr);
}

TEST(KeyTableTest, EntriesCopiedInAnotherTablesOrderDoNotPileUp) {
  // A commit moves the pending table's keys into the committed one in the
  // pending table's slot order. With one hash for both, a growing table
  // smaller than the source receives them sorted by slot, twice over the
  // same slots, and the second sweep piles them into one ever longer run
  // (10 M keys took 13 minutes). 600,000 keys in 2^20 slots; 380,000 of
  // them, in that order, into a table of 2^19 slots (under 3/4 full).
  KeyTable from;
  for (int64_t i = 0; i < 600'000; ++i) {
    std::string key(9, '\1');
    std::memcpy(key.data() + 1, &i, 8);
    from.Insert(key, {0, i});
  }
  KeyTable to;
  size_t copied = 0;
  from.ForEach([&](std::string_view key, const RowLocation& at) {
    if (copied++ < 380'000) to.Insert(key, at);
  });
  EXPECT_EQ(to.size(), 380'000u);
  EXPECT_LT(from.MeanDisplacement(), 3.0);
  EXPECT_LT(to.MeanDisplacement(), 3.0);
}

TEST(KeyTableTest, KeysOfAnyLengthIncludingEmptyAndHuge) {
  KeyTable table;
  std::string huge(size_t{1} << 24, 'h');  // past the length a slot holds inline
  std::string huge2 = huge + "2";
  EXPECT_TRUE(table.Insert("", {1, 1}).second);
  EXPECT_TRUE(table.Insert(huge, {2, 2}).second);
  EXPECT_TRUE(table.Insert(huge2, {3, 3}).second);
  EXPECT_TRUE(table.Insert(std::string(1, '\0'), {4, 4}).second);
  EXPECT_FALSE(table.Insert(huge, {9, 9}).second);
  EXPECT_EQ(*table.Find(""), (RowLocation{1, 1}));
  EXPECT_EQ(*table.Find(huge), (RowLocation{2, 2}));
  EXPECT_EQ(*table.Find(huge2), (RowLocation{3, 3}));
  EXPECT_EQ(*table.Find(std::string(1, '\0')), (RowLocation{4, 4}));
  EXPECT_TRUE(table.Erase(huge));
  EXPECT_EQ(table.Find(huge), nullptr);
  EXPECT_EQ(*table.Find(huge2), (RowLocation{3, 3}));
  // The arena is mostly erased keys now: it is compacted, the rest intact.
  int64_t before = table.bytes();
  EXPECT_TRUE(table.Erase(huge2));
  EXPECT_LT(table.bytes(), before / 2);
  EXPECT_EQ(*table.Find(""), (RowLocation{1, 1}));
  EXPECT_EQ(*table.Find(std::string(1, '\0')), (RowLocation{4, 4}));
  EXPECT_EQ(table.size(), 2u);
}

TEST(KeyTableTest, SortByKeyPrefixOrdersAsTheBytesDo) {
  // Keys of 0 to 12 bytes over three byte values (zeros and a byte past
  // 127 among them), so that many share their first 8 bytes, or are a
  // prefix of another, or differ only in zero padding.
  std::mt19937 rng(20261204);
  std::vector<std::string> keys;
  for (int i = 0; i < 5000; ++i) {
    std::string key(rng() % 13, '\0');
    for (char& c : key) c = "\0a\xf0"[rng() % 3];
    keys.push_back(key);
  }
  std::vector<std::string_view> sorted(keys.begin(), keys.end());
  SortByKeyPrefix(&sorted, [](std::string_view k) { return k; });
  std::vector<std::string> want = keys;
  std::sort(want.begin(), want.end());
  EXPECT_EQ(std::vector<std::string>(sorted.begin(), sorted.end()), want);
}

TEST(KeyTableTest, ReserveMakesRoomWithoutChangingEntries) {
  KeyTable table;
  table.Insert("a", {1, 2});
  table.Reserve(100'000);
  int64_t bytes = table.bytes();
  for (int i = 0; i < 100'000; ++i) table.Insert(std::to_string(i), {0, i});
  EXPECT_GE(table.bytes(), bytes);
  EXPECT_EQ(*table.Find("a"), (RowLocation{1, 2}));
  EXPECT_EQ(table.Find("99999")->pos, 99999);
  EXPECT_EQ(table.size(), 100'001u);
}

TEST(KeyTableTest, ReserveWithinMakesRoomForWhatFitsAndNeverGoesPastItsBytes) {
  // All of them fit: room for all.
  KeyTable fits;
  fits.ReserveWithin(1000, int64_t{1} << 20, 16);
  EXPECT_GE(fits.bytes(), KeyTable::SlotBytesFor(1000));
  // Not all of them fit: the most slots that do, with 16 bytes a key.
  KeyTable some;
  some.ReserveWithin(1'000'000, int64_t{1} << 20, 16);
  // (16,384 slots: 512 KiB, and their 12,288 keys' 192 KiB of arena fit;
  // twice the slots alone would take it all.)
  EXPECT_LE(some.bytes(), int64_t{1} << 20);
  EXPECT_GE(some.bytes(), int64_t{512} << 10);
  for (int i = 0; i < 1000; ++i) some.Insert(std::to_string(i), {0, i});
  EXPECT_EQ(some.Find("999")->pos, 999);
  // A table whose arena already holds most of its bytes (long keys, cleared
  // with its room kept) counts that arena: reserving never takes it past
  // its bytes.
  KeyTable held;
  for (int i = 0; i < 3000; ++i) held.Insert(std::string(300, 'k') + std::to_string(i), {0, i});
  held.Clear(/*keep_room=*/true);
  const int64_t limit = held.bytes() + (int64_t{256} << 10);
  held.ReserveWithin(1'000'000, limit, 16);
  EXPECT_LE(held.bytes(), limit);
  EXPECT_GT(held.bytes(), limit - (int64_t{256} << 10));  // (some room was taken)
  // One already past its bytes is left as it is.
  const int64_t before = held.bytes();
  held.ReserveWithin(1'000'000, before / 2, 16);
  EXPECT_EQ(held.bytes(), before);
}

}  // namespace
}  // namespace sluice::operators
