// Test helpers of the Parquet tests: schemas and batches from text, and the
// data pages of a written column chunk, read from their headers (for tests
// of how a writer cuts pages).
#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "columnar/json_reader.h"
#include "columnar/sql_schema.h"
#include "parquet/metadata.h"

namespace sluice::parquet {

// A schema from a column list (`id BIGINT NOT NULL, ...`).
inline std::shared_ptr<const Schema> MakeSchema(std::string_view sql) {
  auto r = ParseColumnList(sql);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return std::make_shared<const Schema>(std::move(r).value());
}

// Builds a batch from JSON lines (the decoder is tested on its own).
inline Batch FromJson(const std::shared_ptr<const Schema>& schema, const std::string& lines) {
  auto dec = JsonDecoder::Make(schema);
  EXPECT_TRUE(dec.ok());
  Batch b = Batch::Make(schema);
  Status st = (*dec)->DecodeLines(lines, 1, &b);
  EXPECT_TRUE(st.ok()) << st.ToString();
  return b;
}

// The values (levels) of each data page of a column chunk of `file` (the
// file's bytes), in file order; or, with `rows`, the rows of each (v2 pages
// say).
inline std::vector<int64_t> DataPageValues(const std::string& file, const ColumnMetaData& chunk,
                                           bool rows = false) {
  std::vector<int64_t> out;
  size_t at = static_cast<size_t>(chunk.dictionary_page_offset.value_or(chunk.data_page_offset));
  const size_t end = at + static_cast<size_t>(chunk.total_compressed_size);
  while (at < end) {
    size_t consumed = 0;
    auto h = DeserializePageHeader(std::string_view(file).substr(at), &consumed);
    EXPECT_TRUE(h.ok()) << h.status().ToString();
    if (!h.ok()) break;
    if (h->data_page_header) out.push_back(h->data_page_header->num_values);
    if (h->data_page_header_v2) {
      out.push_back(rows ? h->data_page_header_v2->num_rows : h->data_page_header_v2->num_values);
    }
    at += consumed + static_cast<size_t>(h->compressed_page_size);
  }
  return out;
}

}  // namespace sluice::parquet
