// AvroReader: reads an Avro object container file into Batches.
//
// Open() reads and checks the header (magic "Obj\x01", the metadata map, the
// sync marker), parses `avro.schema` and derives the Iceberg schema of the
// rows. Next() then yields one block per call (or at most
// ReaderOptions::batch_rows rows), checking each block's sync marker.
// Codecs: null, deflate, snappy, zstandard. The writer schema is the read
// schema (no schema resolution).
//
// Errors: corrupt or truncated input is kCorruption naming the file, the block
// index and the byte offset; lengths and counts are checked against the file
// size before anything is allocated. An unsupported schema or codec is
// kNotImplemented. After an error the reader and the batch are unusable.
// Not thread-safe; one reader per thread.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "avro/codec.h"
#include "avro/decoder.h"
#include "avro/schema.h"
#include "columnar/column.h"
#include "io/file_io.h"

namespace sluice::avro {

struct ReaderOptions {
  // Rows per Next() call; 0 = one whole block per call.
  int64_t batch_rows = 0;
  // Largest accepted block, compressed or not (guards against forged sizes).
  int64_t max_block_bytes = int64_t{256} << 20;
  // Record fields (by Iceberg field id, in any nested record) read past
  // instead of decoded: their columns are null (RecordDecoder::Make).
  std::vector<int32_t> skip_field_ids;
};

class AvroReader {
 public:
  static Result<std::unique_ptr<AvroReader>> Open(std::unique_ptr<InputFile> file,
                                                  ReaderOptions options = {});

  // File metadata, every key including avro.schema and avro.codec.
  const std::map<std::string, std::string>& metadata() const { return metadata_; }
  // A metadata value or "" when absent.
  std::string Metadata(const std::string& key) const;
  const AvroNode& avro_schema() const { return *avro_schema_; }
  const std::shared_ptr<const Schema>& schema() const { return schema_; }
  Codec codec() const { return codec_; }
  const std::array<uint8_t, 16>& sync_marker() const { return sync_; }

  // Replaces *batch with the next rows (its columns follow schema()). Returns
  // false at the end of the file, leaving *batch empty.
  Result<bool> Next(Batch* batch);

  int64_t blocks_read() const { return blocks_read_; }
  int64_t rows_read() const { return rows_read_; }

 private:
  AvroReader() = default;
  Status ReadHeader();
  // Loads the next block into block_; false at the end of the file.
  Result<bool> LoadBlock();
  Status Corrupt(int64_t offset, const std::string& what) const;

  std::unique_ptr<InputFile> file_;
  ReaderOptions options_;
  std::map<std::string, std::string> metadata_;
  AvroNodePtr avro_schema_;
  std::shared_ptr<const Schema> schema_;
  std::unique_ptr<RecordDecoder> decoder_;
  Codec codec_ = Codec::kNull;
  std::array<uint8_t, 16> sync_{};

  int64_t offset_ = 0;        // file offset of the next block
  int64_t block_offset_ = 0;  // file offset of the current block
  std::string raw_;           // current block as stored
  std::string block_;         // current block decompressed
  size_t block_pos_ = 0;      // bytes of block_ decoded
  int64_t block_count_ = 0;   // records in the current block
  int64_t block_rows_left_ = 0;
  int64_t blocks_read_ = 0;
  int64_t rows_read_ = 0;
};

}  // namespace sluice::avro
