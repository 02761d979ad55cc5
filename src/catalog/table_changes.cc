// One operation per kind of snapshot change: see table_changes.h.
#include "catalog/table_changes.h"

#include <utility>

namespace sluice::catalog {

std::string SnapshotUpdate::Operation() const {
  switch (kind) {
    case ChangeKind::kAppend: return "append";
    case ChangeKind::kRowDelta:
      if (add_deletes.empty() && remove_paths.empty() && remove_dvs.empty()) return "append";
      return add_data.empty() ? "delete" : "overwrite";
    case ChangeKind::kRewriteFiles:
    case ChangeKind::kRewriteManifests: return "replace";
  }
  return "append";
}

namespace internal {
namespace {

using iceberg::ManifestFile;

// The fields of SnapshotUpdate a kind may or may not take (every kind takes
// summary, set_properties and base_snapshot_id).
enum Field : unsigned {
  kAddData = 1u << 0,
  kAddDeletes = 1u << 1,
  kRemovePaths = 1u << 2,
  kRemoveDvs = 1u << 3,
  kRequirePaths = 1u << 4,
  kFailOnNewDeletes = 1u << 5,
  kDataSequenceNumber = 1u << 6,
  kRemoveDanglingDeletes = 1u << 7,
};

constexpr std::pair<Field, const char*> kFieldNames[] = {
    {kAddData, "data files to add"},
    {kAddDeletes, "delete files to add"},
    {kRemovePaths, "files to remove"},
    {kRemoveDvs, "deletion vectors to remove"},
    {kRequirePaths, "required files"},
    {kFailOnNewDeletes, "fail_on_new_deletes"},
    {kDataSequenceNumber, "data sequence number"},
    {kRemoveDanglingDeletes, "remove_dangling_deletes"},
};

unsigned FieldsSet(const SnapshotUpdate& u) {
  unsigned set = 0;
  if (!u.add_data.empty()) set |= kAddData;
  if (!u.add_deletes.empty()) set |= kAddDeletes;
  if (!u.remove_paths.empty()) set |= kRemovePaths;
  if (!u.remove_dvs.empty()) set |= kRemoveDvs;
  if (!u.require_paths.empty()) set |= kRequirePaths;
  if (u.fail_on_new_deletes) set |= kFailOnNewDeletes;
  if (u.data_sequence_number) set |= kDataSequenceNumber;
  if (u.remove_dangling_deletes) set |= kRemoveDanglingDeletes;
  return set;
}

Status TakesOnly(const SnapshotUpdate& u, unsigned allowed, const char* kind) {
  const unsigned extra = FieldsSet(u) & ~allowed;
  for (const auto& [field, name] : kFieldNames) {
    if (extra & field) return Status::Invalid("{} takes no {}", kind, name);
  }
  return Status::OK();
}

// The new manifests first, then the kept ones, small ones merged.
Result<StagedManifests> Merged(const StageInput& in, std::vector<ManifestFile> added,
                               std::vector<ManifestFile> kept, const Tally& removed) {
  added.insert(added.end(), std::make_move_iterator(kept.begin()),
               std::make_move_iterator(kept.end()));
  StagedManifests out;
  ASSIGN_OR_RETURN(out.manifests, MergeManifests(*in.io, *in.base, std::move(added), in.snapshot_id,
                                                 *in.options, in.written));
  out.removed = removed;
  return out;
}

// The base's manifests with the update's removals applied and validated
// (table_removals.h) and the files it requires checked, then merged with the
// new ones: a row delta's and a file rewrite's staging (a rewrite takes no
// required files).
Result<StagedManifests> RemovedAndMerged(const StageInput& in, std::vector<ManifestFile> added,
                                         std::vector<ManifestFile> base_manifests) {
  Removal r;
  r.kept = std::move(base_manifests);
  if (in.removals->Any(*in.update)) {
    RETURN_IF_ERROR(ApplyRemovals(*in.io, *in.base, *in.update, *in.removals, in.snapshot_id,
                                  *in.where, in.written, &r));
  }
  if (!in.update->require_paths.empty()) {
    RETURN_IF_ERROR(CheckRequired(*in.io, *in.base, *in.update, r.kept));
  }
  return Merged(in, std::move(added), std::move(r.kept), r.removed);
}

class AppendChange final : public SnapshotChange {
 public:
  Status Validate(const SnapshotUpdate& u) const override {
    return TakesOnly(u, kAddData, "an append");
  }
  Result<StagedManifests> Stage(const StageInput& in, std::vector<ManifestFile> added,
                                std::vector<ManifestFile> base_manifests) const override {
    return Merged(in, std::move(added), std::move(base_manifests), {});
  }
};

class RowDeltaChange final : public SnapshotChange {
 public:
  Status Validate(const SnapshotUpdate& u) const override {
    return TakesOnly(
        u, kAddData | kAddDeletes | kRemovePaths | kRemoveDvs | kRequirePaths | kFailOnNewDeletes,
        "a row delta");
  }
  Result<StagedManifests> Stage(const StageInput& in, std::vector<ManifestFile> added,
                                std::vector<ManifestFile> base_manifests) const override {
    return RemovedAndMerged(in, std::move(added), std::move(base_manifests));
  }
};

class RewriteFilesChange final : public SnapshotChange {
 public:
  Status Validate(const SnapshotUpdate& u) const override {
    RETURN_IF_ERROR(TakesOnly(u,
                              kAddData | kAddDeletes | kRemovePaths | kFailOnNewDeletes |
                                  kDataSequenceNumber | kRemoveDanglingDeletes,
                              "a file rewrite"));
    if (u.remove_paths.empty() && !(u.add_data.empty() && u.add_deletes.empty())) {
      return Status::Invalid("a file rewrite adds files only in place of others it removes");
    }
    return Status::OK();
  }
  Result<StagedManifests> Stage(const StageInput& in, std::vector<ManifestFile> added,
                                std::vector<ManifestFile> base_manifests) const override {
    return RemovedAndMerged(in, std::move(added), std::move(base_manifests));
  }
};

class RewriteManifestsChange final : public SnapshotChange {
 public:
  Status Validate(const SnapshotUpdate& u) const override {
    return TakesOnly(u, 0, "a manifest rewrite");
  }
  Result<StagedManifests> Stage(const StageInput& in, std::vector<ManifestFile> added,
                                std::vector<ManifestFile> base_manifests) const override {
    // Validate leaves nothing added: `added` is empty.
    added.insert(added.end(), std::make_move_iterator(base_manifests.begin()),
                 std::make_move_iterator(base_manifests.end()));
    ManifestChange change;
    StagedManifests out;
    ASSIGN_OR_RETURN(out.manifests,
                     ClusterManifests(*in.io, *in.base, std::move(added), in.snapshot_id,
                                      *in.options, in.written, &change));
    // The keys of Iceberg's RewriteManifests.
    out.summary["manifests-created"] = std::to_string(change.created);
    out.summary["manifests-replaced"] = std::to_string(change.replaced);
    out.summary["manifests-kept"] = std::to_string(change.kept);
    out.summary["entries-processed"] = std::to_string(change.entries);
    return out;
  }
};

}  // namespace

const SnapshotChange& SnapshotChange::Of(ChangeKind kind) {
  static const AppendChange append;
  static const RowDeltaChange row_delta;
  static const RewriteFilesChange rewrite_files;
  static const RewriteManifestsChange rewrite_manifests;
  switch (kind) {
    case ChangeKind::kAppend: return append;
    case ChangeKind::kRowDelta: return row_delta;
    case ChangeKind::kRewriteFiles: return rewrite_files;
    case ChangeKind::kRewriteManifests: return rewrite_manifests;
  }
  return append;
}

}  // namespace internal
}  // namespace sluice::catalog
