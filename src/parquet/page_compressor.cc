#include "parquet/page_compressor.h"

#include <zstd.h>

#include "parquet/compression.h"

namespace sluice::parquet {

PageCompressor::PageCompressor(CompressionCodec codec, int level) : codec_(codec), level_(level) {
  if (codec_ == CompressionCodec::kZstd) zstd_ = ZSTD_createCCtx();
}

PageCompressor::~PageCompressor() { ZSTD_freeCCtx(static_cast<ZSTD_CCtx*>(zstd_)); }

Status PageCompressor::Compress(std::string_view input, std::string* out) {
  if (zstd_ == nullptr) return parquet::Compress(codec_, level_, input, out);
  size_t pos = out->size();
  size_t bound = ZSTD_compressBound(input.size());
  out->resize(pos + bound);
  size_t n =
      ZSTD_compressCCtx(static_cast<ZSTD_CCtx*>(zstd_), out->data() + pos, bound, input.data(),
                        input.size(), level_ == 0 ? ZSTD_CLEVEL_DEFAULT : level_);
  if (ZSTD_isError(n)) return Status::Internal("zstd: {}", ZSTD_getErrorName(n));
  out->resize(pos + n);
  return Status::OK();
}

}  // namespace sluice::parquet
