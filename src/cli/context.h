// Global command-line options and the objects commands share: the warehouse,
// its FileIO and the catalog (opened on first use).
#pragma once

#include <memory>
#include <string>

#include "catalog/catalog.h"
#include "catalog/table.h"
#include "io/file_io.h"
#include "io/remap_file_io.h"

namespace sluice::cli {

struct GlobalOptions {
  std::string warehouse = "./warehouse";
  std::string catalog;  // empty: sqlite:<warehouse>/catalog.db
  // --remap FROM=TO: locations starting with FROM are reached under TO
  // (io/remap_file_io.h), for every command.
  std::vector<std::string> remaps;
};

GlobalOptions& Globals();

// The catalog of the global options (created with the warehouse if missing).
Result<catalog::Catalog*> OpenGlobalCatalog();
FileIO& LocalIO();
// The global --remap pairs (LocalIO reaches files through them).
Remaps GlobalRemaps();
// An absolute warehouse path (table locations are absolute).
std::string WarehousePath();

// Loads a table by catalog name ("db.events"), or — when `name` is a path to a
// table folder or a metadata JSON file — read-only from that file.
Result<std::unique_ptr<catalog::Table>> OpenTable(const std::string& name);

}  // namespace sluice::cli
