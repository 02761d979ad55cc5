#include "maintenance/compact_pages.h"

#include "parquet/page_copy.h"
#include "parquet/reader.h"
#include "parquet/schema.h"

namespace sluice::maintenance::internal {

namespace {

bool SameLogicalType(const std::optional<parquet::LogicalType>& a,
                     const std::optional<parquet::LogicalType>& b) {
  if (!a || !b) return !a && !b;
  return a->kind == b->kind && a->precision == b->precision && a->scale == b->scale &&
         a->is_adjusted_to_utc == b->is_adjusted_to_utc && a->unit == b->unit &&
         a->bit_width == b->bit_width && a->is_signed == b->is_signed;
}

// Whether the file's columns are stored as the writer stores the table's:
// the same top-level fields (ids, types: nested fields' names included, as
// the decoded columns go into the output as they are), and leaves in the same
// order with the same field ids, Iceberg types, levels and Parquet
// representation (physical type and width, converted and logical type with
// their units and decimal scales): a TIMESTAMP(MILLIS) column read as a
// timestamptz is not one of µs.
bool SameColumns(const parquet::ParquetReader& file, const Schema& schema,
                 const std::vector<parquet::SchemaElement>& table_elements,
                 const std::vector<parquet::ColumnDescriptor>& table) {
  const Schema& file_schema = file.schema();
  if (file_schema.fields.size() != schema.fields.size()) return false;
  for (size_t i = 0; i < schema.fields.size(); ++i) {
    const Field& a = file_schema.fields[i];
    const Field& b = schema.fields[i];
    if (a.id != b.id || !a.type->Equals(*b.type)) return false;
  }
  const std::vector<parquet::ColumnDescriptor>& leaves = file.columns();
  const std::vector<parquet::SchemaElement>& elements = file.metadata().schema;
  if (leaves.size() != table.size()) return false;
  for (size_t i = 0; i < leaves.size(); ++i) {
    const parquet::ColumnDescriptor& a = leaves[i];
    const parquet::ColumnDescriptor& b = table[i];
    if (a.field_id != b.field_id || a.physical_type != b.physical_type ||
        a.type_length != b.type_length || a.max_definition_level != b.max_definition_level ||
        a.max_repetition_level != b.max_repetition_level || !a.type->Equals(*b.type)) {
      return false;
    }
    if (a.schema_index < 0 || static_cast<size_t>(a.schema_index) >= elements.size() ||
        b.schema_index < 0 || static_cast<size_t>(b.schema_index) >= table_elements.size()) {
      return false;
    }
    const parquet::SchemaElement& x = elements[static_cast<size_t>(a.schema_index)];
    const parquet::SchemaElement& y = table_elements[static_cast<size_t>(b.schema_index)];
    if (x.type != y.type || x.type_length.value_or(0) != y.type_length.value_or(0) ||
        x.converted_type != y.converted_type || x.scale != y.scale || x.precision != y.precision ||
        !SameLogicalType(x.logical_type, y.logical_type)) {
      return false;
    }
  }
  return true;
}

}  // namespace

bool PagesCopyable(const iceberg::TableMetadata& md, const iceberg::SortOrder* order,
                   const PartitionCompaction& plan) {
  return order == nullptr && !plan.inputs_have_deletes && plan.spec_id == md.default_spec_id &&
         md.format_version < 3 && !plan.inputs.empty();
}

void RecordOrigin(std::vector<Run>* runs, int64_t in, int32_t output, int64_t out_pos) {
  if (!runs->empty()) {
    Run& last = runs->back();
    if (last.output == output && last.in_pos + last.length == in &&
        last.out_pos + last.length == out_pos) {
      ++last.length;
      return;
    }
  }
  runs->push_back(Run{in, out_pos, 1, output});
}

Result<bool> WriteCopyingPages(catalog::Table& table,
                               const std::shared_ptr<const iceberg::TableMetadata>& md,
                               const iceberg::DataWriterOptions& wo, const InputFacts& inputs,
                               Staged* staged) {
  PartitionCompaction& plan = *staged->plan;
  const auto schema = std::make_shared<const Schema>(*md->current_schema());
  std::vector<parquet::SchemaElement> elements;
  std::vector<parquet::ColumnDescriptor> leaves;
  RETURN_IF_ERROR(parquet::ToParquetSchema(*schema, &elements, &leaves));
  const int64_t min_bytes = parquet::MinCopiedChunkBytes(wo.parquet.page_bytes);
  // Every input's footer first (each closed after: a partition of thousands
  // of files must not hold as many open): one that does not match sends the
  // partition down the usual path before anything is written.
  for (const std::string& path : plan.inputs) {
    ASSIGN_OR_RETURN(auto file, table.io().OpenInput(path));
    ASSIGN_OR_RETURN(auto footer, parquet::ParquetReader::Open(std::move(file)));
    if (!SameColumns(*footer, *schema, elements, leaves)) return false;
  }
  ASSIGN_OR_RETURN(auto writer, iceberg::DataWriter::Make(table.io(), *md, wo));
  iceberg::DataWriter& w = *writer;
  staged->writers.push_back(std::move(writer));  // aborted with the rest on a failure
  const auto first_output = static_cast<int32_t>(staged->output_paths.size());
  // (pages recompressed as the output's writer compresses its own)
  parquet::PageCompressor compressor(wo.parquet.codec, wo.parquet.compression_level);
  parquet::MergePieces pieces;
  std::vector<iceberg::RowPlacement> placed;
  static const std::set<int32_t> kNone;
  for (const std::string& path : plan.inputs) {
    auto fact = inputs.find(path);
    ASSIGN_OR_RETURN(auto footer_file, table.io().OpenInput(path));
    ASSIGN_OR_RETURN(auto footer, parquet::ParquetReader::Open(std::move(footer_file)));
    ASSIGN_OR_RETURN(auto values_file, table.io().OpenInput(path));
    ASSIGN_OR_RETURN(
        parquet::MergeInput in,
        parquet::OpenMergeInput(std::move(footer), std::move(values_file), *schema, min_bytes,
                                fact == inputs.end() ? kNone : fact->second.nan_free));
    auto [index, fresh] =
        staged->input_index.try_emplace(path, static_cast<int32_t>(staged->input_index.size()));
    if (fresh) staged->origins.emplace_back();
    std::vector<Run>& runs = staged->origins[static_cast<size_t>(index->second)];
    int64_t pos = 0;  // the row group's first row in the file
    for (int g = 0; g < in.footer->num_row_groups(); ++g) {
      RETURN_IF_ERROR(parquet::ReadMergePieces(in, g, schema, &compressor, &pieces));
      RETURN_IF_ERROR(
          w.AppendRows(plan.values, pieces.num_rows, pieces.values, pieces.copied, &placed)
              .WithContextF("file {}: row group {}", path, g));
      for (int64_t r = 0; r < pieces.num_rows; ++r) {
        const iceberg::RowPlacement& p = placed[static_cast<size_t>(r)];
        RecordOrigin(&runs, pos + r, first_output + p.file, p.pos);
      }
      pos += pieces.num_rows;
      plan.rows += pieces.num_rows;
      plan.copied_bytes += pieces.copied_bytes;
    }
  }
  const std::vector<std::string> paths = w.FilePaths();
  ASSIGN_OR_RETURN(auto added, w.Close());
  staged->output_paths.insert(staged->output_paths.end(), paths.begin(), paths.end());
  for (iceberg::DataFile& f : added) staged->added.push_back(std::move(f));
  return true;
}

}  // namespace sluice::maintenance::internal
