// DecodedColumns: decoding only the source columns a pipeline reads
// (PipelineOptions::read_columns; docs/pipelines.md "Decoding and dead
// letters").
//
// Records are decoded with a schema of the columns read alone, so the
// decoder takes the others for unknown keys and skips their values unparsed
// and unchecked; Widen then gives the rows the source's schema back, NULL in
// every column not read (filled a batch at a time, not a row at a time).
// When every column is read, the decoding schema is the source's and Widen
// returns the rows as they are. A pipeline that reads no column (SELECT
// 'x' FROM s) decodes the first, so that the rows still count.
//
// Immutable once made; shared by a pipeline's lanes.
#pragma once

#include <memory>
#include <vector>

#include "columnar/column.h"

namespace sluice::pipeline {

class DecodedColumns {
 public:
  DecodedColumns() = default;
  // `read[i]`: column i of `source` is read (empty: all are).
  DecodedColumns(std::shared_ptr<const Schema> source, const std::vector<bool>& read);

  // The schema to decode records with.
  const std::shared_ptr<const Schema>& decoded() const { return decoded_; }
  // Rows decoded with decoded() as rows of the source's schema.
  Batch Widen(Batch rows) const;

 private:
  std::shared_ptr<const Schema> source_, decoded_;
  std::vector<int> from_;  // per source column: its column in decoded(), or -1
};

}  // namespace sluice::pipeline
