// RestCatalogHandler: the Iceberg REST catalog protocol (the OpenAPI spec
// "rest-catalog-open-api.yaml", /v1 paths, no prefix) over a sluice Catalog and
// FileIO, mounted on sluice's HTTP server (server::RouteHandler) by
// `sluice serve` and `sluice run --listen`.
//
// Served (GET /v1/config lists exactly these in `endpoints`):
//   GET  /v1/config
//   GET  /v1/namespaces[?parent=]          POST /v1/namespaces
//   GET|HEAD|DELETE /v1/namespaces/{ns}    POST /v1/namespaces/{ns}/properties
//   GET|POST /v1/namespaces/{ns}/tables    (create, stage-create)
//   GET|HEAD|POST|DELETE /v1/namespaces/{ns}/tables/{table}  (load, commit, drop)
//   POST /v1/namespaces/{ns}/tables/{table}/metrics
//   POST /v1/namespaces/{ns}/register      POST /v1/tables/rename
//   POST /v1/transactions/commit           POST /v1/oauth/tokens (with CatalogAuth)
// Not served: views, scan planning, credential vending.
//
// Contract:
// - Namespaces in paths are their levels joined by the unit separator (0x1F),
//   percent-encoded; names are validated as the catalog does (no '/', '..').
// - Errors are the spec's ErrorModel: {"error": {"message", "type", "code"}} with
//   its types (NoSuchNamespaceException 404, NoSuchTableException 404,
//   AlreadyExistsException 409, NamespaceNotEmptyException 409,
//   BadRequestException 400, UnsupportedOperationException 406, 405 for a method a
//   path does not take). Messages never show server paths beyond table locations.
// - Loading a table answers the metadata file as written (its JSON, unchanged but
//   for `snapshots=refs`, which keeps only snapshots a ref points at).
// - Purging a dropped table deletes every file under its location.
// - A commit (table_change.h) checks its requirements against the current
//   metadata and applies its updates, then swaps through Table::UpdateMetadata
//   (a transaction: Table::UpdateMetadataAll); on a lost swap both run again on
//   the refreshed metadata. A failed requirement is 409 CommitFailedException.
// - With a CatalogAuth, each request's caller sees only its grants: anything
//   else answers 404 as if missing (403 for creating outside them, and for
//   changes by a read-only caller).
// - A mutation (POST or DELETE, but a metrics report) carrying an
//   Idempotency-Key is run once; a retry under the key gets the first answer
//   (idempotency.h; GET /v1/config advertises idempotency-key-lifetime).
// - Lists are paged on request (pageSize, pageToken = the last key of the page
//   before; next-page-token in the answer).
// - Thread-safe (the catalog and FileIO are).
#pragma once

#include <atomic>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "catalog/catalog.h"
#include "catalog/table.h"
#include "io/file_io.h"
#include "rest/catalog_auth.h"
#include "rest/idempotency.h"
#include "rest/table_change.h"
#include "server/http_server.h"

namespace sluice::rest {

class RestCatalogHandler final : public server::RouteHandler {
 public:
  // `auth` (optional; must outlive the handler) authenticates each request
  // and bounds what its caller sees; without it the server's bearer token
  // guards the catalog and every caller sees everything.
  RestCatalogHandler(catalog::Catalog& catalog, FileIO& io, std::string warehouse,
                     CatalogAuth* auth = nullptr, IdempotencyOptions idempotency = {})
      : catalog_(catalog),
        io_(io),
        warehouse_(std::move(warehouse)),
        auth_(auth),
        keys_(std::move(idempotency)) {}

  bool Claims(std::string_view path) const override;
  // Metrics reports received (POST .../metrics), by kind.
  int64_t scan_reports() const { return scan_reports_.load(); }
  int64_t commit_reports() const { return commit_reports_.load(); }
  server::HttpResponse Handle(const server::HttpRequest& req) override;
  bool Authenticates() const override { return auth_ != nullptr && auth_->enabled(); }

 private:
  // The 404 for a namespace that does not exist (or the catalog's error).
  std::optional<server::HttpResponse> RequireNamespace(const std::vector<std::string>& ns);
  // Handle without its guard (nlohmann's type errors propagate as
  // exceptions): tokens, authentication and Idempotency-Keys, then Route.
  server::HttpResponse Dispatch(const server::HttpRequest& req);
  server::HttpResponse Route(const server::HttpRequest& req, const Principal& who);
  // The routes under /v1/namespaces/{ns}, for a caller who sees `ns` (and may
  // change it, unless the route only reads).
  server::HttpResponse NamespaceRoute(const server::HttpRequest& req,
                                      const std::vector<std::string>& ns,
                                      const std::vector<std::string_view>& seg,
                                      const Principal& who);
  server::HttpResponse ListNamespaces(const server::HttpRequest& req, const Principal& who);
  server::HttpResponse CreateNamespace(const server::HttpRequest& req, const Principal& who);
  server::HttpResponse RenameTable(const server::HttpRequest& req, const Principal& who);
  server::HttpResponse LoadNamespace(const std::vector<std::string>& ns, bool head);
  server::HttpResponse DropNamespace(const std::vector<std::string>& ns);
  server::HttpResponse ListTables(const std::vector<std::string>& ns,
                                  const server::HttpRequest& req);
  server::HttpResponse LoadTable(const catalog::TableIdent& ident, const server::HttpRequest& req,
                                 bool head);
  server::HttpResponse DropTable(const catalog::TableIdent& ident, const server::HttpRequest& req);
  server::HttpResponse RegisterTable(const std::vector<std::string>& ns,
                                     const server::HttpRequest& req, const Principal& who);
  server::HttpResponse UpdateNamespaceProperties(const std::vector<std::string>& ns,
                                                 const server::HttpRequest& req);
  server::HttpResponse CreateTable(const std::vector<std::string>& ns,
                                   const server::HttpRequest& req);
  server::HttpResponse CommitTable(const catalog::TableIdent& ident,
                                   const server::HttpRequest& req);
  // A commit asserting assert-create: the updates build the table's first
  // metadata (a staged create, Spark's CREATE TABLE AS SELECT).
  server::HttpResponse CreateByCommit(const catalog::TableIdent& ident, const TableChange& change);
  server::HttpResponse CommitTransaction(const server::HttpRequest& req, const Principal& who);
  server::HttpResponse ReportMetrics(const catalog::TableIdent& ident,
                                     const server::HttpRequest& req);
  // Checks the change's requirements against the table's current metadata,
  // then applies its updates (run again on each compare-and-swap retry).
  // A location it moves the table to must not overlap another table's.
  catalog::MetadataChangeFn ApplyFn(const TableChange& change, const catalog::TableIdent& ident);
  // LoadTableResult of a table just written.
  static nlohmann::json CommitResult(const catalog::Table& table);
  // The spec's LoadTableResult: metadata-location, metadata, config.
  Result<nlohmann::json> LoadResult(const catalog::TableIdent& ident, bool refs_only);

  catalog::Catalog& catalog_;
  FileIO& io_;
  const std::string warehouse_;
  CatalogAuth* const auth_;
  IdempotencyKeys keys_;
  std::atomic<int64_t> scan_reports_{0}, commit_reports_{0};
};

}  // namespace sluice::rest
