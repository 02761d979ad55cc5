#include "rest/table_locations.h"

#include <algorithm>
#include <vector>

#include "catalog/table.h"

namespace sluice::rest {
namespace {

// The segments of a location's path, with "file://" dropped; nullopt if a
// segment is "." or "..".
std::optional<std::vector<std::string>> PathSegments(std::string_view location) {
  if (location.starts_with("file://")) location.remove_prefix(7);
  std::vector<std::string> out;
  size_t at = 0;
  while (at <= location.size()) {
    size_t end = location.find('/', at);
    if (end == std::string_view::npos) end = location.size();
    std::string_view part = location.substr(at, end - at);
    if (part == "." || part == "..") return std::nullopt;
    if (!part.empty() || out.empty()) out.emplace_back(part);
    at = end + 1;
  }
  while (out.size() > 1 && out.back().empty()) out.pop_back();
  return out;
}

bool IsPrefix(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  return a.size() <= b.size() && std::equal(a.begin(), a.end(), b.begin());
}

}  // namespace

Status CheckLocationInWarehouse(const std::string& location, const std::string& warehouse) {
  auto loc = PathSegments(location);
  auto root = PathSegments(warehouse);
  if (!loc || !root) {
    return Status::Invalid("location '{}': '.' and '..' segments are not allowed", location);
  }
  if (loc->size() <= root->size() || !IsPrefix(*root, *loc)) {
    return Status::Invalid("location '{}' is outside the warehouse {}", location, warehouse);
  }
  return Status::OK();
}

bool LocationsOverlap(std::string_view a, std::string_view b) {
  auto x = PathSegments(a);
  auto y = PathSegments(b);
  if (!x || !y) return true;
  return IsPrefix(*x, *y) || IsPrefix(*y, *x);
}

Result<std::optional<catalog::TableIdent>> TableOverlapping(catalog::Catalog& catalog, FileIO& io,
                                                            const std::string& location,
                                                            const catalog::TableIdent* self) {
  ASSIGN_OR_RETURN(auto namespaces, catalog.ListNamespaces());
  for (const auto& ns : namespaces) {
    ASSIGN_OR_RETURN(auto tables, catalog.ListTables(ns));
    for (const auto& ident : tables) {
      if (self != nullptr && ident == *self) continue;
      auto table = catalog::Table::Load(catalog, io, ident);
      if (!table.ok()) {  // dropped meanwhile or unreadable for good: skipped
        if (table.status().retryable()) return table.status();
        continue;
      }
      if (LocationsOverlap((*table)->metadata().location, location)) {
        return std::optional<catalog::TableIdent>(ident);
      }
    }
  }
  return std::optional<catalog::TableIdent>();
}

}  // namespace sluice::rest
