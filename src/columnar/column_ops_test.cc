#include "columnar/column_ops.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "columnar/json_writer.h"
#include "columnar/sql_schema.h"
#include "common/testing.h"

namespace sluice {
namespace {

std::string Row(const Batch& b, int64_t r) {
  std::string s;
  AppendJsonRow(b, r, &s);
  return s;
}

TEST(ColumnOpsTest, TakeNestedRows) {
  ASSERT_OK_AND_ASSIGN(Schema schema, ParseColumnList("id BIGINT, tags ARRAY<STRING>, "
                                                      "s STRUCT<a: INT>"));
  Batch b = Batch::Make(std::make_shared<Schema>(schema));
  for (int i = 0; i < 4; ++i) {
    b.columns[0].Append<int64_t>(i);
    for (int j = 0; j < i; ++j) b.columns[1].mutable_child(0)->AppendBytes(std::to_string(j));
    b.columns[1].FinishNested();
    if (i == 2) {
      b.columns[2].AppendNull();
    } else {
      b.columns[2].mutable_child(0)->Append<int32_t>(i * 10);
      b.columns[2].FinishNested();
    }
  }
  Batch t = TakeRows(b, {3, 2, 0});
  ASSERT_EQ(t.num_rows(), 3);
  EXPECT_EQ(Row(t, 0), Row(b, 3));
  EXPECT_EQ(Row(t, 1), Row(b, 2));
  EXPECT_EQ(Row(t, 2), Row(b, 0));
  Batch f = FilterRows(b, {false, true, false, true});
  EXPECT_EQ(Row(f, 1), Row(b, 3));
}

// A schema of a flat fixed-width, byte, boolean, struct and list column.
std::shared_ptr<const Schema> MixedSchema() {
  auto schema = ParseColumnList(
      "id BIGINT, name STRING, flag BOOLEAN, s STRUCT<a: INT, b: STRING>, tags ARRAY<STRING>");
  EXPECT_TRUE(schema.ok()) << schema.status().ToString();
  return std::make_shared<Schema>(std::move(*schema));
}

// n rows of MixedSchema, a null in about one in five values of each column
// but the list (`nulls`: false, none).
Batch MixedRows(const std::shared_ptr<const Schema>& shared, std::mt19937& rng, int n,
                bool nulls = true) {
  Batch b = Batch::Make(shared);
  auto maybe_null = [&] { return nulls && rng() % 5 == 0; };
  for (int i = 0; i < n; ++i) {
    if (maybe_null())
      b.columns[0].AppendNull();
    else
      b.columns[0].Append<int64_t>(i * 3);
    if (maybe_null()) {
      b.columns[1].AppendNull();
    } else {
      b.columns[1].AppendBytes(std::string(rng() % 7, static_cast<char>('a' + i % 26)));
    }
    if (maybe_null())
      b.columns[2].AppendNull();
    else
      b.columns[2].AppendBool(rng() % 2);
    if (maybe_null()) {
      b.columns[3].AppendNull();
    } else {
      b.columns[3].mutable_child(0)->Append<int32_t>(i);
      b.columns[3].mutable_child(1)->AppendBytes(std::to_string(i * 7));
      b.columns[3].FinishNested();
    }
    for (int j = 0; j < i % 3; ++j)
      b.columns[4].mutable_child(0)->AppendBytes("t" + std::to_string(j));
    b.columns[4].FinishNested();
  }
  return b;
}

// KeepRows moves the kept rows to the front of the column's own buffers;
// whatever the selection (none, all, runs from the first row, single rows,
// nulls anywhere), the rows are those TakeRows copies out.
TEST(ColumnOpsTest, KeepingRowsInPlaceGivesTheRowsTakeRowsCopies) {
  auto shared = MixedSchema();
  std::mt19937 rng(7);
  for (int round = 0; round < 200; ++round) {
    const int n = static_cast<int>(rng() % 40);
    Batch b = MixedRows(shared, rng, n);
    std::vector<uint32_t> rows;
    const unsigned mode = rng() % 4;  // 0: every row, 1: none, 2: a prefix run then some
    for (int i = 0; i < n; ++i) {
      if (mode == 0 || (mode == 2 && i < n / 2) || (mode >= 2 && rng() % 2)) {
        rows.push_back(static_cast<uint32_t>(i));
      }
    }
    rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
    Batch want = TakeRows(b, rows);
    for (Column& c : b.columns) KeepRows(&c, rows);
    ASSERT_EQ(b.num_rows(), static_cast<int64_t>(rows.size()));
    for (size_t c = 0; c < b.columns.size(); ++c) {
      EXPECT_EQ(b.columns[c].size(), static_cast<int64_t>(rows.size())) << "column " << c;
      EXPECT_EQ(b.columns[c].null_count(), want.columns[c].null_count()) << "column " << c;
    }
    for (size_t r = 0; r < rows.size(); ++r) {
      ASSERT_EQ(Row(b, static_cast<int64_t>(r)), Row(want, static_cast<int64_t>(r)))
          << "round " << round << ", row " << r << " (was row " << rows[r] << ")";
    }
    // Rows appended after keep their nulls counted (the dropped rows' bits
    // are cleared for them).
    for (size_t c = 0; c < 3; ++c) {
      b.columns[c].AppendNull();
      want.columns[c].AppendNull();
      EXPECT_EQ(b.columns[c].null_count(), want.columns[c].null_count()) << "column " << c;
      EXPECT_TRUE(b.columns[c].IsNull(b.columns[c].size() - 1));
    }
  }
}

// A batch and ranges appended in one piece give the rows, nulls and null
// counts that appending their rows one by one gives, onto columns with or
// without nulls of their own.
TEST(ColumnOpsTest, AppendingARangeGivesTheRowsAppendedOneByOne) {
  auto shared = MixedSchema();
  std::mt19937 rng(11);
  for (int round = 0; round < 200; ++round) {
    Batch src = MixedRows(shared, rng, static_cast<int>(rng() % 40), rng() % 3 != 0);
    Batch prefix = MixedRows(shared, rng, static_cast<int>(rng() % 5), rng() % 2 == 0);
    Batch got = MixedRows(shared, rng, 0), want = MixedRows(shared, rng, 0);
    AppendBatch(prefix, &got);
    for (size_t c = 0; c < prefix.columns.size(); ++c) {
      for (int64_t r = 0; r < prefix.num_rows(); ++r) {
        AppendRowFrom(prefix.columns[c], r, &want.columns[c]);
      }
    }
    for (int piece = 0; piece < 3; ++piece) {
      const int64_t begin = src.num_rows() == 0 ? 0 : rng() % src.num_rows();
      const int64_t n = src.num_rows() == 0 ? 0 : rng() % (src.num_rows() - begin + 1);
      for (size_t c = 0; c < src.columns.size(); ++c) {
        AppendRowsFrom(src.columns[c], begin, n, &got.columns[c]);
        for (int64_t r = begin; r < begin + n; ++r) {
          AppendRowFrom(src.columns[c], r, &want.columns[c]);
        }
      }
    }
    ASSERT_EQ(got.num_rows(), want.num_rows());
    for (size_t c = 0; c < got.columns.size(); ++c) {
      EXPECT_EQ(got.columns[c].size(), want.num_rows()) << "column " << c;
      EXPECT_EQ(got.columns[c].null_count(), want.columns[c].null_count()) << "column " << c;
    }
    for (int64_t r = 0; r < got.num_rows(); ++r) {
      ASSERT_EQ(Row(got, r), Row(want, r)) << "round " << round << ", row " << r;
    }
  }
}

TEST(ColumnOpsTest, Promotions) {
  Column i(DataType::Int());
  i.Append<int32_t>(-5);
  i.AppendNull();
  ASSERT_OK_AND_ASSIGN(Column l, CastColumn(i, DataType::Long()));
  EXPECT_EQ(l.Value<int64_t>(0), -5);
  EXPECT_TRUE(l.IsNull(1));
  Column d(DataType::Date());
  d.Append<int32_t>(1);
  ASSERT_OK_AND_ASSIGN(Column ts, CastColumn(d, DataType::TimestampNs()));
  EXPECT_EQ(ts.Value<int64_t>(0), 86400LL * 1000000000);
  ASSERT_ERROR(CastColumn(l, DataType::Int()), StatusCode::kInvalidArgument,
               "cannot read a long column as int");
}

TEST(ColumnOpsTest, SortedRowsOrdersByEachKeyWithItsDirectionAndNulls) {
  Column k(DataType::Int());
  Column d(DataType::Double());
  // rows:      0     1     2     3     4     5
  // k:         2     null  1     2     1     null
  // d:         0.5   1     NaN   -1    2     0
  for (int v : {2, -1, 1, 2, 1, -1}) {
    if (v < 0) {
      k.AppendNull();
    } else {
      k.Append<int32_t>(v);
    }
  }
  for (double v : {0.5, 1.0, std::nan(""), -1.0, 2.0, 0.0}) d.Append<double>(v);
  using V = std::vector<uint32_t>;
  EXPECT_EQ(SortedRows({{&k, false, true}}, 6), (V{1, 5, 2, 4, 0, 3})) << "stable ties";
  EXPECT_EQ(SortedRows({{&k, false, false}}, 6), (V{2, 4, 0, 3, 1, 5}));
  EXPECT_EQ(SortedRows({{&k, true, false}, {&d, false, true}}, 6), (V{3, 0, 4, 2, 5, 1}))
      << "k descending, then d ascending (NaN above every number)";
  EXPECT_EQ(SortedRows({}, 3), (V{0, 1, 2}));
}

}  // namespace
}  // namespace sluice
