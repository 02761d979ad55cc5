// AvroWriter: writes Batches as an Avro object container file.
//
// Open() writes the header (magic, metadata with avro.schema and avro.codec
// plus the caller's keys, sync marker). Write() encodes a whole batch or
// nothing: on error the file is unchanged by that call. A block is cut once
// its encoded rows reach WriterOptions::block_bytes (checked every 256 rows,
// also inside one large batch). Close() flushes, closes the
// OutputFile (which makes the file visible) and returns the file size;
// destroying an unclosed writer discards the file.
//
// The Avro schema is derived from the Iceberg schema (IcebergToAvroSchema) or
// given as JSON in WriterOptions::avro_schema_json (Iceberg manifests need
// exact schemas); either way it is matched against the Iceberg schema at Open.
// Not thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "avro/codec.h"
#include "avro/encoder.h"
#include "avro/schema.h"
#include "columnar/column.h"
#include "io/file_io.h"

namespace sluice::avro {

struct WriterOptions {
  // Name of the top-level record when the Avro schema is derived.
  std::string record_name = "record";
  // Extra file metadata, written in this order ("avro.*" keys are reserved).
  std::vector<std::pair<std::string, std::string>> metadata;
  Codec codec = Codec::kDeflate;
  // Compression level: deflate 1..9, zstandard 1..22; -1 = the codec's
  // default (zlib's 6, as Java Iceberg; zstd 3). Checked at Open.
  int compression_level = -1;
  // Explicit Avro schema JSON; empty = derive it from the Iceberg schema.
  std::string avro_schema_json;
  // Uncompressed bytes per block before it is flushed.
  int64_t block_bytes = int64_t{1} << 20;
  // Sync marker; random when unset (set it for byte-identical output in tests).
  std::optional<std::array<uint8_t, 16>> sync_marker;
};

class AvroWriter {
 public:
  static Result<std::unique_ptr<AvroWriter>> Open(std::unique_ptr<OutputFile> file,
                                                  const Schema& schema, WriterOptions options = {});

  // Appends all rows of `batch`, whose columns follow the schema given to Open.
  Status Write(const Batch& batch);
  // Flushes, closes the file and returns its size in bytes.
  Result<int64_t> Close();

  const AvroNode& avro_schema() const { return *avro_schema_; }
  int64_t rows_written() const { return rows_written_; }

 private:
  AvroWriter() = default;
  Status WriteHeader();
  Status FlushBlock();
  Status WriteBlock(std::string_view data, int64_t rows);

  std::unique_ptr<OutputFile> file_;
  WriterOptions options_;
  AvroNodePtr avro_schema_;
  std::unique_ptr<RecordEncoder> encoder_;
  std::array<uint8_t, 16> sync_{};
  std::string buffer_;      // encoded rows of the pending block
  std::string compressed_;  // scratch
  int64_t block_rows_ = 0;
  int64_t rows_written_ = 0;
  bool closed_ = false;
};

}  // namespace sluice::avro
