// Each component's subcommands register themselves on the `sluice` app.
// A command's callback stores its exit code in *exit_code; errors go to stderr
// as "sluice <command>: <Status>".
#pragma once

#include <CLI/CLI.hpp>

#include "common/status.h"
#include "rest/catalog_auth.h"

namespace sluice::cli {

void RegisterParquetCommands(CLI::App& app, int* exit_code);
void RegisterAvroCommands(CLI::App& app, int* exit_code);
void RegisterCatalogCommands(CLI::App& app, int* exit_code);  // namespace, table
void RegisterScanCommand(CLI::App& app, int* exit_code);
void RegisterTableWriteCommands(CLI::App& app, int* exit_code);   // after catalog commands
void RegisterRunCommand(CLI::App& app, int* exit_code);           // sluice run FILE.sql
void RegisterServeCommand(CLI::App& app, int* exit_code);         // sluice serve
void RegisterMaintenanceCommands(CLI::App& app, int* exit_code);  // after catalog commands
void RegisterChangesCommand(CLI::App& app, int* exit_code);       // after catalog commands
void RegisterVerifyCommand(CLI::App& app, int* exit_code);        // after catalog commands

// The REST catalog's authentication for `sluice serve` and `sluice run
// --listen`: the admin token (the server's bearer token, may be empty) and the
// clients file of --catalog-clients (empty: none).
Result<std::unique_ptr<rest::CatalogAuth>> MakeCatalogAuth(const std::string& admin_token,
                                                           const std::string& clients_file);

// Prints a failed status for `command` and returns the exit code (1).
int ReportError(std::string_view command, const Status& status);

// An option check: an integer of at least `min` ("must be an integer >= 1, got -5").
CLI::Validator AtLeast(int64_t min);

}  // namespace sluice::cli

namespace sluice::cli {
// `sluice parquet write`, registered by RegisterParquetCommands on its group.
void RegisterParquetWriteCommand(CLI::App& parquet, int* exit_code);
}  // namespace sluice::cli
