#include "cli/commands.h"

namespace sluice::cli {

void RegisterAvroCommands(CLI::App& app, int* exit_code) {
  auto* avro = app.add_subcommand("avro", "Inspect Avro object container files");
  avro->require_subcommand(1);
}

}  // namespace sluice::cli
