// Binding windowed aggregations: the plan's stages and the errors.
#include <gtest/gtest.h>

#include "columnar/sql_schema.h"
#include "common/testing.h"
#include "sql/binder.h"
#include "sql/parser.h"

namespace sluice::sql {
namespace {

constexpr std::string_view kSourceSql =
    "CREATE SOURCE ev (k STRING, g INT, v BIGINT, s STRING, ts TIMESTAMPTZ, other TIMESTAMPTZ, "
    "WATERMARK FOR ts AS ts - INTERVAL '5' SECOND) WITH (connector = 'http') FORMAT JSON;\n";

Result<AggregatePlan> BindAgg(std::string_view pipeline, std::string_view target,
                              std::string_view source_sql = kSourceSql) {
  ASSIGN_OR_RETURN(Script script,
                   ParseScript(fmt::format("{}CREATE PIPELINE p AS {}", source_sql, pipeline)));
  const auto& source = std::get<CreateSource>(script.statements[0].body);
  const auto& p = std::get<CreatePipeline>(script.statements[1].body);
  std::string column;
  if (source.watermark) {
    ASSIGN_OR_RETURN(WatermarkSpec wm, SourceWatermark(source));
    column = wm.column;
  }
  ASSIGN_OR_RETURN(Schema t, ParseColumnList(target));
  return BindAggregateInsert(p.insert, source.schema, t, column, 0);
}

// The source columns `pre` reads: WHERE, keys, aggregate arguments, the
// event time (the source's columns: k g v s ts other).
TEST(AggregateBindTest, TheColumnsReadAreTheWhereKeysArgumentsAndEventTime) {
  ASSERT_OK_AND_ASSIGN(AggregatePlan plan,
                       BindAgg("INSERT INTO t SELECT window_start, k, count(*), sum(v) + 1 "
                               "FROM TUMBLE(ev, ts, INTERVAL '1' MINUTE) WHERE g > 0 "
                               "GROUP BY window_start, window_end, k",
                               "ws TIMESTAMPTZ, k STRING, n BIGINT, total BIGINT"));
  std::vector<bool> read = ColumnsRead(plan.pre);
  read.resize(6);  // (then $row)
  EXPECT_EQ(read, (std::vector<bool>{true, true, true, false, true, false}));
  EXPECT_EQ(plan.time_column, 4);
}

TEST(AggregateBindTest, ATumblingCountHasItsThreeStages) {
  ASSERT_OK_AND_ASSIGN(
      AggregatePlan plan,
      BindAgg("INSERT INTO t SELECT window_start, k, count(*), sum(v) + 1, COUNT(DISTINCT s) "
              "FROM TUMBLE(ev, ts, INTERVAL '1' MINUTE) WHERE g > 0 "
              "GROUP BY window_start, window_end, k HAVING count(*) > 2",
              "ws TIMESTAMPTZ, k STRING, n BIGINT, total BIGINT, d BIGINT"));
  EXPECT_EQ(plan.window.window.kind, operators::WindowSpec::Kind::kTumble);
  EXPECT_EQ(plan.window.window.size_us, 60'000'000);
  ASSERT_EQ(plan.window.aggs.size(), 3u);  // count(*) once for the select and HAVING
  EXPECT_EQ(plan.window.aggs[0].kind, operators::AggKind::kCountStar);
  EXPECT_EQ(plan.window.aggs[2].kind, operators::AggKind::kCountDistinct);
  EXPECT_EQ(plan.time_column, 4);
  // pre: $row, $time, the key, two arguments (count(*) has none); WHERE.
  EXPECT_EQ(plan.pre.target_schema->fields.size(), 5u);
  EXPECT_NE(plan.pre.filter, nullptr);
  // post: HAVING over window_start, window_end, k, $agg0..2.
  EXPECT_EQ(plan.window.output_schema->fields.size(), 6u);
  EXPECT_NE(plan.post.filter, nullptr);
}

TEST(AggregateBindTest, TheFlinkSpellingBindsTheSameWindow) {
  ASSERT_OK_AND_ASSIGN(
      AggregatePlan plan,
      BindAgg("INSERT INTO t SELECT window_end, count(*) FROM TABLE(HOP(TABLE ev, "
              "DESCRIPTOR(ts), INTERVAL '10' SECONDS, INTERVAL '1' MINUTE)) GROUP BY window_end",
              "we TIMESTAMPTZ, n BIGINT"));
  EXPECT_EQ(plan.window.window.kind, operators::WindowSpec::Kind::kHop);
  EXPECT_EQ(plan.window.window.slide_us, 10'000'000);
  EXPECT_EQ(plan.window.window.size_us, 60'000'000);
}

TEST(AggregateBindTest, ErrorsNameLineColumnAndWhatIsWrong) {
  struct Case {
    std::string_view pipeline, target, message;
    StatusCode code = StatusCode::kInvalidArgument;
  };
  const Case cases[] = {
      {"INSERT INTO t SELECT window_start, v, count(*) FROM TUMBLE(ev, ts, INTERVAL '1' "
       "MINUTE) GROUP BY window_start, k",
       "a TIMESTAMPTZ, b BIGINT, c BIGINT", "column v is neither grouped nor inside an aggregate"},
      {"INSERT INTO t SELECT k, count(*) FROM TUMBLE(ev, ts, INTERVAL '1' MINUTE) GROUP BY k",
       "k STRING, n BIGINT", "GROUP BY must name window_start or window_end of the TUMBLE window"},
      {"INSERT INTO t SELECT k, count(*) FROM ev GROUP BY k", "k STRING, n BIGINT",
       "GROUP BY without a window updates one row per group, so table t needs PRIMARY KEY (k) "
       "and those columns selected as they are: it has no primary key"},
      {"INSERT INTO t SELECT window_end, count(*) FROM TUMBLE(ev, other, INTERVAL '1' MINUTE) "
       "GROUP BY window_end",
       "a TIMESTAMPTZ, n BIGINT", "the window is on other, but the source's WATERMARK is on ts"},
      {"INSERT INTO t SELECT window_end, sum(s) FROM TUMBLE(ev, ts, INTERVAL '1' MINUTE) "
       "GROUP BY window_end",
       "a TIMESTAMPTZ, n BIGINT", "sum(s): needs a number, not STRING"},
      {"INSERT INTO t SELECT window_end, sum(DISTINCT v) FROM TUMBLE(ev, ts, INTERVAL '1' "
       "MINUTE) GROUP BY window_end",
       "a TIMESTAMPTZ, n BIGINT", "sum(DISTINCT ...) (only count(DISTINCT x))",
       StatusCode::kNotImplemented},
      {"INSERT INTO t SELECT window_end, max(count(*)) FROM TUMBLE(ev, ts, INTERVAL '1' "
       "MINUTE) GROUP BY window_end",
       "a TIMESTAMPTZ, n BIGINT", "an aggregate inside an aggregate"},
      {"INSERT INTO t SELECT window_end, count(*) FROM HOP(ev, ts, INTERVAL '7' SECOND, "
       "INTERVAL '1' MINUTE) GROUP BY window_end",
       "a TIMESTAMPTZ, n BIGINT",
       "HOP's size (INTERVAL '1' MINUTE) must be a multiple of its slide"},
      {"INSERT INTO t SELECT window_end, count(*) FROM TUMBLE(ev, ts, INTERVAL '1' MONTH) "
       "GROUP BY window_end",
       "a TIMESTAMPTZ, n BIGINT", "must be a positive fixed length"},
      {"INSERT INTO t SELECT window_end, count(*) FROM TUMBLE(ev, ts, INTERVAL '1' MINUTE) "
       "GROUP BY window_end",
       "a TIMESTAMPTZ, n INT", "count(*) is BIGINT, target column n is INT"},
      {"INSERT INTO t SELECT * FROM TUMBLE(ev, ts, INTERVAL '1' MINUTE) GROUP BY window_end",
       "a TIMESTAMPTZ", "* in an aggregation"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.pipeline);
    ASSERT_ERROR(BindAgg(c.pipeline, c.target), c.code, c.message);
  }
  ASSERT_ERROR(BindAgg("INSERT INTO t SELECT window_end, count(*) FROM TUMBLE(ev, ts, INTERVAL "
                       "'1' MINUTE) GROUP BY window_end",
                       "a TIMESTAMPTZ, n BIGINT",
                       "CREATE SOURCE ev (ts TIMESTAMPTZ) WITH (connector = 'http') FORMAT JSON;"),
               StatusCode::kInvalidArgument, "source ev has no WATERMARK");
  ASSERT_ERROR(BindAgg("INSERT INTO t SELECT window_end, count(*) FROM TUMBLE(ev, ts, INTERVAL "
                       "'1' MINUTE) GROUP BY window_end",
                       "a TIMESTAMPTZ, n BIGINT",
                       "CREATE SOURCE ev (ts TIMESTAMPTZ, WATERMARK FOR ts AS ts + INTERVAL '1' "
                       "SECOND) WITH (connector = 'http') FORMAT JSON;"),
               StatusCode::kInvalidArgument, "WATERMARK FOR ts AS must be ts or ts - INTERVAL");
}

Result<AggregatePlan> BindKeyed(std::string_view pipeline, std::string_view target,
                                const std::vector<std::string>& key) {
  ASSIGN_OR_RETURN(Script script,
                   ParseScript(fmt::format("{}CREATE PIPELINE p AS {}", kSourceSql, pipeline)));
  const auto& source = std::get<CreateSource>(script.statements[0].body);
  const auto& p = std::get<CreatePipeline>(script.statements[1].body);
  ASSIGN_OR_RETURN(Schema t, ParseColumnList(target));
  RETURN_IF_ERROR(SetPrimaryKey(&t, key));
  return BindAggregateInsert(p.insert, source.schema, t, "ts", 0);
}

TEST(AggregateBindTest, AGroupByWithoutAWindowUpdatesATableKeyedByTheGroups) {
  constexpr std::string_view kTarget =
      "k STRING NOT NULL, g BIGINT NOT NULL, n BIGINT, total BIGINT";
  // g is INT in the source: widened into the BIGINT key, distinct keys stay distinct.
  ASSERT_OK_AND_ASSIGN(AggregatePlan plan,
                       BindKeyed("INSERT INTO t SELECT k, g, count(*), sum(v) FROM ev "
                                 "GROUP BY k, g HAVING count(*) > 1",
                                 kTarget, {"g", "k"}));
  EXPECT_TRUE(plan.updating());
  EXPECT_EQ(plan.time_column, -1);
  ASSERT_EQ(plan.key_plan.target_schema->fields.size(), 2u);  // in key order
  EXPECT_EQ(plan.key_plan.target_schema->fields[0].name, "g");
  EXPECT_EQ(plan.key_plan.target_schema->fields[1].name, "k");
  EXPECT_EQ(plan.key_plan.filter, nullptr);
  EXPECT_NE(plan.post.filter, nullptr);

  struct Case {
    std::string_view pipeline;
    std::vector<std::string> key;
    std::string_view message;
  };
  const Case cases[] = {
      {"INSERT INTO t SELECT k, g, count(*), sum(v) FROM ev GROUP BY k, g",
       {"k"},
       "g is grouped but not in its key"},
      {"INSERT INTO t SELECT k, g, count(*), sum(v) FROM ev GROUP BY k, g",
       {"k", "g", "n"},
       "its key column n is not one of them"},
      {"INSERT INTO t SELECT k, g + 1, count(*), sum(v) FROM ev GROUP BY k, g",
       {"k", "g"},
       "its key column g is not one of them"},
      {"INSERT INTO t SELECT k, g, count(*), window_end FROM ev GROUP BY k, g",
       {"k", "g"},
       "window_end: the query has no window"},
      {"INSERT INTO t SELECT k, g, count(*), sum(v) FROM ev GROUP BY window_start, k, g",
       {"k", "g"},
       "window_start: the query has no window"},
      {"INSERT INTO t SELECT 'a', 1, count(*), sum(v) FROM ev HAVING count(*) > 1",
       {"k", "g"},
       "an aggregate without a window needs GROUP BY"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.pipeline);
    ASSERT_ERROR(BindKeyed(c.pipeline, kTarget, c.key), StatusCode::kInvalidArgument, c.message);
  }
}

}  // namespace
}  // namespace sluice::sql
