// VerifyTable: proof that every snapshot a table holds can be read, the
// check to run after a crash, a restore, or another engine's maintenance
// (`sluice table verify`, docs/maintenance.md "Verifying a table").
//
// For each snapshot, oldest first: its manifest list and manifests read, and
// every live data and delete file they list exists with the size the
// manifest records, and each deletion vector's blob lies inside its Puffin
// file. With `read_data`, every data and position delete file is also decoded
// whole, and its rows must number its record_count; each deletion vector
// decodes (length, magic, CRC) to record_count positions.
//
// Snapshots share most of their files: each manifest list, manifest and file
// is checked once, however many snapshots reach it (one `sluice scan` per
// snapshot read a file once per snapshot that holds it). A file's problem is
// reported once, under the first snapshot that reaches it.
//
// Every entry that names a file is compared with what the file holds (its
// size, and its decoded rows), each distinct entry once: another manifest may
// record other values for the same file.
//
// Problems (a file missing, a size that differs, a file that does not decode)
// are collected, not returned as an error: the report names each with its
// snapshot and path. The result is an error only when the check itself could
// not run. A format v1 snapshot with inline manifests (no manifest list) is
// counted as not checked, not as a problem. Reads nothing but the table's
// files; changes nothing.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "iceberg/table_metadata.h"
#include "io/file_io.h"

namespace sluice::maintenance {

struct VerifyOptions {
  // Decode every data and position delete file whole, and every deletion
  // vector (else: existence and size, from one open of each file).
  bool read_data = false;
};

struct SnapshotVerified {
  int64_t snapshot_id = 0;
  std::string operation;
  int64_t data_files = 0, delete_files = 0;
  // The live data files' record counts, and what their delete files record
  // (positions, deletion vector cardinalities, equality delete rows): the
  // snapshot reads records - deletes rows when no two deletes name one row.
  int64_t records = 0, deletes = 0;
  // Problems found first under this snapshot.
  int64_t problems = 0;
};

struct VerifyReport {
  std::vector<SnapshotVerified> snapshots;               // oldest first
  int64_t manifest_lists = 0, manifests = 0, files = 0;  // distinct, each checked once
  int64_t bytes_read = 0;                                // by read_data
  int64_t not_decoded = 0;  // by read_data: files in formats other than Parquet
  int64_t not_checked = 0;  // format v1 snapshots with inline manifests (no list)
  // "snapshot S: data file P: missing", ... in the order found.
  std::vector<std::string> problems;
};

Result<VerifyReport> VerifyTable(FileIO& io, const iceberg::TableMetadata& metadata,
                                 const VerifyOptions& options = {});

}  // namespace sluice::maintenance
