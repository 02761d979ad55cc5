// `sluice parquet schema|meta|cat`: inspect Parquet files (the read side;
// `parquet write` lives in parquet_write_command.cc).
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <sstream>
#include <string>

#include "cli/commands.h"
#include "columnar/json_writer.h"
#include "columnar/sql_schema.h"
#include "io/file_io.h"
#include "parquet/reader.h"

namespace sluice::cli {

namespace {

using parquet::ParquetReader;

Result<std::unique_ptr<ParquetReader>> OpenParquet(const std::string& path,
                                                   parquet::ReaderOptions options = {}) {
  auto io = MakeLocalFileIO();
  ASSIGN_OR_RETURN(auto file, io->OpenInput(path));
  return ParquetReader::Open(std::move(file), std::move(options));
}

void Print(const std::string& s) { std::fwrite(s.data(), 1, s.size(), stdout); }

std::string LogicalName(const parquet::SchemaElement& e) {
  using K = parquet::LogicalType::Kind;
  std::string s;
  if (e.logical_type && e.logical_type->kind != K::kNone) {
    const auto& lt = *e.logical_type;
    static const char* kUnits[] = {"MILLIS", "MICROS", "NANOS"};
    switch (lt.kind) {
      case K::kString: s = "STRING"; break;
      case K::kMap: s = "MAP"; break;
      case K::kList: s = "LIST"; break;
      case K::kEnum: s = "ENUM"; break;
      case K::kDecimal: s = fmt::format("DECIMAL({},{})", lt.precision, lt.scale); break;
      case K::kDate: s = "DATE"; break;
      case K::kTime:
      case K::kTimestamp:
        s = fmt::format("{}({},{})", lt.kind == K::kTime ? "TIME" : "TIMESTAMP",
                        kUnits[static_cast<int>(lt.unit)], lt.is_adjusted_to_utc ? "UTC" : "local");
        break;
      case K::kInteger:
        s = fmt::format("INT({},{})", lt.bit_width, lt.is_signed ? "signed" : "unsigned");
        break;
      case K::kUnknown: s = "UNKNOWN"; break;
      case K::kJson: s = "JSON"; break;
      case K::kBson: s = "BSON"; break;
      case K::kUuid: s = "UUID"; break;
      case K::kFloat16: s = "FLOAT16"; break;
      case K::kNone: break;
    }
  }
  if (e.converted_type) {
    static const char* kConverted[] = {"UTF8",
                                       "MAP",
                                       "MAP_KEY_VALUE",
                                       "LIST",
                                       "ENUM",
                                       "DECIMAL",
                                       "DATE",
                                       "TIME_MILLIS",
                                       "TIME_MICROS",
                                       "TIMESTAMP_MILLIS",
                                       "TIMESTAMP_MICROS",
                                       "UINT_8",
                                       "UINT_16",
                                       "UINT_32",
                                       "UINT_64",
                                       "INT_8",
                                       "INT_16",
                                       "INT_32",
                                       "INT_64",
                                       "JSON",
                                       "BSON",
                                       "INTERVAL"};
    int c = static_cast<int>(*e.converted_type);
    std::string conv = c >= 0 && c < 22 ? kConverted[c] : fmt::format("CONVERTED({})", c);
    s += s.empty() ? conv : " / " + conv;
  }
  return s;
}

// Iceberg's type string, with the ids of list elements and map keys/values too.
std::string TypeWithIds(const DataType& t) {
  auto field = [](const Field& f) {
    return fmt::format("{}: {}: {}{}", f.id, f.name, f.required ? "" : "optional ",
                       TypeWithIds(*f.type));
  };
  switch (t.id()) {
    case TypeId::kList: return "list<" + field(t.fields()[0]) + ">";
    case TypeId::kMap: return "map<" + field(t.fields()[0]) + ", " + field(t.fields()[1]) + ">";
    case TypeId::kStruct: {
      std::string s = "struct<";
      for (size_t i = 0; i < t.fields().size(); ++i) s += (i ? ", " : "") + field(t.fields()[i]);
      return s + ">";
    }
    default: return t.ToString();
  }
}

std::string FieldLine(const Field& f, bool last) {
  std::string s = fmt::format("{} {}{}{}", f.name, ToSqlType(*f.type),
                              f.required ? " NOT NULL" : "", last ? "" : ",");
  s += fmt::format("  -- id {}", f.id);
  if (f.type->is_nested()) s += ", iceberg " + TypeWithIds(*f.type);
  return s;
}

Status PrintParquetSchema(const std::string& path) {
  ASSIGN_OR_RETURN(auto reader, OpenParquet(path));
  std::string out = "Iceberg schema (SQL column list; field ids in comments):\n";
  const auto& fields = reader->schema().fields;
  for (size_t i = 0; i < fields.size(); ++i) {
    out += "  " + FieldLine(fields[i], i + 1 == fields.size()) + "\n";
  }
  out += "\nParquet schema:\n";
  const auto& elements = reader->metadata().schema;
  // Depth-first: a stack of remaining child counts gives the indentation.
  std::vector<int> remaining;
  for (size_t i = 0; i < elements.size(); ++i) {
    const auto& e = elements[i];
    while (!remaining.empty() && remaining.back() == 0) remaining.pop_back();
    std::string indent(2 * (remaining.size() + 1), ' ');
    if (!remaining.empty()) --remaining.back();
    std::string rep;
    if (e.repetition_type) {
      static const char* kRep[] = {"required", "optional", "repeated"};
      int r = static_cast<int>(*e.repetition_type);
      rep = r >= 0 && r < 3 ? kRep[r] : "?";
    }
    std::string kind = e.type ? std::string(parquet::PhysicalTypeName(*e.type)) : "group";
    if (e.type == parquet::PhysicalType::kFixedLenByteArray) {
      kind += fmt::format("({})", e.type_length.value_or(0));
    }
    std::string line = i == 0 ? fmt::format("  message {}", e.name)
                              : fmt::format("{}{} {} {}", indent, rep, kind, e.name);
    std::string logical = LogicalName(e);
    if (!logical.empty()) line += " (" + logical + ")";
    if (e.field_id) line += fmt::format(" = {}", *e.field_id);
    out += line + "\n";
    if (!e.type && e.num_children.value_or(0) > 0) remaining.push_back(*e.num_children);
  }
  Print(out);
  return Status::OK();
}

Status PrintParquetMeta(const std::string& path) {
  ASSIGN_OR_RETURN(auto reader, OpenParquet(path));
  const auto& md = reader->metadata();
  std::string out;
  out += fmt::format("file: {}\n", path);
  out += fmt::format("created_by: {}\n", md.created_by.value_or("(unknown)"));
  out += fmt::format("version: {}\nrows: {}\nrow groups: {}\n", md.version, md.num_rows,
                     md.row_groups.size());
  for (const auto& kv : md.key_value_metadata) {
    std::string v = kv.value.value_or("");
    if (v.size() > 200) v = v.substr(0, 200) + fmt::format("... ({} bytes)", v.size());
    out += fmt::format("key_value: {} = {}\n", kv.key, v);
  }
  const auto& leaves = reader->columns();
  for (size_t g = 0; g < md.row_groups.size(); ++g) {
    const auto& rg = md.row_groups[g];
    out += fmt::format("\nrow group {}: rows {}, total_byte_size {}", g, rg.num_rows,
                       rg.total_byte_size);
    if (rg.total_compressed_size) out += fmt::format(", compressed {}", *rg.total_compressed_size);
    out += "\n";
    for (size_t c = 0; c < rg.columns.size() && c < leaves.size(); ++c) {
      const auto& leaf = leaves[c];
      const auto& element = md.schema[leaf.schema_index];
      std::string p;
      for (const auto& s : leaf.path) p += (p.empty() ? "" : ".") + s;
      out += fmt::format("  column {}: {}\n", c, p);
      out += fmt::format("    type: {}{}  -> iceberg {} (field id {})\n",
                         parquet::PhysicalTypeName(leaf.physical_type),
                         LogicalName(element).empty() ? "" : " " + LogicalName(element),
                         leaf.type->ToString(), leaf.field_id);
      const auto& meta = rg.columns[c].meta_data;
      if (!meta) {
        out += "    (no column metadata)\n";
        continue;
      }
      std::string enc;
      for (auto e : meta->encodings) {
        enc += (enc.empty() ? "" : ",") + std::string(parquet::EncodingName(e));
      }
      out += fmt::format("    encodings: {}  codec: {}\n", enc, parquet::CodecName(meta->codec));
      out += fmt::format("    values: {}  compressed: {}  uncompressed: {}\n", meta->num_values,
                         meta->total_compressed_size, meta->total_uncompressed_size);
      out += fmt::format("    data_page_offset: {}", meta->data_page_offset);
      if (meta->dictionary_page_offset) {
        out += fmt::format("  dictionary_page_offset: {}", *meta->dictionary_page_offset);
      }
      out += "\n";
      if (const auto& st = meta->statistics) {
        std::string s;
        const auto& lo = st->min_value ? st->min_value : st->min;
        const auto& hi = st->max_value ? st->max_value : st->max;
        if (lo) s += " min " + parquet::FormatStatValue(leaf, element, *lo);
        if (hi) s += " max " + parquet::FormatStatValue(leaf, element, *hi);
        if (st->null_count) s += fmt::format(" nulls {}", *st->null_count);
        if (st->distinct_count) s += fmt::format(" distinct {}", *st->distinct_count);
        if (!st->min_value && st->min) s += " (deprecated min/max fields)";
        out += "    statistics:" + (s.empty() ? std::string(" (empty)") : s) + "\n";
      }
    }
  }
  Print(out);
  return Status::OK();
}

// Resolves "a" or "a.b.c" (through structs) to a field id.
Result<int32_t> ResolveColumn(const Schema& schema, const std::string& name) {
  if (const Field* f = schema.FindByName(name)) return f->id;
  std::vector<std::string> parts;
  std::stringstream ss(name);
  for (std::string part; std::getline(ss, part, '.');) parts.push_back(part);
  const std::vector<Field>* fields = &schema.fields;
  const Field* found = nullptr;
  for (const auto& part : parts) {
    found = nullptr;
    for (const Field& f : *fields) {
      if (f.name == part) found = &f;
    }
    if (found == nullptr) break;
    fields = &found->type->fields();
  }
  if (found == nullptr) return Status::NotFound("no column '{}' in the file", name);
  return found->id;
}

Status Cat(const std::string& path, const std::string& columns, int64_t limit) {
  parquet::ReaderOptions options;
  std::vector<std::string> order;
  if (!columns.empty()) {
    ASSIGN_OR_RETURN(auto probe, OpenParquet(path));
    std::stringstream ss(columns);
    for (std::string name; std::getline(ss, name, ',');) {
      if (name.empty()) continue;
      ASSIGN_OR_RETURN(int32_t id, ResolveColumn(probe->schema(), name));
      options.field_ids.push_back(id);
      // Output follows the order given; nested names print their top-level field.
      std::string top = name.substr(0, name.find('.'));
      if (probe->schema().FindByName(name) != nullptr) top = name;
      if (std::find(order.begin(), order.end(), top) == order.end()) order.push_back(top);
    }
  }
  ASSIGN_OR_RETURN(auto reader, OpenParquet(path, options));
  // Reorder top-level columns to the requested order.
  std::vector<int> perm;
  std::shared_ptr<const Schema> out_schema = reader->projected_schema();
  if (!order.empty()) {
    auto s = std::make_shared<Schema>();
    const auto& pf = reader->projected_schema()->fields;
    for (const auto& name : order) {
      for (size_t i = 0; i < pf.size(); ++i) {
        if (pf[i].name == name) {
          perm.push_back(static_cast<int>(i));
          s->fields.push_back(pf[i]);
        }
      }
    }
    out_schema = s;
  }
  Batch batch;
  std::string line;
  int64_t printed = 0;
  while (limit < 0 || printed < limit) {
    ASSIGN_OR_RETURN(bool more, reader->Next(&batch));
    if (!more) break;
    if (!perm.empty()) {
      Batch reordered;
      reordered.schema = out_schema;
      for (int i : perm) reordered.columns.push_back(std::move(batch.columns[i]));
      batch = std::move(reordered);
    }
    const int64_t rows = batch.num_rows();
    for (int64_t r = 0; r < rows && (limit < 0 || printed < limit); ++r, ++printed) {
      line.clear();
      AppendJsonRow(batch, r, &line);
      line.push_back('\n');
      std::fwrite(line.data(), 1, line.size(), stdout);
    }
  }
  return Status::OK();
}

}  // namespace

void RegisterParquetCommands(CLI::App& app, int* exit_code) {
  auto* parquet = app.add_subcommand("parquet", "Inspect and write Parquet files");
  parquet->require_subcommand(1);
  RegisterParquetWriteCommand(*parquet, exit_code);

  struct Args {
    std::string file;
    std::string columns;
    int64_t limit = -1;
  };
  auto args = std::make_shared<Args>();

  auto* schema = parquet->add_subcommand(
      "schema", "Print the Iceberg schema (SQL column list with field ids) and the Parquet schema");
  schema->add_option("FILE", args->file, "Parquet file")->required();
  schema->callback([args, exit_code] {
    Status st = PrintParquetSchema(args->file);
    if (!st.ok()) *exit_code = ReportError("parquet schema", st);
  });

  auto* meta = parquet->add_subcommand(
      "meta",
      "Print the footer: row groups and, per column, types, field id, encodings, codec, sizes, "
      "value counts and statistics");
  meta->add_option("FILE", args->file, "Parquet file")->required();
  meta->callback([args, exit_code] {
    Status st = PrintParquetMeta(args->file);
    if (!st.ok()) *exit_code = ReportError("parquet meta", st);
  });

  auto* cat = parquet->add_subcommand(
      "cat", "Print the rows of a Parquet file as JSON lines (Iceberg JSON value forms)");
  cat->add_option("FILE", args->file, "Parquet file")->required();
  cat->add_option("--columns", args->columns,
                  "Comma-separated columns to print, in this order (a.b selects a nested field)");
  cat->add_option("--limit", args->limit, "Print at most N rows (default: all)")->check(AtLeast(0));
  cat->callback([args, exit_code] {
    Status st = Cat(args->file, args->columns, args->limit);
    if (!st.ok()) *exit_code = ReportError("parquet cat", st);
  });
}

}  // namespace sluice::cli
