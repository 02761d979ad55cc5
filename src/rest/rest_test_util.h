// Test helpers of src/rest: the REST catalog on sluice's HTTP server, reached
// through a real HTTP client, over a SQLite catalog with tables made by the
// library.
#pragma once

#include <httplib.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "catalog/table_test_util.h"
#include "rest/rest_catalog.h"

namespace sluice::rest {

using json = nlohmann::json;

class RestCatalogTest : public catalog::TableTest {
 protected:
  void SetUp() override {
    TableTest::SetUp();
    handler_ = std::make_unique<RestCatalogHandler>(*catalog_, *io_, dir_.string());
    Start("");
  }
  void TearDown() override {
    server_.reset();
    TableTest::TearDown();
  }
  // Serves a catalog whose requests `auth` (may be null) authenticates.
  void StartWithAuth(CatalogAuth* auth, const std::string& token) {
    server_.reset();
    handler_ = std::make_unique<RestCatalogHandler>(*catalog_, *io_, dir_.string(), auth);
    Start(token);
  }
  // Serves handler_, or `routes` in front of it.
  void Start(const std::string& token, server::RouteHandler* routes = nullptr) {
    server_.reset();
    server::HttpServerOptions o;
    o.routes = routes != nullptr ? routes : handler_.get();
    o.bearer_token = token;
    auto s = server::HttpServer::Make(o, &target_);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    server_ = std::move(*s);
    ASSERT_OK(server_->Start());
  }
  httplib::Client Client() {
    httplib::Client c("127.0.0.1", server_->port());
    c.set_read_timeout(10);
    return c;
  }
  // The answer's JSON; for errors, checks the spec's ErrorModel shape.
  static json Body(const httplib::Result& r) {
    EXPECT_TRUE(r);
    if (!r) return {};
    if (r->status == 204 || r->body.empty()) return {};
    json j = json::parse(r->body, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << r->body;
    if (r->status >= 400) {
      EXPECT_TRUE(j.contains("error")) << r->body;
      EXPECT_TRUE(j["error"]["message"].is_string()) << r->body;
      EXPECT_TRUE(j["error"]["type"].is_string()) << r->body;
      EXPECT_EQ(j["error"]["code"], r->status) << r->body;
    }
    return j;
  }
  static std::string Type(const httplib::Result& r) { return Body(r)["error"]["type"]; }

  server::NoStreams target_;
  std::unique_ptr<RestCatalogHandler> handler_;
  std::unique_ptr<server::HttpServer> server_;
};

}  // namespace sluice::rest
