// GroupTable against a std::map model: random inserts and erases (probe runs
// that wrap, erased slots moved back, entry numbers reused), its sorted
// order, and entries that stay where they are while others come and go.
#include "operators/group_table.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>

namespace sluice::operators {
namespace {

using Table = GroupTable<int64_t>;

void ExpectSame(Table& table, const std::map<std::string, int64_t>& model) {
  ASSERT_EQ(table.size(), model.size());
  for (const auto& [key, value] : model) {
    Table::Entry* e = table.Find(key);
    ASSERT_NE(e, nullptr) << key;
    EXPECT_TRUE(e->live);
    EXPECT_EQ(e->key, key);
    EXPECT_EQ(e->value, value) << key;
  }
  std::vector<Table::Entry*> sorted = table.Sorted();
  ASSERT_EQ(sorted.size(), model.size());
  auto it = model.begin();
  for (const Table::Entry* e : sorted) {
    EXPECT_EQ(e->key, it->first);
    EXPECT_EQ(e->value, it->second);
    ++it;
  }
}

// Fixed seeds: the same slot layouts run after run.
class GroupTableSeedTest : public ::testing::TestWithParam<uint64_t> {};

TEST_P(GroupTableSeedTest, AgreesWithAnOrderedMapThroughInsertsAndErases) {
  std::mt19937_64 rng(7);
  Table table(GetParam());
  std::map<std::string, int64_t> model;
  for (int step = 0; step < 300'000; ++step) {
    // Few distinct keys at first (long runs, wrapping probes), then many.
    uint64_t range = step < 60'000 ? 200 : 40'000;
    std::string key = "k" + std::to_string(rng() % range);
    if (rng() % 3 == 0) {
      EXPECT_EQ(table.Erase(key), model.erase(key) == 1) << key;
      EXPECT_EQ(table.Find(key), nullptr) << key;
      continue;
    }
    auto [e, fresh] = table.Insert(key, static_cast<int64_t>(step));
    auto [m, model_fresh] = model.try_emplace(key, step);
    ASSERT_EQ(fresh, model_fresh) << key;
    EXPECT_EQ(e->value, m->second) << key;  // an insert of a present key changes nothing
    if (step % 50'000 == 0) ExpectSame(table, model);
  }
  ExpectSame(table, model);
  while (!model.empty()) {
    EXPECT_TRUE(table.Erase(model.begin()->first));
    model.erase(model.begin());
  }
  ExpectSame(table, model);
  EXPECT_TRUE(table.empty());
}

INSTANTIATE_TEST_SUITE_P(Seeds, GroupTableSeedTest, ::testing::Values(1, 2, 0x9e3779b97f4a7c15));

TEST(GroupTableTest, SortsKeysInByteOrderWhateverTheirLengthAndPrefix) {
  Table table;
  std::map<std::string, int64_t> model;
  // Keys sharing 8-byte prefixes, a prefix of another key, empty, with zero
  // and high bytes.
  std::vector<std::string> keys = {"",         "a",         "abcdefgh",  "abcdefgh\x01",
                                   "abcdefgh", "abcdefghZ", "abcdefgha", std::string("\0", 1),
                                   "\xff",     "abcdefg",   "b"};
  int64_t v = 0;
  for (const std::string& k : keys) {
    table.Insert(k, v + 0);
    model.try_emplace(k, v);
    ++v;
  }
  ExpectSame(table, model);
}

TEST(GroupTableTest, AnEntryStaysAtItsAddressUntilErasedAndItsNumberIsReused) {
  Table table;
  Table::Entry* first = table.Insert("first", 1).first;
  for (int i = 0; i < 10'000; ++i) table.Insert("k" + std::to_string(i), i + 0);
  EXPECT_EQ(table.Find("first"), first);  // the table grew around it
  EXPECT_EQ(first->value, 1);
  ASSERT_TRUE(table.Erase("first"));
  EXPECT_FALSE(first->live);
  EXPECT_FALSE(table.Erase("first"));
  // The next new key takes the erased entry's place.
  Table::Entry* again = table.Insert("again", 2).first;
  EXPECT_EQ(again, first);
  EXPECT_TRUE(again->live);
  EXPECT_EQ(again->key, "again");
  EXPECT_EQ(table.size(), 10'001u);
}

TEST(GroupTableTest, AMovedFromTableIsEmptyAndUsable) {
  Table table;
  for (int i = 0; i < 100; ++i) table.Insert(std::to_string(i), i + 0);
  Table moved(std::move(table));
  EXPECT_EQ(moved.size(), 100u);
  EXPECT_TRUE(table.empty());  // NOLINT(bugprone-use-after-move): the contract
  EXPECT_EQ(table.Find("1"), nullptr);
  EXPECT_TRUE(table.Sorted().empty());
  table.Insert("x", 5);
  EXPECT_EQ(table.Find("x")->value, 5);
  table = std::move(moved);
  EXPECT_EQ(table.size(), 100u);
  EXPECT_EQ(table.Find("42")->value, 42);
}

}  // namespace
}  // namespace sluice::operators
