// The REST catalog's OAuth2 clients: the token endpoint, what each client
// sees, read-only clients, and sluice's REST client authenticating with
// client credentials.
#include "catalog/rest_client.h"
#include "common/digest.h"
#include "rest/rest_test_util.h"

namespace sluice::rest {
namespace {

class RestAuthTest : public RestCatalogTest {
 protected:
  void SetUp() override {
    RestCatalogTest::SetUp();
    ASSERT_OK(catalog_->CreateNamespace({"sales", "eu"}, {}));
    ASSERT_OK(catalog_->CreateNamespace({"sales", "us"}, {}));
    MakeTable("");  // db.events
    std::string clients = json{{"clients",
                                {{{"id", "spark"},
                                  {"secret_sha256", Sha256Hex("spark-secret")},
                                  {"namespaces", {"sales"}}},
                                 {{"id", "bi"},
                                  {"secret_sha256", Sha256Hex("bi-secret")},
                                  {"namespaces", {"sales.eu", "db"}},
                                  {"read_only", true}}}}}
                              .dump();
    CatalogAuthOptions o;
    o.admin_token = "admin-token";
    ASSERT_OK_AND_ASSIGN(o.clients, ParseCatalogClients(clients, "clients.json"));
    o.token_ttl_s = 600;
    o.now_s = [this] { return now_s_; };
    auth_ = std::make_unique<CatalogAuth>(std::move(o));
    StartWithAuth(auth_.get(), "admin-token");
  }
  // POST /v1/oauth/tokens with a form body; the answer's JSON and status.
  std::pair<int, json> Token(const std::string& form) {
    auto r = Client().Post("/v1/oauth/tokens", form, "application/x-www-form-urlencoded");
    EXPECT_TRUE(r);
    if (!r) return {0, {}};
    return {r->status, json::parse(r->body, nullptr, false)};
  }
  std::string TokenFor(const std::string& id, const std::string& secret) {
    auto [status, j] = Token("grant_type=client_credentials&client_id=" + id +
                             "&client_secret=" + secret + "&scope=catalog");
    EXPECT_EQ(status, 200) << j.dump();
    return j.value("access_token", "");
  }
  httplib::Client As(const std::string& token) {
    auto c = Client();
    c.set_bearer_token_auth(token);
    return c;
  }

  int64_t now_s_ = 1000;
  std::unique_ptr<CatalogAuth> auth_;
};

TEST_F(RestAuthTest, AClientFileHoldsDigestsNotSecrets) {
  auto parse = [](const std::string& text) { return ParseCatalogClients(text, "c.json"); };
  EXPECT_EQ(parse(R"({"clients":[{"id":"a","secret":"x","namespaces":["s"]}]})").status().code(),
            StatusCode::kInvalidArgument);
  auto short_digest = parse(R"({"clients":[{"id":"a","secret_sha256":"abc","namespaces":["s"]}]})");
  ASSERT_FALSE(short_digest.ok());
  EXPECT_NE(short_digest.status().message().find("c.json: clients[0] (a)"), std::string::npos)
      << short_digest.status().ToString();
  std::string d = Sha256Hex("x");
  EXPECT_FALSE(parse(R"({"clients":[{"id":"a","secret_sha256":")" + d + R"("}]})").ok());
  EXPECT_FALSE(parse(R"({"clients":[{"id":"a","secret_sha256":")" + d +
                     R"(","namespaces":["s"]},{"id":"a","secret_sha256":")" + d +
                     R"(","namespaces":["t"]}]})")
                   .ok());
  ASSERT_OK_AND_ASSIGN(auto all, parse(R"({"clients":[{"id":"a","secret_sha256":")" + d +
                                       R"(","namespaces":["*"]}]})"));
  EXPECT_TRUE(Principal{&all[0]}.Sees({"anything", "at", "all"}));
}

TEST_F(RestAuthTest, TheTokenEndpointTradesCredentialsForAToken) {
  std::string token = TokenFor("spark", "spark-secret");
  EXPECT_EQ(token.size(), 64u);
  EXPECT_EQ(As(token).Get("/v1/namespaces")->status, 200);
  auto [wrong, wj] = Token("grant_type=client_credentials&client_id=spark&client_secret=nope");
  EXPECT_EQ(wrong, 401);
  EXPECT_EQ(wj["error"], "invalid_client");
  auto [unknown, uj] = Token("grant_type=client_credentials&client_id=who&client_secret=x");
  EXPECT_EQ(unknown, 401);
  auto [grant, gj] = Token("grant_type=password&username=a");
  EXPECT_EQ(grant, 400);
  EXPECT_EQ(gj["error"], "unsupported_grant_type");
  // HTTP Basic credentials (RFC 6749 2.3.1): "spark:spark-secret".
  httplib::Client basic = Client();
  basic.set_basic_auth("spark", "spark-secret");
  auto r = basic.Post("/v1/oauth/tokens", "grant_type=client_credentials",
                      "application/x-www-form-urlencoded");
  ASSERT_EQ(r->status, 200) << r->body;
  // Renewal by token exchange, as the Java client refreshes.
  auto [renewed, rj] =
      Token("grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Atoken-exchange&subject_token=" +
            token + "&subject_token_type=urn%3Aietf%3Aparams%3Aoauth%3Atoken-type%3Aaccess_token");
  ASSERT_EQ(renewed, 200) << rj.dump();
  EXPECT_NE(rj["access_token"], token);
  // Tokens expire.
  now_s_ += 601;
  auto expired = As(token).Get("/v1/namespaces");
  EXPECT_EQ(expired->status, 401);
  EXPECT_EQ(Type(expired), "NotAuthorizedException");
  EXPECT_EQ(Client().Get("/v1/namespaces")->status, 401);
  EXPECT_EQ(As("admin-token").Get("/v1/namespaces")->status, 200);
}

TEST_F(RestAuthTest, AClientSeesOnlyItsNamespaces) {
  auto spark = As(TokenFor("spark", "spark-secret"));
  EXPECT_EQ(Body(spark.Get("/v1/namespaces"))["namespaces"], json::parse(R"([["sales"]])"));
  EXPECT_EQ(Body(spark.Get("/v1/namespaces?parent=sales"))["namespaces"],
            json::parse(R"([["sales","eu"],["sales","us"]])"));
  EXPECT_EQ(Type(spark.Get("/v1/namespaces/db")), "NoSuchNamespaceException");
  EXPECT_EQ(Type(spark.Get("/v1/namespaces/db/tables")), "NoSuchNamespaceException");
  EXPECT_EQ(Type(spark.Get("/v1/namespaces/db/tables/events")), "NoSuchTableException");
  EXPECT_EQ(Type(spark.Get("/v1/namespaces?parent=db")), "NoSuchNamespaceException");
  EXPECT_EQ(Type(spark.Post("/v1/namespaces", R"({"namespace":["ops"]})", "application/json")),
            "ForbiddenException");
  EXPECT_EQ(
      spark.Post("/v1/namespaces", R"({"namespace":["sales","apac"]})", "application/json")->status,
      200);
  EXPECT_EQ(Type(spark.Post("/v1/tables/rename",
                            R"({"source":{"namespace":["db"],"name":"events"},
                                "destination":{"namespace":["sales","eu"],"name":"events"}})",
                            "application/json")),
            "NoSuchTableException");
  // bi sees sales.eu (and the level above it in lists) and db, and changes nothing.
  auto bi = As(TokenFor("bi", "bi-secret"));
  EXPECT_EQ(Body(bi.Get("/v1/namespaces"))["namespaces"], json::parse(R"([["db"],["sales"]])"));
  EXPECT_EQ(Body(bi.Get("/v1/namespaces?parent=sales"))["namespaces"],
            json::parse(R"([["sales","eu"]])"));
  EXPECT_EQ(Type(bi.Get("/v1/namespaces/sales")), "NoSuchNamespaceException");
  EXPECT_EQ(bi.Get("/v1/namespaces/db/tables/events")->status, 200);
  EXPECT_EQ(Type(bi.Delete("/v1/namespaces/db/tables/events")), "ForbiddenException");
  EXPECT_EQ(Type(bi.Post("/v1/namespaces/db/tables/events", R"({"requirements":[],"updates":[]})",
                         "application/json")),
            "ForbiddenException");
  EXPECT_EQ(bi.Post("/v1/namespaces/db/tables/events/metrics", R"({"report-type":"scan-report"})",
                    "application/json")
                ->status,
            204);
  EXPECT_EQ(Type(bi.Post("/v1/transactions/commit", R"({"table-changes":[]})", "application/json")),
            "ForbiddenException");
  // spark may not adopt db.events' files into its own namespace.
  ASSERT_OK_AND_ASSIGN(std::string events, catalog_->LoadTable({{"db"}, "events"}));
  json reg = {{"name", "stolen"}, {"metadata-location", events}};
  EXPECT_EQ(Type(spark.Post("/v1/namespaces/sales%1Feu/register", reg.dump(), "application/json")),
            "ForbiddenException");
  reg["metadata-location"] = "/etc/passwd";
  EXPECT_EQ(Type(spark.Post("/v1/namespaces/sales%1Feu/register", reg.dump(), "application/json")),
            "BadRequestException");
}

TEST_F(RestAuthTest, ListsArePaged) {
  auto admin = As("admin-token");
  for (const char* n : {"a", "b", "c", "d"}) {
    ASSERT_OK(catalog_->CreateNamespace({"db2", n}, {}));
  }
  std::vector<std::string> seen;
  std::string token;
  int pages = 0;
  do {
    std::string url = "/v1/namespaces?parent=db2&pageSize=3";
    if (!token.empty()) url += "&pageToken=" + token;
    json page = Body(admin.Get(url));
    for (const auto& ns : page["namespaces"]) seen.push_back(ns[1]);
    token = page.value("next-page-token", "");
    ++pages;
  } while (!token.empty() && pages < 10);
  EXPECT_EQ(pages, 2);
  EXPECT_EQ(seen, (std::vector<std::string>{"a", "b", "c", "d"}));
  EXPECT_EQ(Type(admin.Get("/v1/namespaces?pageSize=0")), "BadRequestException");
}

TEST_F(RestAuthTest, SluicesRestClientAuthenticatesWithClientCredentials) {
  std::string url = "http://127.0.0.1:" + std::to_string(server_->port());
  catalog::RestClientOptions o;
  o.credential = "spark:spark-secret";
  ASSERT_OK_AND_ASSIGN(auto rest, catalog::OpenRestCatalog(url, *io_, o));
  ASSERT_OK_AND_ASSIGN(auto all, rest->ListNamespaces());
  EXPECT_EQ(all,
            (std::vector<std::vector<std::string>>{{"sales"}, {"sales", "eu"}, {"sales", "us"}}));
  o.credential = "spark:wrong";
  auto refused = catalog::OpenRestCatalog(url, *io_, o);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().message().find("wrong"), std::string::npos)
      << refused.status().ToString();
}

}  // namespace
}  // namespace sluice::rest
