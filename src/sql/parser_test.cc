#include "sql/parser.h"

#include <gtest/gtest.h>

#include "columnar/sql_schema.h"
#include "common/testing.h"
#include "iceberg/table_builder.h"

namespace sluice::sql {
namespace {

// The example script of the SQL front end's issue.
constexpr std::string_view kExample = R"sql(-- comments with -- and /* */
CREATE TABLE IF NOT EXISTS lake.events (id BIGINT NOT NULL, user_id BIGINT, kind STRING, ts TIMESTAMPTZ)
  PARTITIONED BY (day(ts), bucket(16, id)) WITH ('format-version' = '2', 'write.target-file-size-bytes' = 1048576, Write.Format.Default = parquet);
/* a block
   comment */
CREATE SOURCE events_in (id BIGINT, user_id BIGINT, kind STRING, ts TIMESTAMPTZ)
  WITH (connector = 'http') FORMAT JSON;
CREATE PIPELINE load_events WITH (commit_interval = '1s') AS
  INSERT INTO lake.events SELECT id, user_id, kind AS k, CAST(ts AS TIMESTAMPTZ), 'x', NULL FROM events_in;
)sql";

TEST(ParserTest, ExampleScript) {
  ASSERT_OK_AND_ASSIGN(Script script, ParseScript(kExample));
  ASSERT_EQ(script.statements.size(), 3u);

  EXPECT_EQ(script.statements[0].pos, (SourcePos{2, 1}));
  const auto& table = std::get<CreateTable>(script.statements[0].body);
  EXPECT_TRUE(table.if_not_exists);
  EXPECT_EQ(table.name.ToString(), "lake.events");
  ASSERT_OK_AND_ASSIGN(Schema want,
                       ParseColumnList("id BIGINT NOT NULL, user_id BIGINT, kind STRING, "
                                       "ts TIMESTAMPTZ"));
  EXPECT_TRUE(table.schema.AsStruct()->Equals(*want.AsStruct())) << table.schema.ToString();
  EXPECT_EQ(table.PartitionSpecText(), "day(ts), bucket(16, id)");
  ASSERT_EQ(table.options.items.size(), 3u);
  EXPECT_EQ(table.options.items[2].key, "write.format.default");
  EXPECT_EQ(table.options.items[2].value, "parquet");
  EXPECT_EQ(table.options.Find("format-version")->value, "2");
  EXPECT_EQ(table.options.items[1].key, "write.target-file-size-bytes");
  EXPECT_EQ(table.options.items[1].value, "1048576");
  EXPECT_EQ(table.options.items[1].kind, Option::ValueKind::kNumber);

  EXPECT_EQ(script.statements[1].pos, (SourcePos{6, 1}));
  const auto& source = std::get<CreateSource>(script.statements[1].body);
  EXPECT_FALSE(source.if_not_exists);
  EXPECT_EQ(source.name.ToString(), "events_in");
  EXPECT_EQ(source.schema.fields.size(), 4u);
  EXPECT_FALSE(source.schema.fields[0].required);
  EXPECT_EQ(source.schema.fields[3].type->id(), TypeId::kTimestampTz);
  EXPECT_EQ(source.options.ToMap(), (std::map<std::string, std::string>{{"connector", "http"}}));
  EXPECT_EQ(source.format, "json");

  EXPECT_EQ(script.statements[2].pos, (SourcePos{8, 1}));
  const auto& pipeline = std::get<CreatePipeline>(script.statements[2].body);
  EXPECT_EQ(pipeline.name.ToString(), "load_events");
  EXPECT_EQ(pipeline.options.Find("commit_interval")->value, "1s");
  const InsertSelect& insert = pipeline.insert;
  EXPECT_EQ(insert.pos, (SourcePos{9, 3}));
  EXPECT_EQ(insert.target.ToString(), "lake.events");
  EXPECT_TRUE(insert.columns.empty());
  EXPECT_EQ(insert.source.ToString(), "events_in");
  ASSERT_EQ(insert.items.size(), 6u);
  EXPECT_EQ(insert.items[0].expr.kind, Expr::Kind::kColumn);
  EXPECT_EQ(insert.items[0].expr.column.ToString(), "id");
  EXPECT_EQ(insert.items[0].pos, (SourcePos{9, 34}));
  EXPECT_EQ(insert.items[2].alias, "k");
  EXPECT_EQ(insert.items[2].expr.column.ToString(), "kind");
  const Expr& cast = insert.items[3].expr;
  EXPECT_EQ(cast.kind, Expr::Kind::kCast);
  EXPECT_EQ(cast.cast_type->id(), TypeId::kTimestampTz);
  EXPECT_EQ(cast.cast_type_text, "TIMESTAMPTZ");
  ASSERT_NE(cast.operand, nullptr);
  EXPECT_EQ(cast.operand->column.ToString(), "ts");
  EXPECT_EQ(insert.items[4].expr.kind, Expr::Kind::kLiteral);
  EXPECT_EQ(insert.items[4].expr.literal.kind, Literal::Kind::kString);
  EXPECT_EQ(insert.items[4].expr.literal.text, "x");
  EXPECT_EQ(insert.items[5].expr.literal.kind, Literal::Kind::kNull);
}

// The partition text is exactly what the Iceberg layer accepts.
TEST(ParserTest, PartitionTextIsAcceptedByIceberg) {
  ASSERT_OK_AND_ASSIGN(Script script,
                       ParseScript("create table t (ID bigint, Ts timestamptz, name string,"
                                   " loc struct<lat: double>) partitioned by (HOUR ( ts ), "
                                   "Truncate(4,NAME), id, loc.lat, void(\"ID\"))"));
  const auto& table = std::get<CreateTable>(script.statements[0].body);
  EXPECT_EQ(table.PartitionSpecText(), "hour(Ts), truncate(4, name), ID, loc.lat, void(ID)");
  EXPECT_EQ(table.partition_by[1].pos, (SourcePos{1, 111}));
  ASSERT_OK_AND_ASSIGN(auto spec,
                       iceberg::ParsePartitionSpec(table.PartitionSpecText(), table.schema));
  ASSERT_EQ(spec.fields.size(), 5u);
  EXPECT_EQ(spec.fields[0].name, "Ts_hour");
  EXPECT_EQ(spec.fields[1].name, "name_trunc");
  EXPECT_EQ(spec.fields[3].name, "loc_lat");
}

TEST(ParserTest, SourceAndPipelineForms) {
  ASSERT_OK_AND_ASSIGN(
      Script script,
      ParseScript("CREATE SOURCE IF NOT EXISTS k.in (\"Id\" INT COMMENT 'the id', m MAP<STRING, "
                  "ARRAY<INT>>) WITH (Connector = kafka, brokers = 'b1:9092,b2:9092', topic = "
                  "'ev', \"Max\" = -5) format json;\n"
                  "create pipeline if not exists p as insert into t (b, \"A\") select *, "
                  "-1.5 x, TRUE, false, cast(cast(1 as int) as bigint), k.in.\"Id\" from k.in"));
  ASSERT_EQ(script.statements.size(), 2u);
  const auto& source = std::get<CreateSource>(script.statements[0].body);
  EXPECT_TRUE(source.if_not_exists);
  EXPECT_EQ(source.schema.fields[0].name, "Id");
  EXPECT_EQ(source.schema.fields[0].doc, "the id");
  EXPECT_EQ(ToSqlType(*source.schema.fields[1].type), "MAP<STRING, ARRAY<INT>>");
  EXPECT_EQ(source.options.ToMap(), (std::map<std::string, std::string>{
                                        {"connector", "kafka"},
                                        {"brokers", "b1:9092,b2:9092"},
                                        {"topic", "ev"},
                                        {"Max", "-5"},
                                    }));
  EXPECT_EQ(source.options.Find("connector")->kind, Option::ValueKind::kIdentifier);

  const auto& pipeline = std::get<CreatePipeline>(script.statements[1].body);
  EXPECT_TRUE(pipeline.if_not_exists);
  EXPECT_TRUE(pipeline.options.items.empty());
  const InsertSelect& insert = pipeline.insert;
  ASSERT_EQ(insert.columns.size(), 2u);
  EXPECT_FALSE(insert.columns[0].quoted);
  EXPECT_TRUE(insert.columns[1].quoted);
  EXPECT_EQ(insert.columns[1].name, "A");
  ASSERT_EQ(insert.items.size(), 6u);
  EXPECT_EQ(insert.items[0].expr.kind, Expr::Kind::kStar);
  EXPECT_EQ(insert.items[1].expr.literal.text, "-1.5");
  EXPECT_EQ(insert.items[1].alias, "x");
  EXPECT_EQ(insert.items[2].expr.literal.kind, Literal::Kind::kBoolean);
  EXPECT_EQ(insert.items[2].expr.literal.text, "true");
  EXPECT_EQ(insert.items[3].expr.literal.text, "false");
  const Expr& outer = insert.items[4].expr;
  EXPECT_EQ(outer.cast_type->id(), TypeId::kLong);
  EXPECT_EQ(outer.operand->kind, Expr::Kind::kCast);
  EXPECT_EQ(outer.operand->operand->literal.text, "1");
  ASSERT_EQ(insert.items[5].expr.column.parts.size(), 3u);
  EXPECT_TRUE(insert.items[5].expr.column.parts[2].quoted);
  EXPECT_EQ(insert.source.ToString(), "k.in");
}

struct ParseErrorCase {
  std::string sql;
  StatusCode code;
  std::string message;
};

TEST(ParserTest, PrimaryKeyBecomesTheIdentifierFieldsAndIsNotNull) {
  // The table constraint (Flink's NOT ENFORCED accepted), over two columns in
  // key order, matched ignoring case.
  ASSERT_OK_AND_ASSIGN(Script script,
                       ParseScript("CREATE TABLE lake.t (tenant STRING, id BIGINT, v DOUBLE, "
                                   "PRIMARY KEY (ID, Tenant) NOT ENFORCED)"));
  const auto& t = std::get<CreateTable>(script.statements[0].body);
  EXPECT_EQ(t.schema.identifier_field_ids, (std::vector<int32_t>{2, 1}));
  EXPECT_TRUE(t.schema.fields[0].required);
  EXPECT_TRUE(t.schema.fields[1].required);
  EXPECT_FALSE(t.schema.fields[2].required);
  EXPECT_EQ(PrimaryKeyColumns(t.schema), (std::vector<std::string>{"id", "tenant"}));
  // Inline on a column; Iceberg accepts the schema.
  ASSERT_OK_AND_ASSIGN(script, ParseScript("CREATE TABLE t (id BIGINT PRIMARY KEY, v STRING)"));
  const auto& u = std::get<CreateTable>(script.statements[0].body);
  EXPECT_EQ(u.schema.identifier_field_ids, (std::vector<int32_t>{1}));
  ASSERT_OK(iceberg::NewTableMetadata(u.schema, iceberg::PartitionSpec{}, iceberg::SortOrder{},
                                      "/tmp/t", iceberg::NewTableOptions{})
                .status());

  const std::vector<ParseErrorCase> cases = {
      {"create table t (a int, primary key (b))", StatusCode::kInvalidArgument,
       "line 1, column 37: primary key column 'b' is not a column"},
      {"create table t (a double, primary key (a))", StatusCode::kInvalidArgument,
       "line 1, column 40: primary key column 'a' is DOUBLE: a key column must be a primitive "
       "other than FLOAT and DOUBLE"},
      {"create table t (a int, primary key (a, A))", StatusCode::kInvalidArgument,
       "line 1, column 37: primary key column 'a' is named twice"},
      {"create table t (a int primary key, b int, primary key (b))", StatusCode::kInvalidArgument,
       "line 1, column 43: a table has one PRIMARY KEY"},
      {"create table t (\"A\" int, primary key (\"a\"))", StatusCode::kInvalidArgument,
       "line 1, column 39: primary key column \"a\" is not a column"},
      {"create source s (a int, primary key (a)) with (connector = 'http') format json",
       StatusCode::kInvalidArgument,
       "line 1, column 25: a PRIMARY KEY is declared on a table (CREATE TABLE)"},
  };
  for (const ParseErrorCase& c : cases) {
    SCOPED_TRACE(c.sql);
    ASSERT_ERROR(ParseScript(c.sql), c.code, c.message);
  }
}

TEST(ParserTest, DeepNestingIsAnErrorNotACrash) {
  std::string deep = "create pipeline p as insert into t select ";
  for (int i = 0; i < 100000; ++i) deep += "cast(";
  ASSERT_ERROR(ParseScript(deep), StatusCode::kInvalidArgument,
               "line 1, column 368: expression nested more than 64 deep");
  std::string ok = "create pipeline p as insert into t select ";
  for (int i = 0; i < 64; ++i) ok += "cast(";
  ok += "1";
  for (int i = 0; i < 64; ++i) ok += " as int)";
  ASSERT_OK(ParseScript(ok + " from s"));
}

TEST(ParserTest, SemicolonsAndEmptyScripts) {
  ASSERT_OK_AND_ASSIGN(Script empty, ParseScript("  -- nothing\n ; ;"));
  EXPECT_TRUE(empty.statements.empty());
  ASSERT_OK_AND_ASSIGN(Script two, ParseScript("create table a (x int);; create table b (y int)"));
  EXPECT_EQ(two.statements.size(), 2u);
}

TEST(ParserTest, ErrorsNameLineColumnAndToken) {
  const std::vector<ParseErrorCase> cases = {
      {"DROP TABLE x", StatusCode::kInvalidArgument,
       "line 1, column 1: expected a statement (CREATE TABLE, CREATE SOURCE or CREATE PIPELINE), "
       "got 'DROP'"},
      {"create view v", StatusCode::kInvalidArgument,
       "line 1, column 8: expected TABLE, SOURCE or PIPELINE after CREATE, got 'view'"},
      {"create table t (a int)\ncreate table u (b int)", StatusCode::kInvalidArgument,
       "line 2, column 1: expected ';' after the statement, got 'create'"},
      {"create table t (a int) garbage", StatusCode::kInvalidArgument,
       "line 1, column 24: expected ';' after the statement, got 'garbage'"},
      {"create table t (a int, b string FROM x)", StatusCode::kInvalidArgument,
       "line 1, column 33: expected ',' or ')' after column 'b', got 'FROM'"},
      {"create table t (a int", StatusCode::kInvalidArgument,
       "line 1, column 22: expected ',' or ')' after column 'a', got end of input"},
      {"create table t ()", StatusCode::kInvalidArgument,
       "line 1, column 17: expected a column name, got ')'"},
      {"create table t (a int, A bigint)", StatusCode::kInvalidArgument,
       "line 1, column 24: duplicate column name 'A'"},
      {"create table t (a int,\n  b VARCHAR(x))", StatusCode::kInvalidArgument,
       "line 2, column 5: invalid type 'VARCHAR(x)'"},
      {"create table t (a decimal(10, 2", StatusCode::kInvalidArgument,
       "line 1, column 32: expected the end of type 'decimal', got end of input"},
      {"create table t (a , b int)", StatusCode::kInvalidArgument,
       "line 1, column 19: expected a type name, got ','"},
      {"create table t (a int not nul)", StatusCode::kInvalidArgument,
       "line 1, column 27: expected NULL after NOT, got 'nul'"},
      {"create table if exists t (a int)", StatusCode::kInvalidArgument,
       "line 1, column 17: expected NOT after IF, got 'exists'"},
      {"create table t (a int) partitioned by (months(a))", StatusCode::kInvalidArgument,
       "line 1, column 40: unknown partition transform 'months'"},
      {"create table t (a int) partitioned by (bucket(a, 16))", StatusCode::kInvalidArgument,
       "line 1, column 47: expected a whole number as the first argument of bucket(), got 'a'"},
      {"create table t (a int) partitioned by (day(b))", StatusCode::kInvalidArgument,
       "line 1, column 44: PARTITIONED BY names no column 'b'"},
      {"create table t (a int) partitioned by (\"A\")", StatusCode::kInvalidArgument,
       "line 1, column 40: PARTITIONED BY names no column 'A'"},
      {"create table t (a int) with ('k' = '1', K = '2', k = '3')", StatusCode::kInvalidArgument,
       "line 1, column 41: duplicate option 'k'"},
      {"create table t (a int) with (k '1')", StatusCode::kInvalidArgument,
       "line 1, column 32: expected '=' after option 'k', got string '1'"},
      {"create table t (a int) with (k = (1))", StatusCode::kInvalidArgument,
       "line 1, column 34: expected a value for option 'k', got '('"},
      {"create table t (a int) with ()", StatusCode::kInvalidArgument,
       "line 1, column 30: expected an option name, got ')'"},
      {"create table t (a int) with ('k' = 'v", StatusCode::kInvalidArgument,
       "line 1, column 36: unterminated string literal"},
      {"create table t (a int) /* oops", StatusCode::kInvalidArgument,
       "line 1, column 24: unterminated /* comment"},
      {"create source s (a int) format json", StatusCode::kInvalidArgument,
       "line 1, column 25: expected WITH after the source's column list, got 'format'"},
      {"create source s (a int) with (connector = 'http')", StatusCode::kInvalidArgument,
       "line 1, column 50: expected FORMAT after the source's options, got end of input"},
      {"create source s (a int) with (connector = 'http') format avro", StatusCode::kNotImplemented,
       "line 1, column 58: FORMAT avro is not supported yet"},
      {"create pipeline p insert into t select a from s", StatusCode::kInvalidArgument,
       "line 1, column 19: expected AS before the pipeline's INSERT, got 'insert'"},
      {"create pipeline p as\n  insert into t select a\n  from s\n  where",
       StatusCode::kInvalidArgument, "line 4, column 8: expected an expression, got end of input"},
      {"create pipeline p as insert into t select a from s where a between 1",
       StatusCode::kInvalidArgument,
       "line 1, column 69: expected AND between the BETWEEN bounds, got end of input"},
      {"create source s from table lake.t (a int)", StatusCode::kInvalidArgument,
       "line 1, column 35: a source FROM TABLE takes its columns from the table: only a "
       "WATERMARK may be given here"},
      {"create source s from table lake.t format json", StatusCode::kInvalidArgument,
       "line 1, column 35: a source FROM TABLE has no FORMAT"},
      {"create source s from lake.t", StatusCode::kInvalidArgument,
       "line 1, column 22: expected TABLE after FROM, got 'lake'"},
      {"create pipeline p as insert into t select a from s order by a", StatusCode::kNotImplemented,
       "line 1, column 52: ORDER BY is not supported yet"},
      {"create pipeline p as insert into t select a from tumble(s, ts) group by a",
       StatusCode::kInvalidArgument,
       "line 1, column 62: expected ',' and an INTERVAL in tumble(, got ')'"},
      {"create pipeline p as insert into t select a from table(tumble(table s, descriptor(ts), "
       "interval '1' minute) group by a",
       StatusCode::kInvalidArgument, "expected ')' to close TABLE(, got 'group'"},
      {"create pipeline p as insert into t select a from s join u", StatusCode::kNotImplemented,
       "line 1, column 52: JOIN is not supported yet"},
      {"create pipeline p as insert into t select lower(a) over () from s",
       StatusCode::kNotImplemented,
       "line 1, column 52: OVER (window functions) is not supported yet"},
      {"create pipeline p as insert into t select a + from s", StatusCode::kInvalidArgument,
       "line 1, column 47: expected an expression, got 'from'"},
      {"create pipeline p as insert into t select a b c from s", StatusCode::kInvalidArgument,
       "line 1, column 47: expected ',' or FROM after a select item, got 'c'"},
      {"create pipeline p as insert into t select (a from s", StatusCode::kInvalidArgument,
       "line 1, column 46: expected ')' to close the parenthesis, got 'from'"},
      {"create pipeline p as insert into t select case when a then 1 from s",
       StatusCode::kInvalidArgument, "line 1, column 62: expected END to close CASE, got 'from'"},
      {"create pipeline p as insert into t select a in (select 1) from s",
       StatusCode::kNotImplemented, "line 1, column 49: a subquery is not supported yet"},
      {"create pipeline p as insert into t select from s", StatusCode::kInvalidArgument,
       "line 1, column 43: expected an expression, got 'from'"},
      {"create pipeline p as insert into t select a, from s", StatusCode::kInvalidArgument,
       "line 1, column 46: expected an expression, got 'from'"},
      {"create pipeline p as insert into t select cast(a bigint) from s",
       StatusCode::kInvalidArgument,
       "line 1, column 50: expected AS after the CAST operand, got 'bigint'"},
      {"create pipeline p as insert into t select cast(a as) from s", StatusCode::kInvalidArgument,
       "line 1, column 52: expected a type name, got ')'"},
      {"create pipeline p as insert into t select cast(a as bigint from s",
       StatusCode::kInvalidArgument,
       "line 1, column 60: expected ')' after the CAST type, got 'from'"},
      {"create pipeline p as insert into t (a, A) select 1, 2 from s", StatusCode::kInvalidArgument,
       "line 1, column 40: column 'A' is listed twice"},
      {"create pipeline p as insert into t (a select 1 from s", StatusCode::kInvalidArgument,
       "line 1, column 39: expected ')' after the INSERT column list, got 'select'"},
      {"create pipeline p as insert into t values (1)", StatusCode::kInvalidArgument,
       "line 1, column 36: expected SELECT after the INSERT target, got 'values'"},
      {"create pipeline p as insert into t select a from", StatusCode::kInvalidArgument,
       "line 1, column 49: expected a source name after FROM, got end of input"},
      {"create pipeline p as insert into t select a from s;\n\n  x", StatusCode::kInvalidArgument,
       "line 3, column 3: expected a statement"},
  };
  for (const ParseErrorCase& c : cases) {
    SCOPED_TRACE(c.sql);
    ASSERT_ERROR(ParseScript(c.sql), c.code, c.message);
  }
}

}  // namespace
}  // namespace sluice::sql
