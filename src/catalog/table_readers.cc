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

namespace {

// The readers `metadata`'s properties record (of any table), held by `holder`.
std::vector<TableReader> ReadersIn(const iceberg::TableMetadata& metadata,
                                   const TableIdent& holder) {
  std::vector<TableReader> out;
  for (const auto& [key, value] : metadata.properties) {
    if (!key.starts_with(kPrefix)) continue;
    auto j = nlohmann::json::parse(value, nullptr, false);
    if (!j.is_object() || !j.contains("table") || !j["table"].is_string() ||
        !j.contains("snapshot") || !j["snapshot"].is_number_integer()) {
      continue;
    }
    auto read = TableIdent::Parse(j["table"].get<std::string>());
    if (!read.ok()) continue;
    TableReader r;
    r.pipeline = key.substr(kPrefix.size());
    r.holder = holder;
    r.table = *read;
    r.snapshot_id = j["snapshot"].get<int64_t>();
    r.at_ms = j.contains("at_ms") && j["at_ms"].is_number_integer() ? j["at_ms"].get<int64_t>() : 0;
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace

Result<std::vector<TableReader>> FindTableReaders(Catalog& catalog, FileIO& io,
                                                  const TableIdent& table,
                                                  TableReadersCache* cache) {
  std::vector<TableReader> out;
  auto keep = [&](const std::vector<TableReader>& readers) {
    for (const TableReader& r : readers) {
      if (r.table == table) out.push_back(r);
    }
  };
  // A table dropped meanwhile, or one this process can never read, holds
  // nothing it can see; a passing failure stops the search (an expiry must
  // not go ahead without a reader it merely failed to read).
  auto skip = [](const Status& st) { return !st.retryable(); };
  std::map<std::string, TableReadersCache::Holder> seen;  // this search's holders
  ASSIGN_OR_RETURN(auto namespaces, catalog.ListNamespaces());
  for (const auto& ns : namespaces) {
    ASSIGN_OR_RETURN(auto idents, catalog.ListTables(ns));
    for (const TableIdent& holder : idents) {
      const std::string name = holder.ToString();
      Result<std::unique_ptr<Table>> loaded = Status::Internal("not loaded");
      if (cache != nullptr) {
        auto location = catalog.LoadTable(holder);
        if (!location.ok()) {
          if (skip(location.status())) continue;
          return location.status();
        }
        {
          std::lock_guard<std::mutex> lock(cache->mu_);
          auto it = cache->holders_.find(name);
          if (it != cache->holders_.end() && it->second.metadata_location == *location) {
            keep(it->second.readers);
            seen.emplace(name, it->second);
            continue;
          }
        }
        loaded = Table::LoadFromMetadataFile(io, *location);
      } else {
        loaded = Table::Load(catalog, io, holder);
      }
      if (!loaded.ok()) {
        if (skip(loaded.status())) continue;
        return loaded.status();
      }
      TableReadersCache::Holder h{(*loaded)->metadata_location(),
                                  ReadersIn((*loaded)->metadata(), holder)};
      keep(h.readers);
      seen.emplace(name, std::move(h));
      if (cache != nullptr) {
        std::lock_guard<std::mutex> lock(cache->mu_);
        ++cache->metadata_reads_;
      }
    }
  }
  if (cache != nullptr) {
    // (Tables gone since are forgotten.)
    std::lock_guard<std::mutex> lock(cache->mu_);
    for (auto& [name, h] : seen) cache->holders_[name] = std::move(h);
    std::erase_if(cache->holders_, [&](const auto& e) { return !seen.contains(e.first); });
  }
  return out;
}

}  // namespace sluice::catalog
