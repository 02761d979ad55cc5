#include <malloc.h>

#include <charconv>
#include <cstdio>

#include "cli/commands.h"
#include "cli/context.h"

namespace sluice::cli {

int ReportError(std::string_view command, const Status& status) {
  // Printable: a message may quote a user's bytes, NUL included.
  std::string message = PrintableText(status.ToString());
  std::fprintf(stderr, "sluice %.*s: %s\n", static_cast<int>(command.size()), command.data(),
               message.c_str());
  return 1;
}

CLI::Validator AtLeast(int64_t min) {
  return CLI::Validator(
      [min](std::string& value) -> std::string {
        int64_t v = 0;
        auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
        if (ec != std::errc() || end != value.data() + value.size() || v < min) {
          return fmt::format("must be an integer >= {}, got '{}'", min, value);
        }
        return "";
      },
      fmt::format("INT>={}", min));
}

}  // namespace sluice::cli

int main(int argc, char** argv) {
  // Request bodies, column batches and Parquet pages are large buffers freed
  // and allocated again at a high rate: keep them in the heap rather than
  // mmap/munmap (and zero) each one, which dominated ingest profiles.
  mallopt(M_MMAP_THRESHOLD, 64 << 20);
  mallopt(M_TRIM_THRESHOLD, 64 << 20);
  CLI::App app{"sluice: a streaming lakehouse engine (JSON events -> Apache Iceberg tables)",
               "sluice"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "sluice 0.1.0");
  auto& globals = sluice::cli::Globals();
  app.add_option("--warehouse", globals.warehouse,
                 "Warehouse: a folder, or s3://BUCKET/PREFIX (AWS settings from the environment)")
      ->capture_default_str();
  app.add_option("--catalog", globals.catalog,
                 "Catalog URI: sqlite:PATH or postgresql://... (default: <warehouse>/catalog.db)");
  app.add_option("--state-dir", globals.state_dir,
                 "Local folder for stream logs and pipeline journals (default: "
                 "<warehouse>/_sluice; required with an S3 warehouse)");
  app.add_option("--remap", globals.remaps,
                 "FROM=TO: reach locations starting with FROM under TO instead, reading and "
                 "writing (a copy of a table that names another machine's paths; repeatable)")
      ->check([](const std::string& r) {
        size_t eq = r.find('=');
        return eq == std::string::npos || eq == 0 || eq + 1 == r.size()
                   ? std::string("--remap takes FROM=TO")
                   : std::string();
      });
  int exit_code = 0;
  sluice::cli::RegisterParquetCommands(app, &exit_code);
  sluice::cli::RegisterAvroCommands(app, &exit_code);
  sluice::cli::RegisterCatalogCommands(app, &exit_code);
  sluice::cli::RegisterScanCommand(app, &exit_code);
  sluice::cli::RegisterTableWriteCommands(app, &exit_code);
  sluice::cli::RegisterMaintenanceCommands(app, &exit_code);
  sluice::cli::RegisterChangesCommand(app, &exit_code);
  sluice::cli::RegisterVerifyCommand(app, &exit_code);
  sluice::cli::RegisterRunCommand(app, &exit_code);
  sluice::cli::RegisterServeCommand(app, &exit_code);
  CLI11_PARSE(app, argc, argv);
  return exit_code;
}
