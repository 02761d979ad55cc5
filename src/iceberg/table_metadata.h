// Iceberg table metadata (spec §Table Metadata, Appendix C): the model and its
// JSON form.
//
// Parsing is lenient as the fixtures demand: format v1 (`schema`,
// `partition-spec`, missing `last-sequence-number`), `-1` for "no current
// snapshot", missing optional keys, gzip-compressed files. Writing is exactly
// the spec's v2/v3 form. A format version above 3 is rejected.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "columnar/types.h"
#include "common/status.h"
#include "iceberg/transform.h"

namespace sluice::iceberg {

// Row lineage (format v3): the reserved field ids of the metadata columns
// _row_id and _last_updated_sequence_number, which a data file may store (a
// rewrite keeps each row's lineage that way) and a scan can add.
constexpr int32_t kRowIdFieldId = 2147483540;
constexpr int32_t kLastUpdatedSequenceNumberFieldId = 2147483539;

constexpr int kMaxFormatVersion = 3;

struct PartitionField {
  int32_t source_id = 0;
  int32_t field_id = 0;  // partition field ids start at 1000
  std::string name;
  Transform transform;
};

struct PartitionSpec {
  int32_t spec_id = 0;
  std::vector<PartitionField> fields;
  bool unpartitioned() const;  // no fields, or only void transforms
};

struct SortField {
  int32_t source_id = 0;
  Transform transform;
  bool descending = false;
  bool nulls_first = true;
};

struct SortOrder {
  int32_t order_id = 0;  // 0 = unsorted
  std::vector<SortField> fields;
};

struct Snapshot {
  int64_t snapshot_id = 0;
  std::optional<int64_t> parent_snapshot_id;
  int64_t sequence_number = 0;
  int64_t timestamp_ms = 0;
  std::string manifest_list;
  std::map<std::string, std::string> summary;  // includes "operation"
  std::optional<int32_t> schema_id;
  std::optional<int64_t> first_row_id;  // v3
  std::optional<int64_t> added_rows;    // v3
  std::string operation() const;
};

struct SnapshotRef {
  int64_t snapshot_id = 0;
  bool is_branch = true;  // "branch" or "tag"
  std::optional<int32_t> min_snapshots_to_keep;
  std::optional<int64_t> max_snapshot_age_ms;
  std::optional<int64_t> max_ref_age_ms;
};

struct SnapshotLogEntry {
  int64_t snapshot_id = 0;
  int64_t timestamp_ms = 0;
};

struct MetadataLogEntry {
  std::string metadata_file;
  int64_t timestamp_ms = 0;
};

// A statistics file (Puffin: column statistics such as NDV sketches) or a
// partition statistics file that an engine wrote for one snapshot (the
// spec's StatisticsFile / PartitionStatisticsFile). sluice computes none; it
// keeps them through its commits as written (`json`, the whole object),
// drops them with their snapshot, and counts their files as referenced.
struct StatisticsFile {
  int64_t snapshot_id = 0;
  std::string path;  // statistics-path
  std::string json;  // the object, compact
};

struct TableMetadata {
  int format_version = 2;
  std::string table_uuid;
  std::string location;
  int64_t last_sequence_number = 0;
  int64_t last_updated_ms = 0;
  int32_t last_column_id = 0;
  std::vector<Schema> schemas;
  int32_t current_schema_id = 0;
  std::vector<PartitionSpec> partition_specs;
  int32_t default_spec_id = 0;
  int32_t last_partition_id = 999;
  std::map<std::string, std::string> properties;
  std::optional<int64_t> current_snapshot_id;
  std::vector<Snapshot> snapshots;
  std::vector<SnapshotLogEntry> snapshot_log;
  std::vector<MetadataLogEntry> metadata_log;
  std::vector<SortOrder> sort_orders;
  int32_t default_sort_order_id = 0;
  std::map<std::string, SnapshotRef> refs;
  std::optional<int64_t> next_row_id;  // v3
  std::vector<StatisticsFile> statistics, partition_statistics;

  const Schema* current_schema() const;
  const Schema* schema_by_id(int32_t id) const;
  const PartitionSpec* spec_by_id(int32_t id) const;
  const Snapshot* snapshot_by_id(int64_t id) const;
  const Snapshot* current_snapshot() const;
  // Snapshot ids from `snapshot_id` back through its parents (newest first),
  // stopping where a parent is no longer in the metadata (expired).
  std::vector<const Snapshot*> Ancestry(int64_t snapshot_id) const;

  // Removes the snapshots `ids`, their statistics files, the refs that
  // point at them (the main branch's leaves the table without a current
  // snapshot) and the snapshot
  // log up to its last entry for a removed snapshot, as Iceberg does: time
  // travel to before it reports the history expired instead of naming a
  // snapshot that was not current then.
  void RemoveSnapshots(const std::set<int64_t>& ids);
};

// `text` may be gzip-compressed (magic 1f 8b). `where` names the file in errors.
Result<TableMetadata> ParseTableMetadata(std::string_view text, std::string_view where);
std::string TableMetadataToJson(const TableMetadata& metadata);

std::string PartitionSpecToJson(const PartitionSpec& spec);
Result<PartitionSpec> PartitionSpecFromJson(std::string_view json);

}  // namespace sluice::iceberg
