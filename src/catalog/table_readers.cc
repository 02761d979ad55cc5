#include "catalog/table_readers.h"

#include <nlohmann/json.hpp>

#include "catalog/table.h"

namespace sluice::catalog {

namespace {
constexpr std::string_view kPrefix = "sluice.reader.";
}  // namespace

std::string ReaderProperty(const std::string& pipeline) { return std::string(kPrefix) + pipeline; }

std::string EncodeReaderProperty(const std::string& table, int64_t snapshot_id, int64_t at_ms) {
  return nlohmann::json{{"table", table}, {"snapshot", snapshot_id}, {"at_ms", at_ms}}.dump();
}

Result<std::vector<TableReader>> FindTableReaders(Catalog& catalog, FileIO& io,
                                                  const TableIdent& table) {
  std::vector<TableReader> out;
  ASSIGN_OR_RETURN(auto namespaces, catalog.ListNamespaces());
  for (const auto& ns : namespaces) {
    ASSIGN_OR_RETURN(auto idents, catalog.ListTables(ns));
    for (const TableIdent& holder : idents) {
      auto loaded = Table::Load(catalog, io, holder);
      // A table dropped meanwhile, or one this process can never read, holds
      // nothing it can see; a passing failure stops the search (an expiry
      // must not go ahead without a reader it merely failed to read).
      if (!loaded.ok()) {
        if (loaded.status().retryable()) return loaded.status();
        continue;
      }
      for (const auto& [key, value] : (*loaded)->metadata().properties) {
        if (!key.starts_with(kPrefix)) continue;
        auto j = nlohmann::json::parse(value, nullptr, false);
        if (!j.is_object() || !j.contains("table") || !j["table"].is_string() ||
            !j.contains("snapshot") || !j["snapshot"].is_number_integer()) {
          continue;
        }
        auto read = TableIdent::Parse(j["table"].get<std::string>());
        if (!read.ok() || !(*read == table)) continue;
        TableReader r;
        r.pipeline = key.substr(kPrefix.size());
        r.holder = holder;
        r.table = *read;
        r.snapshot_id = j["snapshot"].get<int64_t>();
        r.at_ms =
            j.contains("at_ms") && j["at_ms"].is_number_integer() ? j["at_ms"].get<int64_t>() : 0;
        out.push_back(std::move(r));
      }
    }
  }
  return out;
}

}  // namespace sluice::catalog
