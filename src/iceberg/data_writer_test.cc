#include "iceberg/data_writer.h"

#include <algorithm>
#include <map>
#include <set>

#include "columnar/sql_schema.h"
#include "common/testing.h"
#include "iceberg/table_builder.h"
#include "io/fault_injection_file_io.h"
#include "parquet/reader.h"

namespace sluice::iceberg {
namespace {

// Many partitions under a tiny memory budget: files are closed early (least
// recently written first), every row still lands exactly once, and the
// before_create hook sees every file before it exists.
TEST(DataWriter, MemoryBudgetClosesLeastRecentlyUsedFiles) {
  auto io = MakeMemoryFileIO();
  ASSERT_OK_AND_ASSIGN(Schema schema, ParseColumnList("id BIGINT NOT NULL, payload STRING"));
  ASSERT_OK_AND_ASSIGN(PartitionSpec spec, ParsePartitionSpec("bucket(32, id)", schema));
  ASSERT_OK_AND_ASSIGN(TableMetadata md,
                       NewTableMetadata(schema, spec, SortOrder{}, "/w/t", NewTableOptions{}));
  DataWriterOptions o;
  o.memory_budget_bytes = 64 << 10;
  o.parquet.page_bytes = 4 << 10;
  std::vector<std::string> announced;
  o.before_create = [&](const std::string& path) {
    EXPECT_FALSE(io->Exists(path).ValueOr(true)) << path;
    announced.push_back(path);
    return Status::OK();
  };
  ASSERT_OK_AND_ASSIGN(auto writer, DataWriter::Make(*io, md, o));
  auto batch_schema = std::make_shared<Schema>(schema);
  int64_t next_id = 0;
  for (int round = 0; round < 20; ++round) {
    Batch b = Batch::Make(batch_schema);
    for (int i = 0; i < 2000; ++i) {
      b.columns[0].Append<int64_t>(next_id);
      b.columns[1].AppendBytes(std::string(40, static_cast<char>('a' + next_id % 26)) +
                               std::to_string(next_id));
      ++next_id;
    }
    ASSERT_OK(writer->Write(b));
  }
  EXPECT_GT(writer->files_closed_for_memory(), 0);
  ASSERT_OK_AND_ASSIGN(auto files, writer->Close());
  EXPECT_GT(files.size(), 32u);  // more files than partitions: some closed early
  EXPECT_EQ(announced.size(), files.size());
  std::set<int64_t> ids;
  int64_t rows = 0;
  for (const auto& f : files) {
    EXPECT_NE(std::find(announced.begin(), announced.end(), f.file_path), announced.end());
    ASSERT_OK_AND_ASSIGN(auto in, io->OpenInput(f.file_path));
    ASSERT_OK_AND_ASSIGN(auto reader, parquet::ParquetReader::Open(std::move(in)));
    Batch got;
    int64_t file_rows = 0;
    while (true) {
      ASSERT_OK_AND_ASSIGN(bool more, reader->Next(&got));
      if (!more) break;
      file_rows += got.num_rows();
      for (int64_t r = 0; r < got.num_rows(); ++r) ids.insert(got.columns[0].Value<int64_t>(r));
    }
    rows += file_rows;
    EXPECT_EQ(file_rows, f.record_count);
  }
  EXPECT_EQ(rows, next_id);
  EXPECT_EQ(static_cast<int64_t>(ids.size()), next_id);
}

// Placements name, for every row written, the file and position it went to,
// across partitions, rolled files and files closed early for memory.
TEST(DataWriter, PlacementsNameEachRowsFileAndPosition) {
  auto io = MakeMemoryFileIO();
  ASSERT_OK_AND_ASSIGN(Schema schema, ParseColumnList("id BIGINT NOT NULL, payload STRING"));
  ASSERT_OK_AND_ASSIGN(PartitionSpec spec, ParsePartitionSpec("bucket(8, id)", schema));
  ASSERT_OK_AND_ASSIGN(TableMetadata md,
                       NewTableMetadata(schema, spec, SortOrder{}, "/w/t", NewTableOptions{}));
  DataWriterOptions o;
  o.memory_budget_bytes = 16 << 10;  // files close early
  o.target_file_bytes = 8 << 10;     // and roll
  o.parquet.page_bytes = 2 << 10;
  ASSERT_OK_AND_ASSIGN(auto writer, DataWriter::Make(*io, md, o));
  auto batch_schema = std::make_shared<Schema>(schema);
  std::map<std::pair<int32_t, int64_t>, int64_t> id_at;  // (file, pos) -> id
  int64_t next_id = 0;
  for (int round = 0; round < 10; ++round) {
    Batch b = Batch::Make(batch_schema);
    for (int i = 0; i < 500; ++i, ++next_id) {
      b.columns[0].Append<int64_t>(next_id);
      b.columns[1].AppendBytes(std::string(30, 'x') + std::to_string(next_id));
    }
    std::vector<RowPlacement> placements;
    ASSERT_OK(writer->Write(b, &placements));
    ASSERT_EQ(placements.size(), 500u);
    for (int64_t r = 0; r < b.num_rows(); ++r) {
      const RowPlacement& p = placements[static_cast<size_t>(r)];
      EXPECT_TRUE(id_at.emplace(std::pair{p.file, p.pos}, b.columns[0].Value<int64_t>(r)).second);
    }
  }
  const std::vector<std::string> paths = writer->FilePaths();
  ASSERT_OK_AND_ASSIGN(auto files, writer->Close());
  EXPECT_GT(files.size(), 8u);
  int64_t checked = 0;
  for (int32_t i = 0; i < static_cast<int32_t>(paths.size()); ++i) {
    ASSERT_OK_AND_ASSIGN(auto in, io->OpenInput(paths[static_cast<size_t>(i)]));
    ASSERT_OK_AND_ASSIGN(auto reader, parquet::ParquetReader::Open(std::move(in)));
    Batch got;
    int64_t pos = 0;
    while (true) {
      ASSERT_OK_AND_ASSIGN(bool more, reader->Next(&got));
      if (!more) break;
      for (int64_t r = 0; r < got.num_rows(); ++r, ++pos, ++checked) {
        EXPECT_EQ(id_at.at({i, pos}), got.columns[0].Value<int64_t>(r)) << paths[i] << " " << pos;
      }
    }
  }
  EXPECT_EQ(checked, next_id);
}

// One batch over 10,000 partitions (a table partitioned by user_id) never holds
// more than max_open_files files open: each partition's file is closed when one
// more must open. (It used to open all 10,000 and fail with EMFILE.)
TEST(DataWriter, OpenFilesStayWithinTheLimitWhateverThePartitionCount) {
  auto mem = MakeMemoryFileIO();
  FaultInjectingFileIO io(mem.get());
  ASSERT_OK_AND_ASSIGN(Schema schema, ParseColumnList("user_id BIGINT NOT NULL, v STRING"));
  ASSERT_OK_AND_ASSIGN(PartitionSpec spec, ParsePartitionSpec("user_id", schema));
  ASSERT_OK_AND_ASSIGN(TableMetadata md,
                       NewTableMetadata(schema, spec, SortOrder{}, "/w/t", NewTableOptions{}));
  DataWriterOptions o;
  o.max_open_files = 64;
  ASSERT_OK_AND_ASSIGN(auto writer, DataWriter::Make(io, md, o));
  Batch b = Batch::Make(std::make_shared<Schema>(schema));
  constexpr int64_t kUsers = 10000;
  for (int64_t i = 0; i < 2 * kUsers; ++i) {
    b.columns[0].Append<int64_t>(i % kUsers);
    b.columns[1].AppendBytes("row " + std::to_string(i));
  }
  ASSERT_OK(writer->Write(b));
  ASSERT_OK_AND_ASSIGN(auto files, writer->Close());
  EXPECT_LE(io.peak_open_outputs(), 64);
  EXPECT_EQ(io.open_outputs(), 0);
  EXPECT_EQ(files.size(), static_cast<size_t>(kUsers));  // one file a partition
  EXPECT_EQ(writer->files_closed_for_open_limit(), kUsers - 64);
  int64_t rows = 0;
  std::set<std::string> partitions;
  for (const auto& f : files) {
    rows += f.record_count;
    partitions.insert(f.file_path.substr(0, f.file_path.rfind('/')));
  }
  EXPECT_EQ(rows, 2 * kUsers);
  EXPECT_EQ(partitions.size(), static_cast<size_t>(kUsers));
  DataWriterOptions none;
  none.max_open_files = 0;
  ASSERT_ERROR(DataWriter::Make(io, md, none), StatusCode::kInvalidArgument, "max_open_files");
}

TEST(DataWriter, BeforeCreateErrorStopsTheWrite) {
  auto io = MakeMemoryFileIO();
  ASSERT_OK_AND_ASSIGN(Schema schema, ParseColumnList("id BIGINT NOT NULL"));
  ASSERT_OK_AND_ASSIGN(TableMetadata md, NewTableMetadata(schema, PartitionSpec{}, SortOrder{},
                                                          "/w/t", NewTableOptions{}));
  DataWriterOptions o;
  o.before_create = [](const std::string& path) { return Status::IOError("journal full"); };
  ASSERT_OK_AND_ASSIGN(auto writer, DataWriter::Make(*io, md, o));
  Batch b = Batch::Make(std::make_shared<Schema>(schema));
  b.columns[0].Append<int64_t>(1);
  ASSERT_ERROR(writer->Write(b), StatusCode::kIOError, "journal full");
}

// Streaming commits write zstd level 1 unless a property names a level;
// batch writes and rewrites keep the table's level.
TEST(DataWriter, StreamingCommitsCompressFasterUnlessAPropertyNamesTheLevel) {
  auto level = [](std::map<std::string, std::string> props, WriteRole role) {
    auto o = DataWriterOptionsFromProperties(props, role);
    EXPECT_OK(o.status());
    return o.ok() ? o->parquet.compression_level : -1;
  };
  EXPECT_EQ(level({}, WriteRole::kStreaming), kStreamingZstdLevel);
  EXPECT_EQ(level({}, WriteRole::kBatch), 0);  // the codec's default
  std::map<std::string, std::string> table_level{{"write.parquet.compression-level", "7"}};
  EXPECT_EQ(level(table_level, WriteRole::kStreaming), 7);
  EXPECT_EQ(level(table_level, WriteRole::kBatch), 7);
  auto both = table_level;
  both["sluice.write.streaming-compression-level"] = "2";
  EXPECT_EQ(level(both, WriteRole::kStreaming), 2);
  EXPECT_EQ(level(both, WriteRole::kBatch), 7);
  EXPECT_EQ(level({{"write.parquet.compression-codec", "gzip"}}, WriteRole::kStreaming), 0);
  EXPECT_EQ(level({{"write.parquet.compression-codec", "gzip"},
                   {"sluice.write.streaming-compression-level", "1"}},
                  WriteRole::kStreaming),
            1);
  ASSERT_ERROR(DataWriterOptionsFromProperties(
                   {{"sluice.write.streaming-compression-level", "fast"}}, WriteRole::kStreaming),
               StatusCode::kInvalidArgument, "sluice.write.streaming-compression-level");
}

// A row group holds at most 1 Mi rows unless the table says otherwise.
TEST(DataWriter, RowsPerRowGroupComeFromATablePropertyAndAreCappedByDefault) {
  ASSERT_OK_AND_ASSIGN(DataWriterOptions plain, DataWriterOptionsFromProperties({}));
  EXPECT_EQ(plain.parquet.row_group_rows, int64_t{1} << 20);
  ASSERT_OK_AND_ASSIGN(DataWriterOptions set, DataWriterOptionsFromProperties(
                                                  {{"sluice.write.parquet.row-group-rows", "5000"}},
                                                  WriteRole::kStreaming));
  EXPECT_EQ(set.parquet.row_group_rows, 5000);
  ASSERT_ERROR(DataWriterOptionsFromProperties({{"sluice.write.parquet.row-group-rows", "0"}}),
               StatusCode::kInvalidArgument, "sluice.write.parquet.row-group-rows");
}

// A data page holds at most 20,000 rows (Iceberg's default) unless the table
// says otherwise.
TEST(DataWriter, RowsPerPageComeFromIcebergsPageRowLimitProperty) {
  ASSERT_OK_AND_ASSIGN(DataWriterOptions plain, DataWriterOptionsFromProperties({}));
  EXPECT_EQ(plain.parquet.page_rows, 20000);
  ASSERT_OK_AND_ASSIGN(DataWriterOptions set,
                       DataWriterOptionsFromProperties({{"write.parquet.page-row-limit", "5000"}},
                                                       WriteRole::kStreaming));
  EXPECT_EQ(set.parquet.page_rows, 5000);
  ASSERT_ERROR(DataWriterOptionsFromProperties({{"write.parquet.page-row-limit", "-1"}}),
               StatusCode::kInvalidArgument, "write.parquet.page-row-limit");
}

}  // namespace
}  // namespace sluice::iceberg
