#include "pipeline/decoded_columns.h"

#include <gtest/gtest.h>

#include "columnar/json_reader.h"
#include "columnar/sql_schema.h"
#include "common/testing.h"

namespace sluice::pipeline {
namespace {

std::shared_ptr<const Schema> Source() {
  auto s =
      ParseColumnList("id BIGINT NOT NULL, price BIGINT NOT NULL, note STRING, ts TIMESTAMPTZ");
  EXPECT_OK(s.status());
  return std::make_shared<Schema>(*s);
}

// Decodes `lines` as `d` decodes, widened to the source's schema.
Result<Batch> Decode(const DecodedColumns& d, const std::vector<std::string>& lines) {
  ASSIGN_OR_RETURN(auto decoder, JsonDecoder::Make(d.decoded()));
  Batch rows = Batch::Make(d.decoded());
  for (size_t i = 0; i < lines.size(); ++i) {
    RETURN_IF_ERROR(decoder->DecodeLine(lines[i], static_cast<int64_t>(i + 1), &rows));
  }
  return d.Widen(std::move(rows));
}

TEST(DecodedColumnsTest, ColumnsNotReadAreNullAndTheirValuesNeitherParsedNorChecked) {
  auto source = Source();
  DecodedColumns d(source, {true, false, false, true});
  ASSERT_EQ(d.decoded()->fields.size(), 2u);
  EXPECT_EQ(d.decoded()->fields[1].name, "ts");
  // A wrong type, a repeated key and a missing required field, all in columns
  // not read.
  ASSERT_OK_AND_ASSIGN(Batch rows,
                       Decode(d, {R"({"id":1,"price":"abc","note":7,"note":[1],"ts":1000000})",
                                  R"({"ts":2000000,"id":2,"note":"x"})"}));
  EXPECT_EQ(rows.schema, source);
  ASSERT_EQ(rows.columns.size(), 4u);
  ASSERT_EQ(rows.num_rows(), 2);
  for (int c : {1, 2}) {
    ASSERT_EQ(rows.columns[c].size(), 2) << c;
    EXPECT_TRUE(rows.columns[c].IsNull(0)) << c;
    EXPECT_TRUE(rows.columns[c].IsNull(1)) << c;
  }
  EXPECT_EQ(rows.columns[0].Value<int64_t>(1), 2);
  EXPECT_EQ(rows.columns[3].Value<int64_t>(0), 1000000);
  // The columns read are checked as always.
  EXPECT_FALSE(Decode(d, {R"({"id":"3","ts":1})"}).ok());
  EXPECT_FALSE(Decode(d, {R"({"ts":1})"}).ok());
}

TEST(DecodedColumnsTest, EveryColumnReadDecodesWithTheSourcesSchema) {
  auto source = Source();
  for (const std::vector<bool>& read :
       {std::vector<bool>{}, std::vector<bool>{true, true, true, true}}) {
    DecodedColumns d(source, read);
    EXPECT_EQ(d.decoded(), source);
    EXPECT_FALSE(Decode(d, {R"({"id":1,"price":"abc","ts":1})"}).ok()) << "price is read";
  }
}

TEST(DecodedColumnsTest, APipelineThatReadsNoColumnStillCountsItsRows) {
  DecodedColumns d(Source(), {false, false, false, false});
  ASSERT_EQ(d.decoded()->fields.size(), 1u);
  ASSERT_OK_AND_ASSIGN(Batch rows, Decode(d, {R"({"id":1})", R"({"id":2,"note":5})"}));
  EXPECT_EQ(rows.num_rows(), 2);
  EXPECT_EQ(rows.columns[3].size(), 2);
}

// Struct, list and map columns not read are NULL too, with the children a
// reader walks: a struct's children one NULL a row, a list's and a map's
// offsets all at the start of an empty child.
TEST(DecodedColumnsTest, NestedColumnsNotReadAreNullWithConsistentChildren) {
  auto parsed = ParseColumnList(
      "id BIGINT NOT NULL, pos STRUCT<x DOUBLE, y DOUBLE>, tags ARRAY<STRING>, "
      "attrs MAP<STRING, BIGINT>");
  ASSERT_OK(parsed.status());
  auto source = std::make_shared<Schema>(*parsed);
  DecodedColumns d(source, {true, false, false, false});
  ASSERT_OK_AND_ASSIGN(
      Batch rows, Decode(d, {R"({"id":1,"pos":{"x":1.5,"y":2},"tags":["a","b"],"attrs":{"k":1}})",
                             R"({"id":2,"pos":"not a struct","tags":7})", R"({"id":3})"}));
  ASSERT_EQ(rows.num_rows(), 3);
  EXPECT_EQ(rows.columns[0].Value<int64_t>(2), 3);
  const Column& pos = rows.columns[1];
  const Column& tags = rows.columns[2];
  const Column& attrs = rows.columns[3];
  for (const Column* c : {&pos, &tags, &attrs}) {
    ASSERT_EQ(c->size(), 3);
    EXPECT_EQ(c->null_count(), 3);
  }
  ASSERT_EQ(pos.num_children(), 2);
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(pos.child(i).size(), 3);
    EXPECT_EQ(pos.child(i).null_count(), 3);
  }
  for (const Column* c : {&tags, &attrs}) {
    EXPECT_EQ(c->child(0).size(), 0);
    for (int64_t r = 0; r < 3; ++r) EXPECT_EQ(c->ListBegin(r), c->ListEnd(r));
  }
}

}  // namespace
}  // namespace sluice::pipeline
