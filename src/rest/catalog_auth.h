// CatalogAuth: who a REST catalog request comes from and what it may see.
//
// Two kinds of caller:
// - the admin, holding the server's bearer token (SLUICE_TOKEN): sees and
//   changes everything;
// - a client of the clients file, which trades its id and secret for a
//   short-lived token at POST /v1/oauth/tokens (OAuth2 client credentials,
//   RFC 6749 §4.4; the secret in the form or by HTTP Basic auth), or renews a
//   token it holds there (token exchange, RFC 8693, the Java client's refresh).
//   It sees the namespaces its grants name and everything under them; the
//   levels above a grant appear in namespace lists (so `parent=` navigation
//   reaches the grant) but nothing else about them. A read-only client may load
//   but not change anything (it may still send metrics reports).
//
// Contract:
// - The clients file holds SHA-256 digests of secrets, never secrets:
//   {"clients": [{"id": "spark", "secret_sha256": "<64 hex>",
//                 "namespaces": ["sales", "ops.daily"], "read_only": false}]}
//   ("*" grants every namespace). A malformed file is kInvalidArgument naming
//   the file and the entry.
// - Issued tokens are 256-bit random values held in memory for `token_ttl_s`
//   (a restart invalidates them; clients ask again). Secrets and tokens are
//   compared in constant time and appear in no answer, error or log.
// - Thread-safe.
#pragma once

#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "server/http_message.h"

namespace sluice::rest {

struct CatalogClient {
  std::string id;
  std::string secret_sha256;                     // lower-case hex
  std::vector<std::vector<std::string>> grants;  // namespaces (levels); {} grants all
  bool read_only = false;
};

// The clients file's text; `where` names it in errors.
Result<std::vector<CatalogClient>> ParseCatalogClients(std::string_view text,
                                                       std::string_view where);

// An authenticated caller.
struct Principal {
  const CatalogClient* client = nullptr;  // null: the admin

  // Inside a grant: the caller may load it and what it holds.
  bool Sees(const std::vector<std::string>& ns) const;
  // Seen, or a level above a grant (shown in lists).
  bool Lists(const std::vector<std::string>& ns) const;
  bool may_write() const { return client == nullptr || !client->read_only; }
  std::string name() const { return client == nullptr ? "admin" : client->id; }
};

struct CatalogAuthOptions {
  std::string admin_token;  // empty: no admin token
  std::vector<CatalogClient> clients;
  int64_t token_ttl_s = 3600;
  std::function<int64_t()> now_s;  // seconds on a monotonic clock; default steady_clock
};

class CatalogAuth {
 public:
  explicit CatalogAuth(CatalogAuthOptions options);

  // False when neither an admin token nor clients are configured: every
  // request is the admin's.
  bool enabled() const { return !options_.admin_token.empty() || !options_.clients.empty(); }
  // The caller a request's bearer token names, or nullopt (answer 401).
  std::optional<Principal> Authenticate(const server::HttpRequest& req);
  // POST /v1/oauth/tokens: the spec's OAuthTokenResponse, or its OAuthError
  // (400 invalid_request / unsupported_grant_type, 401 invalid_client).
  server::HttpResponse IssueToken(const server::HttpRequest& req);

 private:
  struct Issued {
    size_t client;
    int64_t expires_s;
  };
  const CatalogClient* Client(std::string_view id, std::string_view secret) const;
  server::HttpResponse Grant(size_t client);

  const CatalogAuthOptions options_;
  std::mutex mu_;
  std::map<std::string, Issued> tokens_;
};

}  // namespace sluice::rest
