// Internal to src/rest: the catalog handler's answers (the spec's ErrorModel
// and JSON bodies) and the readers of request bodies, shared by its route
// files (rest_catalog.cc: routing, namespaces, reads; rest_catalog_commit.cc:
// creates, commits, transactions).
#pragma once

#include <nlohmann/json.hpp>
#include <string_view>
#include <vector>

#include "catalog/catalog.h"
#include "common/status.h"
#include "server/http_message.h"

namespace sluice::rest::internal {

server::HttpResponse Json(int status, const nlohmann::json& body);
server::HttpResponse NoContent();
// {"error": {"message", "type", "code"}}
server::HttpResponse Error(int status, std::string_view type, std::string_view message);
// A catalog error as the spec names it; kNotFound as `not_found_type`.
server::HttpResponse FromStatus(const Status& st, std::string_view not_found_type);

// The request body as a JSON object, or kInvalidArgument.
Result<nlohmann::json> BodyJson(const server::HttpRequest& req);
// A JSON array of namespace levels, validated ('.' refused: the SQL catalog
// joins levels with dots).
Result<std::vector<std::string>> NamespaceOf(const nlohmann::json& j, std::string_view what);
// {"namespace": [...], "name": "..."}, validated.
Result<catalog::TableIdent> IdentOf(const nlohmann::json& j, std::string_view what);

}  // namespace sluice::rest::internal
