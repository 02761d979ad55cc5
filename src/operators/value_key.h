// Value keys: the bytes that identify one value of a primitive column, for
// group keys, DISTINCT sets and hashes (operators/aggregate.h), and a stable
// hash of bytes.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "columnar/column.h"
#include "common/status.h"

namespace sluice::operators {

// A stable 64-bit hash of bytes (state files keep HyperLogLog registers, so
// the hash must not change between versions or machines).
uint64_t StableHash(std::string_view bytes);

// The bytes identifying row `row` of a primitive column (for DISTINCT sets,
// group keys and hashes): a NULL flag, then the raw value or the bytes.
void AppendValueKey(const Column& column, int64_t row, std::string* out);
// Reads one value written by AppendValueKey from `in` into `column`.
Status AppendFromValueKey(std::string_view* in, Column* column);

}  // namespace sluice::operators
