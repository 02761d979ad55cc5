// Value decoders for Parquet data pages: PLAIN, dictionary indices (RLE_DICTIONARY
// / PLAIN_DICTIONARY), RLE booleans, DELTA_BINARY_PACKED, DELTA_LENGTH_BYTE_ARRAY,
// DELTA_BYTE_ARRAY and BYTE_STREAM_SPLIT, plus level decoding.
//
// Decoders append physical values in bulk to a ValueBuffer (one per column
// chunk). They never read outside the page buffer they are given, and report
// malformed input as kCorruption without context; the reader adds file, row
// group, column and page. Not thread-safe; no shared state.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "parquet/metadata.h"

namespace sluice::parquet {

// Decoded physical values. Fixed-width types (BOOLEAN as one byte 0/1, INT32,
// INT64, INT96 as 12 bytes, FLOAT, DOUBLE, FIXED_LEN_BYTE_ARRAY) live in
// `fixed`, `width` bytes each; BYTE_ARRAY values in `offsets` (size()+1
// entries, first 0) into `heap`.
struct ValueBuffer {
  PhysicalType type = PhysicalType::kInt32;
  int width = 4;
  std::vector<uint8_t> fixed;
  std::vector<uint32_t> offsets{0};
  std::string heap;

  void Reset(PhysicalType t, int type_length);
  bool is_byte_array() const { return type == PhysicalType::kByteArray; }
  size_t size() const { return is_byte_array() ? offsets.size() - 1 : fixed.size() / width; }
  std::string_view Bytes(size_t i) const {
    return std::string_view(heap.data() + offsets[i], offsets[i + 1] - offsets[i]);
  }
  // Appends one byte array; fails when the heap would pass 4 GiB.
  Status AppendBytes(std::string_view v);
  // Room for `more` values (and, for byte arrays, `heap_bytes` more bytes)
  // past those held, growing geometrically: a chunk's pages append one after
  // another, and exact reservations would copy the values of every earlier
  // page again for each page.
  void ReserveMore(size_t more, size_t heap_bytes = 0);
};

// Bytes per value of a fixed-width physical type (0 for BYTE_ARRAY).
int PhysicalWidth(PhysicalType t, int type_length);

// Decodes `num_values` values in `encoding` from `data` into `out`. `dict` is
// required for dictionary encodings (and its values are copied out).
Status DecodeValues(Encoding encoding, std::string_view data, size_t num_values,
                    const ValueBuffer* dict, ValueBuffer* out);

// Decodes `n` levels with the given bit width. `encoding` is RLE or the
// deprecated BIT_PACKED. With `length_prefixed` (data page v1, RLE), the run
// data is preceded by a 4-byte length. `*consumed` receives the bytes used.
Status DecodeLevels(Encoding encoding, int bit_width, std::string_view data, size_t n,
                    bool length_prefixed, int16_t* out, size_t* consumed);

// DELTA_BINARY_PACKED for INT32 (`width` 4) or INT64 (8): appends raw
// little-endian values to `*out`, returns bytes consumed in `*consumed`.
Status DecodeDeltaBinaryPacked(std::string_view data, size_t num_values, int width,
                               std::vector<uint8_t>* out, size_t* consumed);

}  // namespace sluice::parquet
