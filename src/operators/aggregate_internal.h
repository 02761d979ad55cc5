// Private to the accumulator's files (aggregate.cc, accumulator_encoding.cc):
// the sketch's size, the memory accounting of the value sets, and the order
// of min/max candidates, which both the adding and the decoding code use.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "columnar/column.h"

namespace sluice::operators::internal {

constexpr int kHllBits = 12;  // approx_count_distinct: 4096 registers
constexpr size_t kRegisters = size_t{1} << kHllBits;

// Approximate heap bytes of one entry (a node and its value's bytes) of an
// unordered set, an unordered map and an ordered map of strings.
constexpr int64_t kSetEntry = 48, kCountEntry = 56, kTreeEntry = 72;
inline int64_t EntryBytes(int64_t node, const std::string& v) {
  return node + static_cast<int64_t>(v.capacity());
}

// Orders two min/max candidates of `type` (physical bytes as an
// accumulator's best value holds them): -1, 0 or 1.
int CompareBest(const DataType& type, std::string_view a, std::string_view b);

}  // namespace sluice::operators::internal
