// Expressions end to end through the front end: parse, bind against a
// source, apply to rows decoded from JSON, read the rows back as JSON.
// (The differential test against DuckDB is tests/interop/sql_expr_differential.mjs.)
#include <gtest/gtest.h>

#include <algorithm>

#include "columnar/json_reader.h"
#include "columnar/json_writer.h"
#include "columnar/sql_schema.h"
#include "common/testing.h"
#include "sql/binder.h"
#include "sql/parser.h"

namespace sluice::sql {
namespace {

constexpr std::string_view kExprColumns =
    "id BIGINT, a INT, b INT, l BIGINT, d DOUBLE, m DECIMAL(10,2), s STRING, ts TIMESTAMPTZ, "
    "big DECIMAL(38,0), w DECIMAL(38,10)";

struct Output {
  std::vector<std::string> rows;  // JSON objects
  std::vector<RejectedRow> rejected;
};

Result<ProjectionPlan> Plan(std::string_view select, std::string_view target) {
  ASSIGN_OR_RETURN(Script script,
                   ParseScript(fmt::format("CREATE PIPELINE p AS INSERT INTO t {}", select)));
  ASSIGN_OR_RETURN(Schema source, ParseColumnList(kExprColumns));
  ASSIGN_OR_RETURN(Schema t, ParseColumnList(target));
  return BindInsert(std::get<CreatePipeline>(script.statements[0].body).insert, source, t);
}

Result<Output> Project(std::string_view select, std::string_view target,
                       const std::vector<std::string>& json_rows) {
  ASSIGN_OR_RETURN(ProjectionPlan plan, Plan(select, target));
  ASSIGN_OR_RETURN(auto decoder, JsonDecoder::Make(plan.source_schema));
  Batch in = Batch::Make(plan.source_schema);
  for (const std::string& r : json_rows) RETURN_IF_ERROR(decoder->DecodeLine(r, 1, &in));
  Output out;
  ASSIGN_OR_RETURN(Batch b, ApplyPlan(plan, std::move(in), &out.rejected));
  for (int64_t i = 0; i < b.num_rows(); ++i) {
    std::string row;
    AppendJsonRow(b, i, &row);
    out.rows.push_back(std::move(row));
  }
  return out;
}

TEST(ExprTest, ArithmeticKeepsIntegerTypesAndPropagatesNulls) {
  ASSERT_OK_AND_ASSIGN(
      Output out, Project("SELECT id, a + b, a * 2 - b, -a, a % b, l + a FROM s",
                          "id BIGINT, x INT, y INT, z INT, r INT, w BIGINT",
                          {R"({"id":1,"a":7,"b":-2,"l":10})", R"({"id":2,"a":null,"b":3,"l":1})"}));
  ASSERT_EQ(out.rows.size(), 2u);
  EXPECT_EQ(out.rows[0], R"({"id":1,"x":5,"y":16,"z":-7,"r":1,"w":17})");
  EXPECT_EQ(out.rows[1], R"({"id":2,"x":null,"y":null,"z":null,"r":null,"w":null})");
  EXPECT_TRUE(out.rejected.empty());
}

TEST(ExprTest, AFailedRowIsRejectedWithItsPositionAndPayloadAndTheOthersCarryOn) {
  ASSERT_OK_AND_ASSIGN(Output out, Project("SELECT id,\n  a / b FROM s", "id BIGINT, q INT",
                                           {R"({"id":1,"a":7,"b":2})", R"({"id":2,"a":7,"b":0})",
                                            R"({"id":3,"a":-7,"b":2})"}));
  ASSERT_EQ(out.rows.size(), 2u);
  EXPECT_EQ(out.rows[0], R"({"id":1,"q":3})");
  EXPECT_EQ(out.rows[1], R"({"id":3,"q":-3})");
  ASSERT_EQ(out.rejected.size(), 1u);
  EXPECT_EQ(out.rejected[0].row, 1);
  EXPECT_EQ(out.rejected[0].error, "line 2, column 3: division by zero in a / b");
  EXPECT_NE(out.rejected[0].payload.find(R"("id":2)"), std::string::npos);
}

TEST(ExprTest, WhereKeepsOnlyRowsWhereTheConditionIsTrue) {
  ASSERT_OK_AND_ASSIGN(
      Output out,
      Project("SELECT id FROM s WHERE a > 1 AND (s LIKE 'k%' OR s IS NULL) AND id NOT IN (4, NULL)",
              "id BIGINT",
              {R"({"id":1,"a":2,"s":"kx"})", R"({"id":2,"a":null,"s":"k"})", R"({"id":3,"a":5})",
               R"({"id":5,"a":5,"s":"zz"})"}));
  // id 2: NULL > 1 is NULL; id 5: no match; every id: NOT IN (4, NULL) is NULL or FALSE...
  EXPECT_TRUE(out.rows.empty());
  ASSERT_OK_AND_ASSIGN(
      out, Project("SELECT id FROM s WHERE a > 1 AND (s LIKE 'k%' OR s IS NULL)", "id BIGINT",
                   {R"({"id":1,"a":2,"s":"kx"})", R"({"id":2,"a":null,"s":"k"})",
                    R"({"id":3,"a":5})", R"({"id":5,"a":5,"s":"zz"})"}));
  ASSERT_EQ(out.rows.size(), 2u);
  EXPECT_EQ(out.rows[0], R"({"id":1})");
  EXPECT_EQ(out.rows[1], R"({"id":3})");
}

TEST(ExprTest, DecimalsAreExactAndLiteralsTakeTheirSqlTypes) {
  ASSERT_OK_AND_ASSIGN(
      Output out,
      Project(
          "SELECT id, m * 2, l * 0.908, m + 0.005, round(m, 1), floor(m), d * 2 FROM s",
          "id BIGINT, x DECIMAL(21,2), y DECIMAL(23,3), z DECIMAL(13,3), r DECIMAL(10,1), "
          "f DECIMAL(9,0), e DOUBLE",
          {R"({"id":1,"m":"12.35","l":1000,"d":0.25})", R"({"id":2,"m":"-12.35","l":3,"d":1})"}));
  ASSERT_EQ(out.rows.size(), 2u);
  EXPECT_EQ(out.rows[0],
            R"({"id":1,"x":"24.70","y":"908.000","z":"12.355","r":"12.4","f":"12","e":0.5})");
  EXPECT_EQ(out.rows[1],
            R"({"id":2,"x":"-24.70","y":"2.724","z":"-12.345","r":"-12.4","f":"-13","e":2})");
}

TEST(ExprTest, IntegersCastToDecimalsWithARangeCheckAndWideFactorsMultiplyExactly) {
  // Integer -> DECIMAL and DECIMAL * DECIMAL have fast paths (no per-row
  // general cast; 64-bit factors): their results, nulls, inactive CASE
  // branches and errors must be those of the general rules.
  ASSERT_OK_AND_ASSIGN(
      Output out,
      Project("SELECT id, CAST(l AS DECIMAL(21,2)), TRY_CAST(l AS DECIMAL(4,2)), "
              "CASE WHEN a > 0 THEN CAST(l AS DECIMAL(4,2)) END, big * 3, l * 0.5 FROM s",
              "id BIGINT, c DECIMAL(21,2), t DECIMAL(4,2), k DECIMAL(4,2), b DECIMAL(38,0), "
              "h DECIMAL(21,1)",
              {R"({"id":1,"l":-9223372036854775808,"a":-5,"big":"100000000000000000000"})",
               R"({"id":2,"l":null,"a":null,"big":null})", R"({"id":3,"l":99,"a":5,"big":"-3"})",
               R"({"id":4,"l":100,"a":-1,"big":"0"})"}));
  EXPECT_TRUE(out.rejected.empty()) << out.rejected[0].error;
  ASSERT_EQ(out.rows.size(), 4u);
  EXPECT_EQ(out.rows[0], R"({"id":1,"c":"-9223372036854775808.00","t":null,"k":null,)"
                         R"("b":"300000000000000000000","h":"-4611686018427387904.0"})");
  EXPECT_EQ(out.rows[1], R"({"id":2,"c":null,"t":null,"k":null,"b":null,"h":null})");
  EXPECT_EQ(out.rows[2], R"({"id":3,"c":"99.00","t":"99.00","k":"99.00","b":"-9","h":"49.5"})");
  EXPECT_EQ(out.rows[3], R"({"id":4,"c":"100.00","t":null,"k":null,"b":"0","h":"50.0"})");

  ASSERT_OK_AND_ASSIGN(
      out,
      Project("SELECT id, CAST(a AS DECIMAL(9,3)), big * 3, "
              "CASE WHEN a > 0 THEN CAST(l AS DECIMAL(4,2)) END FROM s",
              "id BIGINT, i DECIMAL(9,3), b DECIMAL(38,0), k DECIMAL(4,2)",
              {R"({"id":1,"a":-2147483648,"l":1,"big":"1"})", R"({"id":2,"a":1,"l":100,"big":"1"})",
               R"({"id":3,"a":-1,"l":100,"big":"33333333333333333333333333333333333334"})",
               R"({"id":4,"a":7,"l":5,"big":"1"})"}));
  ASSERT_EQ(out.rows.size(), 1u);
  EXPECT_EQ(out.rows[0], R"({"id":4,"i":"7.000","b":"3","k":"5.00"})");
  ASSERT_EQ(out.rejected.size(), 3u);
  // (in the order the expressions found them)
  std::sort(out.rejected.begin(), out.rejected.end(),
            [](const RejectedRow& x, const RejectedRow& y) { return x.row < y.row; });
  EXPECT_NE(out.rejected[0].error.find("-2147483648 is out of range for DECIMAL(9,3)"),
            std::string::npos)
      << out.rejected[0].error;
  EXPECT_NE(out.rejected[1].error.find("100 is out of range for DECIMAL(4,2)"), std::string::npos)
      << out.rejected[1].error;
  EXPECT_NE(out.rejected[2].error.find("decimal overflow in big * 3"), std::string::npos)
      << out.rejected[2].error;
}

TEST(ExprTest, DecimalsOfThirtyEightDigitsCompareExactlyWithOtherScales) {
  // DECIMAL(38,0) against 0.5 or DECIMAL(38,10) has no common 38-digit type:
  // the scaled values are compared, so no row fails a capped cast.
  const std::string nines(38, '9');
  ASSERT_OK_AND_ASSIGN(
      Output out,
      Project("SELECT id FROM s WHERE big > 0.5 AND big >= w AND NOT big < 1 AND big <> w",
              "id BIGINT",
              {fmt::format(R"({{"id":1,"big":"{}","w":"-1.5"}})", nines),
               fmt::format(R"({{"id":2,"big":"-{}","w":"0"}})", nines),
               R"({"id":3,"big":"0","w":"-0.25"})", R"({"id":4,"big":"1","w":"1.0000000000"})",
               R"({"id":5,"big":"2","w":"1.9999999999"})",
               fmt::format(R"({{"id":6,"big":"1","w":"{}.5"}})", std::string(27, '9'))}));
  EXPECT_TRUE(out.rejected.empty()) << out.rejected[0].error;
  ASSERT_EQ(out.rows.size(), 2u);
  EXPECT_EQ(out.rows[0], R"({"id":1})");
  EXPECT_EQ(out.rows[1], R"({"id":5})");

  ASSERT_OK_AND_ASSIGN(
      out, Project("SELECT id, big = w, w BETWEEN big AND 1.5, big IN (0.5, w), w IN (big, 7) "
                   "FROM s",
                   "id BIGINT, e BOOLEAN, b BOOLEAN, i BOOLEAN, j BOOLEAN",
                   {R"({"id":1,"big":"1","w":"1.0000000000"})",
                    fmt::format(R"({{"id":2,"big":"-{}","w":"0.1"}})", nines)}));
  EXPECT_TRUE(out.rejected.empty()) << out.rejected[0].error;
  ASSERT_EQ(out.rows.size(), 2u);
  EXPECT_EQ(out.rows[0], R"({"id":1,"e":true,"b":true,"i":true,"j":true})");
  EXPECT_EQ(out.rows[1], R"({"id":2,"e":false,"b":true,"i":false,"j":false})");
}

TEST(ExprTest, StringsCastsAndTime) {
  ASSERT_OK_AND_ASSIGN(
      Output out,
      Project("SELECT id, upper(trim(s)) || '!', length(s), substring(s, 2, 3), "
              "TRY_CAST(s AS INT), CAST(a AS STRING), date_trunc('hour', ts), "
              "extract(dow FROM ts), ts + INTERVAL '1' MONTH, "
              "CASE WHEN regexp_matches(s, '^ ?[0-9]+') THEN 'digits' ELSE 'other' END FROM s",
              "id BIGINT, u STRING, n BIGINT, sub STRING, i INT, t STRING, h TIMESTAMPTZ, "
              "dow BIGINT, next TIMESTAMPTZ, k STRING",
              {R"({"id":1,"s":" 42 ","a":-5,"ts":"2024-01-31T10:30:00Z"})",
               R"({"id":2,"s":"héllo","a":7,"ts":"2023-03-05T23:59:59.5Z"})"}));
  ASSERT_EQ(out.rows.size(), 2u);
  EXPECT_EQ(out.rows[0], R"({"id":1,"u":"42!","n":4,"sub":"42 ","i":42,"t":"-5",)"
                         R"("h":"2024-01-31T10:00:00.000000+00:00","dow":3,)"
                         R"("next":"2024-02-29T10:30:00.000000+00:00","k":"digits"})");
  EXPECT_EQ(out.rows[1], R"({"id":2,"u":"HéLLO!","n":5,"sub":"éll","i":null,"t":"7",)"
                         R"("h":"2023-03-05T23:00:00.000000+00:00","dow":0,)"
                         R"("next":"2023-04-05T23:59:59.500000+00:00","k":"other"})");
}

TEST(ExprTest, NullForANotNullTargetIsARejectedRow) {
  ASSERT_OK_AND_ASSIGN(Output out,
                       Project("SELECT id, nullif(a, 0) FROM s", "id BIGINT, x INT NOT NULL",
                               {R"({"id":1,"a":0})", R"({"id":2,"a":3})"}));
  ASSERT_EQ(out.rows.size(), 1u);
  ASSERT_EQ(out.rejected.size(), 1u);
  EXPECT_EQ(out.rejected[0].error,
            "line 1, column 47: NULL for target column x, which is NOT NULL");
}

TEST(ExprTest, BindingErrorsNameLineColumnAndTypes) {
  struct Case {
    std::string_view select, target;
    StatusCode code;
    std::string_view message;
  };
  const Case cases[] = {
      {"SELECT a + s FROM s", "x INT", StatusCode::kInvalidArgument,
       "line 1, column 47: + needs numbers, s is STRING"},
      {"SELECT lower(a) FROM s", "x STRING", StatusCode::kInvalidArgument,
       "lower() needs a STRING, a is INT"},
      {"SELECT date_trunc('fortnight', ts) FROM s", "x TIMESTAMPTZ", StatusCode::kInvalidArgument,
       "unknown date_trunc unit 'fortnight'"},
      {"SELECT regexp_matches(s, '(') FROM s", "x BOOLEAN", StatusCode::kInvalidArgument,
       "invalid regular expression"},
      {"SELECT s LIKE s FROM s", "x BOOLEAN", StatusCode::kNotImplemented,
       "LIKE with a pattern that is not a 'string' literal"},
      {"SELECT INTERVAL '5' SECOND FROM s", "x TIMESTAMPTZ", StatusCode::kInvalidArgument,
       "an INTERVAL can only be added to or subtracted from a timestamp"},
      {"SELECT count(*) FROM s", "x BIGINT", StatusCode::kNotImplemented,
       "the aggregate count() outside GROUP BY"},
      {"SELECT frobnicate(a) FROM s", "x INT", StatusCode::kInvalidArgument,
       "unknown function frobnicate()"},
      {"SELECT a * 1.5 FROM s", "x INT", StatusCode::kInvalidArgument,
       "a * 1.5 is DECIMAL(13,1), target column x is INT (use CAST(... AS INT))"},
      {"SELECT id FROM s WHERE a", "x BIGINT", StatusCode::kInvalidArgument,
       "WHERE needs a BOOLEAN condition, a is INT"},
      {"SELECT id FROM s WHERE a = 'x'", "x BIGINT", StatusCode::kInvalidArgument,
       "'x' is not a valid INT"},
      {"SELECT ts + 1 FROM s", "x TIMESTAMPTZ", StatusCode::kInvalidArgument,
       "+ needs numbers, ts is TIMESTAMPTZ (add an INTERVAL to a timestamp)"},
      {"SELECT CAST('abc' AS INT) FROM s", "x INT", StatusCode::kInvalidArgument,
       "'abc' is not a valid INT"},
      {"SELECT NULL + 1 FROM s", "x INT", StatusCode::kInvalidArgument, ""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.select);
    Result<ProjectionPlan> plan = Plan(c.select, c.target);
    if (c.message.empty()) {  // NULL + 1: the NULL takes INT; binds
      EXPECT_TRUE(plan.ok()) << plan.status().ToString();
      continue;
    }
    ASSERT_ERROR(plan, c.code, c.message);
  }
}

}  // namespace
}  // namespace sluice::sql
