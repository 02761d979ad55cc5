// Block codecs of Avro object container files: null, deflate (raw RFC 1951,
// no zlib header), snappy (block followed by the big-endian CRC32 of the
// uncompressed bytes) and zstandard.
//
// Decompress() never produces more than `max_size` bytes: a block that would
// is kCorruption, so a forged block cannot exhaust memory.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "common/status.h"

namespace sluice::avro {

enum class Codec { kNull, kDeflate, kSnappy, kZstandard };

// "null", "deflate", "snappy", "zstandard"; anything else is kNotImplemented.
Result<Codec> ParseCodec(std::string_view name);
std::string_view CodecName(Codec codec);

// Replaces *out with the compressed form of `in`. `level`: deflate 1..9,
// zstandard 1..22, -1 for the codec's default; ignored by null and snappy.
Status Compress(Codec codec, std::string_view in, std::string* out, int level = -1);
// Replaces *out with the decompressed form of `in`.
Status Decompress(Codec codec, std::string_view in, size_t max_size, std::string* out);

}  // namespace sluice::avro
