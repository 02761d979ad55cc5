// Internal to src/maintenance: compaction's fast path, which merges a
// partition's files into row groups of the target size by copying the pages
// of column chunks without a dictionary (parquet/page_copy.h) and decoding
// only the other columns.
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>

#include "catalog/table.h"
#include "iceberg/data_writer.h"
#include "maintenance/compact_carry.h"

namespace sluice::maintenance::internal {

// What the plan knows of an input data file, from its manifest entry.
struct InputFact {
  int64_t size = 0;
  std::set<int32_t> nan_free;  // float and double columns with no NaN (nan_value_counts 0)
};
using InputFacts = std::map<std::string, InputFact>;  // by path

// Whether the partition's rows can go through WriteCopyingPages as far as the
// table tells: no sort order (`order`, the table's, is null), no deletes on
// its inputs, the default spec, format v1 or v2 (v3 rows carry lineage
// columns the pages lack).
bool PagesCopyable(const iceberg::TableMetadata& md, const iceberg::SortOrder* order,
                   const PartitionCompaction& plan);

// Writes `plan`'s inputs with one new DataWriter into `staged` (its files,
// where each row went, plan->rows and plan->copied_bytes), every input's
// columns matching the table's current schema (field ids, types, levels,
// their Parquet representation); `inputs` says which float and double
// columns hold no NaN (only those are copied: Parquet statistics carry no
// NaN count). False, with nothing written, when an input's columns do not
// match: the caller rewrites the partition the usual way.
Result<bool> WriteCopyingPages(catalog::Table& table,
                               const std::shared_ptr<const iceberg::TableMetadata>& md,
                               const iceberg::DataWriterOptions& wo, const InputFacts& inputs,
                               Staged* staged);

// Records that input row `in` went to row `out_pos` of output `output`,
// extending the last run of `runs` where it continues it.
void RecordOrigin(std::vector<Run>* runs, int64_t in, int32_t output, int64_t out_pos);

}  // namespace sluice::maintenance::internal
