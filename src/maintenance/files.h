// Private to src/maintenance: paths in one form, policy properties, rows deleted
// from files, size-tiered selection, and deleting files.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "iceberg/manifest.h"
#include "iceberg/scan.h"
#include "iceberg/table_metadata.h"
#include "io/file_io.h"

namespace sluice::maintenance {

// A path in one form whatever wrote it: local paths without "file://" or
// "file:", and no doubled slashes ("/wh/t//data/f" is "/wh/t/data/f"). Two
// forms of one file must not make it look unreferenced.
std::string NormalizePath(std::string_view p);

// kNotImplemented for a v1 snapshot without a manifest list (what it reaches
// is not guessed), else OK.
Status RequireManifestList(const iceberg::Snapshot& s);

// The table property `key` as an integer of at least `min`, or `fallback`
// when unset; kInvalidArgument naming the property otherwise.
Result<int64_t> IntProperty(const iceberg::TableMetadata& m, const std::string& key,
                            int64_t fallback, int64_t min);
// The table property `key` as a number in (0, 1], or `fallback` when unset.
Result<double> FractionProperty(const iceberg::TableMetadata& m, const std::string& key,
                                double fallback);

// Rows deleted from data files by delete files that name their data file:
// deletion vectors and file-scoped position deletes (referenced_data_file),
// by data file path. Partition-scoped position deletes and equality deletes
// name no file: what they delete from one is not known without reading them.
std::map<std::string, int64_t> DeletedRowsByFile(const std::vector<iceberg::ManifestEntry>& live);
// The same for one scan task's deletes.
int64_t DeletedRows(const iceberg::FileScanTask& task);
// deleted / data_file.record_count (0 for an empty file).
double DeletedFraction(int64_t deleted, const iceberg::DataFile& data_file);

// Size-tiered selection, for a compaction that runs over and over on a
// growing partition. Of a partition's small file sizes sorted ascending, the
// files it merges: the first window (smallest files first) in which each file
// is at most `factor` (below 1: 1) times the sum of those before it in the
// window, and which has at least `min_files` (and 2) files; none (length 0)
// otherwise. Fresh files of similar sizes merge; with the default factor 2, a
// merged file joins the next merge only once half as many bytes came after
// it, so each byte is rewritten a logarithmic number of times (at most about
// log1.5(small-file size / commit size)), not once per compaction. A larger
// factor merges sooner: fewer files, more rewriting (policy.h, ModelTiering).
// A window need not start at the smallest file: one tiny file (the first of a
// new partition) does not hold back the commit-sized ones.
struct TieredWindow {
  size_t start = 0, length = 0;  // in ascending size order
};
TieredWindow TieredRun(std::vector<int64_t> sizes, int64_t min_files, int64_t factor = 2);

// Deletes `paths` (FileIO::DeleteAll: batched where the store can; a file
// already gone counts as deleted), counting what went and describing what
// could not.
void DeleteFiles(FileIO& io, const std::vector<std::string>& paths, int64_t* deleted,
                 std::vector<std::string>* failures);

}  // namespace sluice::maintenance
