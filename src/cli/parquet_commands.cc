#include "cli/commands.h"

namespace sluice::cli {

void RegisterParquetCommands(CLI::App& app, int* exit_code) {
  auto* parquet = app.add_subcommand("parquet", "Inspect and write Parquet files");
  parquet->require_subcommand(1);
  RegisterParquetWriteCommand(*parquet, exit_code);
}

}  // namespace sluice::cli
