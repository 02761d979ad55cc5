#include "iceberg/delete_writer.h"

#include <tuple>

#include "common/uuid.h"
#include "parquet/writer.h"

namespace sluice::iceberg {
namespace {
// Rows of a position delete file built in memory at once.
constexpr int64_t kBatchRows = 64 * 1024;
}  // namespace

Schema PositionDeleteSchema() {
  Schema s;
  s.fields = {Field{kDeleteFilePathFieldId, "file_path", DataType::String(), true, ""},
              Field{kDeletePosFieldId, "pos", DataType::Long(), true, ""}};
  return s;
}

Result<std::vector<DataFile>> WritePositionDeletes(
    FileIO& io, const TableMetadata& table, const std::map<std::string, PositionSet>& positions,
    const std::map<std::string, DataFile>& data_files,
    const std::function<Status(const std::string& path)>& before_create) {
  // One delete file per group: a data file with at least kOwnFileRows
  // deletes has one of its own, the others of a (spec, partition) share one.
  std::map<std::tuple<int32_t, PartitionValues, std::string>, std::vector<std::string>> groups;
  for (const auto& [path, pos] : positions) {
    auto it = data_files.find(path);
    if (it == data_files.end()) return Status::Internal("no data file entry for {}", path);
    std::string own = pos.size() >= kOwnFileRows ? path : "";
    groups[{it->second.spec_id, it->second.partition, own}].push_back(path);
  }
  auto schema = std::make_shared<const Schema>(PositionDeleteSchema());
  std::vector<DataFile> out;
  std::vector<std::string> written;
  auto cleanup = [&](const Status& st) {
    for (const auto& p : written) (void)io.Delete(p);
    return st;
  };
  const std::string uuid = NewUuid();
  for (const auto& [key, paths] : groups) {
    std::string path =
        fmt::format("{}/data/{:05d}-{}-deletes.parquet", table.location, out.size(), uuid);
    if (before_create) {
      if (Status st = before_create(path); !st.ok()) return cleanup(st);
    }
    auto file = io.OpenOutput(path);
    if (!file.ok()) return cleanup(file.status());
    auto w = parquet::ParquetWriter::Open(std::move(*file), *schema);
    if (!w.ok()) return cleanup(w.status());
    written.push_back(path);
    // (In batches of kBatchRows: a batch of every row would repeat a data
    // file's path for each of millions of deleted rows.)
    Batch b = Batch::Make(schema);
    Status st;
    auto write = [&] {
      if (st.ok() && b.num_rows() > 0) st = (*w)->Write(b);
      for (Column& c : b.columns) c.Clear();
    };
    for (const auto& p : paths) {  // std::map order: sorted by path
      for (int64_t pos : positions.at(p)) {
        b.columns[0].AppendBytes(p);
        b.columns[1].Append<int64_t>(pos);
        if (b.num_rows() == kBatchRows) write();
      }
    }
    write();
    if (!st.ok()) return cleanup(st);
    auto metrics = (*w)->Close();
    if (!metrics.ok()) return cleanup(metrics.status());
    DataFile d;
    d.content = FileContent::kPositionDeletes;
    d.file_path = path;
    d.spec_id = std::get<0>(key);
    d.partition = std::get<1>(key);
    d.record_count = metrics->record_count;
    d.file_size_in_bytes = metrics->file_size;
    d.split_offsets = metrics->split_offsets;
    if (paths.size() == 1) d.referenced_data_file = paths[0];
    for (const auto& [id, fm] : metrics->fields) {
      d.column_sizes[id] = fm.column_size;
      d.value_counts[id] = fm.value_count;
      d.null_value_counts[id] = fm.null_count;
      if (fm.lower_bound) d.lower_bounds[id] = *fm.lower_bound;
      if (fm.upper_bound) d.upper_bounds[id] = *fm.upper_bound;
    }
    out.push_back(std::move(d));
  }
  return out;
}

}  // namespace sluice::iceberg
