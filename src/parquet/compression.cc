#include "parquet/compression.h"

#include <lz4.h>
#include <snappy-c.h>
#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <cctype>
#include <climits>

#include "common/ascii.h"

namespace sluice::parquet {

namespace {

Status SizeMismatch(CompressionCodec codec, size_t got, size_t want) {
  return Status::Corruption("{}: decompressed {} bytes, page header says {}", CodecName(codec), got,
                            want);
}

// gzip (windowBits 31) when compressing; when decompressing, 15 + 32 accepts
// both gzip and zlib framing.
Status ZlibCompress(int level, std::string_view input, std::string* out) {
  z_stream zs{};
  if (deflateInit2(&zs, level == 0 ? Z_DEFAULT_COMPRESSION : level, Z_DEFLATED, 31, 8,
                   Z_DEFAULT_STRATEGY) != Z_OK) {
    return Status::Internal("gzip: deflateInit2 failed");
  }
  size_t pos = out->size();
  out->resize(pos + deflateBound(&zs, input.size()) + 32);
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(input.data()));
  zs.avail_in = static_cast<uInt>(input.size());
  zs.next_out = reinterpret_cast<Bytef*>(out->data() + pos);
  zs.avail_out = static_cast<uInt>(out->size() - pos);
  int rc = deflate(&zs, Z_FINISH);
  size_t written = zs.total_out;
  deflateEnd(&zs);
  if (rc != Z_STREAM_END) return Status::Internal("gzip: deflate failed ({})", rc);
  out->resize(pos + written);
  return Status::OK();
}

Status ZlibDecompress(std::string_view input, size_t size, std::string* out) {
  z_stream zs{};
  if (inflateInit2(&zs, 15 + 32) != Z_OK) return Status::Internal("gzip: inflateInit2 failed");
  out->resize(size);
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(input.data()));
  zs.avail_in = static_cast<uInt>(input.size());
  zs.next_out = reinterpret_cast<Bytef*>(out->data());
  zs.avail_out = static_cast<uInt>(size);
  int rc = inflate(&zs, Z_FINISH);
  // Some writers concatenate gzip members; keep going while input remains.
  while (rc == Z_STREAM_END && zs.avail_in > 0 && zs.avail_out > 0) {
    if (inflateReset(&zs) != Z_OK) break;
    rc = inflate(&zs, Z_FINISH);
  }
  size_t written = size - zs.avail_out;
  inflateEnd(&zs);
  if (rc == Z_BUF_ERROR && zs.avail_out == 0) {
    return Status::Corruption("gzip: data decompresses to more than the {} bytes in the header",
                              size);
  }
  if (rc != Z_STREAM_END) return Status::Corruption("gzip: malformed stream ({})", rc);
  if (written != size) return SizeMismatch(CompressionCodec::kGzip, written, size);
  return Status::OK();
}

uint32_t LoadBE32(const char* p) {
  const auto* u = reinterpret_cast<const uint8_t*>(p);
  return (uint32_t{u[0]} << 24) | (uint32_t{u[1]} << 16) | (uint32_t{u[2]} << 8) | u[3];
}

// Hadoop's LZ4 codec: a sequence of [u32 BE decompressed size][u32 BE compressed
// size][lz4 block] frames. Returns false when `input` is not shaped like that.
bool TryHadoopLz4(std::string_view input, size_t size, std::string* out) {
  size_t in = 0, outpos = 0;
  while (in < input.size()) {
    if (input.size() - in < 8) return false;
    uint32_t raw = LoadBE32(input.data() + in);
    uint32_t comp = LoadBE32(input.data() + in + 4);
    in += 8;
    if (comp > input.size() - in || raw > size - outpos) return false;
    int n = LZ4_decompress_safe(input.data() + in, out->data() + outpos, static_cast<int>(comp),
                                static_cast<int>(raw));
    if (n < 0 || static_cast<uint32_t>(n) != raw) return false;
    in += comp;
    outpos += raw;
  }
  return outpos == size;
}

}  // namespace

Status Compress(CompressionCodec codec, int level, std::string_view input, std::string* out) {
  size_t pos = out->size();
  switch (codec) {
    case CompressionCodec::kUncompressed: out->append(input); return Status::OK();
    case CompressionCodec::kSnappy: {
      size_t n = snappy_max_compressed_length(input.size());
      out->resize(pos + n);
      if (snappy_compress(input.data(), input.size(), out->data() + pos, &n) != SNAPPY_OK) {
        return Status::Internal("snappy: compression failed");
      }
      out->resize(pos + n);
      return Status::OK();
    }
    case CompressionCodec::kZstd: {
      size_t bound = ZSTD_compressBound(input.size());
      out->resize(pos + bound);
      size_t n = ZSTD_compress(out->data() + pos, bound, input.data(), input.size(),
                               level == 0 ? ZSTD_CLEVEL_DEFAULT : level);
      if (ZSTD_isError(n)) return Status::Internal("zstd: {}", ZSTD_getErrorName(n));
      out->resize(pos + n);
      return Status::OK();
    }
    case CompressionCodec::kGzip: return ZlibCompress(level, input, out);
    case CompressionCodec::kLz4Raw: {
      if (input.size() > static_cast<size_t>(LZ4_MAX_INPUT_SIZE)) {
        return Status::Invalid("lz4_raw: page of {} bytes is too large", input.size());
      }
      int bound = LZ4_compressBound(static_cast<int>(input.size()));
      out->resize(pos + bound);
      int n = LZ4_compress_default(input.data(), out->data() + pos, static_cast<int>(input.size()),
                                   bound);
      if (n <= 0 && !input.empty()) return Status::Internal("lz4_raw: compression failed");
      out->resize(pos + n);
      return Status::OK();
    }
    default: return Status::NotImplemented("compression codec {} for writing", CodecName(codec));
  }
}

namespace {
// One zstd decompression context per thread, reused across pages:
// ZSTD_decompress allocates (and so maps and faults in) a fresh one per call.
ZSTD_DCtx* ThreadZstdContext() {
  struct Holder {
    ZSTD_DCtx* ctx = ZSTD_createDCtx();
    ~Holder() { ZSTD_freeDCtx(ctx); }
  };
  thread_local Holder holder;
  return holder.ctx;
}
}  // namespace

Status Decompress(CompressionCodec codec, std::string_view input, size_t uncompressed_size,
                  std::string* out) {
  // Reject sizes no valid stream of this length could produce before allocating.
  size_t max_ratio = 0;
  if (codec == CompressionCodec::kGzip) max_ratio = 1100;
  if (codec == CompressionCodec::kLz4 || codec == CompressionCodec::kLz4Raw) max_ratio = 256;
  if (codec == CompressionCodec::kSnappy) max_ratio = 64;  // a 3-byte copy emits ≤ 64 bytes
  if (max_ratio != 0 && uncompressed_size / max_ratio > input.size() + 64) {
    return Status::Corruption("{}: {} compressed bytes cannot hold {} bytes", CodecName(codec),
                              input.size(), uncompressed_size);
  }
  switch (codec) {
    case CompressionCodec::kUncompressed:
      if (input.size() != uncompressed_size) {
        return SizeMismatch(codec, input.size(), uncompressed_size);
      }
      out->assign(input);
      return Status::OK();
    case CompressionCodec::kSnappy: {
      size_t n = 0;
      if (snappy_uncompressed_length(input.data(), input.size(), &n) != SNAPPY_OK) {
        return Status::Corruption("snappy: malformed length header");
      }
      if (n != uncompressed_size) return SizeMismatch(codec, n, uncompressed_size);
      out->resize(n);
      if (snappy_uncompress(input.data(), input.size(), out->data(), &n) != SNAPPY_OK) {
        return Status::Corruption("snappy: malformed data");
      }
      if (n != uncompressed_size) return SizeMismatch(codec, n, uncompressed_size);
      return Status::OK();
    }
    case CompressionCodec::kZstd: {
      unsigned long long frame = ZSTD_getFrameContentSize(input.data(), input.size());
      if (frame == ZSTD_CONTENTSIZE_ERROR) return Status::Corruption("zstd: malformed frame");
      bool single_frame = ZSTD_findFrameCompressedSize(input.data(), input.size()) == input.size();
      if (frame != ZSTD_CONTENTSIZE_UNKNOWN &&
          (frame > uncompressed_size || (single_frame && frame != uncompressed_size))) {
        return SizeMismatch(codec, frame, uncompressed_size);
      }
      ZSTD_DCtx* dctx = ThreadZstdContext();
      if (dctx == nullptr) return Status::Internal("zstd: cannot create a decompression context");
      out->resize(uncompressed_size);
      size_t n =
          ZSTD_decompressDCtx(dctx, out->data(), uncompressed_size, input.data(), input.size());
      if (ZSTD_isError(n)) return Status::Corruption("zstd: {}", ZSTD_getErrorName(n));
      if (n != uncompressed_size) return SizeMismatch(codec, n, uncompressed_size);
      return Status::OK();
    }
    case CompressionCodec::kGzip: return ZlibDecompress(input, uncompressed_size, out);
    case CompressionCodec::kLz4Raw:
    case CompressionCodec::kLz4: {
      if (uncompressed_size > static_cast<size_t>(INT_MAX) ||
          input.size() > static_cast<size_t>(INT_MAX)) {
        return Status::Corruption("{}: page too large", CodecName(codec));
      }
      out->resize(uncompressed_size);
      if (codec == CompressionCodec::kLz4 && TryHadoopLz4(input, uncompressed_size, out)) {
        return Status::OK();
      }
      int n = LZ4_decompress_safe(input.data(), out->data(), static_cast<int>(input.size()),
                                  static_cast<int>(uncompressed_size));
      if (n < 0) return Status::Corruption("{}: malformed block", CodecName(codec));
      if (static_cast<size_t>(n) != uncompressed_size) {
        return SizeMismatch(codec, n, uncompressed_size);
      }
      return Status::OK();
    }
    default: return Status::NotImplemented("compression codec {}", CodecName(codec));
  }
}

Result<CompressionCodec> ParseCodecName(std::string_view name) {
  std::string n = AsciiLower(name);
  if (n == "uncompressed" || n == "none") return CompressionCodec::kUncompressed;
  if (n == "snappy") return CompressionCodec::kSnappy;
  if (n == "gzip") return CompressionCodec::kGzip;
  if (n == "zstd") return CompressionCodec::kZstd;
  if (n == "lz4_raw" || n == "lz4raw") return CompressionCodec::kLz4Raw;
  return Status::Invalid(
      "unknown compression codec '{}' (expected uncompressed, snappy, gzip, zstd or lz4_raw)",
      name);
}

}  // namespace sluice::parquet
