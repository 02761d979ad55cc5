// Reading position delete files and deletion vectors: the positions they
// delete, per data file (scan.h, scan_internal.h).
#include <algorithm>

#include "columnar/column_ops.h"
#include "iceberg/delete_writer.h"
#include "iceberg/deletion_vector.h"
#include "iceberg/scan.h"
#include "iceberg/scan_internal.h"
#include "parquet/reader.h"

namespace sluice::iceberg {

namespace internal {

DeleteFileIndex::DeleteFileIndex(std::vector<const ManifestEntry*> deletes,
                                 const std::function<bool(const ManifestEntry&)>& global)
    : deletes_(std::move(deletes)) {
  for (size_t i = 0; i < deletes_.size(); ++i) {
    const DataFile& d = deletes_[i]->file;
    if (d.content == FileContent::kPositionDeletes && d.referenced_data_file) {
      by_file_[*d.referenced_data_file].push_back(i);
    } else if (d.content == FileContent::kEqualityDeletes && global(*deletes_[i])) {
      global_.push_back(i);
    } else {
      by_partition_[{d.spec_id, d.partition}].push_back(i);
    }
  }
}

std::vector<const ManifestEntry*> DeleteFileIndex::CandidatesFor(const DataFile& file) const {
  std::vector<size_t> at = global_;
  int lists = at.empty() ? 0 : 1;
  auto add = [&](const std::vector<size_t>& list) {
    at.insert(at.end(), list.begin(), list.end());
    ++lists;
  };
  if (auto it = by_file_.find(file.file_path); it != by_file_.end()) add(it->second);
  if (auto it = by_partition_.find({file.spec_id, file.partition}); it != by_partition_.end()) {
    add(it->second);
  }
  // (Each list is in order already: one alone needs no sort. An upsert
  // table's files all share their partition's long list.)
  if (lists > 1) std::sort(at.begin(), at.end());
  std::vector<const ManifestEntry*> out(at.size());
  for (size_t i = 0; i < at.size(); ++i) out[i] = deletes_[at[i]];
  return out;
}

// (Each list comes sorted when the file follows the spec's order: by path,
// then position.)
Result<PositionsByFile> ReadPositionDeleteFile(FileIO& io, const std::string& location,
                                               const DataFile& d) {
  // (the file's own name in errors: `location` may be remapped)
  const std::string& name = d.file_path;
  ASSIGN_OR_RETURN(auto in, io.OpenInput(location));
  parquet::ReaderOptions ro;
  const bool one_file = d.referenced_data_file.has_value();
  ro.field_ids = {kDeletePosFieldId};
  if (!one_file) ro.field_ids.insert(ro.field_ids.begin(), kDeleteFilePathFieldId);
  ASSIGN_OR_RETURN(auto r, parquet::ParquetReader::Open(std::move(in), ro));
  PositionsByFile out;
  Batch b;
  std::string last_path;
  std::vector<int64_t>* last = one_file ? &out[*d.referenced_data_file] : nullptr;
  while (true) {
    ASSIGN_OR_RETURN(bool more, r->Next(&b));
    if (!more) break;
    const Column* paths = one_file ? nullptr : FindColumnById(b, kDeleteFilePathFieldId);
    const Column* pos = FindColumnById(b, kDeletePosFieldId);
    if ((!one_file && !paths) || !pos) {
      return Status::Corruption("position delete file {} lacks file_path/pos", name);
    }
    if (one_file) {
      const int64_t* p = pos->data<int64_t>();
      last->insert(last->end(), p, p + b.num_rows());
      continue;
    }
    for (int64_t i = 0; i < b.num_rows(); ++i) {
      std::string_view path = paths->GetBytes(i);
      if (last == nullptr || path != last_path) {
        last_path.assign(path);
        last = &out[last_path];
      }
      last->push_back(pos->Value<int64_t>(i));
    }
  }
  for (auto& [path, positions] : out) {
    if (!std::is_sorted(positions.begin(), positions.end())) {
      std::sort(positions.begin(), positions.end());
    }
  }
  return out;
}

}  // namespace internal

Result<std::unordered_map<std::string, std::vector<int64_t>>> ReadPositionDeletes(
    FileIO& io, const std::string& location) {
  DataFile d;
  d.file_path = location;
  return internal::ReadPositionDeleteFile(io, location, d);
}

void PositionDeleteCache::Use(const FileScanTask& task) {
  if (task.deletion_vector) return;  // (a DV replaces the position deletes: they are not read)
  for (const DataFile& d : task.position_deletes) ++uses_[d.file_path];
}

void PositionDeleteCache::Skip(const FileScanTask& task) {
  if (task.deletion_vector || keep_all_) return;
  for (const DataFile& d : task.position_deletes) {
    auto it = uses_.find(d.file_path);
    if (it == uses_.end() || --it->second > 0) continue;
    uses_.erase(it);
    files_.erase(d.file_path);
  }
}

Result<std::shared_ptr<const PositionDeleteCache::ByFile>> PositionDeleteCache::Read(
    FileIO& io, const std::string& location, const DataFile& d) {
  std::shared_ptr<const ByFile> by_file;
  if (auto cached = files_.find(d.file_path); cached != files_.end()) {
    by_file = cached->second;
  } else {
    ASSIGN_OR_RETURN(ByFile read, internal::ReadPositionDeleteFile(io, location, d));
    by_file = std::make_shared<const ByFile>(std::move(read));
    files_[d.file_path] = by_file;
  }
  if (!keep_all_ && --uses_[d.file_path] <= 0) {
    files_.erase(d.file_path);
    uses_.erase(d.file_path);
  }
  return by_file;
}

Result<PositionSet> ReadDeletedPositions(
    FileIO& io, const FileScanTask& t,
    const std::vector<std::pair<std::string, std::string>>& remaps, PositionDeleteCache* cache) {
  if (t.deletion_vector) {
    // A DV holds every deleted position of the file; position delete files may be ignored.
    return ReadDeletionVector(io, RemapLocation(t.deletion_vector->file_path, remaps),
                              *t.deletion_vector);
  }
  // Each delete file's positions are sorted: one run each, merged at the end.
  std::vector<int64_t> deleted;
  std::vector<size_t> runs{0};
  PositionDeleteCache uncached;
  for (const DataFile& d : t.position_deletes) {
    ASSIGN_OR_RETURN(
        auto by_file,
        (cache != nullptr ? cache : &uncached)->Read(io, RemapLocation(d.file_path, remaps), d));
    auto it = by_file->find(t.file.file_path);
    if (it == by_file->end()) continue;
    deleted.insert(deleted.end(), it->second.begin(), it->second.end());
    runs.push_back(deleted.size());
  }
  MergeSortedRuns(&deleted, std::move(runs));
  return PositionSet(std::move(deleted));
}

}  // namespace sluice::iceberg
