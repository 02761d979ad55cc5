#include "catalog/rest_client.h"

#include <curl/curl.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <mutex>
#include <nlohmann/json.hpp>
#include <random>
#include <thread>

#include "catalog/rest_diff.h"
#include "common/ascii.h"
#include "common/uuid.h"

namespace sluice::catalog {
namespace {

using json = nlohmann::json;

struct Response {
  long status = 0;
  std::string body;
  bool replayed = false;  // "Idempotent-Replayed: true": the answer a key's first request got
};

// Notes the Idempotent-Replayed header (the only one read).
size_t ReadHeader(char* data, size_t size, size_t n, void* user) {
  std::string_view line(data, size * n);
  if (line.starts_with("HTTP/")) static_cast<Response*>(user)->replayed = false;  // a new block
  constexpr std::string_view kName = "idempotent-replayed:";
  if (line.size() > kName.size() && EqualsIgnoreCase(line.substr(0, kName.size()), kName)) {
    std::string_view value = line.substr(kName.size());
    while (!value.empty() && (value.front() == ' ' || value.front() == '\t'))
      value.remove_prefix(1);
    while (!value.empty() &&
           (value.back() == '\r' || value.back() == '\n' || value.back() == ' ')) {
      value.remove_suffix(1);
    }
    static_cast<Response*>(user)->replayed = EqualsIgnoreCase(value, "true");
  }
  return size * n;
}

size_t Collect(char* data, size_t size, size_t n, void* user) {
  static_cast<std::string*>(user)->append(data, size * n);
  return size * n;
}

std::string Escape(std::string_view s) {
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      out += fmt::format("%{:02X}", c);
    }
  }
  return out;
}

// A namespace as a path segment: levels joined by the unit separator.
std::string NamespacePath(const std::vector<std::string>& ns) {
  std::string joined;
  for (size_t i = 0; i < ns.size(); ++i) {
    if (i > 0) joined.push_back('\x1f');
    joined += ns[i];
  }
  return Escape(joined);
}

json IdentJson(const TableIdent& t) { return {{"namespace", t.ns}, {"name", t.name}}; }

// The server's error message (ErrorModel), or the status line.
std::string ErrorText(const Response& r) {
  json j = json::parse(r.body, nullptr, false);
  if (j.is_object() && j.contains("error") && j["error"].is_object()) {
    return fmt::format("{} {}: {}", r.status, j["error"].value("type", ""),
                       j["error"].value("message", ""));
  }
  return fmt::format("HTTP {}", r.status);
}

class RestCatalogClient final : public Catalog {
 public:
  RestCatalogClient(std::string base, FileIO& io, RestClientOptions options)
      : base_(std::move(base)), io_(io), options_(std::move(options)) {}

  Status Init() {
    static std::once_flag once;
    std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
    ASSIGN_OR_RETURN(Response r, Call("GET", base_ + "/v1/config", "", true));
    if (r.status != 200) return Fail(r, "GET /v1/config");
    json j = json::parse(r.body, nullptr, false);
    if (j.is_object() && j.contains("overrides") && j["overrides"].contains("prefix") &&
        j["overrides"]["prefix"].is_string()) {
      std::string prefix = j["overrides"]["prefix"].get<std::string>();
      if (!prefix.empty()) root_ = base_ + "/v1/" + prefix;
    }
    if (root_.empty()) root_ = base_ + "/v1";
    // Its presence says the server takes Idempotency-Keys (a retry happens
    // within seconds, well inside any lifetime it names).
    idempotency_keys_ = j.is_object() && j.contains("idempotency-key-lifetime") &&
                        j["idempotency-key-lifetime"].is_string();
    return Status::OK();
  }

  std::string name() const override { return "rest:" + base_; }
  bool SwapsMetadataFiles() const override { return false; }

  Status CreateNamespace(const std::vector<std::string>& ns,
                         const std::map<std::string, std::string>& properties) override {
    json body = {{"namespace", ns}, {"properties", properties}};
    ASSIGN_OR_RETURN(Response r, Mutate("POST", root_ + "/namespaces", body.dump()));
    return r.status == 200 ? Status::OK() : Fail(r, "create namespace " + JoinNamespace(ns));
  }

  Result<std::vector<std::vector<std::string>>> ListNamespaces() override {
    std::vector<std::vector<std::string>> out;
    RETURN_IF_ERROR(ListUnder({}, &out));
    return out;
  }

  Result<bool> NamespaceExists(const std::vector<std::string>& ns) override {
    ASSIGN_OR_RETURN(Response r, Call("GET", root_ + "/namespaces/" + NamespacePath(ns), "", true));
    if (r.status == 404) return false;
    if (r.status == 200) return true;
    return Fail(r, "load namespace " + JoinNamespace(ns));
  }

  Result<std::map<std::string, std::string>> NamespaceProperties(
      const std::vector<std::string>& ns) override {
    ASSIGN_OR_RETURN(Response r, Call("GET", root_ + "/namespaces/" + NamespacePath(ns), "", true));
    if (r.status != 200) return Fail(r, "load namespace " + JoinNamespace(ns));
    json j = json::parse(r.body, nullptr, false);
    std::map<std::string, std::string> out;
    if (j.is_object() && j.contains("properties") && j["properties"].is_object()) {
      for (const auto& [k, v] : j["properties"].items()) {
        if (v.is_string()) out[k] = v.get<std::string>();
      }
    }
    return out;
  }

  Result<std::vector<std::string>> UpdateNamespaceProperties(
      const std::vector<std::string>& ns, const std::map<std::string, std::string>& updates,
      const std::vector<std::string>& removals) override {
    json body = {{"updates", updates}, {"removals", removals}};
    ASSIGN_OR_RETURN(
        Response r,
        Mutate("POST", root_ + "/namespaces/" + NamespacePath(ns) + "/properties", body.dump()));
    if (r.status != 200) return Fail(r, "update namespace " + JoinNamespace(ns));
    json j = json::parse(r.body, nullptr, false);
    std::vector<std::string> missing;
    if (j.is_object() && j.contains("missing") && j["missing"].is_array()) {
      for (const json& k : j["missing"]) {
        if (k.is_string()) missing.push_back(k.get<std::string>());
      }
    }
    return missing;
  }

  Status DropNamespace(const std::vector<std::string>& ns) override {
    ASSIGN_OR_RETURN(Response r, Mutate("DELETE", root_ + "/namespaces/" + NamespacePath(ns), ""));
    if (r.status == 204 || r.status == 200) return Status::OK();
    if (r.status == 409) {
      return Status::Invalid("namespace {} is not empty ({})", JoinNamespace(ns), ErrorText(r));
    }
    return Fail(r, "drop namespace " + JoinNamespace(ns));
  }

  Status CreateTable(const TableIdent& table, const std::string& metadata_location) override {
    json body = {{"name", table.name}, {"metadata-location", metadata_location}};
    bool unsent = false;
    std::string what = "register table " + table.ToString();
    auto r = Mutate("POST", root_ + "/namespaces/" + NamespacePath(table.ns) + "/register",
                    body.dump(), &unsent);
    // Sent but unanswered, or a server error: the table may exist now, naming
    // the caller's file, which must then stay.
    if (!r.ok() && !unsent) {
      return Status(StatusCode::kCommitStateUnknown,
                    fmt::format("{}: {}", what, r.status().message()));
    }
    RETURN_IF_ERROR(r);
    if (r->status >= 500) {
      return Status(StatusCode::kCommitStateUnknown, fmt::format("{}: {}", what, ErrorText(*r)));
    }
    return r->status == 200 ? Status::OK() : Fail(*r, what);
  }

  Result<std::string> LoadTable(const TableIdent& table) override {
    ASSIGN_OR_RETURN(Response r, Call("GET", TablePath(table) + "?snapshots=refs", "", true));
    if (r.status != 200) return Fail(r, "load table " + table.ToString());
    json j = json::parse(r.body, nullptr, false);
    if (!j.is_object() || !j.contains("metadata-location") || !j["metadata-location"].is_string()) {
      return Status::Corruption("load table {}: the answer names no metadata-location",
                                table.ToString());
    }
    return j["metadata-location"].get<std::string>();
  }

  Result<std::vector<TableIdent>> ListTables(const std::vector<std::string>& ns) override {
    std::vector<TableIdent> out;
    std::string token;
    do {
      std::string url = root_ + "/namespaces/" + NamespacePath(ns) + "/tables";
      if (!token.empty()) url += "?pageToken=" + Escape(token);
      ASSIGN_OR_RETURN(Response r, Call("GET", url, "", true));
      if (r.status != 200) return Fail(r, "list tables of " + JoinNamespace(ns));
      json j = json::parse(r.body, nullptr, false);
      if (!j.is_object() || !j.contains("identifiers")) {
        return Status::Corruption("list tables of {}: unexpected answer", JoinNamespace(ns));
      }
      RETURN_IF_ERROR(Parsed("list tables", [&]() -> Status {
        for (const json& id : j["identifiers"]) {
          out.push_back({id.at("namespace").get<std::vector<std::string>>(),
                         id.at("name").get<std::string>()});
        }
        return Status::OK();
      }));
      token = NextPageToken(j);
    } while (!token.empty());
    return out;
  }

  Status DropTable(const TableIdent& table) override {
    ASSIGN_OR_RETURN(Response r, Mutate("DELETE", TablePath(table), ""));
    return r.status == 204 || r.status == 200 ? Status::OK()
                                              : Fail(r, "drop table " + table.ToString());
  }

  Status RenameTable(const TableIdent& from, const TableIdent& to) override {
    json body = {{"source", IdentJson(from)}, {"destination", IdentJson(to)}};
    ASSIGN_OR_RETURN(Response r, Mutate("POST", root_ + "/tables/rename", body.dump()));
    return r.status == 204 || r.status == 200
               ? Status::OK()
               : Fail(r, fmt::format("rename table {} to {}", from.ToString(), to.ToString()));
  }

  Status CommitTables(const std::vector<TableCommit>& commits) override {
    json changes = json::array();
    for (const TableCommit& c : commits) {
      ASSIGN_OR_RETURN(std::string from, io_.ReadFile(c.expected_location));
      ASSIGN_OR_RETURN(std::string to, io_.ReadFile(c.new_location));
      auto change = RestCommitFor(from, to);
      RETURN_IF_ERROR_CTX(change, "table {}", c.table.ToString());
      (*change)["identifier"] = IdentJson(c.table);
      changes.push_back(std::move(*change));
    }
    std::string what = commits.size() == 1 ? "commit to table " + commits[0].table.ToString()
                                           : fmt::format("commit to {} tables", commits.size());
    std::string url =
        commits.size() == 1 ? TablePath(commits[0].table) : root_ + "/transactions/commit";
    std::string body =
        commits.size() == 1 ? changes[0].dump() : json{{"table-changes", changes}}.dump();
    bool unsent = false;
    auto r = Mutate("POST", url, body, &unsent);
    if (!r.ok()) {
      if (unsent) return r.status();  // never reached the server: retryable
      // Sent, but the answer was lost: the commit may have landed.
      return Status(StatusCode::kCommitStateUnknown,
                    fmt::format("{}: {}", what, r.status().message()));
    }
    if (r->status == 200 || r->status == 204) return Status::OK();
    if (r->status == 409) return Status::Conflict("{}: {}", what, ErrorText(*r));
    if (r->status >= 500) {
      return Status(StatusCode::kCommitStateUnknown, fmt::format("{}: {}", what, ErrorText(*r)));
    }
    return Fail(*r, what);
  }

 private:
  std::string TablePath(const TableIdent& t) const {
    return root_ + "/namespaces/" + NamespacePath(t.ns) + "/tables/" + Escape(t.name);
  }

  // Runs `fn`, which reads an answer; a JSON value of the wrong type is the
  // server's error (kCorruption), not a crash.
  template <typename Fn>
  static Status Parsed(std::string_view what, Fn&& fn) {
    try {
      return fn();
    } catch (const std::exception& e) {
      return Status::Corruption("{}: unexpected answer from the REST catalog: {}", what, e.what());
    }
  }

  static std::string NextPageToken(const json& j) {
    auto it = j.find("next-page-token");
    return it != j.end() && it->is_string() ? it->get<std::string>() : "";
  }

  // Every namespace under `parent`, depth first.
  Status ListUnder(const std::vector<std::string>& parent,
                   std::vector<std::vector<std::string>>* out) {
    std::string token;
    do {
      std::string url = root_ + "/namespaces";
      std::string sep = "?";
      if (!parent.empty()) {
        url += "?parent=" + NamespacePath(parent);
        sep = "&";
      }
      if (!token.empty()) url += sep + "pageToken=" + Escape(token);
      ASSIGN_OR_RETURN(Response r, Call("GET", url, "", true));
      if (r.status != 200) return Fail(r, "list namespaces");
      json j = json::parse(r.body, nullptr, false);
      if (!j.is_object() || !j.contains("namespaces") || !j["namespaces"].is_array()) {
        return Status::Corruption("list namespaces: unexpected answer");
      }
      std::vector<std::vector<std::string>> children;
      RETURN_IF_ERROR(Parsed("list namespaces", [&]() -> Status {
        for (const json& ns : j["namespaces"]) {
          children.push_back(ns.get<std::vector<std::string>>());
        }
        return Status::OK();
      }));
      for (auto& levels : children) {
        // Only children one level below `parent` (a server ignoring
        // `parent=` must not make this recurse forever).
        if (levels.size() != parent.size() + 1 ||
            !std::equal(parent.begin(), parent.end(), levels.begin())) {
          continue;
        }
        out->push_back(levels);
        RETURN_IF_ERROR(ListUnder(levels, out));
      }
      token = NextPageToken(j);
    } while (!token.empty());
    return Status::OK();
  }

  // The error a non-success answer means.
  static Status Fail(const Response& r, const std::string& what) {
    std::string text = fmt::format("{} through the REST catalog: {}", what, ErrorText(r));
    switch (r.status) {
      case 400:
      case 422: return Status::Invalid("{}", text);
      case 404: return Status::NotFound("{}", text);
      case 409: return Status::AlreadyExists("{}", text);
      case 406:
      case 501: return Status::NotImplemented("{}", text);
      default: return Status(StatusCode::kIOError, text, r.status >= 500);
    }
  }

  // The Authorization header's value (empty: none), fetching or renewing an
  // OAuth2 token when the options name client credentials.
  Result<std::string> Authorization() {
    if (!options_.token.empty()) return "Bearer " + options_.token;
    if (options_.credential.empty()) return std::string();
    std::lock_guard lock(token_mu_);
    auto now = std::chrono::steady_clock::now();
    if (!oauth_token_.empty() && now < token_expiry_) return "Bearer " + oauth_token_;
    size_t colon = options_.credential.find(':');
    std::string id = options_.credential.substr(0, colon);
    std::string secret = colon == std::string::npos ? "" : options_.credential.substr(colon + 1);
    std::string form = "grant_type=client_credentials&client_id=" + Escape(id) +
                       "&client_secret=" + Escape(secret) + "&scope=" + Escape(options_.scope);
    ASSIGN_OR_RETURN(Response r, Send("POST", base_ + "/v1/oauth/tokens", form,
                                      "application/x-www-form-urlencoded", ""));
    json j = json::parse(r.body, nullptr, false);
    if (r.status != 200 || !j.is_object() || !j.contains("access_token")) {
      return Status::Invalid("the REST catalog refused client {}'s credentials ({})", id,
                             ErrorText(r));
    }
    if (!j["access_token"].is_string()) {
      return Status::Invalid("the REST catalog's token answer has no access_token string");
    }
    oauth_token_ = j["access_token"].get<std::string>();
    int64_t expires = j.contains("expires_in") && j["expires_in"].is_number_integer()
                          ? j["expires_in"].get<int64_t>()
                          : 3600;
    expires = std::clamp<int64_t>(expires, 1, int64_t{365} * 86400);
    // Renewed when 90% of its life has passed.
    token_expiry_ = now + std::chrono::milliseconds(expires * 900);
    return "Bearer " + oauth_token_;
  }

  // A change to the catalog. Where the server takes Idempotency-Keys (its
  // config names idempotency-key-lifetime), it carries a new one and is
  // retried like a read, under the same key: a retry whose first attempt
  // landed is answered as that one was, never applied twice. Elsewhere it
  // is sent once.
  Result<Response> Mutate(const char* method, const std::string& url, const std::string& body,
                          bool* unsent = nullptr) {
    if (!idempotency_keys_) return Call(method, url, body, false, unsent);
    return Call(method, url, body, true, unsent, NewUuidV7());
  }

  // One request with the catalog's auth; `retry` ones retry transport
  // failures and 502/503/504 with backoff. `unsent` (when given) is true
  // when no attempt reached the server.
  Result<Response> Call(const char* method, const std::string& url, const std::string& body,
                        bool retry, bool* unsent = nullptr,
                        const std::string& idempotency_key = "") {
    auto auth = Authorization();
    if (!auth.ok()) {
      if (unsent != nullptr) *unsent = true;  // nothing was sent
      return auth.status();
    }
    thread_local std::mt19937_64 rng{std::random_device{}()};
    int attempts = retry ? options_.max_read_attempts : 1;
    bool any_sent = false;
    // A change retried under its key after an attempt that reached the
    // server but whose answer was lost (or was a gateway's): that attempt
    // may have landed. An answer to the retry that is no replay of it (the
    // server forgot the key: restarted, another replica, evicted) and no
    // success may be the change colliding with itself: its outcome is unknown.
    bool maybe_applied = false;
    for (int attempt = 1;; ++attempt) {
      bool not_sent = false;
      auto r = Send(method, url, body, "application/json", *auth, &not_sent, idempotency_key);
      any_sent |= !not_sent;
      if (unsent != nullptr) *unsent = !any_sent;
      bool again = !r.ok() ? r.status().retryable()
                           : (r->status == 502 || r->status == 503 || r->status == 504);
      if (!again || attempt >= attempts) {
        if (maybe_applied && !r.ok()) {
          return Status(StatusCode::kCommitStateUnknown,
                        fmt::format("REST catalog {} {}: an earlier attempt may have landed, and "
                                    "the retry failed: {}",
                                    method, url, r.status().message()));
        }
        if (maybe_applied && (r->status < 200 || r->status > 299) && !r->replayed) {
          return Status(StatusCode::kCommitStateUnknown,
                        fmt::format("REST catalog {} {}: an earlier attempt may have landed, and "
                                    "the retry was answered {} without replaying it",
                                    method, url, r->status));
        }
        return r;
      }
      maybe_applied |= !idempotency_key.empty() && !not_sent;
      int64_t cap = std::min<int64_t>(2000, int64_t{50} << attempt);
      std::this_thread::sleep_for(
          std::chrono::milliseconds(std::uniform_int_distribution<int64_t>(0, cap)(rng)));
    }
  }

  // One HTTP exchange. On a transport error, `unsent` (when given) tells
  // whether the request never reached the server.
  Result<Response> Send(const char* method, const std::string& url, const std::string& body,
                        const char* content_type, const std::string& auth, bool* unsent = nullptr,
                        const std::string& idempotency_key = "") {
    CURL* curl = curl_easy_init();
    if (curl == nullptr) return Status::Internal("curl_easy_init failed");
    curl_slist* headers = nullptr;
    headers = curl_slist_append(headers, (std::string("Content-Type: ") + content_type).c_str());
    headers = curl_slist_append(headers, "Accept: application/json");
    headers = curl_slist_append(headers, "Expect:");
    if (!auth.empty()) headers = curl_slist_append(headers, ("Authorization: " + auth).c_str());
    if (!idempotency_key.empty()) {
      headers = curl_slist_append(headers, ("Idempotency-Key: " + idempotency_key).c_str());
    }
    Response response;
    curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS,
                     static_cast<long>(options_.connect_timeout_ms));
    curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(options_.request_timeout_ms));
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, Collect);
    curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, ReadHeader);
    curl_easy_setopt(curl, CURLOPT_HEADERDATA, &response);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &response.body);
    std::string_view m = method;
    if (m == "HEAD") {
      curl_easy_setopt(curl, CURLOPT_NOBODY, 1L);
    } else if (m == "POST") {
      curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body.data());
      curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
    } else if (m != "GET") {
      curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, method);
    }
    CURLcode code = curl_easy_perform(curl);
    curl_slist_free_all(headers);
    if (code == CURLE_OK) curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &response.status);
    curl_easy_cleanup(curl);
    if (code != CURLE_OK) {
      bool never_sent = code == CURLE_COULDNT_CONNECT || code == CURLE_COULDNT_RESOLVE_HOST;
      if (unsent != nullptr) *unsent = never_sent;
      return Status(StatusCode::kIOError,
                    fmt::format("REST catalog {} {}: {}", method, url, curl_easy_strerror(code)),
                    never_sent || code == CURLE_OPERATION_TIMEDOUT || code == CURLE_RECV_ERROR ||
                        code == CURLE_GOT_NOTHING || code == CURLE_SEND_ERROR);
    }
    return response;
  }

  const std::string base_;
  std::string root_;               // base_/v1[/prefix]
  bool idempotency_keys_ = false;  // the server takes Idempotency-Keys
  FileIO& io_;
  const RestClientOptions options_;
  std::mutex token_mu_;
  std::string oauth_token_;
  std::chrono::steady_clock::time_point token_expiry_;
};

}  // namespace

bool IsRestCatalogUri(std::string_view uri) {
  return uri.starts_with("http://") || uri.starts_with("https://");
}

Result<std::unique_ptr<Catalog>> OpenRestCatalog(const std::string& url, FileIO& io,
                                                 RestClientOptions options) {
  std::string base = url;
  while (base.ends_with('/')) base.pop_back();
  auto client = std::make_unique<RestCatalogClient>(base, io, std::move(options));
  RETURN_IF_ERROR_CTX(client->Init(), "REST catalog {}", base);
  return std::unique_ptr<Catalog>(std::move(client));
}

}  // namespace sluice::catalog
