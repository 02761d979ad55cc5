// Table readers: a pipeline that reads a table FROM TABLE records, in a
// property of its own target table committed with each checkpoint, the source
// table and the snapshot it stands at. Snapshot expiry of the source table
// keeps that snapshot, its parent and every newer one on main, so a stopped
// reader resumes exactly-once however long the table's retention is shorter
// than its pause (up to the holder's age limit: maintenance/expire.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "catalog/catalog.h"
#include "io/file_io.h"

namespace sluice::catalog {

struct TableReader {
  std::string pipeline;
  TableIdent holder;  // the table whose property records the reader
  TableIdent table;   // the table read
  int64_t snapshot_id = 0;
  int64_t at_ms = 0;  // when the reader last committed its position
};

// "sluice.reader.<pipeline>"
std::string ReaderProperty(const std::string& pipeline);
// {"table": "db.events", "snapshot": 7205..., "at_ms": 1760000000000}
std::string EncodeReaderProperty(const std::string& table, int64_t snapshot_id, int64_t at_ms);

// Every reader of `table` that the catalog's tables record. Tables dropped
// meanwhile or unreadable for good (and malformed values) are skipped; a
// retryable failure to read one is returned, so that an expiry does not go
// ahead without a reader it could not see. Reads every table's metadata.
Result<std::vector<TableReader>> FindTableReaders(Catalog& catalog, FileIO& io,
                                                  const TableIdent& table);

}  // namespace sluice::catalog
