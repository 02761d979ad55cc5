// Reads every Parquet file under ../shared/fixtures (written by Spark, Java
// Iceberg, pyiceberg, DuckDB) and checks row counts against the footer.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "columnar/json_writer.h"
#include "common/testing.h"
#include "io/file_io.h"
#include "parquet/reader.h"

namespace sluice::parquet {
namespace {

std::vector<std::string> FixtureFiles() {
  std::vector<std::string> files;
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator("../shared/fixtures", ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    if (it->is_regular_file() && it->path().extension() == ".parquet") {
      files.push_back(it->path().string());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

TEST(ReaderFixturesTest, ReadsEveryFixtureFile) {
  auto files = FixtureFiles();
  ASSERT_GE(files.size(), 100u) << "fixtures not found from " << std::filesystem::current_path();
  auto io = MakeLocalFileIO();
  int64_t total_rows = 0;
  for (const std::string& path : files) {
    SCOPED_TRACE(path);
    ASSERT_OK_AND_ASSIGN(auto in, io->OpenInput(path));
    ASSERT_OK_AND_ASSIGN(auto reader, ParquetReader::Open(std::move(in)));
    int64_t rows = 0;
    Batch batch;
    while (true) {
      ASSERT_OK_AND_ASSIGN(bool more, reader->Next(&batch));
      if (!more) break;
      ASSERT_EQ(batch.columns.size(), reader->schema().fields.size());
      for (const Column& c : batch.columns) ASSERT_EQ(c.size(), batch.num_rows());
      rows += batch.num_rows();
    }
    EXPECT_EQ(rows, reader->metadata().num_rows);
    total_rows += rows;
  }
  EXPECT_GT(total_rows, 0);
}

std::string FirstRowJson(const std::string& path) {
  auto io = MakeLocalFileIO();
  auto in = io->OpenInput(path);
  if (!in.ok()) return in.status().ToString();
  auto reader = ParquetReader::Open(std::move(*in));
  if (!reader.ok()) return reader.status().ToString();
  Batch b;
  auto more = (*reader)->Next(&b);
  if (!more.ok()) return more.status().ToString();
  std::string line;
  if (*more && b.num_rows() > 0) AppendJsonRow(b, 0, &line);
  return line;
}

// First rows as DuckDB 1.5.6 reads them (read_parquet via @duckdb/node-api,
// TimeZone=UTC), written here in sluice's JSON forms. DuckDB renders the same
// values differently: 64-bit ints as strings, floats widened to double
// (23.343420028686523), maps as key/value lists, blobs as \x escapes,
// timestamps with a space and "+00".
TEST(ReaderFixturesTest, ValuesMatchDuckDb) {
  const std::string dir = "../shared/fixtures/iceberg/duckdb-iceberg/";
  // parquet-mr 1.12.3, gzip, dictionary pages, decimals in INT64.
  EXPECT_EQ(FirstRowJson(dir + "iceberg/lineitem_iceberg_gz/data/"
                               "00000-2-371a340c-ded5-4e85-aa49-9c788d6f21cd-00001.parquet"),
            R"({"l_orderkey":1,"l_partkey":1552,"l_suppkey":93,"l_linenumber":1,)"
            R"("l_quantity":17,"l_extendedprice":"24710.35","l_discount":"0.04","l_tax":"0.02",)"
            R"("l_returnflag":"N","l_linestatus":"O","l_shipdate":"1996-03-13",)"
            R"("l_commitdate":"1996-02-12","l_receiptdate":"1996-03-22",)"
            R"("l_shipinstruct":"DELIVER IN PERSON","l_shipmode":"TRUCK",)"
            R"("l_comment":"egular courts above the"})");
  // Arrow 19: map, list and struct columns.
  EXPECT_EQ(FirstRowJson(dir + "column_mapping/warehouse/example/mock_data.parquet"),
            R"({"id":1,"name":"Alice","age":25,"attributes":{"height":"5.5","weight":"130"},)"
            R"("scores":[85,90],"profile":{"email":"alice@example.com","verified":true}})");
  // Arrow 19: every Iceberg primitive, including dates before year 1000.
  EXPECT_EQ(FirstRowJson(dir + "add_columns_with_defaults/default.db/add_columns_with_defaults/"
                               "data/00000-0-f1823874-113e-405c-b412-f75145620823.parquet"),
            R"({"col1":"test","col_boolean":false,"col_integer":453243,)"
            R"("col_long":328725092345834,"col_float":23.34342,"col_double":23.343424523423433,)"
            R"("col_decimal":"3423434.23","col_date":"0011-03-05","col_time":"12:06:45.000000",)"
            R"("col_timestamp":"0011-03-05T12:06:45.000000",)"
            R"("col_timestamptz":"2023-05-15T14:30:45.000000+00:00","col_string":"World",)"
            R"("col_uuid":"020d4fc7acd645acb2167873f4038e1f","col_fixed":"8000800080",)"
            R"("col_binary":"800080"})");
}

}  // namespace
}  // namespace sluice::parquet
