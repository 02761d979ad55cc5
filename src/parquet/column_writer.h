// The writer of one leaf column across the row groups of a file: buffers the
// pages of the current column chunk (levels, dictionary or PLAIN values,
// statistics), writes the chunk on FlushChunk, and keeps file-wide totals for
// Iceberg metrics. Internal to the Parquet writer; one thread at a time.
#pragma once

#include <cstdint>
#include <memory>

#include "columnar/column.h"
#include "common/status.h"
#include "io/file_io.h"
#include "parquet/metadata.h"
#include "parquet/page_compressor.h"
#include "parquet/page_copy.h"
#include "parquet/schema.h"
#include "parquet/statistics.h"
#include "parquet/writer_options.h"

namespace sluice::parquet {

// The levels and values of one leaf for a run of whole rows.
struct LeafSlice {
  int64_t num_levels = 0;
  int64_t num_rows = 0;
  const int16_t* def_levels = nullptr;  // null when max_definition_level == 0
  const int16_t* rep_levels = nullptr;  // null when max_repetition_level == 0
  const Column* values = nullptr;       // the leaf column holding the values
  // Positions in `values` of the non-null values, in order; when null, the
  // values are rows [first, first + num_values) of `values`.
  const uint32_t* positions = nullptr;
  int64_t first = 0;
  int64_t num_values = 0;
};

class ColumnWriter {
 public:
  // `compressor` (for options.codec) is shared by the writers of a file and
  // must outlive them.
  static Result<std::unique_ptr<ColumnWriter>> Make(const ColumnDescriptor& descriptor,
                                                    const WriterOptions& options,
                                                    PageCompressor* compressor);
  virtual ~ColumnWriter() = default;

  // Adds a slice's rows to the open page, which is written once it reaches
  // options.page_bytes (checked after the slice) or holds options.page_rows
  // rows (the slice is cut there: no page written holds more).
  virtual Status Add(const LeafSlice& slice) = 0;
  // Appends another file's data pages of this leaf as they are (page_copy.h;
  // their bytes are moved out), after the pages added so far; the chunk
  // writes no dictionary-encoded page after them (a dictionary in use falls
  // back to PLAIN, as when it grows too large). Their statistics join the
  // chunk's and the file's. Pages in another codec than the options' are
  // refused (kInternal).
  virtual Status AppendPages(CopiedPages&& pages) = 0;
  // Bytes the current chunk would take: compressed pages plus the open page.
  virtual int64_t BufferedSize() const = 0;
  // Writes the chunk (dictionary page first) at out's position, fills `chunk`
  // and starts a new chunk.
  virtual Status FlushChunk(OutputFile* out, ColumnChunk* chunk) = 0;

  // File-wide totals over the chunks flushed so far.
  virtual EncodedStats FileStats() const = 0;
  int64_t total_compressed_bytes() const { return total_compressed_bytes_; }
  int64_t total_values() const { return total_values_; }
  const ColumnDescriptor& descriptor() const { return descriptor_; }

 protected:
  ColumnWriter(const ColumnDescriptor& d, const WriterOptions& o, PageCompressor* c)
      : descriptor_(d), options_(o), compressor_(c) {}
  ColumnDescriptor descriptor_;
  WriterOptions options_;
  PageCompressor* compressor_;
  int64_t total_compressed_bytes_ = 0;
  int64_t total_values_ = 0;
};

}  // namespace sluice::parquet
