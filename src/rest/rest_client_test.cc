// sluice as a client of a REST catalog (catalog/rest_client.h) against
// sluice's REST catalog server: the library's Table commits through it, and
// what lands is what the server's own catalog holds.
#include "catalog/rest_client.h"

#include <atomic>
#include <mutex>
#include <thread>

#include "rest/idempotency.h"
#include "rest/rest_test_util.h"

namespace sluice::rest {
namespace {

class RestClientTest : public RestCatalogTest {
 protected:
  std::string Url() const { return "http://127.0.0.1:" + std::to_string(server_->port()); }
  std::unique_ptr<catalog::Catalog> Open(catalog::RestClientOptions o = {}) {
    auto c = catalog::OpenRestCatalog(Url(), *io_, o);
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    return c.ok() ? std::move(*c) : nullptr;
  }
  // A table created through `via`, as the CLI creates one.
  std::unique_ptr<catalog::Table> CreateVia(catalog::Catalog& via, const std::string& name) {
    auto schema = ParseColumnList("id BIGINT NOT NULL, kind STRING");
    EXPECT_TRUE(schema.ok());
    catalog::TableIdent id{{"db"}, name};
    auto md = iceberg::NewTableMetadata(*schema, iceberg::PartitionSpec{}, iceberg::SortOrder{},
                                        catalog::DefaultTableLocation(dir_.string(), id), {});
    EXPECT_TRUE(md.ok());
    auto t = catalog::Table::Create(via, *io_, id, *md);
    EXPECT_TRUE(t.ok()) << t.status().ToString();
    return t.ok() ? std::move(*t) : nullptr;
  }
};

TEST_F(RestClientTest, NamespacesAndTablesAreManagedThroughTheServer) {
  auto rest = Open();
  ASSERT_OK(rest->CreateNamespace({"sales", "eu"}, {{"owner", "ann"}}));
  ASSERT_OK_AND_ASSIGN(auto all, rest->ListNamespaces());
  EXPECT_EQ(all, (std::vector<std::vector<std::string>>{{"db"}, {"sales"}, {"sales", "eu"}}));
  ASSERT_OK_AND_ASSIGN(bool exists, rest->NamespaceExists({"sales", "eu"}));
  EXPECT_TRUE(exists);
  ASSERT_OK_AND_ASSIGN(exists, rest->NamespaceExists({"nope"}));
  EXPECT_FALSE(exists);
  ASSERT_OK_AND_ASSIGN(auto missing,
                       rest->UpdateNamespaceProperties({"sales", "eu"}, {{"tier", "gold"}}, {"x"}));
  EXPECT_EQ(missing, std::vector<std::string>{"x"});
  ASSERT_OK_AND_ASSIGN(auto props, catalog_->NamespaceProperties({"sales", "eu"}));
  EXPECT_EQ(props, (std::map<std::string, std::string>{{"owner", "ann"}, {"tier", "gold"}}));
  EXPECT_EQ(rest->CreateNamespace({"sales", "eu"}, {}).code(), StatusCode::kAlreadyExists);

  auto t = CreateVia(*rest, "events");
  ASSERT_NE(t, nullptr);
  ASSERT_OK_AND_ASSIGN(std::string server_side, catalog_->LoadTable({{"db"}, "events"}));
  EXPECT_EQ(server_side, t->metadata_location());  // registered as written
  ASSERT_OK_AND_ASSIGN(auto tables, rest->ListTables({"db"}));
  ASSERT_EQ(tables.size(), 1u);
  EXPECT_EQ(tables[0].name, "events");
  ASSERT_OK(rest->RenameTable({{"db"}, "events"}, {{"sales", "eu"}, "events"}));
  EXPECT_EQ(rest->LoadTable({{"db"}, "events"}).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(rest->DropNamespace({"sales", "eu"}).code(),
            StatusCode::kInvalidArgument);  // not empty
  ASSERT_OK(rest->DropTable({{"sales", "eu"}, "events"}));
  ASSERT_OK(rest->DropNamespace({"sales", "eu"}));
  EXPECT_EQ(rest->DropTable({{"sales", "eu"}, "events"}).code(), StatusCode::kNotFound);
}

TEST_F(RestClientTest, TableCommitsLandThroughTheServer) {
  auto rest = Open();
  auto t = CreateVia(*rest, "events");
  ASSERT_NE(t, nullptr);
  ASSERT_OK(t->Append({File("a.parquet", 10)}, {{"sluice.offsets", "1"}}).status());
  ASSERT_OK(t->Append({File("b.parquet", 20)}).status());
  // A metadata change: a column and a property.
  ASSERT_OK(t->UpdateMetadata([](const iceberg::TableMetadata& base) {
    iceberg::TableMetadata m = base;
    Schema s = *m.current_schema();
    s.schema_id = 1;
    s.fields.push_back({++m.last_column_id, "amount", DataType::Double(), false, ""});
    m.schemas.push_back(s);
    m.current_schema_id = 1;
    m.properties["owner"] = "ops";
    return Result<iceberg::TableMetadata>(m);
  }));
  ASSERT_OK(t->Append({File("c.parquet", 30)}).status());

  // The server's catalog holds all of it, in a metadata file it wrote.
  ASSERT_OK_AND_ASSIGN(auto server, catalog::Table::Load(*catalog_, *io_, {{"db"}, "events"}));
  const auto& md = server->metadata();
  // The client names the file the server wrote; the ones it staged are gone.
  EXPECT_EQ(server->metadata_location(), t->metadata_location());
  ASSERT_OK_AND_ASSIGN(auto files, io_->List(md.location + "/metadata/"));
  EXPECT_EQ(std::count_if(files.begin(), files.end(),
                          [](const std::string& f) { return f.ends_with(".metadata.json"); }),
            5);  // the create and 4 commits
  EXPECT_EQ(md.snapshots.size(), 3u);
  EXPECT_EQ(md.Ancestry(*md.current_snapshot_id).size(), 3u);
  EXPECT_EQ(md.current_schema_id, 1);
  EXPECT_EQ(md.properties.at("owner"), "ops");
  EXPECT_EQ(md.snapshots[0].summary.at("sluice.offsets"), "1");
  ASSERT_OK_AND_ASSIGN(auto live, server->LiveFiles(*md.current_snapshot_id));
  EXPECT_EQ(live.size(), 3u);
  EXPECT_EQ(md.last_sequence_number, 3);

  // Removing the oldest snapshot (as expiry does) goes through too.
  int64_t oldest = md.snapshots[0].snapshot_id;
  ASSERT_OK(t->UpdateMetadata([&](const iceberg::TableMetadata& base) {
    iceberg::TableMetadata m = base;
    m.RemoveSnapshots({oldest});
    return Result<iceberg::TableMetadata>(m);
  }));
  ASSERT_OK(server->Refresh());
  EXPECT_EQ(server->metadata().snapshot_by_id(oldest), nullptr);
  EXPECT_EQ(server->metadata().snapshots.size(), 2u);
}

// The catalog's handler behind a proxy that loses the answer to the first
// table commit after the commit ran (502, as a proxy timing out answers).
// With `forget_keys`, the catalog behind it never sees the key (as a
// restarted server or another replica would not know it).
class LosesFirstCommitAnswer final : public server::RouteHandler {
 public:
  explicit LosesFirstCommitAnswer(RestCatalogHandler& inner, bool forget_keys = false)
      : inner_(inner), forget_keys_(forget_keys) {}
  bool Claims(std::string_view path) const override { return inner_.Claims(path); }
  bool Authenticates() const override { return inner_.Authenticates(); }
  server::HttpResponse Handle(const server::HttpRequest& req) override {
    server::HttpRequest passed = req;
    if (forget_keys_) {
      std::erase_if(passed.headers, [](const auto& h) { return h.first == "idempotency-key"; });
    }
    server::HttpResponse res = inner_.Handle(passed);
    if (req.method != "POST" || req.path.find("/tables/") == std::string::npos) return res;
    std::lock_guard<std::mutex> lock(mu_);
    keys_.push_back(req.Get("idempotency-key"));
    if (keys_.size() > 1) return res;
    server::HttpResponse lost;
    lost.status = 502;
    lost.SetContent("bad gateway", "text/plain");
    return lost;
  }
  std::vector<std::string> keys() {
    std::lock_guard<std::mutex> lock(mu_);
    return keys_;
  }

 private:
  RestCatalogHandler& inner_;
  const bool forget_keys_;
  std::mutex mu_;
  std::vector<std::string> keys_;
};

// A commit whose answer is lost is retried under its Idempotency-Key and
// answered as it landed: the append succeeds, once (without keys it would be
// kCommitStateUnknown, or a conflict with itself).
TEST_F(RestClientTest, ACommitWhoseAnswerWasLostIsRetriedUnderItsKeyAndLandsOnce) {
  LosesFirstCommitAnswer proxy(*handler_);
  Start("", &proxy);
  auto rest = Open();
  auto t = CreateVia(*rest, "events");
  ASSERT_NE(t, nullptr);
  ASSERT_OK(t->Append({File("a.parquet", 10)}).status());
  std::vector<std::string> keys = proxy.keys();
  ASSERT_EQ(keys.size(), 2u);
  EXPECT_TRUE(IsUuidText(keys[0])) << keys[0];
  EXPECT_EQ(keys[0][14], '7') << "a UUIDv7";
  EXPECT_EQ(keys[1], keys[0]) << "the retry reuses the key";
  ASSERT_OK_AND_ASSIGN(auto server, catalog::Table::Load(*catalog_, *io_, {{"db"}, "events"}));
  EXPECT_EQ(server->metadata().snapshots.size(), 1u);
  EXPECT_EQ(server->metadata_location(), t->metadata_location());
  ASSERT_OK(t->Append({File("b.parquet", 10)}).status());  // a new commit, a new key
  keys = proxy.keys();
  ASSERT_EQ(keys.size(), 3u);
  EXPECT_NE(keys[2], keys[0]);
  ASSERT_OK(server->Refresh());
  EXPECT_EQ(server->metadata().snapshots.size(), 2u);
}

// The same lost answer, from a catalog that does not know the key on the
// retry: the retry collides with the commit that landed (409). That is no
// conflict to plan again on (which would append the files twice): the
// outcome is unknown, and what landed stays readable.
TEST_F(RestClientTest, ARetryTheServerDoesNotRecogniseLeavesTheOutcomeUnknown) {
  LosesFirstCommitAnswer proxy(*handler_, /*forget_keys=*/true);
  Start("", &proxy);
  auto rest = Open();
  auto t = CreateVia(*rest, "events");
  ASSERT_NE(t, nullptr);
  auto appended = t->Append({File("a.parquet", 10)});
  ASSERT_FALSE(appended.ok());
  EXPECT_EQ(appended.status().code(), StatusCode::kCommitStateUnknown)
      << appended.status().ToString();
  EXPECT_EQ(proxy.keys().size(), 2u) << "sent, retried once, then stopped";
  ASSERT_OK_AND_ASSIGN(auto server, catalog::Table::Load(*catalog_, *io_, {{"db"}, "events"}));
  ASSERT_EQ(server->metadata().snapshots.size(), 1u);
  ASSERT_OK_AND_ASSIGN(auto live, server->LiveFiles(*server->metadata().current_snapshot_id));
  EXPECT_EQ(live.size(), 1u) << "the landed snapshot's manifests are all there";
}

TEST_F(RestClientTest, AMultiTableCommitIsOneTransaction) {
  auto rest = Open();
  auto a = CreateVia(*rest, "a");
  auto b = CreateVia(*rest, "b");
  catalog::SnapshotUpdate to_a, to_b;
  to_a.add_data = {File("a.parquet", 1)};
  to_b.add_data = {File("b.parquet", 2)};
  ASSERT_OK(catalog::Table::CommitAll(*rest, {{a.get(), to_a}, {b.get(), to_b}}).status());
  for (const char* name : {"a", "b"}) {
    ASSERT_OK_AND_ASSIGN(auto server, catalog::Table::Load(*catalog_, *io_, {{"db"}, name}));
    EXPECT_EQ(server->metadata().snapshots.size(), 1u) << name;
  }
}

// Four clients, each with its own connection to the catalog and its own Table,
// append at once: the Table's commit loop refreshes and retries on 409, and
// every file lands exactly once.
TEST_F(RestClientTest, ConcurrentClientsAppendingLoseNothing) {
  { CreateVia(*Open(), "shared"); }
  constexpr int kClients = 4, kAppends = 10;
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int c = 0; c < kClients; ++c) {
    threads.emplace_back([&, c] {
      auto rest = Open();
      auto t = catalog::Table::Load(*rest, *io_, {{"db"}, "shared"});
      if (!t.ok()) {
        ++failures;
        return;
      }
      catalog::CommitOptions o;
      o.max_attempts = 100;
      o.min_backoff_ms = 1;
      o.max_backoff_ms = 50;
      for (int i = 0; i < kAppends; ++i) {
        auto id = (*t)->Append({File(fmt::format("c{}-{}.parquet", c, i), 1)}, {}, o);
        if (!id.ok()) {
          ADD_FAILURE() << id.status().ToString();
          ++failures;
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  ASSERT_OK_AND_ASSIGN(auto server, catalog::Table::Load(*catalog_, *io_, {{"db"}, "shared"}));
  const auto& md = server->metadata();
  ASSERT_OK_AND_ASSIGN(auto live, server->LiveFiles(*md.current_snapshot_id));
  std::set<std::string> paths;
  for (const auto& e : live) paths.insert(e.file.file_path);
  EXPECT_EQ(live.size(), size_t{kClients * kAppends});
  EXPECT_EQ(paths.size(), size_t{kClients * kAppends});
  EXPECT_EQ(md.Ancestry(*md.current_snapshot_id).size(), size_t{kClients * kAppends});
}

TEST_F(RestClientTest, ATokenIsSentAndNeverShownInErrors) {
  Start("s3cret-token");
  auto refused = catalog::OpenRestCatalog(Url(), *io_, {});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().message().find("s3cret"), std::string::npos);
  EXPECT_NE(refused.status().message().find("401"), std::string::npos)
      << refused.status().ToString();
  catalog::RestClientOptions o;
  o.token = "s3cret-token";
  auto rest = Open(o);
  ASSERT_NE(rest, nullptr);
  ASSERT_OK_AND_ASSIGN(auto all, rest->ListNamespaces());
  EXPECT_EQ(all.size(), 1u);
  o.token = "wrong";
  auto wrong = catalog::OpenRestCatalog(Url(), *io_, o);
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.status().message().find("wrong"), std::string::npos);
}

}  // namespace
}  // namespace sluice::rest
