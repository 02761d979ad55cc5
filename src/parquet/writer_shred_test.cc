// The shredder (writer_shred.h): a column's rows as repetition and definition
// levels and values, and the split of a slice at a row's first level.
#include "parquet/writer_shred.h"

#include <gtest/gtest.h>

#include "common/testing.h"
#include "parquet/test_util.h"

namespace sluice::parquet {
namespace {

TEST(Shredder, LevelsForNullsAtEachDepthAndEmptyLists) {
  auto schema = MakeSchema("tags ARRAY<STRING>, s STRUCT<l ARRAY<STRUCT<v INT>>>");
  Batch batch = FromJson(schema,
                         "{\"tags\":null,\"s\":null}\n"
                         "{\"tags\":[],\"s\":{\"l\":null}}\n"
                         "{\"tags\":[null],\"s\":{\"l\":[]}}\n"
                         "{\"tags\":[\"a\",\"b\"],\"s\":{\"l\":[null,{\"v\":null},{\"v\":7}]}}\n");
  std::vector<LeafPath> paths = BuildLeafPaths(*schema);
  ASSERT_EQ(paths.size(), 2u);
  EXPECT_EQ(paths[0].max_definition_level, 3);
  EXPECT_EQ(paths[0].max_repetition_level, 1);
  EXPECT_EQ(paths[1].max_definition_level, 5);  // s, l, repeated, element struct, v
  EXPECT_EQ(paths[1].max_repetition_level, 1);
  Shredder sh;
  LeafSlice slice;
  ASSERT_OK(sh.Shred(paths[0], batch.columns[0], 0, 4, &slice));
  std::vector<int16_t> def(slice.def_levels, slice.def_levels + slice.num_levels);
  std::vector<int16_t> rep(slice.rep_levels, slice.rep_levels + slice.num_levels);
  EXPECT_EQ(def, (std::vector<int16_t>{0, 1, 2, 3, 3}));
  EXPECT_EQ(rep, (std::vector<int16_t>{0, 0, 0, 0, 1}));
  EXPECT_EQ(slice.num_values, 2);
  EXPECT_EQ(slice.values->GetBytes(slice.positions[1]), "b");
  ASSERT_OK(sh.Shred(paths[1], batch.columns[1], 0, 4, &slice));
  def.assign(slice.def_levels, slice.def_levels + slice.num_levels);
  rep.assign(slice.rep_levels, slice.rep_levels + slice.num_levels);
  EXPECT_EQ(def, (std::vector<int16_t>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(rep, (std::vector<int16_t>{0, 0, 0, 0, 1, 1}));
  ASSERT_EQ(slice.num_values, 1);
  EXPECT_EQ(slice.values->Value<int32_t>(slice.positions[0]), 7);
  // Only rows 3..4.
  ASSERT_OK(sh.Shred(paths[0], batch.columns[0], 3, 4, &slice));
  EXPECT_EQ(slice.num_levels, 2);
  EXPECT_EQ(slice.num_rows, 1);
}

// A slice split after its first rows: the levels up to the next row's first
// (repetition level 0), the values among them, the rest after.
TEST(Shredder, ASliceSplitsAtARowsFirstLevelWithItsValues) {
  auto schema = MakeSchema("tags ARRAY<STRING>, n BIGINT NOT NULL");
  Batch batch = FromJson(schema,
                         "{\"tags\":[\"a\",\"b\"],\"n\":1}\n"
                         "{\"tags\":null,\"n\":2}\n"
                         "{\"tags\":[\"c\",null,\"d\"],\"n\":3}\n"
                         "{\"tags\":[\"e\"],\"n\":4}\n");
  std::vector<LeafPath> paths = BuildLeafPaths(*schema);
  Shredder sh;
  LeafSlice slice;
  ASSERT_OK(sh.Shred(paths[0], batch.columns[0], 0, 4, &slice));
  auto [head, tail] = SplitLeafSlice(slice, 2, paths[0].max_definition_level);
  EXPECT_EQ(head.num_rows, 2);
  EXPECT_EQ(head.num_levels, 3);  // a, b; the null list
  EXPECT_EQ(head.num_values, 2);
  EXPECT_EQ(tail.num_rows, 2);
  EXPECT_EQ(tail.num_levels, 4);  // c, null, d; e
  EXPECT_EQ(tail.num_values, 3);
  EXPECT_EQ(tail.rep_levels[0], 0);
  EXPECT_EQ(tail.def_levels, slice.def_levels + 3);
  EXPECT_EQ(tail.values->GetBytes(tail.positions[0]), "c");
  EXPECT_EQ(tail.values->GetBytes(tail.positions[2]), "e");
  // A required flat column: a level a row, each a value, taken from `first` on.
  ASSERT_OK(sh.Shred(paths[1], batch.columns[1], 1, 4, &slice));
  auto [one, two] = SplitLeafSlice(slice, 1, paths[1].max_definition_level);
  EXPECT_EQ(one.num_values, 1);
  EXPECT_EQ(two.num_values, 2);
  EXPECT_EQ(two.values->Value<int64_t>(two.first), 3);
}

}  // namespace
}  // namespace sluice::parquet
