#include "avro/codec.h"

#include <snappy-c.h>
#include <zlib.h>
#include <zstd.h>

#include <algorithm>

#include "common/endian.h"

namespace sluice::avro {

Result<Codec> ParseCodec(std::string_view name) {
  if (name.empty() || name == "null") return Codec::kNull;
  if (name == "deflate") return Codec::kDeflate;
  if (name == "snappy") return Codec::kSnappy;
  if (name == "zstandard") return Codec::kZstandard;
  return Status::NotImplemented("avro codec '{}' is not supported", name);
}

std::string_view CodecName(Codec codec) {
  switch (codec) {
    case Codec::kNull: return "null";
    case Codec::kDeflate: return "deflate";
    case Codec::kSnappy: return "snappy";
    case Codec::kZstandard: return "zstandard";
  }
  return "?";
}

namespace {

uint32_t Crc32(std::string_view data) {
  uLong crc = crc32(0L, Z_NULL, 0);
  // zlib takes uInt lengths; feed large inputs in pieces.
  while (!data.empty()) {
    size_t n = std::min<size_t>(data.size(), 1u << 30);
    crc = crc32(crc, reinterpret_cast<const Bytef*>(data.data()), static_cast<uInt>(n));
    data.remove_prefix(n);
  }
  return static_cast<uint32_t>(crc);
}

Status DeflateCompress(std::string_view in, std::string* out, int level) {
  if (level != -1 && (level < 1 || level > 9)) {
    return Status::Invalid("deflate level {} is not in 1..9", level);
  }
  z_stream z{};
  if (deflateInit2(&z, level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    return Status::Internal("deflateInit2 failed");
  }
  out->resize(deflateBound(&z, in.size()));
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.avail_in = static_cast<uInt>(in.size());
  z.next_out = reinterpret_cast<Bytef*>(out->data());
  z.avail_out = static_cast<uInt>(out->size());
  int rc = deflate(&z, Z_FINISH);
  size_t produced = z.total_out;
  deflateEnd(&z);
  if (rc != Z_STREAM_END) return Status::Internal("deflate failed: {}", rc);
  out->resize(produced);
  return Status::OK();
}

Status DeflateDecompress(std::string_view in, size_t max_size, std::string* out) {
  z_stream z{};
  if (inflateInit2(&z, -15) != Z_OK) return Status::Internal("inflateInit2 failed");
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.avail_in = static_cast<uInt>(in.size());
  out->resize(std::min(max_size, std::max<size_t>(in.size() * 4, 1024)));
  size_t produced = 0;
  int rc = Z_OK;
  for (;;) {
    if (produced == out->size()) {
      if (out->size() >= max_size) {
        inflateEnd(&z);
        return Status::Corruption("deflate block inflates beyond {} bytes", max_size);
      }
      out->resize(std::min(max_size, out->size() * 2));
    }
    z.next_out = reinterpret_cast<Bytef*>(out->data() + produced);
    z.avail_out = static_cast<uInt>(std::min<size_t>(out->size() - produced, 1u << 30));
    size_t before = z.avail_out;
    rc = inflate(&z, Z_NO_FLUSH);
    produced += before - z.avail_out;
    if (rc == Z_STREAM_END) break;
    if (rc == Z_BUF_ERROR && z.avail_in == 0 && z.avail_out > 0) {
      inflateEnd(&z);
      return Status::Corruption("deflate block is truncated");
    }
    if (rc != Z_OK && rc != Z_BUF_ERROR) {
      std::string msg = z.msg ? z.msg : "error";
      inflateEnd(&z);
      return Status::Corruption("deflate block: {}", msg);
    }
  }
  inflateEnd(&z);
  out->resize(produced);
  return Status::OK();
}

Status SnappyDecompress(std::string_view in, size_t max_size, std::string* out) {
  if (in.size() < 4) return Status::Corruption("snappy block shorter than its CRC");
  std::string_view body = in.substr(0, in.size() - 4);
  size_t n;
  if (snappy_uncompressed_length(body.data(), body.size(), &n) != SNAPPY_OK) {
    return Status::Corruption("snappy block header is invalid");
  }
  if (n > max_size) return Status::Corruption("snappy block of {} bytes exceeds {}", n, max_size);
  out->resize(n);
  if (snappy_uncompress(body.data(), body.size(), out->data(), &n) != SNAPPY_OK) {
    return Status::Corruption("snappy block does not decompress");
  }
  out->resize(n);
  const uint8_t* c = reinterpret_cast<const uint8_t*>(in.data() + body.size());
  uint32_t want = (uint32_t{c[0]} << 24) | (uint32_t{c[1]} << 16) | (uint32_t{c[2]} << 8) | c[3];
  if (Crc32(*out) != want) return Status::Corruption("snappy block CRC32 mismatch");
  return Status::OK();
}

Status ZstdDecompress(std::string_view in, size_t max_size, std::string* out) {
  ZSTD_DStream* ds = ZSTD_createDStream();
  if (ds == nullptr) return Status::Internal("ZSTD_createDStream failed");
  ZSTD_inBuffer ib{in.data(), in.size(), 0};
  out->resize(std::min(max_size, std::max<size_t>(in.size() * 4, 1024)));
  size_t produced = 0;
  Status st;
  for (;;) {
    if (produced == out->size()) {
      if (out->size() >= max_size) {
        st = Status::Corruption("zstandard block exceeds {} bytes", max_size);
        break;
      }
      out->resize(std::min(max_size, out->size() * 2));
    }
    ZSTD_outBuffer ob{out->data() + produced, out->size() - produced, 0};
    size_t rc = ZSTD_decompressStream(ds, &ob, &ib);
    produced += ob.pos;
    if (ZSTD_isError(rc)) {
      st = Status::Corruption("zstandard block: {}", ZSTD_getErrorName(rc));
      break;
    }
    if (rc == 0 && ib.pos == ib.size) break;  // frame complete, input used up
    if (ib.pos == ib.size && ob.pos < ob.size) {
      st = Status::Corruption("zstandard block is truncated");
      break;
    }
  }
  ZSTD_freeDStream(ds);
  if (!st.ok()) return st;
  out->resize(produced);
  return Status::OK();
}

}  // namespace

Status Compress(Codec codec, std::string_view in, std::string* out, int level) {
  switch (codec) {
    case Codec::kNull: out->assign(in); return Status::OK();
    case Codec::kDeflate: return DeflateCompress(in, out, level);
    case Codec::kSnappy: {
      size_t n = snappy_max_compressed_length(in.size());
      out->resize(n + 4);
      if (snappy_compress(in.data(), in.size(), out->data(), &n) != SNAPPY_OK) {
        return Status::Internal("snappy_compress failed");
      }
      uint32_t crc = Crc32(in);
      out->resize(n);
      for (int shift = 24; shift >= 0; shift -= 8) out->push_back(static_cast<char>(crc >> shift));
      return Status::OK();
    }
    case Codec::kZstandard: {
      out->resize(ZSTD_compressBound(in.size()));
      if (level != -1 && (level < 1 || level > ZSTD_maxCLevel())) {
        return Status::Invalid("zstandard level {} is not in 1..{}", level, ZSTD_maxCLevel());
      }
      size_t n =
          ZSTD_compress(out->data(), out->size(), in.data(), in.size(), level == -1 ? 3 : level);
      if (ZSTD_isError(n)) return Status::Internal("zstd: {}", ZSTD_getErrorName(n));
      out->resize(n);
      return Status::OK();
    }
  }
  return Status::Internal("unknown codec");
}

Status Decompress(Codec codec, std::string_view in, size_t max_size, std::string* out) {
  switch (codec) {
    case Codec::kNull:
      if (in.size() > max_size) return Status::Corruption("block exceeds {} bytes", max_size);
      out->assign(in);
      return Status::OK();
    case Codec::kDeflate: return DeflateDecompress(in, max_size, out);
    case Codec::kSnappy: return SnappyDecompress(in, max_size, out);
    case Codec::kZstandard: return ZstdDecompress(in, max_size, out);
  }
  return Status::Internal("unknown codec");
}

}  // namespace sluice::avro
