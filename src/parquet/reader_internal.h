// Private pieces of ParquetReader shared by reader*.cc: reading one column
// chunk into levels and dense values, and the projected field tree used to
// assemble nested values from levels.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "columnar/column.h"
#include "io/file_io.h"
#include "parquet/decoding.h"
#include "parquet/metadata.h"
#include "parquet/schema.h"

namespace sluice::parquet::internal {

// One leaf column of one row group: its levels (empty when the max level is 0)
// and its non-null values, converted to the leaf's Iceberg type.
struct ChunkData {
  std::vector<int16_t> def;
  std::vector<int16_t> rep;
  size_t num_levels = 0;
  std::optional<Column> values;
};

// Reads and decodes all pages of `chunk`. `limit` is the end of the readable
// region of the file (the start of the footer). Errors are prefixed with the
// page number ("page 3: ...") where one applies.
Status ReadColumnChunk(const InputFile& file, int64_t limit, const ColumnChunk& chunk,
                       const ColumnDescriptor& desc, const SchemaElement& element, ChunkData* out);

// Converts decoded physical values to the Column layout of `desc.type`
// (timestamp units, INT96, decimals, unsigned ints, FLOAT16). Values already
// in that layout are moved out of `in` into an empty `out`, not copied; `in`
// is left valid but unspecified.
Status ConvertValues(ValueBuffer& in, const ColumnDescriptor& desc, const SchemaElement& element,
                     Column* out);

// A projected Iceberg field with the levels that decide its shape. Leaves
// beneath a node occupy slots [first, first + count) of the ChunkData vector.
struct AssemblyNode {
  const Field* field = nullptr;
  TypeId kind = TypeId::kInt;
  bool required = false;
  int16_t def = 0;       // definition level at which the value is present (non-null)
  int16_t elem_def = 0;  // list/map: level at which at least one element exists
  int16_t rep = 0;       // list/map: repetition level of its elements
  int first = 0;
  int count = 0;
  int leaf = -1;  // primitive: index into the reader's leaf descriptors
  std::vector<AssemblyNode> children;
};

// Assembles `node`'s column for `num_rows` rows from the chunk data.
Status AssembleColumn(const AssemblyNode& node, std::vector<ChunkData>& data, int64_t num_rows,
                      Column* out);

}  // namespace sluice::parquet::internal
