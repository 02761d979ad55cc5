// `sluice scan`: rows of a table (or of a table folder / metadata file written
// elsewhere) with projection, filter, time travel and a choice of formats.
#include <cstdio>
#include <filesystem>

#include "cli/commands.h"
#include "cli/context.h"
#include "cli/row_output.h"
#include "columnar/value_format.h"
#include "iceberg/scan.h"

namespace sluice::cli {

namespace {

struct ScanArgs {
  std::string name, columns, where, as_of, format = "jsonl";
  std::string snapshot;
  bool snapshot_given = false;
  int64_t limit = -1;
  std::vector<std::string> remaps;
  bool stats = false;
  bool row_lineage = false;
};

std::vector<std::string> SplitComma(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t c = s.find(',', start);
    std::string part = s.substr(start, c == std::string::npos ? c : c - start);
    while (!part.empty() && part.front() == ' ') part.erase(part.begin());
    while (!part.empty() && part.back() == ' ') part.pop_back();
    if (!part.empty()) out.push_back(part);
    if (c == std::string::npos) break;
    start = c + 1;
  }
  return out;
}

Status RunScan(const ScanArgs& a) {
  ASSIGN_OR_RETURN(auto table, OpenTable(a.name));
  iceberg::ScanOptions o;
  o.columns = SplitComma(a.columns);
  o.filter = a.where;
  o.limit = a.limit;
  o.with_row_lineage = a.row_lineage;
  if (a.snapshot_given) {
    char* end = nullptr;
    long long id = std::strtoll(a.snapshot.c_str(), &end, 10);
    if (a.snapshot.empty() || *end != '\0') {
      return Status::Invalid("--snapshot '{}' is not a snapshot id", a.snapshot);
    }
    o.snapshot_id = id;
  }
  if (!a.as_of.empty()) {
    auto us = ParseTimestamp(a.as_of, false);
    if (!us.ok()) return us.status().WithContext("--as-of");
    o.as_of_ms = *us / 1000;
  }
  for (const auto& r : a.remaps) {
    size_t eq = r.find('=');
    if (eq == std::string::npos || eq == 0)
      return Status::Invalid("--remap '{}' is not FROM=TO", r);
    o.remaps.emplace_back(r.substr(0, eq), r.substr(eq + 1));
  }
  const auto& md = table->metadata();
  std::error_code ec;
  if (o.remaps.empty() && std::filesystem::exists(a.name, ec)) {
    // A table read from its folder: its recorded location maps to that folder.
    std::filesystem::path meta(table->metadata_location());
    std::string folder = meta.parent_path().parent_path().string();
    if (md.location != folder) o.remaps.emplace_back(md.location, folder);
  }
  auto shared = std::make_shared<const iceberg::TableMetadata>(md);
  ASSIGN_OR_RETURN(auto scan, iceberg::TableScan::Make(table->io(), shared, o));
  const Schema& schema = *scan->schema();

  ASSIGN_OR_RETURN(RowOutput out, RowOutput::Make(a.format, {}, schema));
  Batch b;
  while (true) {
    ASSIGN_OR_RETURN(bool more, scan->Next(&b));
    if (!more) break;
    for (int64_t r = 0; r < b.num_rows(); ++r) out.Add(b, r);
  }
  out.Finish();
  if (a.stats) {
    const auto& s = scan->stats();
    std::fprintf(stderr,
                 "snapshot %lld: manifests %d/%d, files %d/%d, rows read %lld, deleted %lld, "
                 "returned %lld\n",
                 static_cast<long long>(scan->snapshot_id().value_or(0)), s.manifests_scanned,
                 s.manifests_total, s.files_scanned, s.files_total,
                 static_cast<long long>(s.rows_read), static_cast<long long>(s.rows_deleted),
                 static_cast<long long>(s.rows_returned));
  }
  return Status::OK();
}

}  // namespace

void RegisterScanCommand(CLI::App& app, int* exit_code) {
  auto a = std::make_shared<ScanArgs>();
  auto* cmd = app.add_subcommand("scan", "Read the rows of a table");
  cmd->add_option("NAME", a->name,
                  "NAMESPACE.TABLE, or a table folder / metadata JSON file written elsewhere")
      ->required();
  cmd->add_option("--columns", a->columns, "Columns to print, e.g. id,ts (default all)");
  cmd->add_option("--where", a->where,
                  "Row filter, e.g. \"ts >= '2024-01-01' AND kind = 'click'\"");
  cmd->add_option("--snapshot", a->snapshot, "Read this snapshot id (time travel)")
      ->each([a](const std::string&) { a->snapshot_given = true; });
  cmd->add_option("--as-of", a->as_of, "Read the snapshot current at this time (UTC unless zoned)");
  cmd->add_option("--format", a->format, "jsonl, csv or table")->capture_default_str();
  cmd->add_option("--limit", a->limit, "At most N rows");
  cmd->add_option("--remap", a->remaps,
                  "FROM=TO: read locations starting with FROM under TO instead (repeatable)");
  cmd->add_flag("--stats", a->stats, "Print planning and read statistics to stderr");
  cmd->add_flag("--row-lineage", a->row_lineage,
                "Add each row's _row_id and _last_updated_sequence_number (format v3)");
  cmd->callback([a, exit_code] {
    Status st = RunScan(*a);
    *exit_code = st.ok() ? 0 : ReportError("scan", st);
  });
}

}  // namespace sluice::cli
