#include "rest/catalog_auth.h"

#include <chrono>
#include <nlohmann/json.hpp>

#include "catalog/catalog.h"
#include "common/ascii.h"
#include "common/clock.h"
#include "common/digest.h"

namespace sluice::rest {
namespace {

using json = nlohmann::json;
using server::HttpRequest;
using server::HttpResponse;

constexpr const char* kTokenExchange = "urn:ietf:params:oauth:grant-type:token-exchange";
constexpr const char* kAccessTokenType = "urn:ietf:params:oauth:token-type:access_token";

HttpResponse OAuthError(int status, std::string_view error, std::string_view description) {
  HttpResponse res;
  res.status = status;
  res.SetContent(json{{"error", error}, {"error_description", description}}.dump(),
                 "application/json");
  res.Set("Cache-Control", "no-store");
  if (status == 401) res.Set("WWW-Authenticate", "Basic realm=\"sluice\"");
  return res;
}

// "Basic base64(id:secret)" → {id, secret} (RFC 6749 §2.3.1: each part form-encoded).
std::optional<std::pair<std::string, std::string>> BasicCredentials(const HttpRequest& req) {
  std::string given = req.Get("authorization");
  if (given.size() < 6 || !EqualsIgnoreCase(std::string_view(given).substr(0, 6), "basic ")) {
    return std::nullopt;
  }
  auto decoded = DecodeBase64(given.substr(6));
  if (!decoded) return std::nullopt;
  const std::string& raw = *decoded;
  size_t colon = raw.find(':');
  if (colon == std::string::npos) return std::nullopt;
  auto id = server::PercentDecode(raw.substr(0, colon), true);
  auto secret = server::PercentDecode(raw.substr(colon + 1), true);
  if (!id || !secret) return std::nullopt;
  return std::make_pair(*id, *secret);
}

bool Within(const std::vector<std::string>& ns, const std::vector<std::string>& grant) {
  return ns.size() >= grant.size() && std::equal(grant.begin(), grant.end(), ns.begin());
}

}  // namespace

Result<std::vector<CatalogClient>> ParseCatalogClients(std::string_view text,
                                                       std::string_view where) {
  json j = json::parse(text, nullptr, false);
  if (!j.is_object() || !j.contains("clients") || !j["clients"].is_array()) {
    return Status::Invalid("{}: expected {{\"clients\": [...]}}", where);
  }
  std::vector<CatalogClient> out;
  for (size_t i = 0; i < j["clients"].size(); ++i) {
    const json& c = j["clients"][i];
    std::string at = fmt::format("{}: clients[{}]", where, i);
    if (!c.is_object() || !c.contains("id") || !c["id"].is_string() ||
        c["id"].get<std::string>().empty()) {
      return Status::Invalid("{}: expected an object with a non-empty \"id\"", at);
    }
    CatalogClient client;
    client.id = c["id"].get<std::string>();
    at = fmt::format("{} ({})", at, client.id);
    for (const auto& other : out) {
      if (other.id == client.id) return Status::Invalid("{}: the id is used twice", at);
    }
    if (c.contains("secret")) {
      return Status::Invalid(
          "{}: write \"secret_sha256\" (the secret's SHA-256 in hex), not the "
          "secret itself",
          at);
    }
    std::string digest = c.value("secret_sha256", "");
    bool hex = digest.size() == 64 && std::all_of(digest.begin(), digest.end(), [](char ch) {
                 return std::isxdigit(static_cast<unsigned char>(ch));
               });
    if (!hex) return Status::Invalid("{}: \"secret_sha256\" must be 64 hex digits", at);
    client.secret_sha256 = AsciiLower(digest);
    if (!c.contains("namespaces") || !c["namespaces"].is_array() || c["namespaces"].empty()) {
      return Status::Invalid("{}: \"namespaces\" must list the namespaces it sees (\"*\": all)",
                             at);
    }
    for (const json& ns : c["namespaces"]) {
      if (!ns.is_string() || ns.get<std::string>().empty()) {
        return Status::Invalid("{}: namespaces are non-empty strings", at);
      }
      std::string dotted = ns.get<std::string>();
      if (dotted == "*") {
        client.grants = {{}};
        break;
      }
      client.grants.push_back(catalog::SplitNamespace(dotted));
    }
    if (c.contains("read_only") && !c["read_only"].is_boolean()) {
      return Status::Invalid("{}: \"read_only\" is true or false", at);
    }
    client.read_only = c.value("read_only", false);
    out.push_back(std::move(client));
  }
  return out;
}

bool Principal::Sees(const std::vector<std::string>& ns) const {
  if (client == nullptr) return true;
  for (const auto& g : client->grants) {
    if (Within(ns, g)) return true;
  }
  return false;
}

bool Principal::Lists(const std::vector<std::string>& ns) const {
  if (Sees(ns)) return true;
  for (const auto& g : client->grants) {
    if (Within(g, ns)) return true;  // ns is a level above this grant
  }
  return false;
}

CatalogAuth::CatalogAuth(CatalogAuthOptions options)
    : options_([&] {
        if (!options.now_s) {
          options.now_s = MonotonicSeconds;
        }
        return std::move(options);
      }()) {}

std::optional<Principal> CatalogAuth::Authenticate(const HttpRequest& req) {
  if (!enabled()) return Principal{};
  std::string token = req.BearerToken();
  if (token.empty()) return std::nullopt;
  if (!options_.admin_token.empty() && ConstantTimeEquals(token, options_.admin_token)) {
    return Principal{};
  }
  // Issued tokens are looked up by their digest: the map's comparisons then
  // reveal nothing about a token's content.
  std::string key = Sha256Hex(token);
  std::lock_guard lock(mu_);
  auto it = tokens_.find(key);
  if (it == tokens_.end()) return std::nullopt;
  if (it->second.expires_s <= options_.now_s()) {
    tokens_.erase(it);
    return std::nullopt;
  }
  return Principal{&options_.clients[it->second.client]};
}

const CatalogClient* CatalogAuth::Client(std::string_view id, std::string_view secret) const {
  std::string digest = Sha256Hex(secret);
  const CatalogClient* found = nullptr;
  for (const auto& c : options_.clients) {
    // Every client's digest is compared, so timing does not tell which ids exist.
    bool match = ConstantTimeEquals(c.secret_sha256, digest);
    if (c.id == id && match) found = &c;
  }
  return found;
}

HttpResponse CatalogAuth::Grant(size_t client) {
  std::string token = RandomHex(32);
  int64_t now = options_.now_s();
  {
    std::lock_guard lock(mu_);
    std::erase_if(tokens_, [&](const auto& t) { return t.second.expires_s <= now; });
    tokens_[Sha256Hex(token)] = {client, now + options_.token_ttl_s};
  }
  HttpResponse res;
  res.SetContent(json{{"access_token", token},
                      {"token_type", "bearer"},
                      {"expires_in", options_.token_ttl_s},
                      {"issued_token_type", kAccessTokenType}}
                     .dump(),
                 "application/json");
  res.Set("Cache-Control", "no-store");
  return res;
}

HttpResponse CatalogAuth::IssueToken(const HttpRequest& req) {
  if (req.method != "POST") return OAuthError(400, "invalid_request", "POST the token request");
  std::string grant = server::FormValue(req.body, "grant_type").value_or("");
  if (grant == kTokenExchange) {
    // Renewal: the caller proves itself with the token it holds.
    std::string subject = server::FormValue(req.body, "subject_token").value_or("");
    server::HttpRequest probe;
    probe.headers.emplace_back("authorization", "Bearer " + subject);
    auto who = Authenticate(probe);
    if (!who || who->client == nullptr) {
      return OAuthError(401, "invalid_client", "the subject token is not a valid client token");
    }
    return Grant(static_cast<size_t>(who->client - options_.clients.data()));
  }
  if (grant != "client_credentials") {
    return OAuthError(400, "unsupported_grant_type",
                      "grant_type must be client_credentials or token-exchange");
  }
  std::string id = server::FormValue(req.body, "client_id").value_or("");
  std::string secret = server::FormValue(req.body, "client_secret").value_or("");
  if (auto basic = BasicCredentials(req)) std::tie(id, secret) = *basic;
  if (id.empty()) return OAuthError(400, "invalid_request", "client_id is missing");
  const CatalogClient* client = Client(id, secret);
  if (client == nullptr) {
    return OAuthError(401, "invalid_client", "unknown client or wrong secret");
  }
  return Grant(static_cast<size_t>(client - options_.clients.data()));
}

}  // namespace sluice::rest
