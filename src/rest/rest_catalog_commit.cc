// RestCatalogHandler's routes that write: table create (staged too), commits,
// multi-table transactions, metrics reports.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "catalog/table.h"
#include "iceberg/table_builder.h"
#include "rest/rest_answers.h"
#include "rest/rest_catalog.h"
#include "rest/table_change.h"
#include "rest/table_locations.h"

namespace sluice::rest {

using json = nlohmann::json;
using server::HttpRequest;
using server::HttpResponse;
using namespace internal;  // NOLINT: the answers of rest_answers.h

HttpResponse RestCatalogHandler::CreateTable(const std::vector<std::string>& ns,
                                             const HttpRequest& req) {
  auto j = BodyJson(req);
  if (!j.ok()) return FromStatus(j.status(), "");
  if (!j->contains("name") || !(*j)["name"].is_string()) {
    return Error(400, "BadRequestException", "create table: expected a \"name\"");
  }
  catalog::TableIdent ident{ns, (*j)["name"].get<std::string>()};
  Status valid = catalog::ValidateNamePart(ident.name, "table");
  if (!valid.ok()) return FromStatus(valid, "");
  if (auto missing = RequireNamespace(ns)) return *missing;
  if (catalog_.LoadTable(ident).ok()) {
    return Error(409, "AlreadyExistsException",
                 fmt::format("table {} already exists", ident.ToString()));
  }
  auto metadata =
      NewTableFromRequest(*j, catalog::DefaultTableLocation(warehouse_, ident), warehouse_);
  if (!metadata.ok()) return FromStatus(metadata.status(), "");
  auto other = TableOverlapping(catalog_, io_, metadata->location, &ident);
  if (!other.ok()) return FromStatus(other.status(), "");
  if (*other && j->contains("location") && !(*j)["location"].is_null()) {
    return Error(
        400, "BadRequestException",
        fmt::format("location {} overlaps table {}'s", metadata->location, (*other)->ToString()));
  }
  if (*other) {  // the default place is taken (a renamed table kept it): a fresh one
    metadata->location += "-" + metadata->table_uuid.substr(0, 8);
    auto still = TableOverlapping(catalog_, io_, metadata->location, &ident);
    if (!still.ok()) return FromStatus(still.status(), "");
    if (*still) {  // inside another table's location (a namespace named like a table)
      return Error(400, "BadRequestException",
                   fmt::format("no free location for table {}: {} lies inside table {}'s (give "
                               "a location)",
                               ident.ToString(), metadata->location, (*still)->ToString()));
    }
  }
  if (j->value("stage-create", false)) {  // nothing is written until a commit with assert-create
    return Json(200, {{"metadata", json::parse(iceberg::TableMetadataToJson(*metadata))},
                      {"config", json::object()}});
  }
  auto table = catalog::Table::Create(catalog_, io_, ident, *metadata);
  if (!table.ok()) return FromStatus(table.status(), "NoSuchNamespaceException");
  return Json(200, CommitResult(**table));
}

json RestCatalogHandler::CommitResult(const catalog::Table& table) {
  return {{"metadata-location", table.metadata_location()},
          {"metadata", json::parse(iceberg::TableMetadataToJson(table.metadata()))},
          {"config", json::object()}};
}

HttpResponse RestCatalogHandler::CommitTable(const catalog::TableIdent& ident,
                                             const HttpRequest& req) {
  auto j = BodyJson(req);
  if (!j.ok()) return FromStatus(j.status(), "");
  if (j->contains("identifier") && !(*j)["identifier"].is_null()) {
    auto named = IdentOf((*j)["identifier"], "identifier");
    if (!named.ok()) return FromStatus(named.status(), "");
    if (!(*named == ident)) {
      return Error(
          400, "BadRequestException",
          fmt::format("the body names table {}, the path {}", named->ToString(), ident.ToString()));
    }
  }
  auto change = TableChange::Parse(*j, warehouse_);
  if (!change.ok()) return FromStatus(change.status(), "");
  if (change->creates()) return CreateByCommit(ident, *change);
  auto table = catalog::Table::Load(catalog_, io_, ident);
  if (!table.ok()) return FromStatus(table.status(), "NoSuchTableException");
  Status st = (*table)->UpdateMetadata(ApplyFn(*change, ident));
  if (!st.ok()) return FromStatus(st, "NoSuchTableException");
  json out = CommitResult(**table);
  out.erase("config");  // CommitTableResponse has no config
  return Json(200, out);
}

catalog::MetadataChangeFn RestCatalogHandler::ApplyFn(const TableChange& change,
                                                      const catalog::TableIdent& ident) {
  return [this, &change,
          ident](const iceberg::TableMetadata& base) -> Result<iceberg::TableMetadata> {
    RETURN_IF_ERROR(change.Check(&base));
    ASSIGN_OR_RETURN(iceberg::TableMetadata next, change.Apply(base));
    if (next.location != base.location) {
      ASSIGN_OR_RETURN(auto other, TableOverlapping(catalog_, io_, next.location, &ident));
      if (other) {
        return Status::Invalid("location {} overlaps table {}'s", next.location, other->ToString());
      }
    }
    return next;
  };
}

HttpResponse RestCatalogHandler::CreateByCommit(const catalog::TableIdent& ident,
                                                const TableChange& change) {
  if (auto missing = RequireNamespace(ident.ns)) return *missing;
  if (catalog_.LoadTable(ident).ok()) {
    return Error(
        409, "CommitFailedException",
        fmt::format("requirement assert-create failed: table {} exists", ident.ToString()));
  }
  Status checked = change.Check(nullptr);  // the other requirements, on no table
  if (!checked.ok()) return FromStatus(checked, "NoSuchTableException");
  iceberg::TableMetadata empty =
      TableChange::EmptyMetadata(catalog::DefaultTableLocation(warehouse_, ident));
  auto metadata = change.Apply(empty);
  if (!metadata.ok()) return FromStatus(metadata.status(), "");
  auto other = TableOverlapping(catalog_, io_, metadata->location, &ident);
  if (!other.ok()) return FromStatus(other.status(), "");
  if (*other) {
    return Error(
        409, "CommitFailedException",
        fmt::format("location {} is taken by table {}", metadata->location, (*other)->ToString()));
  }
  metadata->last_updated_ms = iceberg::NowMillis();
  auto table = catalog::Table::Create(catalog_, io_, ident, *metadata);
  if (!table.ok()) {
    if (table.status().code() == StatusCode::kAlreadyExists) {
      return Error(
          409, "CommitFailedException",
          fmt::format("requirement assert-create failed: table {} exists", ident.ToString()));
    }
    return FromStatus(table.status(), "NoSuchNamespaceException");
  }
  json out = CommitResult(**table);
  out.erase("config");
  return Json(200, out);
}

HttpResponse RestCatalogHandler::CommitTransaction(const HttpRequest& req, const Principal& who) {
  if (!who.may_write()) {
    return Error(403, "ForbiddenException",
                 fmt::format("client {} may read but not change the catalog", who.name()));
  }
  auto j = BodyJson(req);
  if (!j.ok()) return FromStatus(j.status(), "");
  if (!j->contains("table-changes") || !(*j)["table-changes"].is_array() ||
      (*j)["table-changes"].empty()) {
    return Error(400, "BadRequestException", "expected a non-empty \"table-changes\" array");
  }
  std::vector<catalog::TableIdent> idents;
  std::vector<TableChange> changes;
  for (const json& tc : (*j)["table-changes"]) {
    if (!tc.is_object() || !tc.contains("identifier")) {
      return Error(400, "BadRequestException", "each table change needs an \"identifier\"");
    }
    auto ident = IdentOf(tc["identifier"], "identifier");
    if (!ident.ok()) return FromStatus(ident.status(), "");
    if (!who.Sees(ident->ns)) return Error(404, "NoSuchTableException", "no such table");
    if (std::find(idents.begin(), idents.end(), *ident) != idents.end()) {
      return Error(400, "BadRequestException",
                   fmt::format("table {} is changed twice in one transaction", ident->ToString()));
    }
    auto change = TableChange::Parse(tc, warehouse_);
    if (!change.ok()) {
      return FromStatus(change.status().WithContextF("table {}", ident->ToString()), "");
    }
    if (change->creates()) {
      return Error(406, "UnsupportedOperationException",
                   fmt::format("table {}: creating a table inside a transaction is not supported",
                               ident->ToString()));
    }
    idents.push_back(std::move(*ident));
    changes.push_back(std::move(*change));
  }
  std::vector<std::unique_ptr<catalog::Table>> tables;
  std::vector<catalog::MetadataChange> updates;
  for (size_t i = 0; i < idents.size(); ++i) {
    auto table = catalog::Table::Load(catalog_, io_, idents[i]);
    if (!table.ok()) return FromStatus(table.status(), "NoSuchTableException");
    tables.push_back(std::move(*table));
    updates.push_back({tables.back().get(), ApplyFn(changes[i], idents[i])});
  }
  Status st = catalog::Table::UpdateMetadataAll(catalog_, updates);
  return st.ok() ? NoContent() : FromStatus(st, "NoSuchTableException");
}

HttpResponse RestCatalogHandler::ReportMetrics(const catalog::TableIdent& ident,
                                               const HttpRequest& req) {
  auto j = BodyJson(req);
  if (!j.ok()) return FromStatus(j.status(), "");
  std::string type = j->value("report-type", "");
  if (type != "scan-report" && type != "commit-report") {
    return Error(400, "BadRequestException",
                 "a metrics report needs \"report-type\": scan-report or commit-report");
  }
  auto location = catalog_.LoadTable(ident);
  if (!location.ok()) return FromStatus(location.status(), "NoSuchTableException");
  (type == "scan-report" ? scan_reports_ : commit_reports_).fetch_add(1);
  return NoContent();
}

}  // namespace sluice::rest
