// TableSource: a pipeline source reading an Iceberg table's appends, snapshot
// by snapshot (CREATE SOURCE s FROM TABLE lake.events). It chains pipelines
// (raw events -> per-minute -> per-hour) and recomputes history.
//
// The table's main branch is read in commit order, oldest snapshot first: for
// each append snapshot, the rows of the data files it added, file by file in
// manifest order. Compactions (replace) and row deletes add no rows and are
// skipped: deletions and rewrites are not streamed in this mode. An overwrite
// snapshot, which changes rows, stops the source with kNotImplemented rather
// than reading rows twice (changelog mode, below, reads it).
//
// Position: one partition named by the id of the snapshot being read, its
// offset the rows of that snapshot delivered so far ({"7205...": 1200}); the
// pipeline commits it like any offset, so a restart resumes inside a snapshot
// exactly. A snapshot delivered whole stays the position until the next one
// starts. With no position the source starts at the oldest snapshot still in
// the table (start = 'earliest') or after the current one (start = 'latest').
// A position naming a snapshot the table no longer has (expired) is
// kOutOfRange.
//
// Records are the rows as JSON objects (columnar/json_writer.h), decoded by
// the pipeline with the source's schema (the table's schema when bound);
// their timestamp is the snapshot's commit time.
//
// Changelog mode (WITH (mode = 'changelog')): every snapshot's changes
// instead (iceberg/changelog.h: inserts, updates, deletes; compactions have
// none), each record the row with "_change": "+I", "-U", "+U" or "-D" (the
// pipeline reads them as sources::ChangeFormat::kChangelog); overwrite and
// delete snapshots are read too. The position counts the snapshot's changes
// delivered; once all are, it is "<id>:end" (a resume there computes no
// changelog). A snapshot's changes are held in memory while it is delivered;
// Lag counts added records, an estimate. A snapshot whose parent has expired
// (the oldest one left, for a reader starting at 'earliest' after snapshot
// expiry) has no changes to read: it is delivered whole instead, every row
// of the table as of it a +I (the snapshot phase of a CDC reader), its
// position "<id>:all" while it is read. A snapshot whose parent expired while
// its changes were being read cannot be resumed: kOutOfRange.
//
// Bounded (sluice run --bounded): reads up to the snapshot current when the
// source opened. Otherwise the table is looked at again every
// `refresh_interval_ms` for new snapshots.
//
// Thread-safety: used by its pipeline's thread only (see source.h).
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "catalog/catalog.h"
#include "iceberg/changelog.h"
#include "io/file_io.h"
#include "sources/source.h"

namespace sluice::iceberg {
class TableScan;
struct TableMetadata;
}  // namespace sluice::iceberg

namespace sluice::sources {

struct TableSourceOptions {
  catalog::TableIdent table;
  std::string name;  // the SQL source's name
  bool start_latest = false;
  bool bounded = false;
  bool changelog = false;  // mode = 'changelog'
  int refresh_interval_ms = 200;
};

class TableSource : public Source {
 public:
  static Result<std::unique_ptr<TableSource>> Open(catalog::Catalog& catalog, FileIO& io,
                                                   TableSourceOptions options);
  ~TableSource() override;

  std::string Describe() const override { return "table:" + options_.table.ToString(); }
  std::optional<TableHold> Hold() const override;
  Status Seek(const Positions& positions) override;
  Result<int64_t> Poll(int64_t max_bytes, int timeout_ms,
                       const std::function<void(const SourceRecord&)>& sink) override;
  Positions CurrentPositions() const override;
  Positions Lag() const override;
  bool Exhausted() const override;

 private:
  TableSource(catalog::Catalog& catalog, FileIO& io, TableSourceOptions options);

  // Reloads the table; `pending_` gets the append snapshots after the
  // position's, oldest first (up to end_ when bounded).
  Status Refresh();
  // Starts reading the next pending snapshot (skipping `skip` rows of it).
  Status StartSnapshot(int64_t snapshot_id, int64_t skip);
  // The records snapshot `id` gives: the rows it added (from its manifests),
  // or in changelog mode its changes.
  Result<int64_t> AddedRows(int64_t snapshot_id);
  // Changelog mode: delivers changes_ from skip_ on (up to about max_bytes).
  Status DeliverChanges(int64_t max_bytes, const std::function<void(const SourceRecord&)>& sink,
                        int64_t* delivered, int64_t* bytes);
  // Changelog mode: the changes of snapshot `id`, or (`whole`) all its rows as +I.
  Result<iceberg::SnapshotChanges> ChangesOf(int64_t snapshot_id, bool whole = false);
  // Whether a snapshot's parent is gone from the table (it has one, expired).
  bool ParentExpired(int64_t snapshot_id) const;

  catalog::Catalog& catalog_;
  FileIO& io_;
  TableSourceOptions options_;
  std::shared_ptr<const iceberg::TableMetadata> metadata_;
  std::optional<int64_t> end_;  // bounded: the snapshot current at open (none: empty table)

  // The position: the snapshot being (or last) read and its rows delivered.
  int64_t snapshot_ = 0;  // 0: none yet
  int64_t delivered_ = 0;
  bool snapshot_done_ = true;
  std::vector<int64_t> pending_;              // append snapshots after snapshot_, oldest first
  std::unique_ptr<iceberg::TableScan> scan_;  // of snapshot_, while reading it
  int64_t skip_ = 0;                          // rows of scan_ still to skip (a resume)
  std::optional<iceberg::SnapshotChanges> changes_;  // changelog mode: of snapshot_, while read
  bool whole_ = false;  // changelog mode: snapshot_ is delivered whole (its parent expired)
  std::string row_;
  std::chrono::steady_clock::time_point last_refresh_{};
};

}  // namespace sluice::sources
