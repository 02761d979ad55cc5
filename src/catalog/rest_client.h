// RestCatalogClient: a Catalog over an Iceberg REST catalog server, so that
// every sluice command and pipeline commits through it
// (`--catalog http://HOST:PORT[/base]`) and several hosts share one catalog
// without database credentials.
//
// Contract:
// - The URL is the catalog's base, as Java's `uri`: GET <base>/v1/config once,
//   then <base>/v1/[<prefix>/]... with the prefix its overrides name.
// - CreateTable registers the metadata file the caller wrote (POST
//   .../register): the server must be able to read that location (a shared
//   warehouse: the same folder or S3 bucket).
// - CommitTables turns each swap (expected -> new metadata file) into the
//   spec's requirements and updates (rest_diff.h), reading both files through
//   `io`: one table posts its commit, several post /v1/transactions/commit (all
//   or none). A failed requirement (409) is kConflict (the Table refreshes and
//   retries); a 5xx or a connection lost after sending is kCommitStateUnknown.
//   The server writes its own metadata file, which LoadTable names from then
//   on; the caller's new file is referenced by nothing and is removed by
//   orphan cleanup.
// - Reads retry a refused connection and 502/503/504 with backoff. Changes
//   do too when the server takes Idempotency-Keys (its config names
//   idempotency-key-lifetime): each change carries a new UUIDv7 key, kept
//   through its retries, so a commit whose answer was lost is answered as it
//   landed instead of applied twice. A retry after an attempt that reached
//   the server, answered with an error that is no replay (the server forgot
//   the key) or not answered at all, is kCommitStateUnknown, for every
//   change (namespaces, drops and renames too), never a conflict or an error
//   to send again under a new key. Without keys a change is sent once.
// - Auth: a bearer token, or OAuth2 client credentials ("id:secret")
//   exchanged at <base>/v1/oauth/tokens and renewed before they expire.
//   Tokens and secrets never appear in errors.
// - Thread-safe.
#pragma once

#include <memory>
#include <string>

#include "catalog/catalog.h"
#include "io/file_io.h"

namespace sluice::catalog {

struct RestClientOptions {
  std::string token;       // a bearer token (SLUICE_CATALOG_TOKEN)
  std::string credential;  // OAuth2 client credentials "id:secret" (SLUICE_CATALOG_CREDENTIAL)
  std::string scope = "catalog";
  int connect_timeout_ms = 5000;
  int request_timeout_ms = 60000;
  int max_read_attempts = 5;
};

bool IsRestCatalogUri(std::string_view uri);

// `io` reads the tables' metadata files; it must outlive the catalog.
Result<std::unique_ptr<Catalog>> OpenRestCatalog(const std::string& url, FileIO& io,
                                                 RestClientOptions options = {});

}  // namespace sluice::catalog
