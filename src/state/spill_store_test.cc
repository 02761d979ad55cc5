// SpillStore: ordered keys, buffered writes, and a folder that goes with it.
#include "state/spill_store.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "common/testing.h"

namespace sluice::state {
namespace {

TEST(SpillStoreTest, KeepsKeysInByteOrderAndForgetsRanges) {
  ASSERT_OK_AND_ASSIGN(auto store, SpillStore::Open(testing::TempPath("store-store"), 4 << 20));
  for (std::string k : {"b2", "a", "b1", "c"}) store->Put(k, "v" + k);
  ASSERT_OK(store->Flush());
  std::string v;
  ASSERT_OK_AND_ASSIGN(bool found, store->Get("b1", &v));
  EXPECT_TRUE(found);
  EXPECT_EQ(v, "vb1");
  store->DeleteRange("b", "b2");
  store->Delete("c");
  ASSERT_OK(store->Flush());
  std::vector<std::string> keys;
  for (auto c = store->Scan("a", "z"); c->Valid(); c->Next()) keys.emplace_back(c->key());
  EXPECT_EQ(keys, (std::vector<std::string>{"a", "b2"}));
  auto cursor = store->Scan("a", "");
  cursor->Seek("b");
  ASSERT_TRUE(cursor->Valid());
  EXPECT_EQ(cursor->key(), "b2");
  store->Put("b3", "new");
  ASSERT_OK(store->Flush());
  cursor->Next();
  EXPECT_FALSE(cursor->Valid()) << "a cursor sees the store as it was when it was made";
  cursor.reset();  // (before its store)
  ASSERT_OK_AND_ASSIGN(found, store->Get("c", &v));
  EXPECT_FALSE(found);
  std::vector<std::string> got;
  ASSERT_OK(
      store->GetSorted({"a", "b1", "b2", "b3", "c"}, [&](size_t i, const std::string_view* v) {
        got.push_back(fmt::format("{}={}", i, v == nullptr ? "-" : *v));
        return Status::OK();
      }));
  EXPECT_EQ(got, (std::vector<std::string>{"0=va", "1=-", "2=vb2", "3=new", "4=-"}));
  std::string dir = store->dir();
  store.reset();
  EXPECT_FALSE(std::filesystem::exists(dir)) << "a store is a cache: it goes with its operator";
}

TEST(SpillStoreTest, OpenWipesWhatAnEarlierRunLeft) {
  std::string dir = testing::TempPath("store-wipe");
  std::filesystem::create_directories(dir);
  { std::ofstream(dir + "/leftover") << "x"; }
  ASSERT_OK_AND_ASSIGN(auto store, SpillStore::Open(dir, 4 << 20));
  EXPECT_FALSE(std::filesystem::exists(dir + "/leftover"));
  std::string v;
  ASSERT_OK_AND_ASSIGN(bool found, store->Get("a", &v));
  EXPECT_FALSE(found);
}

}  // namespace
}  // namespace sluice::state
