// Internal to src/catalog: what a commit removes (Table::Stage's first
// step, table_commit.cc). The base's manifests that hold removed files are
// rewritten with those entries DELETED, and the removals are validated
// against what other writers committed meanwhile: a file to remove must still
// be live, a delete another writer added for it is a conflict, and a rewrite
// that keeps its read's data sequence number stays in its inputs' partitions.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "catalog/table.h"
#include "catalog/table_manifests.h"
#include "iceberg/manifest.h"
#include "iceberg/table_metadata.h"
#include "io/file_io.h"

namespace sluice::catalog::internal {

// Totals of a set of files, for the snapshot summary.
struct Tally {
  int64_t data_files = 0, records = 0, size = 0;
  int64_t delete_files = 0, pos_delete_files = 0, eq_delete_files = 0;
  int64_t pos_deletes = 0, eq_deletes = 0;
  void Add(const iceberg::DataFile& f) {
    size += f.file_size_in_bytes;
    switch (f.content) {
      case iceberg::FileContent::kData:
        ++data_files;
        records += f.record_count;
        break;
      case iceberg::FileContent::kPositionDeletes:
        ++delete_files;
        ++pos_delete_files;
        pos_deletes += f.record_count;
        break;
      case iceberg::FileContent::kEqualityDeletes:
        ++delete_files;
        ++eq_delete_files;
        eq_deletes += f.record_count;
        break;
    }
  }
};

// What a commit names for removal, gathered once for every attempt.
struct RemovalTargets {
  std::set<std::string> paths;  // data and delete files
  std::set<std::string> dvs;    // deletion vectors alone: "<puffin>\n<data file>"
  bool adds_dvs = false;        // the commit adds deletion vectors

  static RemovalTargets Of(const SnapshotUpdate& u);
  // Whether the base's manifests must be read and rewritten at all.
  bool Any(const SnapshotUpdate& u) const {
    return !paths.empty() || !dvs.empty() || adds_dvs || u.remove_dangling_deletes;
  }
};

// What an attempt's removals found in the base's manifests.
struct Removal {
  std::vector<iceberg::ManifestFile> kept;  // the base's manifests, rewritten where files went
  Tally removed;
  std::vector<iceberg::DataFile> removed_data;
  std::vector<iceberg::ManifestEntry> live_deletes;  // delete entries that stay live
  std::vector<iceberg::ManifestEntry> all_deletes;   // every live delete entry of the base
};

// Rewrites the base's manifests (r->kept on entry) that hold removed files,
// their entries DELETED by `snapshot_id` (a DV goes with its data file; DVs
// named alone go alone; with remove_dangling_deletes, delete files nothing
// live is left for go too), and checks that every file to remove was still
// there, that no other writer added a DV for a file `u` adds one for, and
// `u`'s data sequence number and fail_on_new_deletes rules. kConflict when a
// check fails; rewritten manifests are added to `written`.
Status ApplyRemovals(FileIO& io, const iceberg::TableMetadata& base, const SnapshotUpdate& u,
                     const RemovalTargets& targets, int64_t snapshot_id, const std::string& where,
                     WrittenFiles* written, Removal* r);

// The files `u` requires must still be live in `kept`, and, with
// fail_on_new_deletes, without a newer delete (two deletes of the same dead
// letters must not both move them). kConflict otherwise.
Status CheckRequired(FileIO& io, const iceberg::TableMetadata& base, const SnapshotUpdate& u,
                     const std::vector<iceberg::ManifestFile>& kept);

}  // namespace sluice::catalog::internal
