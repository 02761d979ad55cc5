// Changelog: the rows each snapshot of a table inserted, updated and deleted,
// derived from the data and delete files the snapshot added and removed
// (docs/cdc.md "Changelogs").
//
// For a snapshot S with parent P:
//   - rows S deleted: the rows of each data file S removed, and the rows at
//     the positions S's new position deletes or deletion vectors cover, read
//     as of P (so rows deleted before S are not deleted again);
//   - rows S inserted: the rows of the data files S added, as of S (rows a
//     commit wrote and deleted at once, as an upsert's superseded versions,
//     are not inserted).
// Kinds: in a table with identifier fields (a primary key), a key both
// deleted and inserted by S is an update: -U (the old row) then +U (the new
// one), paired in order when a key has several; other deleted rows are -D,
// other inserted rows +I. Without a key, rows are only -D and +I. A row
// deleted and inserted unchanged (another engine's copy-on-write rewrite of
// a file, a change applied again) is no change. Snapshots whose operation is
// "replace" (compaction, manifest rewrites) change no row and yield nothing.
//
// Errors: kNotImplemented for a snapshot that adds equality deletes (which
// rows they delete depends on every older file: not derived here);
// kNotFound for a snapshot id that is not in the table or not an ancestor of
// the end snapshot; kOutOfRange when a snapshot's parent has expired
// (its deletes cannot be read as of the parent).
//
// Rows come in the table's current schema: columns are matched by field id
// (an older snapshot may lack a column, null then, or have it narrower).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "columnar/column.h"
#include "common/status.h"
#include "iceberg/table_metadata.h"
#include "io/file_io.h"

namespace sluice::iceberg {

enum class ChangeKind : uint8_t { kInsert, kUpdateBefore, kUpdateAfter, kDelete };
// "+I", "-U", "+U", "-D"
const char* ChangeKindText(ChangeKind kind);

struct ChangelogOptions {
  // Changes after this snapshot (exclusive); none: from the first snapshot.
  std::optional<int64_t> from_snapshot;
  // Changes up to this snapshot (inclusive); none: the current snapshot.
  std::optional<int64_t> to_snapshot;
};

// One snapshot's changes: rows[i] (the table's current schema) is a change of
// kind kinds[i]; an update's -U row comes right before its +U row.
struct SnapshotChanges {
  int64_t snapshot_id = 0;
  std::string operation;
  Batch rows;
  std::vector<ChangeKind> kinds;
};

// The data and delete files a snapshot added and removed, from its own
// manifest entries (paths as the manifests name them).
struct SnapshotFiles {
  std::set<std::string> added_data, removed_data;
  std::set<std::string> added_deletes;  // position delete files and DVs
  bool equality_deletes = false;        // it adds equality deletes
};
Result<SnapshotFiles> FilesOfSnapshot(FileIO& io, const TableMetadata& table,
                                      const Snapshot& snapshot);

// Calls `sink` for each snapshot in the range, oldest first (snapshots that
// change no row included, with no rows).
Status ReadChangelog(FileIO& io, std::shared_ptr<const TableMetadata> table,
                     const ChangelogOptions& options,
                     const std::function<Status(SnapshotChanges&&)>& sink);

}  // namespace sluice::iceberg
