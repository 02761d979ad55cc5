// Test helpers of src/operators: an operator's options over (t, k, v) rows
// and a stream of random rows with their watermarks.
#pragma once

#include <algorithm>
#include <random>
#include <utility>
#include <vector>

#include "columnar/json_writer.h"
#include "columnar/sql_schema.h"
#include "operators/window_aggregate.h"

namespace sluice::operators {

inline constexpr int64_t kSec = 1000000;

inline WindowAggregateOptions Options(WindowSpec window) {
  WindowAggregateOptions o;
  o.window = window;
  o.allowed_lateness_us = 2 * kSec;
  o.key_types = {DataType::Long()};
  o.aggs = {{AggKind::kCountStar, nullptr, DataType::Long(), "count(*)"},
            {AggKind::kSum, DataType::Long(), DataType::Long(), "sum(v)"},
            {AggKind::kCountDistinct, DataType::Long(), DataType::Long(), "count(DISTINCT v)"}};
  o.output_schema = std::make_shared<Schema>(*ParseColumnList(
      "window_start TIMESTAMP, window_end TIMESTAMP, k BIGINT, n BIGINT, s BIGINT, d BIGINT"));
  return o;
}

// Random rows over `keys` keys, out of order by up to 8 s, time column t; the
// watermark before each row trails the newest time by 5 s.
struct Stream {
  int64_t keys = 50;
  std::shared_ptr<const Schema> schema =
      std::make_shared<Schema>(*ParseColumnList("t TIMESTAMP, k BIGINT, v BIGINT, v2 BIGINT"));
  std::mt19937_64 rng{7};
  int64_t newest = 0;
  int64_t clock = 0;

  std::pair<Batch, std::vector<int64_t>> Next(int rows) {
    Batch b = Batch::Make(schema);
    std::vector<int64_t> marks;
    for (int i = 0; i < rows; ++i) {
      clock += static_cast<int64_t>(rng() % 300'000);
      int64_t t = clock - static_cast<int64_t>(rng() % (8 * kSec));
      marks.push_back(newest == 0 ? INT64_MIN : newest - 5 * kSec);
      newest = std::max(newest, t);
      b.columns[0].Append<int64_t>(t);
      rng() % 20 == 0
          ? b.columns[1].AppendNull()
          : b.columns[1].Append<int64_t>(static_cast<int64_t>(rng() % static_cast<uint64_t>(keys)));
      int64_t v = static_cast<int64_t>(rng() % 7);
      b.columns[2].Append<int64_t>(v);
      b.columns[3].Append<int64_t>(v);
    }
    return {std::move(b), std::move(marks)};
  }
};

// Each row as JSON, in order.
inline std::vector<std::string> JsonRows(const Batch& b) {
  std::vector<std::string> out;
  for (int64_t i = 0; i < b.num_rows(); ++i) {
    std::string row;
    AppendJsonRow(b, i, &row);
    out.push_back(row);
  }
  return out;
}

}  // namespace sluice::operators
