// `sluice table verify NAME [--read-data] [--json]`: every snapshot the table
// holds reads (maintenance/verify.h; docs/maintenance.md "Verifying a table").
#include <fmt/format.h>

#include <cstdio>
#include <string>

#include "cli/commands.h"
#include "cli/context.h"
#include "cli/table_printer.h"
#include "maintenance/verify.h"

namespace sluice::cli {
namespace {

// The problems found (each printed), or why the table could not be verified.
Result<size_t> Verify(const std::string& name, bool read_data, bool json) {
  ASSIGN_OR_RETURN(auto table, OpenTable(name));
  maintenance::VerifyOptions o;
  o.read_data = read_data;
  ASSIGN_OR_RETURN(maintenance::VerifyReport r,
                   maintenance::VerifyTable(table->io(), table->metadata(), o));
  TablePrinter t(
      {"snapshot_id", "operation", "data_files", "delete_files", "records", "deletes", "problems"});
  for (const maintenance::SnapshotVerified& s : r.snapshots) {
    t.AddRow({std::to_string(s.snapshot_id), s.operation, std::to_string(s.data_files),
              std::to_string(s.delete_files), std::to_string(s.records), std::to_string(s.deletes),
              std::to_string(s.problems)});
  }
  t.Print(json);
  std::string detail;
  if (read_data) {
    detail = fmt::format(" ({} bytes decoded", r.bytes_read);
    if (r.not_decoded > 0) {
      detail += fmt::format(", {} files not Parquet: not decoded", r.not_decoded);
    }
    detail += ")";
  }
  if (r.not_checked > 0) {
    detail +=
        fmt::format("; {} format v1 snapshots without a manifest list not checked", r.not_checked);
  }
  // The summary goes to stderr under --json (stdout holds the JSON alone); the
  // problems come last, after what stdout holds, so that a log's tail shows them.
  std::fprintf(json ? stderr : stdout,
               "%s: %zu snapshots, %lld manifest lists, %lld manifests, %lld files checked%s; "
               "problems: %zu\n",
               name.c_str(), r.snapshots.size(), static_cast<long long>(r.manifest_lists),
               static_cast<long long>(r.manifests), static_cast<long long>(r.files), detail.c_str(),
               r.problems.size());
  std::fflush(stdout);
  for (const std::string& p : r.problems) std::fprintf(stderr, "%s\n", p.c_str());
  return r.problems.size();
}

}  // namespace

void RegisterVerifyCommand(CLI::App& app, int* exit_code) {
  auto name = std::make_shared<std::string>();
  auto read_data = std::make_shared<bool>(false);
  auto json = std::make_shared<bool>(false);
  CLI::App* cmd = app.get_subcommand("table")->add_subcommand(
      "verify",
      "Check that every snapshot reads: its manifests, and each data and delete file there "
      "with its recorded size (each file once); exits 1 naming every problem, 2 when it "
      "cannot verify the table");
  cmd->add_option("NAME", *name, "NAMESPACE.TABLE")->required();
  cmd->add_flag("--read-data", *read_data,
                "Also decode every data file, position delete file and deletion vector whole "
                "(rows = record_count)");
  cmd->add_flag("--json", *json, "Print the snapshots as JSON");
  cmd->callback([=] {
    // As fsck's: 1 the table has problems, 2 it could not be verified (no
    // such table, a catalog that does not answer), so that a script tells a
    // damaged table from a check that did not run.
    auto problems = Verify(*name, *read_data, *json);
    if (!problems.ok()) {
      ReportError("table verify", problems.status());
      *exit_code = 2;
    } else if (*problems > 0) {
      std::fprintf(stderr, "sluice table verify: %s: %zu problems (listed above)\n", name->c_str(),
                   *problems);
      *exit_code = 1;
    } else {
      *exit_code = 0;
    }
  });
}

}  // namespace sluice::cli
