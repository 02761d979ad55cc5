// Manifests and manifest lists (spec §Manifests, §Manifest Lists): the Avro
// files that list a snapshot's data and delete files.
//
// Reading applies the spec's inheritance: an ADDED entry with a null
// snapshot id or sequence number takes them from its manifest-list entry
// (v1 manifests: sequence numbers 0). Writing follows Java Iceberg's schemas
// and field order (record names manifest_entry/manifest_file, r2, r102, ...),
// with the metadata keys schema, schema-id, partition-spec, partition-spec-id,
// format-version and content. New entries are written with null inherited
// fields, so a manifest written once can be reused by every commit retry.
//
// Partition values are kept in Iceberg's single-value binary form
// (columnar/single_value.h), one optional per partition field of the spec.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "columnar/types.h"
#include "common/status.h"
#include "iceberg/table_metadata.h"
#include "io/file_io.h"

namespace sluice::iceberg {

enum class FileContent : int32_t { kData = 0, kPositionDeletes = 1, kEqualityDeletes = 2 };
enum class EntryStatus : int32_t { kExisting = 0, kAdded = 1, kDeleted = 2 };
enum class ManifestContent : int32_t { kData = 0, kDeletes = 1 };

using PartitionValues = std::vector<std::optional<std::string>>;

struct DataFile {
  FileContent content = FileContent::kData;
  std::string file_path;
  std::string file_format = "PARQUET";
  PartitionValues partition;
  int32_t spec_id = 0;  // from the manifest, not stored per entry
  int64_t record_count = 0;
  int64_t file_size_in_bytes = 0;
  std::map<int32_t, int64_t> column_sizes;
  std::map<int32_t, int64_t> value_counts;
  std::map<int32_t, int64_t> null_value_counts;
  std::map<int32_t, int64_t> nan_value_counts;
  std::map<int32_t, std::string> lower_bounds;
  std::map<int32_t, std::string> upper_bounds;
  std::optional<std::string> key_metadata;
  std::vector<int64_t> split_offsets;
  std::vector<int32_t> equality_ids;
  std::optional<int32_t> sort_order_id;
  std::optional<int64_t> first_row_id;
  std::optional<std::string> referenced_data_file;
  std::optional<int64_t> content_offset;
  std::optional<int64_t> content_size_in_bytes;
};

struct ManifestEntry {
  EntryStatus status = EntryStatus::kAdded;
  std::optional<int64_t> snapshot_id;
  std::optional<int64_t> sequence_number;  // data sequence number
  std::optional<int64_t> file_sequence_number;
  DataFile file;
};

struct FieldSummary {
  bool contains_null = false;
  std::optional<bool> contains_nan;
  std::optional<std::string> lower_bound;
  std::optional<std::string> upper_bound;
};

struct ManifestFile {
  std::string manifest_path;
  int64_t manifest_length = 0;
  int32_t partition_spec_id = 0;
  ManifestContent content = ManifestContent::kData;
  int64_t sequence_number = 0;
  int64_t min_sequence_number = 0;
  int64_t added_snapshot_id = 0;
  int32_t added_files_count = 0;
  int32_t existing_files_count = 0;
  int32_t deleted_files_count = 0;
  int64_t added_rows_count = 0;
  int64_t existing_rows_count = 0;
  int64_t deleted_rows_count = 0;
  std::vector<FieldSummary> partitions;
  std::optional<std::string> key_metadata;
  std::optional<int64_t> first_row_id;
};

// The struct type of a spec's partition tuple: one optional field per
// partition field, typed by the transform's result type.
Result<TypePtr> PartitionType(const PartitionSpec& spec, const Schema& schema);

// Reads a manifest list. `format_version` 1 lists get sequence numbers 0.
Result<std::vector<ManifestFile>> ReadManifestList(FileIO& io, const std::string& path,
                                                   int format_version);

struct ManifestReadOptions {
  // Column statistics of each file (column sizes, value/null/NaN counts,
  // bounds). Off, they are left empty: planning that prunes nothing by them
  // skips building them, most of an entry's cost. Manifests rewritten from the
  // entries read need them on.
  bool column_stats = true;
  // Only live entries (ADDED and EXISTING): DELETED ones, which a snapshot's
  // manifests keep until they are rewritten, are not built.
  bool live_only = false;
};

// Reads a manifest's entries, applying inheritance from `manifest`: snapshot
// id, sequence numbers, and (v3 data manifests) first_row_id, so that an
// entry copied into another manifest carries explicit values.
Result<std::vector<ManifestEntry>> ReadManifest(FileIO& io, const ManifestFile& manifest,
                                                int format_version,
                                                const ManifestReadOptions& options = {});

// ReadManifest of each of `manifests`, on up to `threads` threads (0 = one per
// core, up to 8; never more than one per manifest), the way planning reads a
// snapshot's manifests. Entries come back in the order of `manifests`; on a
// failure, the first in that order is returned.
Result<std::vector<std::vector<ManifestEntry>>> ReadManifests(
    FileIO& io, const std::vector<ManifestFile>& manifests, int format_version,
    const ManifestReadOptions& options = {}, int threads = 0);

constexpr int64_t kInheritedSequence = -1;

struct ManifestWriterOptions {
  int format_version = 2;
  ManifestContent content = ManifestContent::kData;
  int64_t snapshot_id = 0;  // the snapshot adding this manifest
};

// Writes one manifest (all entries under one spec).
class ManifestWriter {
 public:
  static Result<std::unique_ptr<ManifestWriter>> Open(FileIO& io, const std::string& path,
                                                      const Schema& schema,
                                                      const PartitionSpec& spec,
                                                      ManifestWriterOptions options);
  ~ManifestWriter();
  Status Add(const ManifestEntry& entry);
  // Writes the file; returns its manifest-list entry. sequence_number is left
  // to the list writer (0 here); min_sequence_number is the smallest explicit
  // data sequence number among the entries, or kInheritedSequence if all
  // entries inherit theirs.
  Result<ManifestFile> Close();

 private:
  struct Impl;
  explicit ManifestWriter(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

struct ManifestListOptions {
  int format_version = 2;
  int64_t snapshot_id = 0;
  std::optional<int64_t> parent_snapshot_id;
  int64_t sequence_number = 0;
  std::optional<int64_t> first_row_id;  // v3
};

// Writes a manifest list. Manifests added by this snapshot (added_snapshot_id
// == options.snapshot_id) get its sequence number (and min sequence number).
// In v3, data manifests without a first_row_id get one, counting from
// options.first_row_id; returns the number of row ids assigned (the
// snapshot's `added-rows`), 0 before v3.
Result<int64_t> WriteManifestList(FileIO& io, const std::string& path,
                                  const std::vector<ManifestFile>& manifests,
                                  const ManifestListOptions& options);

}  // namespace sluice::iceberg
