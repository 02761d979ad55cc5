// Dremel shredding for the Parquet writer: from the nested Column layout
// (column.h) to the definition/repetition levels and value positions of each
// leaf. Internal to the writer.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "columnar/column.h"
#include "common/status.h"
#include "parquet/column_writer.h"

namespace sluice::parquet {

// The way from a top-level column down to one leaf, in the leaf order of
// ToParquetSchema (depth first; list → element; map → key, value).
struct LeafPath {
  struct Step {
    TypeId kind;
    bool optional;
    int child;  // for struct/list/map steps: the child column leading on
  };
  int top_column = 0;
  int32_t field_id = 0;
  std::string name;  // dotted path, for messages
  std::vector<Step> steps;
  int16_t max_definition_level = 0;
  int16_t max_repetition_level = 0;
};

std::vector<LeafPath> BuildLeafPaths(const Schema& schema);

// The first `rows` rows of `slice` (which holds more) and the rest, pointing
// into the same levels and values: a row starts at each repetition level 0;
// a value is a level at `max_def`. (A column writer cuts a slice where its
// page reaches its row limit.)
std::pair<LeafSlice, LeafSlice> SplitLeafSlice(const LeafSlice& slice, int64_t rows, int max_def);

// Reusable shredding buffers.
class Shredder {
 public:
  // Levels and values of `path`'s leaf for rows [begin, end) of `top`. The
  // slice points into this Shredder's buffers (valid until the next call).
  // A null in a required field is kInvalidArgument.
  Status Shred(const LeafPath& path, const Column& top, int64_t begin, int64_t end, LeafSlice* out);

 private:
  void Visit(const LeafPath& p, size_t k, const Column& c, int64_t i, int16_t def, int16_t rep,
             int16_t depth);
  std::vector<int16_t> def_, rep_;
  std::vector<uint32_t> positions_;
  const Column* leaf_ = nullptr;
  bool required_null_ = false;
};

}  // namespace sluice::parquet
