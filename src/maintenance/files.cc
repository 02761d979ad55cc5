#include "maintenance/files.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>

#include "iceberg/manifest.h"

namespace sluice::maintenance {

std::string NormalizePath(std::string_view p) {
  std::string out;
  if (p.rfind("file://", 0) == 0) {
    p.remove_prefix(7);
  } else if (p.rfind("file:", 0) == 0) {
    p.remove_prefix(5);
  } else if (size_t scheme = p.find("://"); scheme != std::string_view::npos) {
    out.assign(p.substr(0, scheme + 3));
    p.remove_prefix(scheme + 3);
  }
  for (char c : p) {
    if (c == '/' && !out.empty() && out.back() == '/') continue;
    out.push_back(c);
  }
  return out;
}

Status RequireManifestList(const iceberg::Snapshot& s) {
  if (!s.manifest_list.empty()) return Status::OK();
  return Status::NotImplemented(
      "snapshot {} has no manifest list (a v1 snapshot with inline manifests): "
      "maintenance refuses to guess what it reaches",
      s.snapshot_id);
}

Result<int64_t> IntProperty(const iceberg::TableMetadata& m, const std::string& key,
                            int64_t fallback, int64_t min) {
  auto it = m.properties.find(key);
  if (it == m.properties.end()) return fallback;
  char* end = nullptr;
  errno = 0;
  long long v = std::strtoll(it->second.c_str(), &end, 10);
  if (it->second.empty() || *end != '\0' || errno == ERANGE || v < min) {
    return Status::Invalid("table property {} = '{}' is not an integer of at least {}", key,
                           it->second, min);
  }
  return static_cast<int64_t>(v);
}

Result<double> FractionProperty(const iceberg::TableMetadata& m, const std::string& key,
                                double fallback) {
  auto it = m.properties.find(key);
  if (it == m.properties.end()) return fallback;
  char* end = nullptr;
  double v = std::strtod(it->second.c_str(), &end);
  if (it->second.empty() || *end != '\0' || !(v > 0 && v <= 1)) {
    return Status::Invalid("table property {} = '{}' is not a fraction in (0, 1]", key, it->second);
  }
  return v;
}

namespace {
// The data file a delete file names, if it names one.
const std::string* NamedDataFile(const iceberg::DataFile& d) {
  if (d.content != iceberg::FileContent::kPositionDeletes || !d.referenced_data_file) {
    return nullptr;
  }
  return &*d.referenced_data_file;
}
}  // namespace

std::map<std::string, int64_t> DeletedRowsByFile(const std::vector<iceberg::ManifestEntry>& live) {
  // A file's deletion vector holds every position deleted from it (readers
  // ignore its position delete files, left from before a v3 upgrade). As in
  // the scan, a delete older than the data file (its path added again) does
  // not apply.
  std::map<std::string, int64_t> data_sequence;
  for (const iceberg::ManifestEntry& e : live) {
    if (e.file.content == iceberg::FileContent::kData) {
      data_sequence[e.file.file_path] = e.sequence_number.value_or(0);
    }
  }
  std::map<std::string, int64_t> positions, vectors;
  for (const iceberg::ManifestEntry& e : live) {
    const std::string* path = NamedDataFile(e.file);
    if (path == nullptr) continue;
    auto data = data_sequence.find(*path);
    if (data == data_sequence.end() || e.sequence_number.value_or(0) < data->second) continue;
    (e.file.content_offset ? vectors : positions)[*path] += e.file.record_count;
  }
  for (const auto& [path, n] : vectors) positions[path] = n;
  return positions;
}

int64_t DeletedRows(const iceberg::FileScanTask& task) {
  if (task.deletion_vector) return task.deletion_vector->record_count;
  int64_t n = 0;
  for (const iceberg::DataFile& d : task.position_deletes) {
    if (const std::string* path = NamedDataFile(d); path && *path == task.file.file_path) {
      n += d.record_count;
    }
  }
  return n;
}

double DeletedFraction(int64_t deleted, const iceberg::DataFile& data_file) {
  if (data_file.record_count <= 0) return 0;
  return static_cast<double>(deleted) / static_cast<double>(data_file.record_count);
}

TieredWindow TieredRun(std::vector<int64_t> sizes, int64_t min_files, int64_t factor) {
  factor = std::max<int64_t>(1, factor);
  std::sort(sizes.begin(), sizes.end());
  for (size_t start = 0; start < sizes.size(); ++start) {
    size_t end = start + 1;
    int64_t sum = sizes[start];
    // sizes[end] <= factor * sum, without the product's overflow: the
    // ceiling of sizes[end] / factor is at most sum
    auto joins = [&](int64_t s) { return s / factor + (s % factor != 0 ? 1 : 0) <= sum; };
    while (end < sizes.size() && joins(sizes[end])) {  // (the sum saturates)
      const int64_t s = sizes[end++];
      sum = s > INT64_MAX - sum ? INT64_MAX : sum + s;
    }
    if (static_cast<int64_t>(end - start) >= std::max<int64_t>(2, min_files)) {
      return {start, end - start};
    }
  }
  return {};
}

void DeleteFiles(FileIO& io, const std::vector<std::string>& paths, int64_t* deleted,
                 std::vector<std::string>* failures) {
  std::vector<std::string> failed = io.DeleteAll(paths);
  *deleted += static_cast<int64_t>(paths.size() - failed.size());
  for (std::string& f : failed) failures->push_back(std::move(f));
}

}  // namespace sluice::maintenance
