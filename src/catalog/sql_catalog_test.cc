#include "catalog/sql_catalog.h"

#include <unistd.h>

#include <filesystem>
#include <thread>

#include "common/testing.h"

namespace sluice::catalog {
namespace {

namespace fs = std::filesystem;

// Runs on SQLite always, and on a real PostgreSQL server when
// SLUICE_TEST_POSTGRES_URI is set (tests/with_postgres.sh starts a throwaway
// server and sets it; ctest's catalog_postgres_test does that).
class SqlCatalogTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("sluice_catalog_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    if (GetParam() == "postgres") {
      const char* uri = std::getenv("SLUICE_TEST_POSTGRES_URI");
      if (uri == nullptr) GTEST_SKIP() << "SLUICE_TEST_POSTGRES_URI not set";
      path_ = uri;
      ASSERT_OK_AND_ASSIGN(auto conn, OpenPostgres(path_));
      ASSERT_OK(conn->Execute("DROP TABLE IF EXISTS iceberg_tables", {}));
      ASSERT_OK(conn->Execute("DROP TABLE IF EXISTS iceberg_namespace_properties", {}));
    } else {
      path_ = (dir_ / "catalog.db").string();
    }
    ASSERT_OK_AND_ASSIGN(catalog_, OpenCatalog(path_));
  }
  void TearDown() override { fs::remove_all(dir_); }

  TableIdent T(const std::string& s) { return TableIdent::Parse(s).ValueOr(TableIdent{}); }

  fs::path dir_;
  std::string path_;
  std::unique_ptr<Catalog> catalog_;
};

TEST_P(SqlCatalogTest, NamespacesAndTables) {
  ASSERT_OK(catalog_->CreateNamespace({"db"}, {{"owner", "me"}}));
  ASSERT_ERROR(catalog_->CreateNamespace({"db"}, {}), StatusCode::kAlreadyExists, "db");
  ASSERT_OK_AND_ASSIGN(auto props, catalog_->NamespaceProperties({"db"}));
  EXPECT_EQ(props, (std::map<std::string, std::string>{{"owner", "me"}}));  // "exists" hidden

  ASSERT_OK(catalog_->CreateTable(T("db.events"), "/w/db/events/metadata/00000-a.metadata.json"));
  ASSERT_ERROR(catalog_->CreateTable(T("db.events"), "x"), StatusCode::kAlreadyExists, "db.events");
  ASSERT_ERROR(catalog_->CreateTable(T("nope.t"), "x"), StatusCode::kNotFound, "nope");
  ASSERT_OK_AND_ASSIGN(std::string loc, catalog_->LoadTable(T("db.events")));
  EXPECT_EQ(loc, "/w/db/events/metadata/00000-a.metadata.json");
  ASSERT_OK_AND_ASSIGN(auto tables, catalog_->ListTables({"db"}));
  ASSERT_EQ(tables.size(), 1u);
  EXPECT_EQ(tables[0].ToString(), "db.events");

  ASSERT_ERROR(catalog_->DropNamespace({"db"}), StatusCode::kInvalidArgument, "not empty");
  ASSERT_OK(catalog_->CreateNamespace({"other"}, {}));
  ASSERT_OK(catalog_->RenameTable(T("db.events"), T("other.ev")));
  ASSERT_ERROR(catalog_->LoadTable(T("db.events")), StatusCode::kNotFound, "db.events");
  ASSERT_OK(catalog_->DropTable(T("other.ev")));
  ASSERT_ERROR(catalog_->DropTable(T("other.ev")), StatusCode::kNotFound, "other.ev");
  ASSERT_OK(catalog_->DropNamespace({"db"}));
  ASSERT_OK_AND_ASSIGN(auto nss, catalog_->ListNamespaces());
  EXPECT_EQ(nss, (std::vector<std::vector<std::string>>{{"other"}}));
}

TEST_P(SqlCatalogTest, NamespacePropertiesAreSetAndRemovedInOneTransaction) {
  ASSERT_OK(catalog_->CreateNamespace({"db"}, {{"a", "1"}, {"b", "2"}}));
  ASSERT_OK_AND_ASSIGN(auto missing, catalog_->UpdateNamespaceProperties(
                                         {"db"}, {{"b", "3"}, {"c", "4"}}, {"a", "zz"}));
  EXPECT_EQ(missing, std::vector<std::string>{"zz"});
  ASSERT_OK_AND_ASSIGN(auto props, catalog_->NamespaceProperties({"db"}));
  EXPECT_EQ(props, (std::map<std::string, std::string>{{"b", "3"}, {"c", "4"}}));
  ASSERT_ERROR(catalog_->UpdateNamespaceProperties({"db"}, {{"b", "5"}}, {"b"}),
               StatusCode::kInvalidArgument, "both set and removed");
  ASSERT_ERROR(catalog_->UpdateNamespaceProperties({"db"}, {{"exists", "no"}}, {}),
               StatusCode::kInvalidArgument, "reserved");
  ASSERT_ERROR(catalog_->UpdateNamespaceProperties({"nope"}, {{"x", "1"}}, {}),
               StatusCode::kNotFound, "nope");
  ASSERT_OK_AND_ASSIGN(auto nss, catalog_->ListNamespaces());
  EXPECT_EQ(nss, (std::vector<std::vector<std::string>>{{"db"}}));  // "nope" not made
}

TEST_P(SqlCatalogTest, UnsafeNamesAreRejected) {
  for (const char* bad : {"db..x", "db/x.t", "db.a/b", "noNamespace", "db.", ".t", "db.t\n"}) {
    EXPECT_FALSE(TableIdent::Parse(bad).ok()) << bad;
  }
  ASSERT_ERROR(TableIdent::Parse("a..b"), StatusCode::kInvalidArgument, "'..'");
  ASSERT_ERROR(catalog_->CreateNamespace({".."}, {}), StatusCode::kInvalidArgument, "'..'");
  ASSERT_OK_AND_ASSIGN(TableIdent nested, TableIdent::Parse("a.b.c"));
  EXPECT_EQ(nested.ns, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(nested.name, "c");
}

TEST_P(SqlCatalogTest, CompareAndSwapAndMultiTableAtomicity) {
  ASSERT_OK(catalog_->CreateNamespace({"db"}, {}));
  ASSERT_OK(catalog_->CreateTable(T("db.a"), "a0"));
  ASSERT_OK(catalog_->CreateTable(T("db.b"), "b0"));
  ASSERT_OK(catalog_->CommitTable({T("db.a"), "a0", "a1"}));
  ASSERT_ERROR(catalog_->CommitTable({T("db.a"), "a0", "a2"}), StatusCode::kConflict, "db.a");
  // b's expectation is stale: neither pointer may move.
  ASSERT_ERROR(catalog_->CommitTables({{T("db.a"), "a1", "a2"}, {T("db.b"), "stale", "b1"}}),
               StatusCode::kConflict, "db.b");
  EXPECT_EQ(catalog_->LoadTable(T("db.a")).ValueOr(""), "a1");
  EXPECT_EQ(catalog_->LoadTable(T("db.b")).ValueOr(""), "b0");
  ASSERT_OK(catalog_->CommitTables({{T("db.a"), "a1", "a2"}, {T("db.b"), "b0", "b1"}}));
  EXPECT_EQ(catalog_->LoadTable(T("db.a")).ValueOr(""), "a2");
  EXPECT_EQ(catalog_->LoadTable(T("db.b")).ValueOr(""), "b1");
}

// Several connections (as several processes would) race read-then-CAS loops:
// every increment lands exactly once.
TEST_P(SqlCatalogTest, ConcurrentCompareAndSwapLosesNothing) {
  ASSERT_OK(catalog_->CreateNamespace({"db"}, {}));
  ASSERT_OK(catalog_->CreateTable(T("db.counter"), "0"));
  constexpr int kThreads = 4, kCommits = 25;
  std::vector<std::thread> threads;
  std::atomic<int> conflicts{0}, failures{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      auto c = OpenCatalog(path_);
      if (!c.ok()) {
        ++failures;
        return;
      }
      for (int i = 0; i < kCommits; ++i) {
        while (true) {
          auto cur = (*c)->LoadTable(T("db.counter"));
          if (!cur.ok()) {
            ++failures;
            return;
          }
          std::string next = std::to_string(std::stoi(*cur) + 1);
          Status st = (*c)->CommitTable({T("db.counter"), *cur, next});
          if (st.ok()) break;
          if (st.code() != StatusCode::kConflict) {
            ++failures;
            return;
          }
          ++conflicts;
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(catalog_->LoadTable(T("db.counter")).ValueOr(""), std::to_string(kThreads * kCommits));
}

// A catalog file written by pyiceberg's SqlCatalog opens and lists its table.
TEST_P(SqlCatalogTest, OpensPyicebergCatalog) {
  if (GetParam() != "sqlite") GTEST_SKIP() << "a SQLite file";
  fs::path copy = dir_ / "pyiceberg.db";
  fs::copy_file("../shared/fixtures/iceberg/duckdb-iceberg/partition_time/pyiceberg_catalog.db",
                copy);
  ASSERT_OK_AND_ASSIGN(auto c, OpenCatalog(copy.string(), "default"));
  ASSERT_OK_AND_ASSIGN(auto nss, c->ListNamespaces());
  EXPECT_EQ(nss, (std::vector<std::vector<std::string>>{{"default"}}));
  ASSERT_OK_AND_ASSIGN(std::string loc, c->LoadTable(T("default.partition_time")));
  EXPECT_NE(loc.find("00001-44546aa6"), std::string::npos) << loc;
  // And sluice can commit to it in its layout (no iceberg_type column).
  ASSERT_OK(c->CommitTable({T("default.partition_time"), loc, "new.metadata.json"}));
  EXPECT_EQ(c->LoadTable(T("default.partition_time")).ValueOr(""), "new.metadata.json");
}

INSTANTIATE_TEST_SUITE_P(Backends, SqlCatalogTest, ::testing::Values("sqlite", "postgres"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace sluice::catalog
