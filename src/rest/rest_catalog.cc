#include "rest/rest_catalog.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <set>

#include "catalog/table.h"
#include "rest/rest_answers.h"
#include "rest/table_change.h"
#include "rest/table_locations.h"

namespace sluice::rest {
namespace {

using json = nlohmann::json;
using server::HttpRequest;
using server::HttpResponse;
using namespace internal;  // NOLINT: the answers of rest_answers.h

constexpr char kUnitSeparator = '\x1f';

const char* const kEndpoints[] = {
    "GET /v1/config",
    "GET /v1/namespaces",
    "POST /v1/namespaces",
    "GET /v1/namespaces/{namespace}",
    "HEAD /v1/namespaces/{namespace}",
    "DELETE /v1/namespaces/{namespace}",
    "POST /v1/namespaces/{namespace}/properties",
    "GET /v1/namespaces/{namespace}/tables",
    "POST /v1/namespaces/{namespace}/tables",
    "GET /v1/namespaces/{namespace}/tables/{table}",
    "HEAD /v1/namespaces/{namespace}/tables/{table}",
    "POST /v1/namespaces/{namespace}/tables/{table}",
    "DELETE /v1/namespaces/{namespace}/tables/{table}",
    "POST /v1/namespaces/{namespace}/register",
    "POST /v1/namespaces/{namespace}/tables/{table}/metrics",
    "POST /v1/tables/rename",
    "POST /v1/transactions/commit",
};

// The levels of a decoded namespace (joined by the unit separator), validated.
Result<std::vector<std::string>> SplitLevels(const std::string& decoded) {
  std::vector<std::string> levels;
  size_t at = 0;
  while (true) {
    size_t end = decoded.find(kUnitSeparator, at);
    levels.push_back(decoded.substr(at, end == std::string::npos ? std::string::npos : end - at));
    if (end == std::string::npos) break;
    at = end + 1;
  }
  for (const std::string& level : levels) {
    RETURN_IF_ERROR(catalog::ValidateNamePart(level, "namespace"));
  }
  return levels;
}

// The levels of a namespace path segment ("a%1Fb").
Result<std::vector<std::string>> ParseNamespace(std::string_view segment) {
  auto decoded = server::PercentDecode(segment, false);
  if (!decoded) return Status::Invalid("namespace '{}': bad percent-encoding", segment);
  return SplitLevels(*decoded);
}

std::vector<std::string_view> Segments(std::string_view path) {
  std::vector<std::string_view> out;
  size_t at = 0;
  while (at < path.size()) {
    size_t end = path.find('/', at);
    if (end == std::string_view::npos) end = path.size();
    out.push_back(path.substr(at, end - at));
    at = end + 1;
  }
  return out;
}

HttpResponse MethodNotAllowed(const HttpRequest& req, std::string_view allow) {
  HttpResponse res =
      Error(405, "MethodNotAllowedException",
            fmt::format("{} {}: method not allowed (allowed: {})", req.method, req.path, allow));
  res.Set("Allow", std::string(allow));
  return res;
}

// The slice of sorted `keys` one page of a list answers: pageToken (the last
// key of the page before) and pageSize (default: everything) from the query.
struct Page {
  size_t begin = 0, end = 0;
  std::string next;  // empty: this is the last page
};
Result<Page> PageOf(const std::vector<std::string>& keys, const HttpRequest& req) {
  Page page;
  page.end = keys.size();
  if (auto token = server::FormValue(req.query, "pageToken"); token && !token->empty()) {
    page.begin =
        static_cast<size_t>(std::upper_bound(keys.begin(), keys.end(), *token) - keys.begin());
  }
  if (auto size = server::FormValue(req.query, "pageSize"); size && !size->empty()) {
    char* end = nullptr;
    long n = std::strtol(size->c_str(), &end, 10);
    if (*end != '\0' || n < 1) {
      return Status::Invalid("pageSize={}: expected a positive integer", *size);
    }
    if (page.begin + static_cast<size_t>(n) < keys.size()) {
      page.end = page.begin + static_cast<size_t>(n);
      page.next = keys[page.end - 1];
    }
  }
  page.end = std::max(page.end, page.begin);
  return page;
}

}  // namespace

bool RestCatalogHandler::Claims(std::string_view path) const {
  for (std::string_view root :
       {"/v1/config", "/v1/namespaces", "/v1/tables/", "/v1/transactions/", "/v1/oauth/"}) {
    if (path == root || path.starts_with(root.ends_with('/') ? root : std::string(root) + "/")) {
      return true;
    }
  }
  return false;
}

HttpResponse RestCatalogHandler::Handle(const HttpRequest& req) {
  try {
    return Dispatch(req);
  } catch (const std::exception& e) {
    // A JSON value of the wrong type deep inside a request (nlohmann throws):
    // the client's error, never the server's end.
    return Error(400, "BadRequestException",
                 fmt::format("{} {}: malformed request: {}", req.method, req.path, e.what()));
  }
}

HttpResponse RestCatalogHandler::Dispatch(const HttpRequest& req) {
  if (req.path == "/v1/oauth/tokens") {
    if (auth_ == nullptr || !auth_->enabled()) {
      return Error(406, "UnsupportedOperationException",
                   "this catalog issues no OAuth2 tokens (give sluice --catalog-clients FILE)");
    }
    return auth_->IssueToken(req);
  }
  Principal who;
  if (auth_ != nullptr) {
    auto p = auth_->Authenticate(req);
    if (!p) {
      HttpResponse res = Error(401, "NotAuthorizedException", "missing, wrong or expired token");
      res.Set("WWW-Authenticate", "Bearer realm=\"sluice\"");
      return res;
    }
    who = *p;
  }
  // A mutation (but a metrics report) may carry an Idempotency-Key: a retry
  // of it is answered as the first was (idempotency.h).
  bool mutates =
      (req.method == "POST" || req.method == "DELETE") && !req.path.ends_with("/metrics");
  if (mutates) return keys_.Run(who.name(), req, [&] { return Route(req, who); });
  return Route(req, who);
}

HttpResponse RestCatalogHandler::Route(const HttpRequest& req, const Principal& who) {
  std::vector<std::string_view> seg = Segments(std::string_view(req.path).substr(4));  // "/v1/"
  const std::string& m = req.method;
  if (seg.size() == 1 && seg[0] == "config") {
    if (m != "GET") return MethodNotAllowed(req, "GET");
    json endpoints = json::array();
    for (const char* e : kEndpoints) endpoints.push_back(e);
    return Json(200, {{"defaults", json::object()},
                      {"overrides", json::object()},
                      {"endpoints", endpoints},
                      {"idempotency-key-lifetime", keys_.LifetimeText()}});
  }
  if (seg.size() == 2 && seg[0] == "tables" && seg[1] == "rename") {
    if (m != "POST") return MethodNotAllowed(req, "POST");
    return RenameTable(req, who);
  }
  if (seg.size() == 2 && seg[0] == "transactions" && seg[1] == "commit") {
    if (m != "POST") return MethodNotAllowed(req, "POST");
    return CommitTransaction(req, who);
  }
  if (seg.empty() || seg[0] != "namespaces") {
    return Error(406, "UnsupportedOperationException",
                 fmt::format("{} {}: not supported by this catalog (GET /v1/config lists what is)",
                             req.method, req.path));
  }
  if (seg.size() == 1) {
    if (m == "GET") return ListNamespaces(req, who);
    if (m == "POST") return CreateNamespace(req, who);
    return MethodNotAllowed(req, "GET, POST");
  }
  auto ns = ParseNamespace(seg[1]);
  if (!ns.ok()) return FromStatus(ns.status(), "");
  bool table_route = seg.size() >= 4 && seg[2] == "tables";
  if (!who.Sees(*ns)) {  // invisible: as if it did not exist
    return table_route
               ? Error(404, "NoSuchTableException", "no such table")
               : Error(404, "NoSuchNamespaceException",
                       fmt::format("namespace {} does not exist", catalog::JoinNamespace(*ns)));
  }
  bool reads = m == "GET" || m == "HEAD" || (seg.size() == 5 && seg[4] == "metrics");
  if (!reads && !who.may_write()) {
    return Error(403, "ForbiddenException",
                 fmt::format("client {} may read but not change the catalog", who.name()));
  }
  return NamespaceRoute(req, *ns, seg, who);
}

HttpResponse RestCatalogHandler::NamespaceRoute(const HttpRequest& req,
                                                const std::vector<std::string>& ns,
                                                const std::vector<std::string_view>& seg,
                                                const Principal& who) {
  const std::string& m = req.method;
  if (seg.size() == 2) {
    if (m == "GET" || m == "HEAD") return LoadNamespace(ns, m == "HEAD");
    if (m == "DELETE") return DropNamespace(ns);
    return MethodNotAllowed(req, "GET, HEAD, DELETE");
  }
  if (seg.size() == 3 && seg[2] == "properties") {
    if (m != "POST") return MethodNotAllowed(req, "POST");
    return UpdateNamespaceProperties(ns, req);
  }
  if (seg.size() == 3 && seg[2] == "tables") {
    if (m == "GET") return ListTables(ns, req);
    if (m == "POST") return CreateTable(ns, req);
    return MethodNotAllowed(req, "GET, POST");
  }
  if (seg.size() == 3 && seg[2] == "register") {
    if (m != "POST") return MethodNotAllowed(req, "POST");
    return RegisterTable(ns, req, who);
  }
  if ((seg.size() == 4 || (seg.size() == 5 && seg[4] == "metrics")) && seg[2] == "tables") {
    auto name = server::PercentDecode(seg[3], false);
    if (!name) return Error(400, "BadRequestException", "table name: bad percent-encoding");
    Status valid = catalog::ValidateNamePart(*name, "table");
    if (!valid.ok()) return FromStatus(valid, "");
    catalog::TableIdent ident{ns, *name};
    if (seg.size() == 5) {
      if (m != "POST") return MethodNotAllowed(req, "POST");
      return ReportMetrics(ident, req);
    }
    if (m == "GET" || m == "HEAD") return LoadTable(ident, req, m == "HEAD");
    if (m == "DELETE") return DropTable(ident, req);
    if (m == "POST") return CommitTable(ident, req);
    return MethodNotAllowed(req, "GET, HEAD, POST, DELETE");
  }
  return Error(404, "NoSuchRouteException", fmt::format("{} {}: no such route", m, req.path));
}

HttpResponse RestCatalogHandler::RenameTable(const HttpRequest& req, const Principal& who) {
  auto j = BodyJson(req);
  if (!j.ok()) return FromStatus(j.status(), "");
  auto from = IdentOf((*j)["source"], "source");
  auto to = IdentOf((*j)["destination"], "destination");
  if (!from.ok()) return FromStatus(from.status(), "");
  if (!to.ok()) return FromStatus(to.status(), "");
  if (!who.Sees(from->ns)) return Error(404, "NoSuchTableException", "no such table");
  if (!who.Sees(to->ns)) return Error(404, "NoSuchNamespaceException", "no such namespace");
  if (!who.may_write()) {
    return Error(403, "ForbiddenException",
                 fmt::format("client {} may read but not change the catalog", who.name()));
  }
  if (auto missing = RequireNamespace(to->ns)) return *missing;
  Status st = catalog_.RenameTable(*from, *to);
  return st.ok() ? NoContent() : FromStatus(st, "NoSuchTableException");
}

HttpResponse RestCatalogHandler::ListNamespaces(const HttpRequest& req, const Principal& who) {
  std::vector<std::string> parent;
  if (auto p = server::FormValue(req.query, "parent"); p && !p->empty()) {
    auto levels = SplitLevels(*p);  // (the query value is decoded already)
    if (!levels.ok()) return FromStatus(levels.status(), "");
    parent = *levels;
  }
  auto all = catalog_.ListNamespaces();
  if (!all.ok()) return FromStatus(all.status(), "");
  std::set<std::vector<std::string>> children;
  bool parent_seen = parent.empty();
  for (const auto& ns : *all) {
    if (ns.size() < parent.size() || !std::equal(parent.begin(), parent.end(), ns.begin())) {
      continue;
    }
    parent_seen = true;
    if (ns.size() > parent.size()) {
      std::vector<std::string> child(ns.begin(), ns.begin() + parent.size() + 1);
      if (who.Lists(child)) children.insert(std::move(child));
    }
  }
  if (!parent_seen || !who.Lists(parent)) {
    return Error(404, "NoSuchNamespaceException",
                 fmt::format("namespace {} does not exist", catalog::JoinNamespace(parent)));
  }
  std::vector<std::string> keys;
  for (const auto& c : children) keys.push_back(catalog::JoinNamespace(c));
  auto page = PageOf(keys, req);
  if (!page.ok()) return FromStatus(page.status(), "");
  json out = json::array();
  auto it = children.begin();
  std::advance(it, page->begin);
  for (size_t i = page->begin; i < page->end; ++i, ++it) out.push_back(*it);
  json body = {{"namespaces", out}};
  if (!page->next.empty()) body["next-page-token"] = page->next;
  return Json(200, body);
}

HttpResponse RestCatalogHandler::CreateNamespace(const HttpRequest& req, const Principal& who) {
  auto j = BodyJson(req);
  if (!j.ok()) return FromStatus(j.status(), "");
  auto ns = NamespaceOf((*j)["namespace"], "namespace");
  if (!ns.ok()) return FromStatus(ns.status(), "");
  if (!who.Sees(*ns) || !who.may_write()) {
    return Error(403, "ForbiddenException",
                 fmt::format("client {} may not create namespace {}", who.name(),
                             catalog::JoinNamespace(*ns)));
  }
  std::map<std::string, std::string> props;
  if (j->contains("properties")) {
    const json& p = (*j)["properties"];
    if (!p.is_object()) return Error(400, "BadRequestException", "properties: expected an object");
    for (const auto& [k, v] : p.items()) {
      if (!v.is_string()) {
        return Error(400, "BadRequestException",
                     fmt::format("property '{}': values are strings", k));
      }
      props[k] = v.get<std::string>();
    }
  }
  auto exists = catalog_.NamespaceExists(*ns);
  if (exists.ok() && *exists) {
    return Error(409, "AlreadyExistsException",
                 fmt::format("namespace {} already exists", catalog::JoinNamespace(*ns)));
  }
  Status st = catalog_.CreateNamespace(*ns, props);
  if (!st.ok()) return FromStatus(st, "NoSuchNamespaceException");
  return Json(200, {{"namespace", *ns}, {"properties", props}});
}

std::optional<HttpResponse> RestCatalogHandler::RequireNamespace(
    const std::vector<std::string>& ns) {
  auto exists = catalog_.NamespaceExists(ns);
  if (!exists.ok()) return FromStatus(exists.status(), "");
  if (*exists) return std::nullopt;
  return Error(404, "NoSuchNamespaceException",
               fmt::format("namespace {} does not exist", catalog::JoinNamespace(ns)));
}

HttpResponse RestCatalogHandler::LoadNamespace(const std::vector<std::string>& ns, bool head) {
  if (auto missing = RequireNamespace(ns)) return *missing;
  if (head) return NoContent();
  auto props = catalog_.NamespaceProperties(ns);
  if (!props.ok()) return FromStatus(props.status(), "NoSuchNamespaceException");
  return Json(200, {{"namespace", ns}, {"properties", *props}});
}

HttpResponse RestCatalogHandler::DropNamespace(const std::vector<std::string>& ns) {
  if (auto missing = RequireNamespace(ns)) return *missing;
  auto tables = catalog_.ListTables(ns);
  if (!tables.ok()) return FromStatus(tables.status(), "NoSuchNamespaceException");
  if (!tables->empty()) {
    return Error(
        409, "NamespaceNotEmptyException",
        fmt::format("namespace {} holds {} tables", catalog::JoinNamespace(ns), tables->size()));
  }
  Status st = catalog_.DropNamespace(ns);
  return st.ok() ? NoContent() : FromStatus(st, "NoSuchNamespaceException");
}

HttpResponse RestCatalogHandler::ListTables(const std::vector<std::string>& ns,
                                            const HttpRequest& req) {
  if (auto missing = RequireNamespace(ns)) return *missing;
  auto tables = catalog_.ListTables(ns);
  if (!tables.ok()) return FromStatus(tables.status(), "NoSuchNamespaceException");
  std::sort(tables->begin(), tables->end(),
            [](const auto& a, const auto& b) { return a.name < b.name; });
  std::vector<std::string> keys;
  for (const auto& t : *tables) keys.push_back(t.name);
  auto page = PageOf(keys, req);
  if (!page.ok()) return FromStatus(page.status(), "");
  json ids = json::array();
  for (size_t i = page->begin; i < page->end; ++i) {
    ids.push_back({{"namespace", (*tables)[i].ns}, {"name", (*tables)[i].name}});
  }
  json body = {{"identifiers", ids}};
  if (!page->next.empty()) body["next-page-token"] = page->next;
  return Json(200, body);
}

Result<json> RestCatalogHandler::LoadResult(const catalog::TableIdent& ident, bool refs_only) {
  ASSIGN_OR_RETURN(std::string location, catalog_.LoadTable(ident));
  ASSIGN_OR_RETURN(std::string text, io_.ReadFile(location));
  json metadata = json::parse(text, nullptr, false);
  if (metadata.is_discarded() || !metadata.is_object()) {
    return Status::Corruption("table {}: metadata file {} is not JSON", ident.ToString(), location);
  }
  if (refs_only && metadata.contains("snapshots") && metadata["snapshots"].is_array()) {
    std::set<int64_t> referenced;
    if (metadata.contains("refs") && metadata["refs"].is_object()) {
      for (const auto& [name, ref] : metadata["refs"].items()) {
        if (ref.contains("snapshot-id") && ref["snapshot-id"].is_number_integer()) {
          referenced.insert(ref["snapshot-id"].get<int64_t>());
        }
      }
    }
    json kept = json::array();
    for (const json& s : metadata["snapshots"]) {
      if (s.contains("snapshot-id") && referenced.count(s["snapshot-id"].get<int64_t>())) {
        kept.push_back(s);
      }
    }
    metadata["snapshots"] = std::move(kept);
  }
  return json{{"metadata-location", location}, {"metadata", metadata}, {"config", json::object()}};
}

HttpResponse RestCatalogHandler::LoadTable(const catalog::TableIdent& ident, const HttpRequest& req,
                                           bool head) {
  if (head) {
    auto location = catalog_.LoadTable(ident);
    return location.ok() ? NoContent() : FromStatus(location.status(), "NoSuchTableException");
  }
  std::string snapshots = server::FormValue(req.query, "snapshots").value_or("all");
  if (snapshots != "all" && snapshots != "refs") {
    return Error(400, "BadRequestException",
                 fmt::format("snapshots={}: expected all or refs", snapshots));
  }
  auto result = LoadResult(ident, snapshots == "refs");
  if (!result.ok()) return FromStatus(result.status(), "NoSuchTableException");
  return Json(200, *result);
}

HttpResponse RestCatalogHandler::DropTable(const catalog::TableIdent& ident,
                                           const HttpRequest& req) {
  bool purge = server::FormValue(req.query, "purgeRequested").value_or("false") == "true";
  std::string table_location;
  if (purge) {
    auto loaded = catalog::Table::Load(catalog_, io_, ident);
    if (!loaded.ok()) return FromStatus(loaded.status(), "NoSuchTableException");
    table_location = (*loaded)->metadata().location;
    // Everything under the location goes: only inside the warehouse, and
    // refused while another table lives there too (registered from the same
    // files, or nested inside).
    Status inside = CheckLocationInWarehouse(table_location, warehouse_);
    if (!inside.ok()) {
      return Error(400, "BadRequestException",
                   fmt::format("table {} lies outside the warehouse: a purge deletes only inside "
                               "it (drop without purge)",
                               ident.ToString()));
    }
    auto other = TableOverlapping(catalog_, io_, table_location, &ident);
    if (!other.ok()) return FromStatus(other.status(), "");
    if (*other) {
      return Error(400, "BadRequestException",
                   fmt::format("table {} shares its location with table {}: a purge would delete "
                               "that table's files (drop without purge)",
                               ident.ToString(), (*other)->ToString()));
    }
  }
  Status st = catalog_.DropTable(ident);
  if (!st.ok()) return FromStatus(st, "NoSuchTableException");
  if (purge && !table_location.empty()) {
    std::string prefix = table_location.ends_with('/') ? table_location : table_location + "/";
    auto files = io_.List(prefix);
    if (files.ok()) {
      std::vector<std::string> failures = io_.DeleteAll(*files);
      if (!failures.empty()) {
        return Error(500, "InternalServerError",
                     fmt::format("table {} dropped; {} of its files could not be deleted: {}",
                                 ident.ToString(), failures.size(), failures.front()));
      }
    } else if (files.status().code() != StatusCode::kNotFound) {
      return FromStatus(
          files.status().WithContextF("table {} dropped; purging it", ident.ToString()), "");
    }
  }
  return NoContent();
}

HttpResponse RestCatalogHandler::RegisterTable(const std::vector<std::string>& ns,
                                               const HttpRequest& req, const Principal& who) {
  auto j = BodyJson(req);
  if (!j.ok()) return FromStatus(j.status(), "");
  if (!(*j)["name"].is_string() || !(*j)["metadata-location"].is_string()) {
    return Error(400, "BadRequestException",
                 "expected {\"name\": \"...\", \"metadata-location\": \"...\"}");
  }
  if (j->value("overwrite", false)) {
    return Error(406, "UnsupportedOperationException", "register with overwrite is not supported");
  }
  catalog::TableIdent ident{ns, (*j)["name"].get<std::string>()};
  Status valid = catalog::ValidateNamePart(ident.name, "table");
  if (!valid.ok()) return FromStatus(valid, "");
  if (auto missing = RequireNamespace(ns)) return *missing;
  std::string location = (*j)["metadata-location"].get<std::string>();
  if (who.client != nullptr) {
    // A client adopts files inside the warehouse that no other table holds:
    // registering another table's files would show it data outside its grants.
    Status inside = CheckLocationInWarehouse(location, warehouse_);
    if (!inside.ok()) return FromStatus(inside, "");
    auto adopted = catalog::Table::LoadFromMetadataFile(io_, location);
    if (!adopted.ok()) return FromStatus(adopted.status(), "NotFoundException");
    Status table_inside = CheckLocationInWarehouse((*adopted)->metadata().location, warehouse_);
    if (!table_inside.ok()) return FromStatus(table_inside, "");
    auto other = TableOverlapping(catalog_, io_, (*adopted)->metadata().location, nullptr);
    if (!other.ok()) return FromStatus(other.status(), "");
    if (*other) {
      return Error(
          403, "ForbiddenException",
          fmt::format("client {} may not register the files of another table", who.name()));
    }
  }
  auto table = catalog::Table::Register(catalog_, io_, ident, location);
  if (!table.ok()) return FromStatus(table.status(), "NotFoundException");
  auto result = LoadResult(ident, false);
  if (!result.ok()) return FromStatus(result.status(), "NoSuchTableException");
  return Json(200, *result);
}

HttpResponse RestCatalogHandler::UpdateNamespaceProperties(const std::vector<std::string>& ns,
                                                           const HttpRequest& req) {
  auto j = BodyJson(req);
  if (!j.ok()) return FromStatus(j.status(), "");
  std::map<std::string, std::string> updates;
  std::vector<std::string> removals;
  try {
    if (j->contains("updates") && !(*j)["updates"].is_null()) {
      updates = (*j)["updates"].get<std::map<std::string, std::string>>();
    }
    if (j->contains("removals") && !(*j)["removals"].is_null()) {
      removals = (*j)["removals"].get<std::vector<std::string>>();
    }
  } catch (const std::exception&) {
    return Error(400, "BadRequestException",
                 "expected {\"updates\": {key: string}, \"removals\": [string]}");
  }
  for (const std::string& key : removals) {
    if (updates.count(key)) {
      return Error(422, "UnprocessableEntityException",
                   fmt::format("property '{}' is both updated and removed", key));
    }
  }
  if (auto missing = RequireNamespace(ns)) return *missing;
  auto missing = catalog_.UpdateNamespaceProperties(ns, updates, removals);
  if (!missing.ok()) return FromStatus(missing.status(), "NoSuchNamespaceException");
  json updated = json::array(), removed = json::array();
  for (const auto& [k, v] : updates) updated.push_back(k);
  for (const std::string& k : removals) {
    if (std::find(missing->begin(), missing->end(), k) == missing->end()) removed.push_back(k);
  }
  return Json(200, {{"updated", updated}, {"removed", removed}, {"missing", *missing}});
}

}  // namespace sluice::rest
