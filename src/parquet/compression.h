// Page compression codecs: uncompressed, snappy, gzip, zstd, lz4_raw (and, for
// reading, the deprecated Hadoop-framed LZ4).
#pragma once

#include <string>
#include <string_view>

#include "common/status.h"
#include "parquet/metadata.h"

namespace sluice::parquet {

// Appends the compressed form of `input` to `*out`. `level` applies to zstd
// and gzip (0 = the codec's default).
Status Compress(CompressionCodec codec, int level, std::string_view input, std::string* out);

// Decompresses into `*out` (resized to exactly `uncompressed_size`); a size
// mismatch or malformed input is kCorruption.
Status Decompress(CompressionCodec codec, std::string_view input, size_t uncompressed_size,
                  std::string* out);

// "zstd", "snappy", "gzip", "lz4_raw", "uncompressed" (case-insensitive) → codec.
Result<CompressionCodec> ParseCodecName(std::string_view name);

}  // namespace sluice::parquet
