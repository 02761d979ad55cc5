// Encoders for Parquet's bit-level formats (Encodings.md): the RLE/bit-packed
// hybrid used for definition/repetition levels and dictionary indices, and
// plain bit-packing (LSB first) used for BOOLEAN values.
//
// All functions append to `out` and never fail; values must fit in
// `bit_width` bits (0..32). Stateless and thread-safe.
#pragma once

#include <cstdint>
#include <string>

namespace sluice::parquet {

// Bits needed to represent `max_value` (0 for 0).
int BitWidth(uint64_t max_value);

// Packs `n` values of `bit_width` bits, least significant bit first; the last
// byte is zero-padded.
template <typename T>
void BitPack(const T* values, int64_t n, int bit_width, std::string* out);

// RLE/bit-packed hybrid without a length prefix. Runs of 8 or more equal
// values become RLE runs; the rest is bit-packed in groups of 8 (the final
// group zero-padded). Instantiated for uint8_t, int16_t and uint32_t.
template <typename T>
void EncodeRleHybrid(const T* values, int64_t n, int bit_width, std::string* out);

}  // namespace sluice::parquet
