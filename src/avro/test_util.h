// Test helpers for the avro module: random Iceberg schemas and batches, and
// batches rendered as JSON lines for comparison.
#pragma once

#include <cstdint>
#include <random>
#include <string>

#include "columnar/column.h"
#include "columnar/types.h"

namespace sluice::avro::testing {

// A random schema of 1..8 top-level fields covering every Iceberg type,
// nested up to `max_depth`; ids assigned as for a new Iceberg schema.
Schema RandomSchema(std::mt19937_64* rng, int max_depth = 3);
// `rows` random rows: ~20% nulls in optional slots, extreme values, empty
// strings and lists.
Batch RandomBatch(const std::shared_ptr<const Schema>& schema, int64_t rows, std::mt19937_64* rng);
// One JSON line per row (AppendJsonRow), concatenated.
std::string JsonRows(const Batch& batch);

}  // namespace sluice::avro::testing
