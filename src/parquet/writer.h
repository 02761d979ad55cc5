// ParquetWriter: streams Batches of one Iceberg schema into a Parquet file and
// reports the metrics an Iceberg data-file entry needs.
//
// Layout written: the schema from ToParquetSchema (field ids, 3-level lists
// and maps), TYPE_ORDER column orders, one column chunk per leaf per row
// group, each chunk = [PLAIN dictionary page] + data pages (v1 by default),
// levels RLE-encoded, values RLE_DICTIONARY or PLAIN, statistics per chunk
// (and per page). Options and defaults: writer_options.h.
//
// Contract: Open() writes the magic; Write() may be called any number of
// times with batches of the schema; Close() writes the footer and makes the
// file visible. After any error the writer is failed: later calls return the
// same error, and the file is discarded (nothing appears at its path). A
// writer destroyed without Close() discards the file too. One thread at a time.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "columnar/column.h"
#include "common/status.h"
#include "io/file_io.h"
#include "parquet/page_copy.h"
#include "parquet/writer_options.h"

namespace sluice::parquet {

// Metrics of one leaf field (by Iceberg field id), as Iceberg's data-file
// entry records them. (The file's footer also records the zstd or gzip level,
// page_copy.h's kCompressionLevelKey.)
struct FieldMetrics {
  int64_t column_size = 0;  // compressed bytes of the leaf's chunks, page headers included
  int64_t value_count = 0;  // values including nulls (Parquet levels)
  int64_t null_count = 0;
  // Float and double leaves only, and unknown once pages were copied in.
  std::optional<int64_t> nan_count;
  // Iceberg single-value serialization, truncated like the statistics; only
  // for primitive leaves outside lists and maps, absent when all values are
  // null (or NaN) or no upper bound exists after truncation.
  std::optional<std::string> lower_bound, upper_bound;
};

struct FileMetrics {
  int64_t record_count = 0;
  int64_t file_size = 0;
  std::map<int32_t, FieldMetrics> fields;
  std::vector<int64_t> split_offsets;  // start offset of each row group
};

class ParquetWriter {
 public:
  static Result<std::unique_ptr<ParquetWriter>> Open(std::unique_ptr<OutputFile> file,
                                                     const Schema& schema,
                                                     WriterOptions options = {});
  ~ParquetWriter();

  // Appends the rows of `batch`, whose columns must match the schema.
  Status Write(const Batch& batch);
  // Appends `num_rows` rows given leaf by leaf: leaf i of the schema's
  // Parquet leaves (depth first; of a flat schema, column i) as `copied[i]`'s
  // pages when set (a top-level primitive leaf; page_copy.h), else from
  // `values` (a batch of the schema whose columns for copied leaves are not
  // read, the others holding `num_rows` rows). The row group closes after
  // these rows if it is full.
  // The copied pages' bytes are moved out.
  Status AppendRows(int64_t num_rows, const Batch& values, const std::vector<CopiedPages*>& copied);
  // Writes the footer, closes the file (durably) and returns its metrics.
  Result<FileMetrics> Close();

  int64_t rows_written() const;
  // Bytes written to the file so far (row groups not yet flushed excluded).
  int64_t bytes_written() const;
  // Bytes held in memory for the row group being built (encoded pages).
  int64_t buffered_bytes() const;

 private:
  class Impl;
  explicit ParquetWriter(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace sluice::parquet
