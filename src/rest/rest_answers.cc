#include "rest/rest_answers.h"

#include <fmt/format.h>

namespace sluice::rest::internal {

using json = nlohmann::json;
using server::HttpRequest;
using server::HttpResponse;

HttpResponse Json(int status, const json& body) {
  HttpResponse res;
  res.status = status;
  res.SetContent(body.dump(), "application/json");
  return res;
}

HttpResponse NoContent() {
  HttpResponse res;
  res.status = 204;
  return res;
}

HttpResponse Error(int status, std::string_view type, std::string_view message) {
  return Json(status, {{"error", {{"message", message}, {"type", type}, {"code", status}}}});
}

// A catalog error as the spec names it; kNotFound as `not_found_type`.
HttpResponse FromStatus(const Status& st, std::string_view not_found_type) {
  switch (st.code()) {
    case StatusCode::kNotFound: return Error(404, not_found_type, st.message());
    case StatusCode::kAlreadyExists: return Error(409, "AlreadyExistsException", st.message());
    case StatusCode::kConflict: return Error(409, "CommitFailedException", st.message());
    case StatusCode::kCommitStateUnknown:
      return Error(500, "CommitStateUnknownException", st.message());
    case StatusCode::kInvalidArgument: return Error(400, "BadRequestException", st.message());
    case StatusCode::kIOError:  // storage or the database failed: try again
      return Error(503, "ServiceUnavailableException", st.message());
    case StatusCode::kNotImplemented:
      return Error(406, "UnsupportedOperationException", st.message());
    default: return Error(500, "InternalServerError", st.message());
  }
}

Result<std::vector<std::string>> NamespaceOf(const json& j, std::string_view what) {
  if (!j.is_array() || j.empty()) {
    return Status::Invalid("{}: expected a non-empty array of namespace levels", what);
  }
  std::vector<std::string> levels;
  for (const json& level : j) {
    if (!level.is_string()) return Status::Invalid("{}: namespace levels are strings", what);
    levels.push_back(level.get<std::string>());
    RETURN_IF_ERROR(catalog::ValidateNamePart(levels.back(), "namespace"));
    // The SQL catalog stores levels joined by dots: a dot inside one would read
    // back as two levels.
    if (levels.back().find('.') != std::string::npos) {
      return Status::Invalid("{}: namespace level '{}' contains '.', which separates levels", what,
                             levels.back());
    }
  }
  return levels;
}

Result<catalog::TableIdent> IdentOf(const json& j, std::string_view what) {
  if (!j.is_object() || !j.contains("namespace") || !j.contains("name") || !j["name"].is_string()) {
    return Status::Invalid("{}: expected {{\"namespace\": [...], \"name\": \"...\"}}", what);
  }
  catalog::TableIdent ident;
  ASSIGN_OR_RETURN(ident.ns, NamespaceOf(j["namespace"], what));
  ident.name = j["name"].get<std::string>();
  RETURN_IF_ERROR(catalog::ValidateNamePart(ident.name, "table"));
  return ident;
}

Result<json> BodyJson(const HttpRequest& req) {
  json j = json::parse(req.body, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    return Status::Invalid("{} {}: the body is not a JSON object", req.method, req.path);
  }
  return j;
}

}  // namespace sluice::rest::internal
