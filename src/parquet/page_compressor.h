// Page compression for the writer: compress.h's Compress, except that zstd
// reuses one compression context across pages (creating a context per page
// allocates and clears megabytes each time). Output is identical to Compress.
// One per ParquetWriter; one thread at a time.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "common/status.h"
#include "parquet/metadata.h"

namespace sluice::parquet {

class PageCompressor {
 public:
  PageCompressor(CompressionCodec codec, int level);
  ~PageCompressor();
  PageCompressor(const PageCompressor&) = delete;
  PageCompressor& operator=(const PageCompressor&) = delete;

  // Appends the compressed form of `input` to `*out`.
  Status Compress(std::string_view input, std::string* out);

  CompressionCodec codec() const { return codec_; }
  // The level compressed at: the codec's default for 0 (zstd 3, gzip 6), 0
  // for codecs without levels.
  int effective_level() const;

 private:
  CompressionCodec codec_;
  int level_;
  void* zstd_ = nullptr;  // ZSTD_CCtx*
  // zstd output goes here first, so `out` grows by the compressed size only
  // (not zero-filled to the compression bound).
  std::unique_ptr<char[]> scratch_;
  size_t scratch_size_ = 0;
};

}  // namespace sluice::parquet
