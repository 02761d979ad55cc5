// Copying data pages between Parquet files without decoding their values.
//
// Compaction merges small files into row groups of the target size. Where a
// column chunk of an input holds no dictionary (PLAIN, delta or byte-stream-
// split pages: distinct values such as ids, timestamps, amounts, URLs), its
// data pages can be appended to the output's chunk of the same leaf as they
// are, or decompressed and compressed again when the codec or the level
// differs, instead of being decoded, encoded and compressed anew. Compression
// is most of a rewrite's cost (bench/README.md, Compaction).
//
// What a copied chunk brings to the output's statistics comes from the
// input's chunk statistics: null count, and min_value/max_value, which may be
// truncated bounds (then marked inexact, statistics.h). NaN counts are not in
// Parquet statistics: a float or double chunk is copied only where the caller
// knows its count (Iceberg's metrics of the file: none), since readers such
// as Iceberg's Java strict evaluator take a missing count for zero.
//
// Every copied page is decompressed once to check it (its body decompresses
// to its stated size), even when it is kept as it is: a corrupt page is an
// error, as decoding would find, not a corruption carried into a file that
// merges many others' rows.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/status.h"
#include "io/file_io.h"
#include "parquet/metadata.h"
#include "parquet/page_compressor.h"
#include "parquet/reader.h"
#include "parquet/schema.h"

namespace sluice::parquet {

// The data pages of one column chunk, ready to append to another file's
// chunk of the same leaf (ParquetWriter::AppendRows).
struct CopiedPages {
  std::string bytes;  // page headers and bodies, back to back
  CompressionCodec codec = CompressionCodec::kUncompressed;  // of the bodies
  int64_t num_values = 0;           // levels: the rows, for a leaf outside lists and maps
  int64_t uncompressed_bytes = 0;   // headers plus uncompressed bodies
  std::vector<Encoding> encodings;  // of the pages' values and levels
  int64_t null_count = 0;
  bool has_min_max = false;  // false when every value is null
  std::string min, max;      // PLAIN-encoded, as the chunk's statistics hold them
  bool min_exact = true, max_exact = true;
  // Float and double: the NaN values among them, when known (the caller's:
  // Parquet statistics have none); unknown makes the file's count unknown.
  std::optional<int64_t> nan_count;
};

// The key under which sluice's writer records its zstd or gzip level in the
// footer's key-value metadata: a copy keeps pages as they are only when they
// are compressed at least as hard as the output asks.
inline constexpr char kCompressionLevelKey[] = "sluice.compression-level";
std::optional<int> RecordedCompressionLevel(const FileMetaData& md);

// Whether chunk `chunk` of `leaf` can be copied, from the footer alone: a
// top-level primitive leaf (not in a struct, list or map); no dictionary
// page and no dictionary-encoded pages (ColumnMetaData::encodings); at least
// `min_bytes` of uncompressed pages (the pages of a tiny file, a streaming
// commit's, would stay tiny: compressed alone and read one by one, they
// are worth encoding anew); and statistics that give its null count and,
// when it holds values, both min_value and max_value (not NaN; of the
// physical type's width; exact but for byte arrays' truncated ones), of the
// leaf's physical type. When not, `why` says why.
bool CanCopyChunk(const ColumnDescriptor& leaf, const ColumnChunk& chunk, int64_t min_bytes,
                  std::string* why);

// The least uncompressed bytes of a chunk whose pages are copied into a
// file written with pages of `page_bytes`: a sixteenth of them (64 KiB of the
// default 1 MiB).
inline int64_t MinCopiedChunkBytes(int64_t page_bytes) { return page_bytes / 16; }

// Whether chunk pages compressed with `codec` in a file that recorded
// `recorded_level` (if any) go into a chunk compressed by `to` as they are.
// Otherwise they are decompressed and compressed again.
bool CopyVerbatim(CompressionCodec codec, std::optional<int> recorded_level,
                  const PageCompressor& to);

// Reads chunk `chunk` of `leaf` (one CanCopyChunk accepted) from `file`,
// checking every page header: data pages (v1 or v2) only, none dictionary-
// encoded, their values adding up to the chunk's. With `verbatim` the pages
// are kept as they are; otherwise each is decompressed and compressed again
// with `to` (its header rewritten, its CRC dropped). Malformed pages are
// kCorruption naming the file, column and page.
Result<CopiedPages> ReadPagesToCopy(const InputFile& file, const ColumnDescriptor& leaf,
                                    const ColumnChunk& chunk, bool verbatim, PageCompressor* to);

// A file to merge into another of `schema` (its leaves the same: field ids,
// types and levels, as the caller checked on `footer`, the file opened
// without a projection): which leaves are copied, in every row group
// (CanCopyChunk with `min_bytes`; statistics in the type's defined order; a
// float or double leaf only if its field id is in `nan_free`, the caller
// knowing it holds no NaN), and a reader decoding the others' top-level
// fields (null when every leaf is copied).
struct MergeInput {
  std::unique_ptr<ParquetReader> footer;  // the file's footer; reads the pages
  std::unique_ptr<ParquetReader> values;
  std::vector<bool> copy;  // by leaf
  std::optional<int> recorded_level;
};
Result<MergeInput> OpenMergeInput(std::unique_ptr<ParquetReader> footer,
                                  std::unique_ptr<InputFile> values_file, const Schema& schema,
                                  int64_t min_bytes, const std::set<int32_t>& nan_free);

// Row group `row_group` of `input`, as ParquetWriter::AppendRows takes it.
struct MergePieces {
  int64_t num_rows = 0;
  std::vector<CopiedPages> pages;    // by leaf: filled where copied
  std::vector<CopiedPages*> copied;  // by leaf: into pages, or null
  Batch values;                      // of the schema: the decoded columns
  int64_t copied_bytes = 0;
};
Status ReadMergePieces(MergeInput& input, int row_group,
                       const std::shared_ptr<const Schema>& schema, PageCompressor* to,
                       MergePieces* out);

}  // namespace sluice::parquet
