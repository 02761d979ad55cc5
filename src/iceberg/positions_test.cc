#include "iceberg/positions.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>

namespace sluice::iceberg {
namespace {

std::set<int64_t> AsSet(const PositionSet& p) { return {p.begin(), p.end()}; }

TEST(PositionSetTest, PositionsInAnyOrderAreSortedWithoutRepeats) {
  PositionSet p{7, 3, 3, 0, 7, 12};
  EXPECT_EQ(p.values(), (std::vector<int64_t>{0, 3, 7, 12}));
  EXPECT_TRUE(p.Contains(3));
  EXPECT_FALSE(p.Contains(4));
  EXPECT_EQ(PositionSet(std::vector<int64_t>{1, 1, 2}).values(), (std::vector<int64_t>{1, 2}));
  EXPECT_TRUE(PositionSet{}.empty());
}

TEST(PositionSetTest, UnionsAndDifferencesAgreeWithAStdSet) {
  std::mt19937_64 rng(11);
  for (int round = 0; round < 200; ++round) {
    // Small ranges make overlaps; some rounds append past the end or are empty.
    const int64_t range = round % 3 == 0 ? 50 : 5000;
    auto random_set = [&](size_t n, int64_t offset) {
      std::vector<int64_t> v;
      for (size_t i = 0; i < n; ++i) v.push_back(offset + static_cast<int64_t>(rng() % range));
      return PositionSet(std::move(v));
    };
    PositionSet a = random_set(rng() % 300, 0);
    PositionSet b = random_set(rng() % 300, round % 4 == 0 ? range : 0);
    std::set<int64_t> want_union = AsSet(a), want_minus = AsSet(a);
    want_union.insert(b.begin(), b.end());
    for (int64_t v : b) want_minus.erase(v);

    PositionSet u = a;
    u.Add(b);
    EXPECT_EQ(AsSet(u), want_union) << "round " << round;
    EXPECT_TRUE(std::is_sorted(u.begin(), u.end()));
    EXPECT_EQ(u.size(), want_union.size());
    PositionSet d = a;
    d.Remove(b);
    EXPECT_EQ(AsSet(d), want_minus) << "round " << round;
    EXPECT_EQ(d.size(), want_minus.size());
  }
}

TEST(PositionSetTest, SortedRunsMergeAsASortWould) {
  std::mt19937_64 rng(5);
  for (size_t runs = 0; runs < 20; ++runs) {
    std::vector<int64_t> v;
    std::vector<size_t> bounds{0};
    for (size_t r = 0; r < runs; ++r) {
      std::vector<int64_t> run(rng() % 50);  // empty runs too
      for (int64_t& p : run) p = static_cast<int64_t>(rng() % 100);
      std::sort(run.begin(), run.end());
      v.insert(v.end(), run.begin(), run.end());
      bounds.push_back(v.size());
    }
    std::vector<int64_t> want = v;
    std::sort(want.begin(), want.end());
    MergeSortedRuns(&v, bounds);
    EXPECT_EQ(v, want) << runs << " runs";
  }
}

}  // namespace
}  // namespace sluice::iceberg
