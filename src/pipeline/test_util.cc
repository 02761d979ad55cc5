#include "pipeline/test_util.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>

#include "catalog/table.h"
#include "columnar/json_writer.h"
#include "iceberg/scan.h"

namespace sluice::pipeline::testing {

std::vector<std::string> TableRows(catalog::Catalog& catalog, FileIO& io,
                                   const catalog::TableIdent& table) {
  std::vector<std::string> rows;
  auto t = catalog::Table::Load(catalog, io, table);
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  if (!t.ok()) return rows;
  auto md = std::make_shared<const iceberg::TableMetadata>((*t)->metadata());
  auto scan = iceberg::TableScan::Make(io, md, {});
  EXPECT_TRUE(scan.ok()) << scan.status().ToString();
  Batch b;
  while (scan.ok()) {
    auto more = (*scan)->Next(&b);
    EXPECT_TRUE(more.ok()) << more.status().ToString();
    if (!more.ok() || !*more) break;
    for (int64_t r = 0; r < b.num_rows(); ++r) {
      std::string line;
      AppendJsonRow(b, r, &line);
      rows.push_back(std::move(line));
    }
  }
  std::sort(rows.begin(), rows.end());
  return rows;
}

std::multiset<int64_t> LeadingIds(const std::vector<std::string>& rows) {
  std::multiset<int64_t> ids;
  for (const auto& r : rows) ids.insert(std::strtoll(r.c_str() + r.find(':') + 1, nullptr, 10));
  return ids;
}

std::multiset<int64_t> IdRange(int64_t from, int64_t to) {
  std::multiset<int64_t> s;
  for (int64_t i = from; i < to; ++i) s.insert(i);
  return s;
}

}  // namespace sluice::pipeline::testing
