// TableScan: reads the rows of an Iceberg table snapshot.
//
// Planning: the snapshot's manifest list → manifests pruned by partition
// summaries → entries pruned by partition values and column bounds → data
// files, each with the delete files that apply to it (position deletes with a
// data sequence number ≥ the file's, equality deletes with a greater one, in
// the same partition or global). Reading: each data file is read by field id
// with the projection plus the filter's columns; columns a file lacks are
// null (or the identity partition value); promoted types are widened;
// deletes are applied; the filter is evaluated on the rows (residual); the
// output has the projected columns of the scan's schema.
//
// Time travel: a snapshot id, or the snapshot current at a time (snapshot
// log); the snapshot's own schema is used. Location remapping rewrites path
// prefixes so tables written elsewhere (s3://bucket/...) read from a copy.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "iceberg/expression.h"
#include "iceberg/manifest.h"
#include "iceberg/positions.h"
#include "iceberg/table_metadata.h"
#include "io/file_io.h"

namespace sluice::iceberg {

struct FileScanTask;

struct ScanOptions {
  std::optional<int64_t> snapshot_id;
  std::optional<int64_t> as_of_ms;                          // the snapshot current at this time
  std::vector<std::string> columns;                         // top-level names; empty = all
  std::string filter;                                       // ParseFilter text; empty = all rows
  std::vector<std::pair<std::string, std::string>> remaps;  // location prefix FROM → TO
  int64_t limit = -1;                                       // rows; -1 = all
  // Adds the metadata columns _file (string, id 2147483646) and _pos (long,
  // id 2147483645): each row's data file and position in it.
  bool with_positions = false;
  // Adds only _pos: a reader that takes the file from current_file() (a
  // batch holds rows of one file) is spared a path a row.
  bool with_pos = false;
  // Adds the row-lineage columns (format v3) _row_id (long, kRowIdFieldId)
  // and _last_updated_sequence_number (long), last: the values a data file
  // stores for the row, else the file's first_row_id + position (null when
  // the file has none) and its data sequence number.
  bool with_row_lineage = false;
  // Only the data files the snapshot itself added (what an append snapshot
  // appended), without deletes: a streaming read of the table's appends
  // (sources/table_source.h).
  bool only_added = false;
  // When not empty: only these data files (by path as the manifests name
  // them), with their deletes (compaction reads the files it rewrites).
  std::set<std::string> only_files;
  // When set: Next reads only the planned tasks this accepts (tasks() still
  // lists every one). A delete planned again after a conflict reads only the
  // files that changed since its last plan (catalog/row_delete.h).
  std::function<bool(const FileScanTask&)> read_task;
  // Planned tasks' files carry their column statistics (sizes, counts,
  // bounds). Off by default: planning costs less without them. A scan with a
  // filter reads them regardless, to prune by them.
  bool with_column_stats = false;
  // Threads reading manifests while planning (at most one per manifest);
  // 0 = one per core, up to 8.
  int planning_threads = 0;
};

constexpr int32_t kFilePathFieldId = 2147483646;
constexpr int32_t kPosFieldId = 2147483645;

// A data file to read, with the delete files that apply to it. `file`'s column
// statistics are empty unless the scan filtered or asked for them
// (ScanOptions::with_column_stats).
struct FileScanTask {
  DataFile file;
  int64_t data_sequence_number = 0;
  std::vector<DataFile> position_deletes;
  // v3: replaces position deletes. (Held out of line, a copy per task: most
  // tasks have none, and a plan holds a task per data file.)
  std::shared_ptr<const DataFile> deletion_vector;
  std::vector<DataFile> equality_deletes;
};

struct ScanStats {
  int manifests_total = 0, manifests_scanned = 0;
  int files_total = 0, files_scanned = 0;
  int64_t rows_read = 0, rows_deleted = 0, rows_returned = 0;
};

class TableScan {
 public:
  static Result<std::unique_ptr<TableScan>> Make(FileIO& io,
                                                 std::shared_ptr<const TableMetadata> table,
                                                 ScanOptions options);
  ~TableScan();

  // The schema of the batches Next() returns.
  const std::shared_ptr<const Schema>& schema() const;
  // The snapshot being read (nullopt for a table without snapshots).
  std::optional<int64_t> snapshot_id() const;

  // Plans the files the scan reads, with the delete files of each (once:
  // later calls, and Next, use the same plan); then tasks() holds them, for
  // as long as the scan lives.
  Status Plan();
  const std::vector<FileScanTask>& tasks() const;
  // Next batch of matching rows (possibly empty batches are skipped); false at
  // the end. A batch holds rows of one data file.
  Result<bool> Next(Batch* out);
  // The data file (as the manifests name it) of the last batch Next returned.
  const std::string& current_file() const;
  const ScanStats& stats() const;

 private:
  struct Impl;
  explicit TableScan(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Position delete files shared by the tasks that read them, each read once:
// one delete file covers a partition's data files (and, in a streaming upsert
// table, every file a checkpoint touched). Read reads a file at its first
// use. A cache that keeps all keeps every file it read while it lives (for a
// bounded piece of work); else Use counts a task that will read its deletes,
// and a file is forgotten after its last counted use (a file no counted task
// names is read and not kept). One thread.
class PositionDeleteCache {
 public:
  using ByFile = std::unordered_map<std::string, std::vector<int64_t>>;
  explicit PositionDeleteCache(bool keep_all = false) : keep_all_(keep_all) {}
  void Use(const FileScanTask& task);
  // A counted task that will not read its deletes after all (a scan's
  // read_task passed it over): its files are forgotten after their last
  // counted use as if it had read them.
  void Skip(const FileScanTask& task);
  // The positions delete file `d` (read from `location`) holds, by data
  // file, each list sorted.
  Result<std::shared_ptr<const ByFile>> Read(FileIO& io, const std::string& location,
                                             const DataFile& d);

 private:
  bool keep_all_;
  std::unordered_map<std::string, std::shared_ptr<const ByFile>> files_;
  std::unordered_map<std::string, int> uses_;
};

// The positions deleted from a task's data file by its deletion vector or
// position delete files (equality deletes not included); its delete files
// from `cache` when given.
Result<PositionSet> ReadDeletedPositions(
    FileIO& io, const FileScanTask& task,
    const std::vector<std::pair<std::string, std::string>>& remaps = {},
    PositionDeleteCache* cache = nullptr);

// The positions one position delete file (at `location`) deletes, by data
// file path, each list sorted.
Result<std::unordered_map<std::string, std::vector<int64_t>>> ReadPositionDeletes(
    FileIO& io, const std::string& location);

// Applies the first matching FROM→TO prefix rewrite.
std::string RemapLocation(const std::string& location,
                          const std::vector<std::pair<std::string, std::string>>& remaps);

}  // namespace sluice::iceberg
