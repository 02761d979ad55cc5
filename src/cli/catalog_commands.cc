// `sluice namespace ...` and `sluice table ...`: the catalog and table
// metadata from the command line.
#include <cstdio>
#include <ctime>
#include <filesystem>

#include "cli/commands.h"
#include "cli/context.h"
#include "cli/table_printer.h"
#include "columnar/sql_schema.h"
#include "columnar/value_format.h"
#include "iceberg/manifest.h"
#include "iceberg/schema_json.h"
#include "iceberg/table_builder.h"

namespace sluice::cli {

namespace {

using catalog::TableIdent;

std::string FormatMillis(int64_t ms) {
  std::string s;
  AppendTimestamp(ms * 1000, false, false, &s);
  return s.substr(0, 23);  // millisecond precision
}

Result<std::map<std::string, std::string>> ParseProperties(const std::vector<std::string>& kvs) {
  std::map<std::string, std::string> out;
  for (const auto& kv : kvs) {
    size_t eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) {
      return Status::Invalid("property '{}' is not KEY=VALUE", kv);
    }
    out[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  return out;
}

// Registers a subcommand whose body returns a Status.
CLI::App* Command(CLI::App& parent, const std::string& name, const std::string& help,
                  int* exit_code, std::string label, std::function<Status()> body) {
  auto* cmd = parent.add_subcommand(name, help);
  cmd->callback([exit_code, label, body] {
    Status st = body();
    *exit_code = st.ok() ? 0 : ReportError(label, st);
  });
  return cmd;
}

struct TableArgs {
  std::string name, schema, partition, sort, location, to, primary_key;
  std::vector<std::string> properties;
  bool json = false;
};

Status CreateTable(const TableArgs& a) {
  ASSIGN_OR_RETURN(TableIdent ident, TableIdent::Parse(a.name));
  ASSIGN_OR_RETURN(Schema schema, ParseColumnList(a.schema));
  if (!a.primary_key.empty()) {
    std::vector<std::string> columns;
    for (std::string_view rest = a.primary_key; !rest.empty();) {
      size_t comma = std::min(rest.find(','), rest.size());
      std::string_view c = rest.substr(0, comma);
      while (!c.empty() && c.front() == ' ') c.remove_prefix(1);
      while (!c.empty() && c.back() == ' ') c.remove_suffix(1);
      columns.emplace_back(c);
      rest.remove_prefix(std::min(comma + 1, rest.size()));
    }
    RETURN_IF_ERROR_CTX(SetPrimaryKey(&schema, columns), "--primary-key");
  }
  ASSIGN_OR_RETURN(auto spec, iceberg::ParsePartitionSpec(a.partition, schema));
  ASSIGN_OR_RETURN(auto order, iceberg::ParseSortOrder(a.sort, schema));
  ASSIGN_OR_RETURN(auto props, ParseProperties(a.properties));
  ASSIGN_OR_RETURN(iceberg::NewTableOptions o, iceberg::NewTableOptionsFromProperties(props));
  std::string location =
      a.location.empty() ? catalog::DefaultTableLocation(WarehousePath(), ident) : a.location;
  ASSIGN_OR_RETURN(auto md, iceberg::NewTableMetadata(schema, spec, order, location, o));
  ASSIGN_OR_RETURN(catalog::Catalog * cat, OpenGlobalCatalog());
  ASSIGN_OR_RETURN(auto table, catalog::Table::Create(*cat, StorageIO(), ident, md));
  std::printf("created %s at %s\n", ident.ToString().c_str(), location.c_str());
  return Status::OK();
}

Status DescribeTable(const TableArgs& a) {
  ASSIGN_OR_RETURN(auto table, OpenTable(a.name));
  const auto& md = table->metadata();
  const Schema* schema = md.current_schema();
  if (a.json) {
    std::printf("%s\n", iceberg::TableMetadataToJson(md).c_str());
    return Status::OK();
  }
  std::printf("table:          %s\n", table->ident().ToString().c_str());
  std::printf("location:       %s\n", md.location.c_str());
  std::printf("metadata:       %s\n", table->metadata_location().c_str());
  std::printf("format-version: %d\nuuid:           %s\n", md.format_version, md.table_uuid.c_str());
  std::printf("snapshot:       %s\n",
              md.current_snapshot_id ? std::to_string(*md.current_snapshot_id).c_str() : "(none)");
  if (!schema->identifier_field_ids.empty()) {
    std::string key;
    for (const std::string& c : PrimaryKeyColumns(*schema)) key += (key.empty() ? "" : ", ") + c;
    std::printf("primary key:    %s\n", key.c_str());
  }
  TablePrinter cols({"id", "name", "type", "required"});
  for (const Field& f : schema->fields) {
    cols.AddRow({std::to_string(f.id), f.name, ToSqlType(*f.type), f.required ? "yes" : "no"});
  }
  std::printf("\n");
  cols.Print(false);
  const auto* spec = md.spec_by_id(md.default_spec_id);
  if (spec && !spec->fields.empty()) {
    std::printf("\npartitioned by:\n");
    TablePrinter parts({"field-id", "name", "transform", "source"});
    for (const auto& f : spec->fields) {
      const Field* src = schema->FindById(f.source_id);
      parts.AddRow({std::to_string(f.field_id), f.name, f.transform.ToString(),
                    src ? src->name : std::to_string(f.source_id)});
    }
    parts.Print(false);
  }
  if (!md.properties.empty()) {
    std::printf("\nproperties:\n");
    for (const auto& [k, v] : md.properties) std::printf("  %s=%s\n", k.c_str(), v.c_str());
  }
  return Status::OK();
}

Status Snapshots(const TableArgs& a) {
  ASSIGN_OR_RETURN(auto table, OpenTable(a.name));
  TablePrinter t({"snapshot_id", "parent_id", "sequence", "committed_at", "operation",
                  "added_records", "total_records", "summary"});
  for (const auto& s : table->metadata().snapshots) {
    std::string extra;
    for (const auto& [k, v] : s.summary) {
      if (k.rfind("sluice.", 0) == 0) extra += (extra.empty() ? "" : " ") + k + "=" + v;
    }
    auto get = [&](const char* k) {
      auto it = s.summary.find(k);
      return it == s.summary.end() ? std::string() : it->second;
    };
    t.AddRow({std::to_string(s.snapshot_id),
              s.parent_snapshot_id ? std::to_string(*s.parent_snapshot_id) : "",
              std::to_string(s.sequence_number), FormatMillis(s.timestamp_ms), s.operation(),
              get("added-records"), get("total-records"), extra});
  }
  t.Print(a.json);
  return Status::OK();
}

// `table register NAME METADATA_FILE`. The catalog keeps an absolute
// location in the form the table names itself (a copy's file reached through
// --remap is kept under its original name), which commits then write in the
// metadata log.
Status RegisterTable(const TableArgs& a) {
  ASSIGN_OR_RETURN(TableIdent ident, TableIdent::Parse(a.name));
  std::string location = a.to;
  if (location.find(':') == std::string::npos) {
    location = "file://" + std::filesystem::absolute(location).lexically_normal().string();
  }
  location = UnapplyRemap(location, GlobalRemaps());
  ASSIGN_OR_RETURN(catalog::Catalog * cat, OpenGlobalCatalog());
  ASSIGN_OR_RETURN(auto t, catalog::Table::Register(*cat, StorageIO(), ident, location));
  const auto& md = t->metadata();
  std::printf("registered %s: format v%d, %zu snapshots, location %s\n", ident.ToString().c_str(),
              md.format_version, md.snapshots.size(), md.location.c_str());
  return Status::OK();
}

Status History(const TableArgs& a) {
  ASSIGN_OR_RETURN(auto table, OpenTable(a.name));
  const auto& md = table->metadata();
  std::set<int64_t> ancestors;
  if (md.current_snapshot_id) {
    for (const auto* s : md.Ancestry(*md.current_snapshot_id)) ancestors.insert(s->snapshot_id);
  }
  TablePrinter t({"made_current_at", "snapshot_id", "is_current_ancestor"});
  for (const auto& e : md.snapshot_log) {
    t.AddRow({FormatMillis(e.timestamp_ms), std::to_string(e.snapshot_id),
              ancestors.count(e.snapshot_id) ? "true" : "false"});
  }
  t.Print(a.json);
  return Status::OK();
}

Status Files(const TableArgs& a) {
  ASSIGN_OR_RETURN(auto table, OpenTable(a.name));
  const auto& md = table->metadata();
  TablePrinter t({"content", "file_path", "partition", "records", "size_bytes", "sequence"});
  if (md.current_snapshot_id) {
    ASSIGN_OR_RETURN(auto live, table->LiveFiles(*md.current_snapshot_id));
    for (const auto& e : live) {
      std::string part;
      for (const auto& v : e.file.partition) {
        if (!part.empty()) part += ",";
        if (v) {
          AppendHex(*v, &part);
        } else {
          part += "null";
        }
      }
      static const char* kContent[] = {"data", "position_deletes", "equality_deletes"};
      t.AddRow({kContent[static_cast<int>(e.file.content)], e.file.file_path, part,
                std::to_string(e.file.record_count), std::to_string(e.file.file_size_in_bytes),
                std::to_string(e.sequence_number.value_or(0))});
    }
  }
  t.Print(a.json);
  return Status::OK();
}

}  // namespace

void RegisterCatalogCommands(CLI::App& app, int* exit_code) {
  // ---- namespace
  auto* ns = app.add_subcommand("namespace", "Create, list and drop namespaces");
  ns->require_subcommand(1);
  auto ns_name = std::make_shared<std::string>();
  auto ns_props = std::make_shared<std::vector<std::string>>();
  auto ns_json = std::make_shared<bool>(false);
  Command(*ns, "create", "Create a namespace", exit_code, "namespace create",
          [=]() -> Status {
            ASSIGN_OR_RETURN(auto props, ParseProperties(*ns_props));
            ASSIGN_OR_RETURN(catalog::Catalog * cat, OpenGlobalCatalog());
            return cat->CreateNamespace(catalog::SplitNamespace(*ns_name), props);
          })
      ->add_option("NAME", *ns_name, "Namespace, e.g. lake or lake.raw")
      ->required();
  ns->get_subcommand("create")->add_option("--property", *ns_props, "KEY=VALUE (repeatable)");
  Command(*ns, "list", "List namespaces", exit_code, "namespace list", [=]() -> Status {
    ASSIGN_OR_RETURN(catalog::Catalog * cat, OpenGlobalCatalog());
    ASSIGN_OR_RETURN(auto all, cat->ListNamespaces());
    TablePrinter t({"namespace"});
    for (const auto& n : all) t.AddRow({catalog::JoinNamespace(n)});
    t.Print(*ns_json);
    return Status::OK();
  })->add_flag("--json", *ns_json, "Print JSON");
  Command(*ns, "drop", "Drop an empty namespace", exit_code, "namespace drop",
          [=]() -> Status {
            ASSIGN_OR_RETURN(catalog::Catalog * cat, OpenGlobalCatalog());
            return cat->DropNamespace(catalog::SplitNamespace(*ns_name));
          })
      ->add_option("NAME", *ns_name, "Namespace")
      ->required();

  // ---- table
  auto* table = app.add_subcommand("table", "Create, inspect and manage tables");
  table->require_subcommand(1);
  auto a = std::make_shared<TableArgs>();
  auto* create = Command(*table, "create", "Create a table", exit_code, "table create",
                         [a] { return CreateTable(*a); });
  create->add_option("NAME", a->name, "NAMESPACE.TABLE")->required();
  create
      ->add_option("--schema", a->schema,
                   "Columns as SQL, e.g. \"id BIGINT NOT NULL, ts TIMESTAMPTZ\"")
      ->required();
  create->add_option("--partition", a->partition,
                     "Partition spec, e.g. \"day(ts), bucket(16, id)\"");
  create->add_option("--sort", a->sort, "Sort order, e.g. \"id, ts DESC\"");
  create->add_option("--primary-key", a->primary_key,
                     "Primary key columns, e.g. \"id\" or \"tenant, id\" (writes upsert)");
  create->add_option(
      "--property", a->properties,
      "KEY=VALUE, repeatable (format-version=3, write.parquet.compression-codec=...)");
  create->add_option("--location", a->location, "Table folder (default: in the warehouse)");

  Command(*table, "list", "List the tables of a namespace", exit_code, "table list",
          [a]() -> Status {
            ASSIGN_OR_RETURN(catalog::Catalog * cat, OpenGlobalCatalog());
            ASSIGN_OR_RETURN(auto tables, cat->ListTables(catalog::SplitNamespace(a->name)));
            TablePrinter t({"table"});
            for (const auto& id : tables) t.AddRow({id.ToString()});
            t.Print(a->json);
            return Status::OK();
          })
      ->add_option("NAMESPACE", a->name, "Namespace")
      ->required();
  table->get_subcommand("list")->add_flag("--json", a->json, "Print JSON");

  struct Simple {
    const char* name;
    const char* help;
    Status (*fn)(const TableArgs&);
  };
  for (const Simple& s :
       {Simple{"describe", "Schema, partitioning, properties of a table", DescribeTable},
        Simple{"snapshots", "The snapshots of a table", Snapshots},
        Simple{"history", "When each snapshot became current", History},
        Simple{"files", "The live data and delete files", Files}}) {
    auto* cmd = Command(*table, s.name, s.help, exit_code, std::string("table ") + s.name,
                        [a, fn = s.fn] { return fn(*a); });
    cmd->add_option("NAME", a->name, "NAMESPACE.TABLE, a table folder or a metadata file")
        ->required();
    cmd->add_flag("--json", a->json, "Print JSON");
  }
  Command(*table, "drop", "Drop a table from the catalog (files are kept)", exit_code, "table drop",
          [a]() -> Status {
            ASSIGN_OR_RETURN(TableIdent ident, TableIdent::Parse(a->name));
            ASSIGN_OR_RETURN(catalog::Catalog * cat, OpenGlobalCatalog());
            return cat->DropTable(ident);
          })
      ->add_option("NAME", a->name, "NAMESPACE.TABLE")
      ->required();
  auto* reg = Command(*table, "register",
                      "Register an existing table by its metadata file (a table another engine "
                      "or catalog wrote; nothing is copied)",
                      exit_code, "table register", [a] { return RegisterTable(*a); });
  reg->add_option("NAME", a->name, "NAMESPACE.TABLE")->required();
  reg->add_option("METADATA_FILE", a->to, "The table's current metadata file")->required();
  auto* rename =
      Command(*table, "rename", "Rename a table", exit_code, "table rename", [a]() -> Status {
        ASSIGN_OR_RETURN(TableIdent from, TableIdent::Parse(a->name));
        ASSIGN_OR_RETURN(TableIdent to, TableIdent::Parse(a->to));
        ASSIGN_OR_RETURN(catalog::Catalog * cat, OpenGlobalCatalog());
        return cat->RenameTable(from, to);
      });
  rename->add_option("NAME", a->name, "NAMESPACE.TABLE")->required();
  rename->add_option("NEW_NAME", a->to, "NAMESPACE.TABLE")->required();
}

}  // namespace sluice::cli
