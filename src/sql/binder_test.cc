#include "sql/binder.h"

#include <gtest/gtest.h>

#include "columnar/single_value.h"
#include "columnar/sql_schema.h"
#include "columnar/value_format.h"
#include "common/testing.h"
#include "sql/parser.h"

namespace sluice::sql {
namespace {

constexpr std::string_view kSource = "id BIGINT, user_id INT, kind STRING, ts TIMESTAMP";
constexpr std::string_view kTarget =
    "id BIGINT NOT NULL, user_id BIGINT, kind STRING, ts TIMESTAMPTZ";

// Parses "INSERT ..." inside a pipeline and binds it.
Result<ProjectionPlan> Bind(std::string_view insert, std::string_view source = kSource,
                            std::string_view target = kTarget) {
  ASSIGN_OR_RETURN(Script script, ParseScript(fmt::format("CREATE PIPELINE p AS\n{}", insert)));
  ASSIGN_OR_RETURN(Schema src, ParseColumnList(source));
  ASSIGN_OR_RETURN(Schema dst, ParseColumnList(target));
  return BindInsert(std::get<CreatePipeline>(script.statements[0].body).insert, src, dst);
}

std::string Bytes(int64_t v) {
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>(static_cast<uint64_t>(v) >> (8 * i));
  return out;
}

TEST(BinderTest, PositionalPlanWithCastsAndLiterals) {
  ASSERT_OK_AND_ASSIGN(
      ProjectionPlan plan,
      Bind("INSERT INTO lake.events SELECT id, user_id, 'click', CAST(ts AS TIMESTAMPTZ) FROM s"));
  ASSERT_EQ(plan.columns.size(), 4u);
  EXPECT_EQ(plan.columns[0].kind, ProjectionColumn::Kind::kSource);
  EXPECT_EQ(plan.columns[0].source_index, 0);
  EXPECT_EQ(plan.columns[1].kind, ProjectionColumn::Kind::kSource);
  EXPECT_EQ(plan.columns[1].source_index, 1);
  EXPECT_EQ(plan.columns[2].kind, ProjectionColumn::Kind::kLiteral);
  EXPECT_EQ(plan.columns[2].literal, "click");
  EXPECT_EQ(plan.columns[2].pos, (SourcePos{2, 45}));
  EXPECT_EQ(plan.columns[3].source_index, 3);
  EXPECT_EQ(plan.target_schema->fields[0].name, "id");
  EXPECT_EQ(plan.source_schema->fields[2].name, "kind");
}

TEST(BinderTest, ExplicitColumnListStarAndNames) {
  ASSERT_OK_AND_ASSIGN(ProjectionPlan plan,
                       Bind("INSERT INTO t (KIND, \"id\") SELECT s.Kind, 7 FROM s"));
  EXPECT_EQ(plan.columns[0].kind, ProjectionColumn::Kind::kLiteral);
  EXPECT_EQ(plan.columns[0].literal, Bytes(7));
  EXPECT_EQ(plan.columns[1].kind, ProjectionColumn::Kind::kNull);  // user_id: not listed
  EXPECT_EQ(plan.columns[2].source_index, 2);
  EXPECT_EQ(plan.columns[3].kind, ProjectionColumn::Kind::kNull);
  EXPECT_EQ(plan.columns[1].pos, SourcePos{});

  ASSERT_OK_AND_ASSIGN(plan, Bind("INSERT INTO t SELECT id, CAST(NULL AS INT), kind, NULL FROM s"));
  EXPECT_EQ(plan.columns[1].kind, ProjectionColumn::Kind::kNull);
  EXPECT_EQ(plan.columns[3].kind, ProjectionColumn::Kind::kNull);

  ASSERT_OK_AND_ASSIGN(plan, Bind("INSERT INTO t SELECT * FROM s", "a INT, b STRING",
                                  "x BIGINT NOT NULL, y STRING"));
  EXPECT_EQ(plan.columns[0].source_index, 0);
  EXPECT_EQ(plan.columns[1].source_index, 1);
}

TEST(BinderTest, LiteralsConvertToTheTargetType) {
  ASSERT_OK_AND_ASSIGN(
      ProjectionPlan plan,
      Bind("INSERT INTO t SELECT -12, 1.5, '12.50', '2024-01-31T10:00:00+01:00', TRUE, "
           "'2024-01-31', CAST('2024-01-31 09:00' AS TIMESTAMP) FROM s",
           "a INT",
           "a INT, b DOUBLE, c DECIMAL(6,2), d TIMESTAMPTZ, e BOOLEAN, f DATE, g TIMESTAMP"));
  EXPECT_EQ(plan.columns[0].literal, std::string("\xf4\xff\xff\xff", 4));
  double d = 1.5;
  EXPECT_EQ(plan.columns[1].literal, std::string(reinterpret_cast<const char*>(&d), 8));
  EXPECT_EQ(plan.columns[2].literal, DecimalToBigEndian(1250));
  ASSERT_OK_AND_ASSIGN(int64_t nine_utc, ParseTimestamp("2024-01-31T09:00:00", false));
  EXPECT_EQ(plan.columns[3].literal, Bytes(nine_utc));
  EXPECT_EQ(plan.columns[4].literal, std::string(1, '\1'));
  int32_t days = static_cast<int32_t>(DaysFromCivil(2024, 1, 31));
  EXPECT_EQ(plan.columns[5].literal, std::string(reinterpret_cast<const char*>(&days), 4));
  EXPECT_EQ(plan.columns[6].literal, Bytes(nine_utc));
}

struct BindErrorCase {
  std::string insert;
  StatusCode code;
  std::string message;
};

TEST(BinderTest, Errors) {
  const std::vector<BindErrorCase> cases = {
      {"INSERT INTO t SELECT id, kind, kind, ts FROM s", StatusCode::kInvalidArgument,
       "line 2, column 26: column kind is STRING, target column user_id is BIGINT"},
      {"INSERT INTO t SELECT id, user_id, kind, ts FROM s", StatusCode::kInvalidArgument,
       "line 2, column 41: column ts is TIMESTAMP, target column ts is TIMESTAMPTZ (use "
       "CAST(... AS TIMESTAMPTZ))"},
      {"INSERT INTO t SELECT id, user_id, kind,\n  CAST(user_id AS TIMESTAMPTZ) FROM s",
       StatusCode::kNotImplemented,
       "line 3, column 3: CAST from INT to TIMESTAMPTZ is not supported yet"},
      {"INSERT INTO t SELECT id, CAST(user_id AS BIGINT), kind, CAST(ts AS TIMESTAMP) FROM s",
       StatusCode::kInvalidArgument,
       "line 2, column 57: CAST(ts AS TIMESTAMP) is TIMESTAMP, target column ts is TIMESTAMPTZ"},
      {"INSERT INTO t SELECT id, user_id, kind FROM s", StatusCode::kInvalidArgument,
       "line 2, column 15: the SELECT gives 3 values (after expanding *) but INSERT INTO t "
       "takes 4"},
      {"INSERT INTO t SELECT *, 1 FROM s", StatusCode::kInvalidArgument,
       "the SELECT gives 5 values"},
      {"INSERT INTO t SELECT idd, user_id, kind, ts FROM s", StatusCode::kInvalidArgument,
       "line 2, column 22: unknown column idd (source s has id, user_id, kind, ts)"},
      {"INSERT INTO t SELECT x.id, user_id, kind, ts FROM s", StatusCode::kInvalidArgument,
       "line 2, column 22: 'x.id' does not name a column of the source s"},
      {"INSERT INTO t SELECT \"ID\", user_id, kind, ts FROM s", StatusCode::kInvalidArgument,
       "line 2, column 22: unknown column ID"},
      {"INSERT INTO t SELECT NULL, user_id, kind, CAST(ts AS TIMESTAMPTZ) FROM s",
       StatusCode::kInvalidArgument,
       "line 2, column 22: NULL for target column id, which is NOT NULL"},
      {"INSERT INTO t (user_id) SELECT user_id FROM s", StatusCode::kInvalidArgument,
       "line 2, column 13: target column id is NOT NULL but not in the INSERT column list"},
      {"INSERT INTO t (id, nope) SELECT id, id FROM s", StatusCode::kInvalidArgument,
       "line 2, column 20: table t has no column nope (it has id, user_id, kind, ts)"},
      {"INSERT INTO t (id, \"ID\") SELECT id, id FROM s", StatusCode::kInvalidArgument,
       "line 2, column 20: table t has no column ID"},
      {"INSERT INTO t (id, kind) SELECT 'abc', kind FROM s", StatusCode::kInvalidArgument,
       "line 2, column 33: target column id: 'abc' is not a valid BIGINT (not a whole number)"},
      {"INSERT INTO t (id, kind) SELECT 99999999999999999999, kind FROM s",
       StatusCode::kInvalidArgument, "is not a valid BIGINT (out of range)"},
      {"INSERT INTO t (id, kind) SELECT id, 12 FROM s", StatusCode::kInvalidArgument,
       "line 2, column 37: target column kind: 12 is not a valid STRING (it is a number)"},
      {"INSERT INTO t (id, kind) SELECT id, TRUE FROM s", StatusCode::kInvalidArgument,
       "target column kind: TRUE is not a valid STRING (it is a BOOLEAN)"},
      {"INSERT INTO t (id, ts) SELECT id, '2024-13-01 00:00+02:00' FROM s",
       StatusCode::kInvalidArgument, "is not a valid TIMESTAMPTZ"},
      {"INSERT INTO t (id, user_id) SELECT id, CAST('x' AS INT) FROM s",
       StatusCode::kInvalidArgument,
       "line 2, column 40: 'x' is not a valid INT (not a whole number)"},
      {"INSERT INTO t (id, user_id) SELECT id, CAST(1.5 AS DOUBLE) FROM s",
       StatusCode::kInvalidArgument,
       "line 2, column 40: CAST(1.5 AS DOUBLE) is DOUBLE, target column user_id is BIGINT"},
  };
  for (const BindErrorCase& c : cases) {
    SCOPED_TRACE(c.insert);
    ASSERT_ERROR(Bind(c.insert), c.code, c.message);
  }
  ASSERT_ERROR(
      Bind("INSERT INTO t (id, user_id) SELECT id, CAST(NULL AS STRING) FROM s"),
      StatusCode::kInvalidArgument,
      "line 2, column 40: CAST(NULL AS STRING) is STRING, target column user_id is BIGINT");
  // Zone offsets only for TIMESTAMPTZ; decimals keep their scale.
  ASSERT_ERROR(Bind("INSERT INTO t SELECT '2024-01-01 00:00+02:00' FROM s", "a INT", "t TIMESTAMP"),
               StatusCode::kInvalidArgument, "it has a zone offset");
  ASSERT_ERROR(Bind("INSERT INTO t SELECT d FROM s", "d DECIMAL(10,2)", "d DECIMAL(12,3)"),
               StatusCode::kInvalidArgument,
               "column d is DECIMAL(10,2), target column d is DECIMAL(12,3)");
  ASSERT_ERROR(Bind("INSERT INTO t SELECT d FROM s", "d DECIMAL(10,2)", "d DECIMAL(9,2)"),
               StatusCode::kInvalidArgument, "DECIMAL(10,2), target column d is DECIMAL(9,2)");
  ASSERT_ERROR(Bind("INSERT INTO t SELECT '1.234' FROM s", "a INT", "d DECIMAL(9,2)"),
               StatusCode::kInvalidArgument, "'1.234' is not a valid DECIMAL(9,2)");
  ASSERT_ERROR(Bind("INSERT INTO t SELECT l FROM s", "l BIGINT", "i INT"),
               StatusCode::kInvalidArgument, "column l is BIGINT, target column i is INT");
  ASSERT_ERROR(Bind("INSERT INTO t SELECT l FROM s", "l ARRAY<INT>", "l ARRAY<BIGINT>"),
               StatusCode::kInvalidArgument,
               "column l is ARRAY<INT>, target column l is ARRAY<BIGINT>");
}

}  // namespace
}  // namespace sluice::sql
