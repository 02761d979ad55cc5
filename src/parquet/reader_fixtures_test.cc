// Reads every Parquet file under ../shared/fixtures (written by Spark, Java
// Iceberg, pyiceberg, DuckDB) and checks row counts against the footer.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

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

}  // namespace
}  // namespace sluice::parquet
