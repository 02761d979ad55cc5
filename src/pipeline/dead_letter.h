// The dead-letter table of a pipeline's target (docs/pipelines.md "Decoding
// and dead letters"): records that could not be decoded, rows a projection
// rejected and late events, each with its payload as it came and where it
// came from.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "catalog/catalog.h"
#include "columnar/column.h"
#include "common/status.h"
#include "io/file_io.h"

namespace sluice::pipeline {

// The dead-letter table of `table`: <name>__dlq in the same namespace.
catalog::TableIdent DeadLetterTable(const catalog::TableIdent& table);
// Its schema: payload, error, source, partition, offset, ingested_at,
// failed_at, pipeline.
Schema DeadLetterSchema();
// One dead letter, appended to a batch of DeadLetterSchema(). Times are µs
// since the epoch; `error` is the decoder's message (its "line N: " prefix is
// dropped: the offset says where).
struct DeadLetter {
  std::string_view payload;
  const Status* error = nullptr;
  std::string_view source, partition;
  int64_t offset = 0;
  int64_t ingested_us = 0, failed_us = 0;
  std::string_view pipeline;
};
void AppendDeadLetter(const DeadLetter& d, Batch* batch);
// Creates the dead-letter table of `table` unless it exists.
Status EnsureDeadLetterTable(catalog::Catalog& catalog, FileIO& io, const std::string& warehouse,
                             const catalog::TableIdent& table);

}  // namespace sluice::pipeline
