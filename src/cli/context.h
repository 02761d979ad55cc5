// Global command-line options and the objects commands share: the warehouse,
// its FileIO and the catalog (opened on first use).
#pragma once

#include <memory>
#include <string>

#include "catalog/catalog.h"
#include "catalog/table.h"
#include "io/file_io.h"
#include "io/remap_file_io.h"
#include "io/s3/s3_client.h"

namespace sluice::cli {

struct GlobalOptions {
  std::string warehouse = "./warehouse";  // a folder, or s3://bucket/prefix
  std::string catalog;    // empty: sqlite:<warehouse>/catalog.db (a local warehouse only)
  std::string state_dir;  // empty: <warehouse>/_sluice (a local warehouse only)
  // --remap FROM=TO: locations starting with FROM are reached under TO
  // (io/remap_file_io.h), for every command.
  std::vector<std::string> remaps;
};

GlobalOptions& Globals();

// The catalog of the global options (created with the warehouse if missing).
Result<catalog::Catalog*> OpenGlobalCatalog();
// The FileIO of every command: local paths and s3:// locations
// (MakeStorageFileIO), through the global --remap pairs.
FileIO& StorageIO();
Remaps GlobalRemaps();
// The warehouse as table locations start: an absolute folder (created if
// missing), or the s3:// URI as given without a trailing slash.
std::string WarehousePath();
// Where stream logs and pipeline journals live: always local disk.
Result<std::string> StateDir();

// SIGTERM and SIGINT set StopSignal() (and SIGPIPE is ignored): for the
// commands that serve until stopped (run, serve).
void CatchStopSignals();
int StopSignal();  // 0 until a stop signal arrived

// Loads a table by catalog name ("db.events"), or — when `name` is a path to a
// table folder or a metadata JSON file — read-only from that file.
Result<std::unique_ptr<catalog::Table>> OpenTable(const std::string& name);

}  // namespace sluice::cli
