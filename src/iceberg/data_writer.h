// DataWriter: writes rows of a table into Parquet data files, one open file
// per partition, and returns the Iceberg DataFile entries (partition values,
// metrics, split offsets) ready to be committed.
//
// Rows are routed by the table's default partition spec (transforms applied to
// the source columns). Files roll at `target_file_bytes`. Files are written
// under <table>/data/<partition path>/<uuid>-<n>.parquet and are invisible to
// readers until a commit references them; Abort() deletes every file written.
// Not thread-safe.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "iceberg/manifest.h"
#include "iceberg/table_metadata.h"
#include "io/file_io.h"
#include "parquet/page_copy.h"
#include "parquet/writer_options.h"

namespace sluice::iceberg {

struct DataWriterOptions {
  parquet::WriterOptions parquet;
  int64_t target_file_bytes = int64_t{512} << 20;  // write.target-file-size-bytes
  // Where files go; empty = <table location>/data.
  std::string data_location;
  // Starts every file name ("compact-": the files maintenance wrote).
  std::string file_name_prefix;
  // Memory held by open files (row groups being built) across partitions: past
  // this budget the least recently written files are closed early (smaller
  // files, never an out-of-memory with many partitions).
  int64_t memory_budget_bytes = int64_t{256} << 20;
  // Files open at once across partitions: opening one more first closes the least
  // recently written one (a batch over 10,000 partitions writes 10,000 small files
  // instead of failing with "too many open files"). Lowered to a quarter of the
  // process's open-file limit when that is smaller.
  int max_open_files = 256;
  // Writers holding files at once under the process's open-file limit (a
  // pipeline's lanes and its dead-letter writer): each takes its share of the
  // quarter of the limit.
  int open_files_share = 1;
  // Format v3 row lineage: rows carry two more columns after the table's,
  // _row_id and _last_updated_sequence_number (longs, null where unknown),
  // stored in the files under their reserved field ids (kRowIdFieldId), so a
  // rewrite keeps each row's lineage.
  bool row_lineage = false;
  // Called with a file's path before the file is created; an error stops the
  // write. Pipelines record staged files in their journal here.
  std::function<Status(const std::string& path)> before_create;
};

// Where a written row went: its file (an index into DataWriter::FilePaths())
// and its position in that file.
struct RowPlacement {
  int32_t file = 0;
  int64_t pos = 0;
};

class DataWriter {
 public:
  static Result<std::unique_ptr<DataWriter>> Make(FileIO& io, const TableMetadata& table,
                                                  DataWriterOptions options = {});
  ~DataWriter();

  // Rows of `batch` must follow the table's current schema (by position),
  // then, with row_lineage, _row_id and _last_updated_sequence_number.
  Status Write(const Batch& batch);
  // The same, and sets `placements` (resized to the batch's rows) to where each
  // row went: compaction carries deletes that arrive meanwhile onto its output.
  Status Write(const Batch& batch, std::vector<RowPlacement>* placements);
  // Appends `num_rows` rows of partition `partition` (of the default spec:
  // the rows are not routed) given leaf by leaf, as
  // parquet::ParquetWriter::AppendRows takes them: copied pages of other
  // files for some leaves, values in `values` for the rest. Compaction
  // merges files this way without decoding what it need not (page_copy.h).
  // `placements` as Write's.
  Status AppendRows(const PartitionValues& partition, int64_t num_rows, const Batch& values,
                    const std::vector<parquet::CopiedPages*>& copied,
                    std::vector<RowPlacement>* placements);
  // Closes all open files and returns every file written.
  Result<std::vector<DataFile>> Close();
  // Deletes every file written so far (after an error, or when not committing).
  void Abort();

  // Paths of files closed or still open (for journals and cleanup).
  std::vector<std::string> FilePaths() const;
  // Files closed early because open files passed the memory budget, or to stay
  // within max_open_files.
  int64_t files_closed_for_memory() const;
  int64_t files_closed_for_open_limit() const;

 private:
  struct Impl;
  explicit DataWriter(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Iceberg's human-readable partition path: "ts_day=2024-01-31/id_bucket=3".
std::string PartitionPath(const PartitionSpec& spec, const TypePtr& partition_type,
                          const PartitionValues& values);

// Who writes: a pipeline's frequent commits, or anything else (compaction, a
// batch write, a dead-letter replay).
enum class WriteRole { kBatch, kStreaming };

// The zstd level of streaming commits when no property names one: a pipeline
// writes many small files that compaction rewrites at the table's level, so
// it trades bytes for speed (bench/README.md: about 25 % faster q0, 22 % more
// bytes than level 3).
inline constexpr int kStreamingZstdLevel = 1;

// The parquet writer options from table properties (write.parquet.compression-codec,
// write.parquet.compression-level, write.parquet.row-group-size-bytes,
// sluice.write.parquet.row-group-rows, write.parquet.page-size-bytes,
// write.parquet.page-row-limit, write.target-file-size-bytes). For kStreaming
// the level is sluice.write.streaming-compression-level when set, else
// write.parquet.compression-level when set, else kStreamingZstdLevel for zstd
// (the codec's default for the others).
Result<DataWriterOptions> DataWriterOptionsFromProperties(
    const std::map<std::string, std::string>& properties, WriteRole role = WriteRole::kBatch);

}  // namespace sluice::iceberg
