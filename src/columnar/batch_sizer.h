// Sizing the buffers of a batch decoded from input of known size.
//
// A decoder appends value after value; a column left to grow doubles its
// buffers, copying what it holds each time and touching fresh pages, which
// costs more than the decoding on a pipeline's hot path. A BatchSizer learns,
// from each batch decoded, the bytes each byte column held per input byte,
// and reserves the next batch's buffers once: each top-level column for its
// rows (flat ones: a struct's or list's children are left to grow), and byte
// columns for their bytes as the last batch had them (a little more).
// Only a hint: a batch that outgrows it grows as before.
#pragma once

#include <cstdint>
#include <vector>

#include "columnar/column.h"

namespace sluice {

class BatchSizer {
 public:
  // Reserves `b`'s top-level columns for `rows` rows decoded from
  // `input_bytes` bytes (b as Batch::Make leaves it, or cleared).
  void Reserve(Batch* b, int64_t rows, int64_t input_bytes) const;
  // Learns from `b`, decoded from `input_bytes` bytes.
  void Learn(const Batch& b, int64_t input_bytes);
  // What it learned of column `i`: bytes per input byte (0: none, or not a
  // byte column).
  double BytesPerInputByte(size_t i) const {
    return i < bytes_per_input_byte_.size() ? bytes_per_input_byte_[i] : 0;
  }

 private:
  std::vector<double> bytes_per_input_byte_;  // by column; 0 for fixed-width ones
};

}  // namespace sluice
