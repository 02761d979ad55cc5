// `sluice table changes`: the changelog of a table (iceberg/changelog.h), each
// changed row with its kind (+I, -U, +U, -D) and snapshot.
#include <cstdlib>

#include "cli/commands.h"
#include "cli/context.h"
#include "cli/row_output.h"
#include "iceberg/changelog.h"

namespace sluice::cli {

namespace {

struct ChangesArgs {
  std::string name, format = "jsonl";
  std::string from, to;
};

Result<std::optional<int64_t>> SnapshotArg(const std::string& text, const char* option) {
  if (text.empty()) return std::optional<int64_t>();
  char* end = nullptr;
  long long id = std::strtoll(text.c_str(), &end, 10);
  if (*end != '\0') return Status::Invalid("{} '{}' is not a snapshot id", option, text);
  return std::optional<int64_t>(id);
}

Status RunChanges(const ChangesArgs& a) {
  ASSIGN_OR_RETURN(auto table, OpenTable(a.name));
  iceberg::ChangelogOptions o;
  ASSIGN_OR_RETURN(o.from_snapshot, SnapshotArg(a.from, "--from-snapshot"));
  ASSIGN_OR_RETURN(o.to_snapshot, SnapshotArg(a.to, "--to-snapshot"));
  auto md = std::make_shared<const iceberg::TableMetadata>(table->metadata());
  for (const Field& f : md->current_schema()->fields) {
    if (f.name == "_change" || f.name == "_snapshot_id") {
      return Status::NotImplemented("table {} has a column named {}, which the output uses", a.name,
                                    f.name);
    }
  }
  ASSIGN_OR_RETURN(RowOutput out,
                   RowOutput::Make(a.format, {"_change", "_snapshot_id"}, *md->current_schema()));
  RETURN_IF_ERROR(
      iceberg::ReadChangelog(table->io(), md, o, [&](iceberg::SnapshotChanges&& c) -> Status {
        std::string id = std::to_string(c.snapshot_id);
        for (int64_t r = 0; r < c.rows.num_rows(); ++r) {
          std::string kind = iceberg::ChangeKindText(c.kinds[r]);
          out.Add(c.rows, r, {{"\"" + kind + "\"", kind}, {id, id}});
        }
        return Status::OK();
      }));
  out.Finish();
  return Status::OK();
}

}  // namespace

void RegisterChangesCommand(CLI::App& app, int* exit_code) {
  auto a = std::make_shared<ChangesArgs>();
  CLI::App* table = app.get_subcommand("table");
  auto* cmd = table->add_subcommand(
      "changes",
      "The rows each snapshot inserted (+I), updated (-U old, +U new) and deleted (-D), oldest "
      "first; compactions change none");
  cmd->add_option("NAME", a->name, "NAMESPACE.TABLE")->required();
  cmd->add_option("--from-snapshot", a->from, "Changes after this snapshot (default: all)");
  cmd->add_option("--to-snapshot", a->to, "Changes up to this snapshot (default: the current)");
  cmd->add_option("--format", a->format, "jsonl, csv or table")->capture_default_str();
  cmd->callback([a, exit_code] {
    Status st = RunChanges(*a);
    *exit_code = st.ok() ? 0 : ReportError("table changes", st);
  });
}

}  // namespace sluice::cli
