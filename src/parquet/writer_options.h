// Options of the Parquet writer (ParquetWriter in writer.h), with defaults.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "parquet/metadata.h"

namespace sluice::parquet {

struct WriterOptions {
  // Page compression; `compression_level` 0 means the codec's default (zstd 3,
  // gzip 6); it applies to zstd and gzip only.
  CompressionCodec codec = CompressionCodec::kZstd;
  int compression_level = 0;
  // A row group is closed once its buffered (compressed) pages reach
  // `row_group_bytes`, or it holds `row_group_rows` rows (0 = no row limit;
  // pages copied whole from another file can carry it past by their row
  // group). The row limit is Arrow's default: it bounds what a reader decodes
  // at once (128 MiB of compressed pages of a narrow table can be 10 M rows,
  // 80 MB for one BIGINT column), and an engine that splits a scan by row
  // group (DuckDB, Spark, Trino) gets more than one unit of work per file.
  int64_t row_group_bytes = int64_t{128} << 20;
  int64_t row_group_rows = int64_t{1} << 20;
  // Target size of a data page before compression (checked at row boundaries,
  // so a page can exceed it by one batch slice).
  int64_t page_bytes = int64_t{1} << 20;
  // At most this many rows a data page the writer encodes (0 = no row
  // limit; pages copied whole keep theirs), the default of Iceberg's
  // write.parquet.page-row-limit and of arrow-rs. Values that encode small
  // (a dictionary's few distinct values, runs) would otherwise fill 1 MiB
  // pages of millions of rows, which a reader decodes whole to read any row
  // of, and which the writer buffers value by value (4 bytes a dictionary
  // index) before it encodes them, megabytes a column, grown anew for each
  // file (bench/README.md, "Pages of at most 20,000 rows").
  int64_t page_rows = 20000;
  // Dictionary encoding (RLE_DICTIONARY data pages + a PLAIN dictionary page)
  // for every type but BOOLEAN. A chunk whose first page is mostly distinct
  // values is written PLAIN instead; once the dictionary's PLAIN size passes
  // `dictionary_page_bytes` the rest of the chunk falls back to PLAIN.
  bool dictionary = true;
  int64_t dictionary_page_bytes = int64_t{1} << 20;
  // Length of string (code points) and binary (bytes) min/max bounds in
  // statistics and Iceberg metrics (0 = no truncation).
  int statistics_truncate_length = 16;
  // Write min/max/null_count in each data page header too.
  bool page_statistics = true;
  // DATA_PAGE_V2 instead of DATA_PAGE (v1).
  bool data_page_v2 = false;
  // How field names are written (unset: as they are). Iceberg tables write
  // Avro-compatible names, as Iceberg's own writers do, so that readers
  // matching columns by name find them (iceberg/data_writer.cc).
  std::function<std::string(std::string_view)> column_names;
  std::string created_by = "sluice version 0.1.0";
};

}  // namespace sluice::parquet
