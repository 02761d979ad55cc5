// The REST catalog on sluice's HTTP server, through a real HTTP client, over a
// SQLite catalog with tables made by the library.
#include "rest/rest_test_util.h"

namespace sluice::rest {
namespace {

TEST_F(RestCatalogTest, ConfigListsTheEndpointsItServes) {
  auto r = Client().Get("/v1/config");
  ASSERT_EQ(r->status, 200);
  json j = Body(r);
  EXPECT_TRUE(j["defaults"].is_object());
  EXPECT_TRUE(j["overrides"].is_object());
  auto e = j["endpoints"].get<std::vector<std::string>>();
  EXPECT_NE(std::find(e.begin(), e.end(), "GET /v1/namespaces/{namespace}/tables/{table}"),
            e.end());
  EXPECT_NE(std::find(e.begin(), e.end(), "POST /v1/transactions/commit"), e.end());
  EXPECT_EQ(std::find(e.begin(), e.end(), "GET /v1/namespaces/{namespace}/views"),
            e.end());  // views: not served, so not advertised
}

TEST_F(RestCatalogTest, NamespacesAreCreatedListedLoadedAndDropped) {
  auto c = Client();
  auto made =
      c.Post("/v1/namespaces", R"({"namespace":["sales","eu"],"properties":{"owner":"ann"}})",
             "application/json");
  ASSERT_EQ(made->status, 200) << made->body;
  EXPECT_EQ(Body(made)["properties"]["owner"], "ann");
  EXPECT_EQ(Type(c.Post("/v1/namespaces", R"({"namespace":["sales","eu"]})", "application/json")),
            "AlreadyExistsException");
  // Top level: db (the fixture's) and sales (implied by sales.eu).
  json top = Body(c.Get("/v1/namespaces"));
  EXPECT_EQ(top["namespaces"], json::parse(R"([["db"],["sales"]])"));
  json children = Body(c.Get("/v1/namespaces?parent=sales"));
  EXPECT_EQ(children["namespaces"], json::parse(R"([["sales","eu"]])"));
  EXPECT_EQ(Type(c.Get("/v1/namespaces?parent=nope")), "NoSuchNamespaceException");
  auto loaded = c.Get("/v1/namespaces/sales%1Feu");
  ASSERT_EQ(loaded->status, 200);
  EXPECT_EQ(Body(loaded)["namespace"], json::parse(R"(["sales","eu"])"));
  EXPECT_EQ(c.Head("/v1/namespaces/sales%1Feu")->status, 204);
  EXPECT_EQ(c.Head("/v1/namespaces/nope")->status, 404);
  EXPECT_EQ(Type(c.Get("/v1/namespaces/nope")), "NoSuchNamespaceException");
  MakeTable("");  // db.events
  EXPECT_EQ(Type(c.Delete("/v1/namespaces/db")), "NamespaceNotEmptyException");
  EXPECT_EQ(c.Delete("/v1/namespaces/sales%1Feu")->status, 204);
  EXPECT_EQ(c.Head("/v1/namespaces/sales%1Feu")->status, 404);
  EXPECT_EQ(Type(c.Delete("/v1/namespaces/sales%1Feu")), "NoSuchNamespaceException");
  // A level holding '%' survives the query's one decoding; a '.' is refused.
  ASSERT_EQ(c.Post("/v1/namespaces", R"({"namespace":["50%off","x"]})", "application/json")->status,
            200);
  EXPECT_EQ(Body(c.Get("/v1/namespaces?parent=50%25off"))["namespaces"],
            json::parse(R"([["50%off","x"]])"));
  EXPECT_EQ(Type(c.Post("/v1/namespaces", R"({"namespace":["a.b"]})", "application/json")),
            "BadRequestException");
}

TEST_F(RestCatalogTest, TablesAreListedLoadedRenamedRegisteredAndDropped) {
  auto t = MakeTable("");
  ASSERT_OK(t->Append({File("a.parquet", 10)}).status());
  ASSERT_OK(t->Append({File("b.parquet", 20)}).status());
  auto c = Client();
  json list = Body(c.Get("/v1/namespaces/db/tables"));
  EXPECT_EQ(list["identifiers"], json::parse(R"([{"namespace":["db"],"name":"events"}])"));
  EXPECT_EQ(Type(c.Get("/v1/namespaces/nope/tables")), "NoSuchNamespaceException");

  auto loaded = c.Get("/v1/namespaces/db/tables/events");
  ASSERT_EQ(loaded->status, 200) << loaded->body;
  json j = Body(loaded);
  ASSERT_OK_AND_ASSIGN(std::string location, catalog_->LoadTable({{"db"}, "events"}));
  EXPECT_EQ(j["metadata-location"], location);
  ASSERT_OK_AND_ASSIGN(std::string text, io_->ReadFile(location));
  EXPECT_EQ(j["metadata"], json::parse(text));  // the file as written
  EXPECT_EQ(j["metadata"]["snapshots"].size(), 2u);
  // Only the snapshot main points at.
  json refs = Body(c.Get("/v1/namespaces/db/tables/events?snapshots=refs"));
  ASSERT_EQ(refs["metadata"]["snapshots"].size(), 1u);
  EXPECT_EQ(refs["metadata"]["snapshots"][0]["snapshot-id"], j["metadata"]["current-snapshot-id"]);
  EXPECT_EQ(Type(c.Get("/v1/namespaces/db/tables/events?snapshots=some")), "BadRequestException");
  EXPECT_EQ(c.Head("/v1/namespaces/db/tables/events")->status, 204);
  EXPECT_EQ(c.Head("/v1/namespaces/db/tables/nope")->status, 404);
  EXPECT_EQ(Type(c.Get("/v1/namespaces/db/tables/nope")), "NoSuchTableException");

  auto renamed = c.Post("/v1/tables/rename",
                        R"({"source":{"namespace":["db"],"name":"events"},
                            "destination":{"namespace":["db"],"name":"clicks"}})",
                        "application/json");
  EXPECT_EQ(renamed->status, 204) << renamed->body;
  EXPECT_EQ(c.Head("/v1/namespaces/db/tables/clicks")->status, 204);
  EXPECT_EQ(Type(c.Post("/v1/tables/rename",
                        R"({"source":{"namespace":["db"],"name":"events"},
                            "destination":{"namespace":["db"],"name":"x"}})",
                        "application/json")),
            "NoSuchTableException");
  EXPECT_EQ(Type(c.Post("/v1/tables/rename",
                        R"({"source":{"namespace":["db"],"name":"clicks"},
                            "destination":{"namespace":["nope"],"name":"x"}})",
                        "application/json")),
            "NoSuchNamespaceException");

  // Register the same metadata file under a second name.
  json reg = {{"name", "adopted"}, {"metadata-location", location}};
  auto registered = c.Post("/v1/namespaces/db/register", reg.dump(), "application/json");
  ASSERT_EQ(registered->status, 200) << registered->body;
  EXPECT_EQ(Body(registered)["metadata-location"], location);
  EXPECT_EQ(Type(c.Post("/v1/namespaces/db/register", reg.dump(), "application/json")),
            "AlreadyExistsException");
  json bad = {{"name", "broken"}, {"metadata-location", location + ".missing"}};
  EXPECT_EQ(c.Post("/v1/namespaces/db/register", bad.dump(), "application/json")->status, 404);

  // Drop one name; purge the other: its files go.
  EXPECT_EQ(c.Delete("/v1/namespaces/db/tables/adopted")->status, 204);
  ASSERT_OK_AND_ASSIGN(bool still, io_->Exists(location));
  EXPECT_TRUE(still);
  EXPECT_EQ(c.Delete("/v1/namespaces/db/tables/clicks?purgeRequested=true")->status, 204);
  ASSERT_OK_AND_ASSIGN(still, io_->Exists(location));
  EXPECT_FALSE(still);
  EXPECT_EQ(Type(c.Delete("/v1/namespaces/db/tables/clicks")), "NoSuchTableException");
}

TEST_F(RestCatalogTest, BadRequestsGetTheSpecsErrorModel) {
  auto c = Client();
  EXPECT_EQ(Type(c.Post("/v1/namespaces", "{not json", "application/json")), "BadRequestException");
  EXPECT_EQ(Type(c.Post("/v1/namespaces", R"({"namespace":[]})", "application/json")),
            "BadRequestException");
  EXPECT_EQ(Type(c.Post("/v1/namespaces", R"({"namespace":[".."]})", "application/json")),
            "BadRequestException");
  EXPECT_EQ(Type(c.Get("/v1/namespaces/a%2Fb")), "BadRequestException");
  EXPECT_EQ(Type(c.Get("/v1/namespaces/%zz")), "BadRequestException");
  auto put = c.Put("/v1/namespaces", "{}", "application/json");
  EXPECT_EQ(put->status, 405);
  EXPECT_EQ(put->get_header_value("Allow"), "GET, POST");
  EXPECT_EQ(Type(c.Post("/v1/namespaces/db/tables", "{}", "application/json")),
            "BadRequestException");
  EXPECT_EQ(Type(c.Post("/v1/transactions/commit", "{}", "application/json")),
            "BadRequestException");
  EXPECT_EQ(Type(c.Get("/v1/namespaces/db/views")), "NoSuchRouteException");
  EXPECT_EQ(c.Get("/v1/status")->body, "{}");  // the server's own route, not the catalog's
}

TEST_F(RestCatalogTest, WithATokenEveryCatalogRouteNeedsIt) {
  Start("cat-token");
  auto c = Client();
  EXPECT_EQ(c.Get("/v1/config")->status, 401);
  EXPECT_EQ(c.Get("/v1/namespaces")->status, 401);
  c.set_bearer_token_auth("cat-token");
  EXPECT_EQ(c.Get("/v1/namespaces")->status, 200);
}

}  // namespace
}  // namespace sluice::rest
