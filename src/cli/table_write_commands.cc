// `sluice append`, `sluice table delete`, `sluice table alter`: commits from
// the command line.
#include <cstdio>

#include "catalog/row_delete.h"
#include "cli/commands.h"
#include "cli/context.h"
#include "cli/json_input.h"
#include "cli/progress.h"
#include "columnar/column_ops.h"
#include "columnar/sql_schema.h"
#include "iceberg/data_writer.h"
#include "iceberg/schema_update.h"
#include "parquet/reader.h"

namespace sluice::cli {

namespace {

// Reads a Parquet file's rows as batches of the table schema, matching
// columns by field id, then by name.
Status AppendParquet(const std::string& path, const Schema& schema, iceberg::DataWriter& w,
                     int64_t* rows) {
  ASSIGN_OR_RETURN(auto in, StorageIO().OpenInput(path));
  ASSIGN_OR_RETURN(auto reader, parquet::ParquetReader::Open(std::move(in)));
  auto out_schema = std::make_shared<const Schema>(schema);
  Batch b;
  while (true) {
    ASSIGN_OR_RETURN(bool more, reader->Next(&b));
    if (!more) break;
    Batch t;
    t.schema = out_schema;
    for (const Field& f : schema.fields) {
      const Column* c = nullptr;
      for (size_t i = 0; i < b.schema->fields.size(); ++i) {
        if (b.schema->fields[i].name == f.name) c = &b.columns[i];
      }
      if (c == nullptr) {
        if (f.required) return Status::Invalid("{}: required column {} is missing", path, f.name);
        Column nulls(f.type);
        for (int64_t i = 0; i < b.num_rows(); ++i) nulls.AppendNull();
        t.columns.push_back(std::move(nulls));
        continue;
      }
      auto cast = CastColumn(*c, f.type);
      if (!cast.ok()) return cast.status().WithContextF("{}: column {}", path, f.name);
      if (f.required && cast->null_count() > 0) {
        return Status::Invalid("{}: column {} is required but has nulls", path, f.name);
      }
      t.columns.push_back(std::move(*cast));
    }
    *rows += t.num_rows();
    RETURN_IF_ERROR(w.Write(t));
  }
  return Status::OK();
}

struct AppendArgs {
  std::string name;
  std::vector<std::string> inputs;
  std::vector<std::string> summary;
  bool progress = false;
};

Status RunAppend(const AppendArgs& a) {
  ASSIGN_OR_RETURN(auto table, OpenTable(a.name));
  const auto& md = table->metadata();
  auto schema = std::make_shared<const Schema>(*md.current_schema());
  ASSIGN_OR_RETURN(auto wo, iceberg::DataWriterOptionsFromProperties(md.properties));
  ASSIGN_OR_RETURN(auto writer, iceberg::DataWriter::Make(table->io(), md, wo));
  int64_t rows = 0;
  Progress progress("append " + a.name, a.progress);
  for (const auto& input : a.inputs) {
    Status st;
    if (input.ends_with(".parquet")) {
      st = AppendParquet(input, *schema, *writer, &rows);
    } else {
      auto reader = JsonLinesReader::Open(input, schema);
      st = reader.status();
      Batch b;
      while (st.ok()) {
        auto more = (*reader)->Next(&b);
        if (!more.ok()) {
          st = more.status();
          break;
        }
        if (!*more) break;
        rows += b.num_rows();
        progress.Add(b.num_rows());
        st = writer->Write(b);
      }
    }
    if (!st.ok()) {
      writer->Abort();  // nothing was committed: remove the files written
      return st;
    }
  }
  progress.Finish();
  auto files = writer->Close();
  if (!files.ok()) {
    writer->Abort();
    return files.status();
  }
  std::map<std::string, std::string> summary;
  for (const auto& kv : a.summary) {
    size_t eq = kv.find('=');
    if (eq == std::string::npos) return Status::Invalid("--summary '{}' is not KEY=VALUE", kv);
    summary[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  auto snap = table->Append(*files, summary);
  if (!snap.ok()) {
    if (snap.status().code() != StatusCode::kCommitStateUnknown) writer->Abort();
    return snap.status();
  }
  std::printf("appended %lld rows in %zu files: snapshot %lld\n", static_cast<long long>(rows),
              files->size(), static_cast<long long>(*snap));
  return Status::OK();
}

struct AlterArgs {
  std::string name;
  std::vector<std::string> add, rename, widen, drop_not_null, drop, properties;
  std::string partition;
  bool set_partition = false;
};

Status RunAlter(const AlterArgs& a) {
  ASSIGN_OR_RETURN(auto table, OpenTable(a.name));
  using iceberg::TableMetadata;
  std::vector<std::function<Result<TableMetadata>(const TableMetadata&)>> steps;
  auto split = [](const std::string& kv,
                  const char* what) -> Result<std::pair<std::string, std::string>> {
    size_t eq = kv.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == kv.size()) {
      return Status::Invalid("{} '{}' is not A=B", what, kv);
    }
    return std::make_pair(kv.substr(0, eq), kv.substr(eq + 1));
  };
  for (const auto& col : a.add) {
    ASSIGN_OR_RETURN(Schema s, ParseColumnList(col));
    for (const Field& f : s.fields) {
      steps.push_back([f](const TableMetadata& m) { return iceberg::AddColumn(m, f); });
    }
  }
  for (const auto& r : a.rename) {
    ASSIGN_OR_RETURN(auto p, split(r, "--rename-column"));
    steps.push_back(
        [p](const TableMetadata& m) { return iceberg::RenameColumn(m, p.first, p.second); });
  }
  for (const auto& w : a.widen) {
    ASSIGN_OR_RETURN(auto p, split(w, "--widen-column"));
    ASSIGN_OR_RETURN(TypePtr type, ParseSqlType(p.second));
    steps.push_back(
        [p, type](const TableMetadata& m) { return iceberg::WidenColumn(m, p.first, type); });
  }
  for (const auto& n : a.drop_not_null) {
    steps.push_back([n](const TableMetadata& m) { return iceberg::MakeOptional(m, n); });
  }
  for (const auto& n : a.drop) {
    steps.push_back([n](const TableMetadata& m) { return iceberg::DropColumn(m, n); });
  }
  if (a.set_partition) {
    std::string spec = a.partition;
    steps.push_back([spec](const TableMetadata& m) { return iceberg::SetPartitionSpec(m, spec); });
  }
  for (const auto& kv : a.properties) {
    ASSIGN_OR_RETURN(auto p, split(kv, "--property"));
    steps.push_back([p](const TableMetadata& m) -> Result<TableMetadata> {
      TableMetadata next = m;
      next.properties[p.first] = p.second;
      return next;
    });
  }
  if (steps.empty()) return Status::Invalid("nothing to change (see --help)");
  // All changes in one commit: applied in order to the (refreshed) metadata.
  RETURN_IF_ERROR(table->UpdateMetadata([&](const TableMetadata& base) -> Result<TableMetadata> {
    TableMetadata m = base;
    for (const auto& step : steps) {
      ASSIGN_OR_RETURN(m, step(m));
    }
    return m;
  }));
  std::printf("altered %s\n", table->ident().ToString().c_str());
  return Status::OK();
}

}  // namespace

void RegisterTableWriteCommands(CLI::App& app, int* exit_code) {
  auto a = std::make_shared<AppendArgs>();
  auto* append =
      app.add_subcommand("append", "Append JSON lines (or Parquet files) to a table in one commit");
  append->add_option("NAME", a->name, "NAMESPACE.TABLE")->required();
  append->add_option("INPUT", a->inputs, "JSON lines files (- for stdin) or .parquet files")
      ->required();
  append->add_option("--summary", a->summary, "KEY=VALUE added to the snapshot summary");
  append->add_flag("--progress", a->progress,
                   "Show rows read on stderr even when it is not a terminal");
  append->callback([a, exit_code] {
    Status st = RunAppend(*a);
    *exit_code = st.ok() ? 0 : ReportError("append", st);
  });

  CLI::App* table = app.get_subcommand("table");
  auto name = std::make_shared<std::string>();
  auto where = std::make_shared<std::string>();
  auto* del = table->add_subcommand("delete", "Delete the rows matching --where");
  del->add_option("NAME", *name, "NAMESPACE.TABLE")->required();
  del->add_option("--where", *where, "Row filter, e.g. \"kind = 'test'\"")->required();
  del->callback([name, where, exit_code] {
    Status st = [&]() -> Status {
      ASSIGN_OR_RETURN(auto t, OpenTable(*name));
      ASSIGN_OR_RETURN(auto r, catalog::DeleteWhere(*t, *where));
      std::string planned =
          r.plans > 1 ? fmt::format(", planned {} times: the table changed under it", r.plans) : "";
      std::printf("deleted %lld rows (%lld files removed, %lld delete files added%s)%s\n",
                  static_cast<long long>(r.rows_deleted), static_cast<long long>(r.files_removed),
                  static_cast<long long>(r.delete_files_added), planned.c_str(),
                  r.snapshot_id ? fmt::format(": snapshot {}", *r.snapshot_id).c_str() : "");
      return Status::OK();
    }();
    *exit_code = st.ok() ? 0 : ReportError("table delete", st);
  });
  auto alter_args = std::make_shared<AlterArgs>();
  auto* alter = table->add_subcommand("alter", "Evolve the schema, partitioning or properties");
  alter->add_option("NAME", alter_args->name, "NAMESPACE.TABLE")->required();
  alter->add_option("--add-column", alter_args->add,
                    "\"name TYPE\" (optional columns; repeatable)");
  alter->add_option("--rename-column", alter_args->rename, "OLD=NEW (repeatable)");
  alter->add_option("--widen-column", alter_args->widen,
                    "NAME=TYPE: INT to BIGINT, FLOAT to DOUBLE, DECIMAL(P,S) to DECIMAL(P2,S)");
  alter->add_option("--drop-not-null", alter_args->drop_not_null, "NAME: make a column optional");
  alter->add_option("--drop-column", alter_args->drop, "NAME (repeatable)");
  alter
      ->add_option("--partition", alter_args->partition,
                   "New partition spec for new data, e.g. \"day(ts), bucket(8, id)\" (\"\" = none)")
      ->each([alter_args](const std::string&) { alter_args->set_partition = true; });
  alter->add_option("--property", alter_args->properties, "KEY=VALUE (repeatable)");
  alter->callback([alter_args, exit_code] {
    Status st = RunAlter(*alter_args);
    *exit_code = st.ok() ? 0 : ReportError("table alter", st);
  });
}

}  // namespace sluice::cli
