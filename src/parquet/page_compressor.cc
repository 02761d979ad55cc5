#include "parquet/page_compressor.h"

#include <zstd.h>

#include <algorithm>

#include "parquet/compression.h"

namespace sluice::parquet {

PageCompressor::PageCompressor(CompressionCodec codec, int level) : codec_(codec), level_(level) {
  if (codec_ == CompressionCodec::kZstd) zstd_ = ZSTD_createCCtx();
}

PageCompressor::~PageCompressor() { ZSTD_freeCCtx(static_cast<ZSTD_CCtx*>(zstd_)); }

int PageCompressor::effective_level() const {
  switch (codec_) {
    case CompressionCodec::kZstd: return level_ == 0 ? ZSTD_CLEVEL_DEFAULT : level_;
    case CompressionCodec::kGzip: return level_ == 0 ? 6 : level_;  // zlib's default
    default: return 0;
  }
}

Status PageCompressor::Compress(std::string_view input, std::string* out) {
  if (zstd_ == nullptr) return parquet::Compress(codec_, level_, input, out);
  size_t bound = ZSTD_compressBound(input.size());
  if (scratch_size_ < bound) {
    scratch_size_ = std::max(bound, scratch_size_ * 2);
    scratch_.reset(new char[scratch_size_]);
  }
  size_t n =
      ZSTD_compressCCtx(static_cast<ZSTD_CCtx*>(zstd_), scratch_.get(), scratch_size_, input.data(),
                        input.size(), level_ == 0 ? ZSTD_CLEVEL_DEFAULT : level_);
  if (ZSTD_isError(n)) return Status::Internal("zstd: {}", ZSTD_getErrorName(n));
  out->append(scratch_.get(), n);
  return Status::OK();
}

}  // namespace sluice::parquet
