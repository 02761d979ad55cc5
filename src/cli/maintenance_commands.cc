// `sluice table compact | rewrite | rewrite-manifests | expire-snapshots |
// remove-orphans` and `sluice maintain`: the maintenance plane's one-shot commands
// (docs/maintenance.md).
#include <cstdio>
#include <map>

#include "cli/commands.h"
#include "cli/context.h"
#include "columnar/value_format.h"
#include "iceberg/table_builder.h"
#include "maintenance/compact.h"
#include "maintenance/expire.h"
#include "maintenance/manifests.h"
#include "maintenance/orphans.h"

namespace sluice::cli {
namespace {

// "7d", "36h", "90m", "30s" before now, or a timestamp ("2026-11-24T00:00:00Z";
// one without a zone is UTC).
Result<int64_t> ParseCutoff(const std::string& text, int64_t now_ms) {
  size_t i = 0;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
  if (i > 0 && i + 1 == text.size() && i <= 9) {  // at most 999,999,999 units
    int64_t n = std::stoll(text.substr(0, i));
    int64_t unit = text[i] == 'd'   ? 86400000
                   : text[i] == 'h' ? 3600000
                   : text[i] == 'm' ? 60000
                   : text[i] == 's' ? 1000
                                    : 0;
    if (unit > 0) return now_ms - n * unit;
  }
  auto micros = ParseTimestamp(text, false);
  if (!micros.ok()) {
    return Status::Invalid(
        "--older-than '{}' is neither an age (like '7d', '36h', '90m') nor a timestamp (like "
        "'2026-11-24T00:00:00Z')",
        text);
  }
  return *micros / 1000;
}

void PrintPaths(const char* what, const std::vector<std::string>& paths) {
  for (const std::string& p : paths) std::printf("  %s %s\n", what, p.c_str());
}

void PrintFailures(const char* command, const std::vector<std::string>& failures) {
  for (const std::string& f : failures) {
    std::fprintf(stderr, "sluice %s: not deleted (left for orphan cleanup): %s\n", command,
                 f.c_str());
  }
}

void PrintCompact(const std::string& name, const maintenance::CompactResult& r, bool dry) {
  for (const auto& p : r.partitions) {
    const char* where = p.partition.empty() ? "(unpartitioned)" : p.partition.c_str();
    if (dry) {
      std::printf("would compact %s: %zu files, %lld bytes\n", where, p.inputs.size(),
                  static_cast<long long>(p.input_bytes));
      PrintPaths("", p.inputs);
    } else if (p.skipped.empty()) {
      std::printf(
          "compacted %s: %zu files (%lld bytes) into %lld (%lld bytes, %lld of them pages copied "
          "without decoding), %lld rows\n",
          where, p.inputs.size(), static_cast<long long>(p.input_bytes),
          static_cast<long long>(p.outputs), static_cast<long long>(p.output_bytes),
          static_cast<long long>(p.copied_bytes), static_cast<long long>(p.rows));
    } else {
      std::printf("skipped %s: %s\n", where, p.skipped.c_str());
    }
  }
  std::printf(
      "%s: %lld partitions, %lld data files (%lld small); %lld compacted, %lld skipped by a "
      "concurrent change; %lld rows deleted meanwhile carried onto the new files\n",
      name.c_str(), static_cast<long long>(r.partitions_seen), static_cast<long long>(r.data_files),
      static_cast<long long>(r.small_files), static_cast<long long>(r.commits),
      static_cast<long long>(r.conflicts), static_cast<long long>(r.carried_deletes));
}

void PrintManifests(const std::string& name, const maintenance::ManifestRewriteResult& r,
                    bool dry) {
  if (r.snapshot_id) {
    std::printf("%s: rewrote %lld manifests (%lld small) into %lld, %lld entries\n", name.c_str(),
                static_cast<long long>(r.manifests_before), static_cast<long long>(r.small_before),
                static_cast<long long>(r.manifests_after), static_cast<long long>(r.entries));
  } else {
    std::printf("%s: %lld manifests (%lld small); %s\n", name.c_str(),
                static_cast<long long>(r.manifests_before), static_cast<long long>(r.small_before),
                dry ? "dry run" : "no rewrite due (sluice.maintenance.max-manifests)");
  }
}

void PrintExpire(const std::string& name, const maintenance::ExpireResult& r, bool dry) {
  size_t files = r.data_files.size() + r.delete_files.size() + r.manifests.size() +
                 r.manifest_lists.size() + r.statistics_files.size();
  std::printf(
      "%s %zu snapshots of %s; %s %zu files (%zu data, %zu delete, %zu manifests, %zu "
      "manifest lists)\n",
      dry ? "would expire" : "expired", r.expired.size(), name.c_str(),
      dry ? "would delete" : "deleted", dry ? files : static_cast<size_t>(r.deleted),
      r.data_files.size(), r.delete_files.size(), r.manifests.size(), r.manifest_lists.size());
  if (!r.statistics_files.empty()) {
    std::printf("  with %zu statistics files of the expired snapshots\n",
                r.statistics_files.size());
  }
  if (dry) {
    for (int64_t id : r.expired) std::printf("  snapshot %lld\n", static_cast<long long>(id));
    PrintPaths("data", r.data_files);
    PrintPaths("delete", r.delete_files);
    PrintPaths("manifest", r.manifests);
    PrintPaths("manifest-list", r.manifest_lists);
    PrintPaths("statistics", r.statistics_files);
  }
  for (const std::string& r : r.holding_readers) {
    std::printf("  kept for reader %s (and every newer snapshot)\n", r.c_str());
  }
  for (const std::string& r : r.stale_readers) {
    std::printf(
        "  ignored reader %s: not committed for longer than "
        "sluice.maintenance.reader-max-age-ms\n",
        r.c_str());
  }
  PrintFailures("table expire-snapshots", r.failures);
}

void PrintOrphans(const std::string& name, const maintenance::OrphanResult& r, bool dry) {
  std::printf("%s: %lld files listed, %lld referenced, %lld too young; %s %zu orphans\n",
              name.c_str(), static_cast<long long>(r.listed), static_cast<long long>(r.referenced),
              static_cast<long long>(r.too_young), dry ? "would delete" : "deleted",
              dry ? r.orphans.size() : static_cast<size_t>(r.deleted));
  if (dry) PrintPaths("orphan", r.orphans);
  PrintFailures("table remove-orphans", r.failures);
}

// Where every table of the catalog lives, by name.
Result<std::map<std::string, std::string>> TableLocations() {
  ASSIGN_OR_RETURN(catalog::Catalog * catalog, OpenGlobalCatalog());
  return maintenance::CatalogTableLocations(*catalog, StorageIO());
}

// Orphan cleanup of `t`, told where the catalog's other tables live.
Result<maintenance::OrphanResult> RemoveOrphansOf(
    catalog::Table& t, maintenance::OrphanOptions o,
    const std::map<std::string, std::string>& locations) {
  o.other_table_locations = maintenance::OtherTableLocations(locations, t.ident());
  return maintenance::RemoveOrphans(t, o);
}

void RegisterCompactCommand(CLI::App* table, int* exit_code) {
  auto name = std::make_shared<std::string>();
  auto o = std::make_shared<maintenance::CompactOptions>();
  auto target = std::make_shared<int64_t>(0), min_files = std::make_shared<int64_t>(0);
  auto* compact = table->add_subcommand(
      "compact", "Merge each partition's small data files into files of the target size");
  compact->add_option("NAME", *name, "NAMESPACE.TABLE")->required();
  compact
      ->add_option("--target-file-size", *target,
                   "Bytes of an output file (default: write.target-file-size-bytes)")
      ->check(AtLeast(1));
  compact
      ->add_option("--min-input-files", *min_files,
                   "Small files a partition needs to be compacted (default: "
                   "sluice.maintenance.min-input-files, else 5)")
      ->check(AtLeast(1));
  compact->add_flag("--dry-run", o->dry_run, "List the partitions and files; change nothing");
  compact->callback([=] {
    Status st = [&]() -> Status {
      ASSIGN_OR_RETURN(auto t, OpenTable(*name));
      if (*target > 0) o->target_file_bytes = *target;
      if (*min_files > 0) o->min_input_files = *min_files;
      ASSIGN_OR_RETURN(maintenance::CompactResult r, maintenance::CompactTable(*t, *o));
      PrintCompact(*name, r, o->dry_run);
      return Status::OK();
    }();
    *exit_code = st.ok() ? 0 : ReportError("table compact", st);
  });
}

void RegisterRewriteCommand(CLI::App* table, int* exit_code) {
  auto name = std::make_shared<std::string>();
  auto o = std::make_shared<maintenance::CompactOptions>();
  o->all_files = true;
  auto* rewrite = table->add_subcommand(
      "rewrite",
      "Rewrite every data file (deletes applied; into the current partition spec and schema)");
  rewrite->add_option("NAME", *name, "NAMESPACE.TABLE")->required();
  rewrite->add_flag("--dry-run", o->dry_run, "List the partitions and files; change nothing");
  rewrite->callback([=] {
    Status st = [&]() -> Status {
      ASSIGN_OR_RETURN(auto t, OpenTable(*name));
      ASSIGN_OR_RETURN(maintenance::CompactResult r, maintenance::CompactTable(*t, *o));
      PrintCompact(*name, r, o->dry_run);
      return Status::OK();
    }();
    *exit_code = st.ok() ? 0 : ReportError("table rewrite", st);
  });
}

void RegisterRewriteManifestsCommand(CLI::App* table, int* exit_code) {
  auto name = std::make_shared<std::string>();
  auto o = std::make_shared<maintenance::ManifestRewriteOptions>();
  auto* cmd = table->add_subcommand(
      "rewrite-manifests",
      "Rewrite the small manifests into few, clustered by partition, once there are more than "
      "sluice.maintenance.max-manifests");
  cmd->add_option("NAME", *name, "NAMESPACE.TABLE")->required();
  cmd->add_flag("--all", o->force, "Rewrite whatever their number");
  cmd->add_flag("--dry-run", o->dry_run, "Count the manifests; change nothing");
  cmd->callback([=] {
    Status st = [&]() -> Status {
      ASSIGN_OR_RETURN(auto t, OpenTable(*name));
      ASSIGN_OR_RETURN(maintenance::ManifestRewriteResult r, maintenance::RewriteManifests(*t, *o));
      PrintManifests(*name, r, o->dry_run);
      return Status::OK();
    }();
    *exit_code = st.ok() ? 0 : ReportError("table rewrite-manifests", st);
  });
}

void RegisterExpireCommand(CLI::App* table, int* exit_code) {
  auto name = std::make_shared<std::string>();
  auto older_than = std::make_shared<std::string>();
  auto retain_last = std::make_shared<int64_t>(0);
  auto dry_run = std::make_shared<bool>(false);
  auto* expire = table->add_subcommand(
      "expire-snapshots",
      "Remove snapshots past the retention and delete the files only they reach");
  expire->add_option("NAME", *name, "NAMESPACE.TABLE")->required();
  expire->add_option("--older-than", *older_than,
                     "Expire snapshots older than this age ('7d', '36h') or timestamp (default: "
                     "the table's history.expire.max-snapshot-age-ms, else 5 days)");
  expire
      ->add_option("--retain-last", *retain_last,
                   "Keep at least this many of each branch's newest snapshots (default: the "
                   "table's history.expire.min-snapshots-to-keep, else 1)")
      ->check(CLI::Range(int64_t{1}, int64_t{1000000}));
  expire->add_flag("--dry-run", *dry_run, "List what would expire and be deleted; change nothing");
  expire->callback([=] {
    Status st = [&]() -> Status {
      ASSIGN_OR_RETURN(auto t, OpenTable(*name));
      maintenance::ExpireOptions o;
      o.now_ms = iceberg::NowMillis();
      o.readers_catalog = OpenGlobalCatalog().ValueOr(nullptr);
      if (!older_than->empty()) {
        ASSIGN_OR_RETURN(o.older_than_ms, ParseCutoff(*older_than, o.now_ms));
      }
      if (*retain_last > 0) o.retain_last = static_cast<int32_t>(*retain_last);
      o.dry_run = *dry_run;
      ASSIGN_OR_RETURN(maintenance::ExpireResult r, maintenance::ExpireSnapshots(*t, o));
      PrintExpire(*name, r, o.dry_run);
      return Status::OK();
    }();
    *exit_code = st.ok() ? 0 : ReportError("table expire-snapshots", st);
  });
}

void RegisterRemoveOrphansCommand(CLI::App* table, int* exit_code) {
  auto name = std::make_shared<std::string>();
  auto older_than = std::make_shared<std::string>();
  auto dry_run = std::make_shared<bool>(false);
  auto* orphans = table->add_subcommand(
      "remove-orphans", "Delete files under the table that nothing references (old enough)");
  orphans->add_option("NAME", *name, "NAMESPACE.TABLE")->required();
  orphans->add_option("--older-than", *older_than,
                      "Only files last modified before this age ('1h', '3d') or timestamp "
                      "(default: sluice.maintenance.orphan-margin-ms, else 1h: younger files "
                      "may belong to a commit in flight)");
  orphans->add_flag("--dry-run", *dry_run, "List the orphans; delete nothing");
  orphans->callback([=] {
    Status st = [&]() -> Status {
      ASSIGN_OR_RETURN(auto t, OpenTable(*name));
      maintenance::OrphanOptions o;
      o.now_ms = iceberg::NowMillis();
      if (!older_than->empty()) {
        ASSIGN_OR_RETURN(o.older_than_ms, ParseCutoff(*older_than, o.now_ms));
      }
      o.dry_run = *dry_run;
      ASSIGN_OR_RETURN(auto locations, TableLocations());
      ASSIGN_OR_RETURN(maintenance::OrphanResult r, RemoveOrphansOf(*t, o, locations));
      PrintOrphans(*name, r, o.dry_run);
      return Status::OK();
    }();
    *exit_code = st.ok() ? 0 : ReportError("table remove-orphans", st);
  });
}

// Every step, by each table's own policy.
Status MaintainTable(const std::string& name, bool dry_run,
                     const std::map<std::string, std::string>& locations) {
  ASSIGN_OR_RETURN(auto t, OpenTable(name));
  maintenance::CompactOptions c;
  c.dry_run = dry_run;
  ASSIGN_OR_RETURN(maintenance::CompactResult compacted, maintenance::CompactTable(*t, c));
  PrintCompact(name, compacted, dry_run);
  maintenance::ManifestRewriteOptions m;
  m.dry_run = dry_run;
  ASSIGN_OR_RETURN(maintenance::ManifestRewriteResult manifests,
                   maintenance::RewriteManifests(*t, m));
  PrintManifests(name, manifests, dry_run);
  maintenance::ExpireOptions e;
  e.now_ms = iceberg::NowMillis();
  e.dry_run = dry_run;
  e.readers_catalog = OpenGlobalCatalog().ValueOr(nullptr);
  ASSIGN_OR_RETURN(maintenance::ExpireResult expired, maintenance::ExpireSnapshots(*t, e));
  PrintExpire(name, expired, dry_run);
  maintenance::OrphanOptions o;
  o.now_ms = iceberg::NowMillis();
  o.dry_run = dry_run;
  ASSIGN_OR_RETURN(maintenance::OrphanResult orphans, RemoveOrphansOf(*t, o, locations));
  PrintOrphans(name, orphans, dry_run);
  return Status::OK();
}

void RegisterMaintainCommand(CLI::App& app, int* exit_code) {
  auto names = std::make_shared<std::vector<std::string>>();
  auto dry_run = std::make_shared<bool>(false);
  auto* maintain = app.add_subcommand(
      "maintain",
      "Compact, rewrite manifests, expire snapshots and remove orphans, by each table's policy "
      "(default: every table of the catalog)");
  maintain->add_option("TABLE", *names, "NAMESPACE.TABLE ...");
  maintain->add_flag("--dry-run", *dry_run, "List what each step would do; change nothing");
  maintain->callback([=] {
    std::vector<std::string> tables = *names;
    auto locations = TableLocations();
    int failed = locations.ok() ? 0 : ReportError("maintain", locations.status());
    if (locations.ok() && tables.empty()) {
      for (const auto& [name, location] : *locations) tables.push_back(name);
    }
    // One table's failure does not stop the others (without the catalog's
    // locations no table's orphans can be judged: nothing runs).
    for (const std::string& name : locations.ok() ? tables : std::vector<std::string>{}) {
      Status one = MaintainTable(name, *dry_run, *locations);
      if (!one.ok()) failed = ReportError("maintain", one.WithContextF("table {}", name));
    }
    *exit_code = failed;
  });
}

}  // namespace

void RegisterMaintenanceCommands(CLI::App& app, int* exit_code) {
  CLI::App* table = app.get_subcommand("table");
  RegisterCompactCommand(table, exit_code);
  RegisterRewriteCommand(table, exit_code);
  RegisterRewriteManifestsCommand(table, exit_code);
  RegisterExpireCommand(table, exit_code);
  RegisterRemoveOrphansCommand(table, exit_code);
  RegisterMaintainCommand(app, exit_code);
}

}  // namespace sluice::cli
