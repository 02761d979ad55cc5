// Internal to src/catalog: one operation per kind of snapshot change
// (ChangeKind, table.h), the second step of Table::Stage (table_commit.cc).
//
// Each operation checks, once and before any file is written, that an update
// holds only what its kind takes. Then, on every attempt, it builds the new
// snapshot's manifests on the base metadata of that attempt:
//   - an append puts its new manifests beside the base's;
//   - a row delta and a file rewrite first remove what they replace from the
//     base's manifests and validate it against what other writers committed
//     since their plan (table_removals.h); a row delta also checks that the
//     files its deletes refer to are still live;
//   - a manifest rewrite regroups the base's manifests by partition
//     (table_manifests.h).
// Every kind then merges small manifests as the commit options ask; the
// snapshot, its manifest list and the metadata file are the same for every
// kind (table_commit.cc).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "catalog/table.h"
#include "catalog/table_manifests.h"
#include "catalog/table_removals.h"
#include "iceberg/manifest.h"
#include "iceberg/table_metadata.h"
#include "io/file_io.h"

namespace sluice::catalog::internal {

// What one attempt stages on.
struct StageInput {
  FileIO* io = nullptr;
  const iceberg::TableMetadata* base = nullptr;
  const SnapshotUpdate* update = nullptr;
  const RemovalTargets* removals = nullptr;  // gathered once, at Prepare
  int64_t snapshot_id = 0;
  const std::string* where = nullptr;  // "table <name>", for errors
  const CommitOptions* options = nullptr;
  WrittenFiles* written = nullptr;  // the attempt's files, deleted if it loses
};

// What a change staged: the new snapshot's manifests, what they no longer
// hold, and the kind's own summary keys.
struct StagedManifests {
  std::vector<iceberg::ManifestFile> manifests;
  Tally removed;
  std::map<std::string, std::string> summary;
};

class SnapshotChange {
 public:
  virtual ~SnapshotChange() = default;
  // The operation of `kind` (a static instance).
  static const SnapshotChange& Of(ChangeKind kind);

  // kInvalidArgument naming the first field `u` sets that this kind does not
  // take, or the kind's rule it breaks.
  virtual Status Validate(const SnapshotUpdate& u) const = 0;

  // The new snapshot's manifests: `added` (the update's, written once for
  // every attempt) and `base_manifests` (the base snapshot's), changed as the
  // kind changes them. kConflict when what the update relies on is gone.
  virtual Result<StagedManifests> Stage(
      const StageInput& in, std::vector<iceberg::ManifestFile> added,
      std::vector<iceberg::ManifestFile> base_manifests) const = 0;
};

}  // namespace sluice::catalog::internal
