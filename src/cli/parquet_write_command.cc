#include "cli/commands.h"

namespace sluice::cli {

void RegisterParquetWriteCommand(CLI::App& parquet, int* exit_code) {}

}  // namespace sluice::cli
