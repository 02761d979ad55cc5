// WritePositionDeletes: a data file with many deletes gets a delete file of
// its own, which readers read without its path column; the rest share one
// per partition.
#include "iceberg/delete_writer.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "columnar/sql_schema.h"
#include "common/testing.h"
#include "iceberg/scan.h"
#include "iceberg/scan_internal.h"
#include "iceberg/table_builder.h"

namespace sluice::iceberg {
namespace {

// An unpartitioned table at /w/t.
Result<TableMetadata> UnpartitionedTable() {
  ASSIGN_OR_RETURN(Schema schema, ParseColumnList("id BIGINT NOT NULL"));
  return NewTableMetadata(schema, PartitionSpec{}, SortOrder{}, "/w/t", {});
}

TEST(DeleteWriterTest, ADataFileWithManyDeletesGetsADeleteFileOfItsOwn) {
  auto io = MakeMemoryFileIO();
  ASSERT_OK_AND_ASSIGN(TableMetadata md, UnpartitionedTable());
  std::map<std::string, PositionSet> positions;
  std::map<std::string, DataFile> files;
  for (const std::string path :
       {"/w/t/data/big.parquet", "/w/t/data/a.parquet", "/w/t/data/b.parquet"}) {
    files[path].file_path = path;
  }
  std::vector<int64_t> big_positions;
  for (int64_t p = 0; p < static_cast<int64_t>(kOwnFileRows) + 5; ++p) {
    big_positions.push_back(p * 2);
  }
  positions["/w/t/data/big.parquet"] = PositionSet(big_positions);
  positions["/w/t/data/a.parquet"] = {3, 1};
  positions["/w/t/data/b.parquet"] = {7};
  ASSERT_OK_AND_ASSIGN(std::vector<DataFile> out, WritePositionDeletes(*io, md, positions, files));
  ASSERT_EQ(out.size(), 2u);
  const DataFile* own = nullptr;
  const DataFile* shared = nullptr;
  for (const DataFile& d : out) (d.referenced_data_file ? own : shared) = &d;
  ASSERT_NE(own, nullptr);
  ASSERT_NE(shared, nullptr);
  EXPECT_EQ(*own->referenced_data_file, "/w/t/data/big.parquet");
  EXPECT_EQ(own->record_count, static_cast<int64_t>(kOwnFileRows) + 5);
  EXPECT_EQ(shared->record_count, 3);
  // Read as a reader reads them: the own file's positions (path column
  // unread) under its data file, the shared file's by path.
  ASSERT_OK_AND_ASSIGN(auto own_read, internal::ReadPositionDeleteFile(*io, own->file_path, *own));
  ASSERT_EQ(own_read.size(), 1u);
  const std::vector<int64_t>& big = own_read.at("/w/t/data/big.parquet");
  EXPECT_EQ(big.size(), kOwnFileRows + 5);
  EXPECT_EQ(big[1], 2);
  ASSERT_OK_AND_ASSIGN(auto shared_read,
                       internal::ReadPositionDeleteFile(*io, shared->file_path, *shared));
  EXPECT_EQ(shared_read.at("/w/t/data/a.parquet"), (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(shared_read.at("/w/t/data/b.parquet"), (std::vector<int64_t>{7}));
  // Without the entry's reference, the path column says the same.
  DataFile unreferenced = *own;
  unreferenced.referenced_data_file.reset();
  ASSERT_OK_AND_ASSIGN(auto by_path,
                       internal::ReadPositionDeleteFile(*io, own->file_path, unreferenced));
  EXPECT_EQ(by_path, own_read);
}

TEST(DeleteWriterTest, DeleteFilesOfMoreRowsThanABatchHoldEveryPosition) {
  // 150,000 deletes of one data file (its own file), and 1,000 each of 80
  // files (80,000 in one shared file): both built in several batches.
  auto io = MakeMemoryFileIO();
  ASSERT_OK_AND_ASSIGN(TableMetadata md, UnpartitionedTable());
  std::map<std::string, std::vector<int64_t>> drawn;
  for (int64_t p = 0; p < 150000; ++p) drawn["/w/t/data/big.parquet"].push_back(p * 3);
  for (int f = 0; f < 80; ++f) {
    auto& pos = drawn[fmt::format("/w/t/data/f{:02d}.parquet", f)];
    for (int64_t p = 0; p < 1000; ++p) pos.push_back(p + f);
  }
  std::map<std::string, PositionSet> positions;
  std::map<std::string, DataFile> files;
  for (auto& [path, pos] : drawn) positions[path] = PositionSet(std::move(pos));
  for (const auto& [path, pos] : positions) files[path].file_path = path;
  ASSERT_OK_AND_ASSIGN(std::vector<DataFile> out, WritePositionDeletes(*io, md, positions, files));
  ASSERT_EQ(out.size(), 2u);
  std::map<std::string, PositionSet> read;
  for (const DataFile& d : out) {
    EXPECT_EQ(d.record_count, d.referenced_data_file ? 150000 : 80000);
    ASSERT_OK_AND_ASSIGN(auto got, internal::ReadPositionDeleteFile(*io, d.file_path, d));
    for (const auto& [path, pos] : got) read[path].Add(PositionSet(pos));
  }
  EXPECT_EQ(read, positions);
}

}  // namespace
}  // namespace sluice::iceberg
