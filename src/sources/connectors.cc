#include "sources/connectors.h"

#include "sources/file_source.h"
#include "sources/kafka_source.h"
#include "sources/log_source.h"
#include "sources/table_source.h"

namespace sluice::sources {
namespace {

const std::vector<Connector>& All() {
  static const auto* kAll = new std::vector<Connector>{
      {"http", {"connector", "idle_timeout"}, {}, false, false, true},
      {"kafka",
       {"connector", "brokers", "topic", "client_id", "idle_timeout"},
       {"brokers", "topic"},
       false,
       false,
       false},
      {"file", {"connector", "path", "pattern", "idle_timeout"}, {"path"}, true, true, false},
      {"table", {"connector", "table", "start", "mode"}, {"table"}, true, true, false},
  };
  return *kAll;
}

}  // namespace

const Connector* FindConnector(std::string_view name) {
  for (const Connector& c : All()) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

std::string ConnectorNames() {
  std::string out;
  const auto& all = All();
  for (size_t i = 0; i < all.size(); ++i) {
    out += i == 0 ? "" : (i + 1 == all.size() ? " or " : ", ");
    out += all[i].name;
  }
  return out;
}

Result<SourceOpener> MakeOpener(const std::string& name, const Connector& connector,
                                const std::map<std::string, std::string>& options,
                                const OpenContext& context) {
  log::StreamLog* log = context.log;
  auto get = [&](const char* key, std::string fallback = "") {
    auto it = options.find(key);
    return it == options.end() ? fallback : it->second;
  };
  if (connector.name == "http") {
    if (log == nullptr) return Status::Internal("source {}: an http source needs its log", name);
    return SourceOpener([name, log]() -> Result<std::unique_ptr<Source>> {
      return std::unique_ptr<Source>(std::make_unique<LogSource>(name, log));
    });
  }
  if (connector.name == "file") {
    FileSourceOptions f;
    f.dir = get("path");
    f.pattern = get("pattern", f.pattern);
    f.name = name;
    f.bounded = context.bounded;
    return SourceOpener([f]() -> Result<std::unique_ptr<Source>> {
      ASSIGN_OR_RETURN(auto source, FileSource::Open(f));
      return std::unique_ptr<Source>(std::move(source));
    });
  }
  if (connector.name == "kafka") {
    KafkaOptions k;
    k.brokers = get("brokers");
    k.topic = get("topic");
    k.client_id = get("client_id", k.client_id);
    return SourceOpener([k]() { return OpenKafkaSource(k); });
  }
  if (connector.name == "table") {
    if (context.catalog == nullptr || context.io == nullptr) {
      return Status::Internal("source {}: a table source needs the catalog", name);
    }
    TableSourceOptions t;
    std::string table = get("table");
    size_t dot = table.rfind('.');
    if (dot == std::string::npos) return Status::Internal("source {}: table '{}'", name, table);
    std::string ns = table.substr(0, dot);
    for (size_t start = 0;;) {
      size_t next = ns.find('.', start);
      t.table.ns.push_back(ns.substr(start, next - start));
      if (next == std::string::npos) break;
      start = next + 1;
    }
    t.table.name = table.substr(dot + 1);
    t.name = name;
    t.start_latest = get("start", "earliest") == "latest";
    t.changelog = get("mode", "append") == "changelog";
    t.bounded = context.bounded;
    catalog::Catalog* catalog = context.catalog;
    FileIO* io = context.io;
    return SourceOpener([t, catalog, io]() -> Result<std::unique_ptr<Source>> {
      ASSIGN_OR_RETURN(auto source, TableSource::Open(*catalog, *io, t));
      return std::unique_ptr<Source>(std::move(source));
    });
  }
  return Status::Internal("source {}: connector {} has no opener", name, connector.name);
}

}  // namespace sluice::sources
