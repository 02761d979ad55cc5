// ParquetReader: reads a Parquet file into Batches of Iceberg-typed Columns.
//
// Open() reads and validates the footer (magic, lengths) and maps the Parquet
// schema to an Iceberg schema (schema.h). Next() returns one row group per
// call, with the projected columns only, skipping row groups that the options'
// statistics predicates rule out. Nested lists, maps and structs are assembled
// from definition/repetition levels. Every error names the file and, where it
// applies, the row group, column path and page.
//
// Thread-safety: one reader is used by one thread at a time.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "columnar/column.h"
#include "columnar/types.h"
#include "common/status.h"
#include "io/file_io.h"
#include "parquet/metadata.h"
#include "parquet/schema.h"

namespace sluice::parquet {

namespace internal {
struct AssemblyNode;
struct ChunkData;
}  // namespace internal

// Keeps a row group only if the statistics of field `field_id` (an int, long,
// date, time or timestamp column) may hold a value in [lower, upper]. Bounds
// are in Column units (days, µs, or ns for the _ns types). Row groups without
// usable statistics are kept.
struct IntRangePredicate {
  int32_t field_id = 0;
  int64_t lower = INT64_MIN;
  int64_t upper = INT64_MAX;
};

struct ReaderOptions {
  // Iceberg field ids to read, at any depth; selecting a field selects its
  // whole subtree; a nested field keeps its ancestors (structs pruned to the
  // selected members; lists and maps are kept whole). Empty = all columns.
  // Ids the file does not have are ignored (the Iceberg layer fills those
  // columns); structs without any leaf column are dropped.
  std::vector<int32_t> field_ids;
  // All must hold for a row group to be read (AND).
  std::vector<IntRangePredicate> int_ranges;
  // A general hook for other layers: return false to skip row group `index`.
  std::function<bool(int index, const RowGroup& row_group)> row_group_filter;
  // Field ids for files written without them (see FromParquetSchema); empty = none.
  std::vector<MappedField> name_mapping;
};

// Min/max of one column chunk decoded to integers in Column units, when its
// type is integer-like (see IntRangePredicate) and the statistics are present.
struct IntStats {
  int64_t min = 0, max = 0;
};
std::optional<IntStats> DecodeIntStats(const ColumnDescriptor& column, const SchemaElement& element,
                                       const Statistics& stats);

// A statistics value (raw Parquet bytes) as readable text: numbers, dates,
// timestamps, decimals in value_format.h forms; strings quoted; bytes in hex.
std::string FormatStatValue(const ColumnDescriptor& column, const SchemaElement& element,
                            std::string_view raw);

class ParquetReader {
 public:
  static Result<std::unique_ptr<ParquetReader>> Open(std::unique_ptr<InputFile> file,
                                                     ReaderOptions options = {});
  ~ParquetReader();

  const FileMetaData& metadata() const { return metadata_; }
  // The file's full Iceberg schema.
  const Schema& schema() const { return schema_; }
  // The schema of the batches Next() returns (the projection).
  const std::shared_ptr<const Schema>& projected_schema() const { return projected_; }
  // All leaf columns of the file, in schema order.
  const std::vector<ColumnDescriptor>& columns() const { return leaves_; }
  const std::string& path() const { return file_->path(); }
  const InputFile& file() const { return *file_; }
  int num_row_groups() const { return static_cast<int>(metadata_.row_groups.size()); }

  // Reads the next row group that passes the filters into *out (replacing its
  // contents); returns false when none is left.
  Result<bool> Next(Batch* out);
  // Reads row group `index` regardless of filters.
  Status ReadRowGroup(int index, Batch* out);
  // Whether the options' predicates keep row group `index`.
  bool RowGroupMatches(int index) const;

 private:
  ParquetReader(std::unique_ptr<InputFile> file, ReaderOptions options);
  Status Init();
  Status BuildProjection();
  Status Assemble(int row_group, std::vector<internal::ChunkData>& data, Batch* out);

  std::unique_ptr<InputFile> file_;
  ReaderOptions options_;
  FileMetaData metadata_;
  Schema schema_;
  std::vector<ColumnDescriptor> leaves_;
  std::shared_ptr<const Schema> projected_;
  std::vector<internal::AssemblyNode> roots_;  // one per projected top-level field
  std::vector<int> needed_leaves_;             // leaf indices read, in assembly order
  int64_t footer_start_ = 0;
  int next_row_group_ = 0;
};

}  // namespace sluice::parquet
