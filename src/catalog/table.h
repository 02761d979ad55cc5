// Table: an Iceberg table reached through a Catalog, and the commit protocol.
//
// Every change writes new files (manifests, a manifest list, a metadata file
// `<table>/metadata/<NNNNN>-<uuid>.metadata.json`), then swaps the catalog's
// pointer from the metadata it started from with a compare-and-swap. On a
// conflict it refreshes, re-checks what the operation requires (an append
// always applies), rewrites only the manifest list and metadata (manifests
// are written once), and retries with backoff. Files of a failed attempt are
// deleted — except when the outcome is unknown (kCommitStateUnknown), when
// nothing that may have been committed is deleted.
//
// Thread-safety: a Table object is used by one thread at a time; several
// processes may commit to the same table concurrently.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "catalog/catalog.h"
#include "iceberg/manifest.h"
#include "iceberg/table_metadata.h"
#include "io/file_io.h"

namespace sluice::catalog {

struct CommitOptions {
  int max_attempts = 20;  // several writers share tables: retry generously
  int min_backoff_ms = 20;
  int max_backoff_ms = 2000;
  int manifest_merge_min_count = 100;                // commit.manifest.min-count-to-merge
  int64_t manifest_target_bytes = int64_t{8} << 20;  // commit.manifest.target-size-bytes

  // Sleeps before retry number `attempt` (>= 1): a random wait between
  // min_backoff_ms and an exponentially growing cap (at most max_backoff_ms),
  // so that writers that lost the same race do not collide again.
  void BackOff(int attempt) const;
};

// The kinds of snapshot change, after Iceberg's operations. Each kind takes
// only its own fields of SnapshotUpdate (checked before anything is written:
// kInvalidArgument names the field) and stages the snapshot its own way
// (table_changes.h). Every kind takes `summary`, `set_properties` and
// `base_snapshot_id`.
enum class ChangeKind {
  // New data files (`add_data`). Always applies: on a conflict it is staged
  // again on the refreshed table. Operation `append`.
  kAppend,
  // Row-level changes: delete files or deletion vectors added (`add_deletes`)
  // for data files that must still be live (`require_paths`), the DVs they
  // replace removed (`remove_dvs`), data files all of whose rows go removed
  // (`remove_paths`), and new rows (`add_data`) — an upsert, a row delete, a
  // dead-letter replay. Takes `fail_on_new_deletes`. Operation `delete`, or
  // `overwrite` when it adds rows too (`append` when it only adds rows).
  kRowDelta,
  // Data files in place of the files whose rows they hold (`remove_paths`,
  // `add_data`): a compaction. Takes `add_deletes` (deletes carried onto the
  // new files), `fail_on_new_deletes`, `data_sequence_number` and
  // `remove_dangling_deletes`. It adds files only in place of others; with
  // nothing added or removed it is a snapshot that only carries properties
  // (a pipeline's epoch). Operation `replace`.
  kRewriteFiles,
  // The table's small manifests rewritten into manifests of about
  // CommitOptions::manifest_target_bytes, each holding a contiguous range of
  // partitions: planning then opens a bounded number of manifests, and a
  // selective scan skips most by their partition bounds. No file is added or
  // removed; done on the metadata each attempt stages against, so it never
  // conflicts. Operation `replace`.
  kRewriteManifests,
};

// One snapshot's worth of changes, of one kind. Files to remove are named by
// path; on a retry after a conflict they must still be live in the refreshed
// table (else the commit fails with kConflict: the files it replaces are
// gone). With `fail_on_new_deletes`, a delete file added since
// `base_snapshot_id` that applies to a removed or required data file also
// fails the commit (a rewrite must not resurrect deleted rows).
struct SnapshotUpdate {
  ChangeKind kind = ChangeKind::kAppend;
  std::vector<iceberg::DataFile> add_data;
  std::vector<iceberg::DataFile> add_deletes;
  std::vector<std::string> remove_paths;
  // Deletion vectors to remove: (Puffin path, referenced data file); they
  // must still be live. DVs of removed data files are removed implicitly.
  std::vector<std::pair<std::string, std::string>> remove_dvs;
  // Data files that must still be live (delete files added refer to them).
  std::vector<std::string> require_paths;
  std::map<std::string, std::string> summary;  // extra keys (e.g. sluice.offsets)
  // Table properties set by the same commit (e.g. a pipeline's last offsets,
  // which must survive the expiry of the snapshot that carried them).
  std::map<std::string, std::string> set_properties;
  bool fail_on_new_deletes = false;
  std::optional<int64_t> base_snapshot_id;  // what the change was planned against
  // The data sequence number of add_data (default: the new snapshot's). A
  // rewrite sets the sequence number of the snapshot it read its rows from
  // (Iceberg's "starting sequence number"): equality deletes committed since
  // then have higher ones, so they apply to the rewritten rows as they did to
  // the originals, and with fail_on_new_deletes such a delete is no conflict
  // when it applies to every file added. The rows of each added file must
  // come from removed files of its own partition (spec and values): equality
  // deletes are scoped by partition. A commit whose added file has no removed
  // file in its partition is refused (kConflict).
  std::optional<int64_t> data_sequence_number;
  // Also removes the delete files that no data file left live can be subject
  // to (dangling: e.g. a compaction rewrote every file they applied to),
  // judged on the metadata each attempt stages against.
  bool remove_dangling_deletes = false;

  // The snapshot summary's `operation`, from the kind and what it changes.
  std::string Operation() const;
};

// A manifest below half the target size: one a manifest rewrite merges (its
// output, cut at most at about the target size, is not small again once its
// entries fill that).
bool IsSmallManifest(const iceberg::ManifestFile& m, const CommitOptions& options = {});

class Table;
struct PendingCommit;  // a snapshot on its way into a table (table_commit.cc)

// One table's part of a multi-table commit.
struct TableUpdate {
  Table* table = nullptr;
  SnapshotUpdate update;
};

// Maps a table's current metadata to its next (a metadata-only change).
using MetadataChangeFn =
    std::function<Result<iceberg::TableMetadata>(const iceberg::TableMetadata&)>;

// One table's part of a multi-table metadata change.
struct MetadataChange {
  Table* table = nullptr;
  MetadataChangeFn change;
};

class Table {
 public:
  static Result<std::unique_ptr<Table>> Create(Catalog& catalog, FileIO& io,
                                               const TableIdent& ident,
                                               const iceberg::TableMetadata& metadata);
  static Result<std::unique_ptr<Table>> Load(Catalog& catalog, FileIO& io, const TableIdent& ident);
  // A table read straight from a metadata file (no catalog; read-only).
  static Result<std::unique_ptr<Table>> LoadFromMetadataFile(FileIO& io, const std::string& path);
  // Adopts a table another writer made: the catalog names `ident` after its
  // metadata file `location` (checked to be a table's metadata, readable
  // here); nothing is copied. kAlreadyExists if the name is taken.
  static Result<std::unique_ptr<Table>> Register(Catalog& catalog, FileIO& io,
                                                 const TableIdent& ident,
                                                 const std::string& location);

  const TableIdent& ident() const { return ident_; }
  const iceberg::TableMetadata& metadata() const { return *metadata_; }
  const std::string& metadata_location() const { return metadata_location_; }
  FileIO& io() const { return *io_; }
  Status Refresh();

  // Appends data files in one new snapshot (operation "append"); `summary`
  // adds keys to the snapshot summary (e.g. sluice.offsets). Returns the
  // snapshot id.
  Result<int64_t> Append(const std::vector<iceberg::DataFile>& files,
                         const std::map<std::string, std::string>& summary = {},
                         const CommitOptions& options = {});

  // Commits `update` as one new snapshot on main; returns its id. `check`, as
  // in CommitAll, runs before every attempt and stops the commit with its error.
  Result<int64_t> Commit(const SnapshotUpdate& update, const CommitOptions& options = {},
                         const std::function<Status()>& check = nullptr);

  // Commits one snapshot to each table in one catalog transaction
  // (Catalog::CommitTables): every table's snapshot lands, or none does. On a
  // conflict every table is refreshed and every snapshot staged again (an
  // append always applies; removals re-check their files as in Commit).
  // `check`, when set, runs before every attempt (after the refresh) and stops
  // the commit with its error: a pipeline verifies there that no newer writer
  // has taken over. If the catalog cannot tell whether the swap happened the
  // result is kCommitStateUnknown and no file is deleted. The tables must come
  // from `catalog`; returns the new snapshot ids in the order of `updates`.
  static Result<std::vector<int64_t>> CommitAll(Catalog& catalog,
                                                const std::vector<TableUpdate>& updates,
                                                const CommitOptions& options = {},
                                                const std::function<Status()>& check = nullptr);

  // A metadata-only change (schema, partition spec, properties): `change`
  // maps the current metadata to the new one; on a conflict it is applied
  // again to the refreshed table (so it re-checks its own preconditions).
  Status UpdateMetadata(const MetadataChangeFn& change, const CommitOptions& options = {});

  // Metadata changes to several tables in one catalog transaction: every
  // table's new metadata lands, or none does. On a conflict every table is
  // refreshed and every change applied again; an error from a change stops
  // the commit with it. The tables must come from `catalog`.
  static Status UpdateMetadataAll(Catalog& catalog, const std::vector<MetadataChange>& changes,
                                  const CommitOptions& options = {});

  // Manifest entries of the live files (ADDED/EXISTING) of a snapshot.
  Result<std::vector<iceberg::ManifestEntry>> LiveFiles(int64_t snapshot_id) const;

  // Where new data files of this table go: <location>/data/.
  std::string DataLocation() const;

 private:
  Table(Catalog* catalog, FileIO* io, TableIdent ident)
      : catalog_(catalog), io_(io), ident_(std::move(ident)) {}
  Status LoadMetadata(const std::string& location);
  // CommitAll's steps: check the update against its kind and write the
  // added files' manifests once; per attempt, stage the snapshot against the
  // current metadata (the kind's manifests, the manifest list and the
  // metadata file written, nothing swapped; table_changes.h).
  Result<std::unique_ptr<PendingCommit>> Prepare(const SnapshotUpdate& update);
  Status Stage(PendingCommit& pending, int attempt, const CommitOptions& options);
  std::string NewMetadataPath(const iceberg::TableMetadata& base) const;
  // After a commit through a catalog that writes its own metadata file (a
  // REST catalog: Catalog::SwapsMetadataFiles() is false): loads what the
  // catalog now names and deletes the staged file, which nothing references.
  void AdoptCommitted();
  // In-process writers of one table take turns: each attempt refreshes,
  // stages and swaps holding its table's turn. The catalog's compare-and-swap
  // still arbitrates between processes, but one process's writers never lose
  // attempts to each other: a compaction, whose staging takes longer than an
  // append's, would otherwise lose every race to a pipeline committing often.
  // Not reentrant: nothing called while a turn is held (CommitAll's `check`,
  // UpdateMetadata's `change`) may commit to the same table.
  std::mutex& CommitTurn() const;

  Catalog* catalog_;  // null for read-only tables
  FileIO* io_;
  TableIdent ident_;
  std::string metadata_location_;
  std::shared_ptr<const iceberg::TableMetadata> metadata_;
};

// Appends `previous` (the metadata file being replaced, last updated at
// `updated_ms`) to `next`'s metadata log and cuts the log to the table's
// write.metadata.previous-versions-max (default 100), adding the files cut
// off to `dropped`; kInvalidArgument naming the property if it does not parse.
Status ExtendMetadataLog(iceberg::TableMetadata* next, const std::string& previous,
                         int64_t updated_ms, std::vector<std::string>* dropped);

// After a commit of `committed`: with write.metadata.delete-after-commit.enabled,
// deletes the metadata files its log dropped (best effort: one left behind is
// an orphan for orphan cleanup, no more).
void DeleteDroppedMetadata(FileIO& io, const iceberg::TableMetadata& committed,
                           const std::vector<std::string>& dropped);

// The default location of a table in a warehouse: <warehouse>/<ns...>/<name>,
// as a file:// URI when the warehouse is a local absolute path.
std::string DefaultTableLocation(const std::string& warehouse, const TableIdent& ident);

}  // namespace sluice::catalog
