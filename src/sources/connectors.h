// Connectors: every kind of source a CREATE SOURCE may name
// (WITH (connector = 'http' | 'kafka' | 'file', ...), or FROM TABLE t, whose
// connector is "table" with the option table = 't'), the options each takes,
// what each can do, and the one place that opens a source by its connector.
//
// The binder checks a definition against Find(connector); the runtime opens
// sources through OpenSource. A new connector is one row of the table in
// connectors.cc and one case there.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "sources/source.h"

namespace sluice {
class FileIO;
namespace catalog {
class Catalog;
}
namespace log {
class StreamLog;
}
}  // namespace sluice

namespace sluice::sources {

struct Connector {
  std::string_view name;
  std::vector<std::string_view> options;   // every option it takes, connector included
  std::vector<std::string_view> required;  // those it needs
  // Has an end that `sluice run --bounded` reads to (a folder's current files).
  bool bounded = false;
  // Its partitions form one ordered stream (files read in name order): one
  // watermark for all of them.
  bool ordered = false;
  // Its records arrive through the runtime's log (HTTP ingest).
  bool uses_log = false;
};

// The connector named `name`, or null.
const Connector* FindConnector(std::string_view name);
// "http, kafka or file", for messages.
std::string ConnectorNames();

// What opening a source may need besides its options.
struct OpenContext {
  log::StreamLog* log = nullptr;        // connectors that use the log
  catalog::Catalog* catalog = nullptr;  // table sources
  FileIO* io = nullptr;                 // table sources
  bool bounded = false;                 // sluice run --bounded
};

// Opens a source of connector `connector` with `options` (already checked);
// `name` is the SQL source's name. Called again for each restart of a pipeline.
using SourceOpener = std::function<Result<std::unique_ptr<Source>>()>;
Result<SourceOpener> MakeOpener(const std::string& name, const Connector& connector,
                                const std::map<std::string, std::string>& options,
                                const OpenContext& context);

}  // namespace sluice::sources
