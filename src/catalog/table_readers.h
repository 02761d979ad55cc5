// Table readers: a pipeline that reads a table FROM TABLE records, in a
// property of its own target table committed with each checkpoint, the source
// table and the snapshot it stands at. Snapshot expiry of the source table
// keeps that snapshot, its parent and every newer one on main, so a stopped
// reader resumes exactly-once however long the table's retention is shorter
// than its pause (up to the holder's age limit: maintenance/expire.h).
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
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

// What each table's metadata records of readers, remembered with the
// metadata file it was read from (a metadata file never changes once
// written): a search through it reads only the tables whose catalog entry
// moved since the last search. Most tables of a large warehouse are idle
// between two expiries, so a maintenance service that expires each of them
// in turn no longer reads every table's metadata for each one. Thread-safe.
class TableReadersCache {
 public:
  // Metadata files searches through the cache have read (tests, metrics).
  int64_t metadata_reads() const {
    std::lock_guard<std::mutex> lock(mu_);
    return metadata_reads_;
  }

 private:
  friend Result<std::vector<TableReader>> FindTableReaders(Catalog&, FileIO&, const TableIdent&,
                                                           TableReadersCache*);
  struct Holder {
    std::string metadata_location;
    std::vector<TableReader> readers;  // of any table
  };
  mutable std::mutex mu_;
  std::map<std::string, Holder> holders_;  // by TableIdent::ToString()
  int64_t metadata_reads_ = 0;
};

// Every reader of `table` that the catalog's tables record. Tables dropped
// meanwhile or unreadable for good (and malformed values) are skipped; a
// retryable failure to read one is returned, so that an expiry does not go
// ahead without a reader it could not see. Reads every table's metadata, or
// with `cache` those whose catalog entry points at another metadata file than
// when the cache last read them (a catalog lookup each).
Result<std::vector<TableReader>> FindTableReaders(Catalog& catalog, FileIO& io,
                                                  const TableIdent& table,
                                                  TableReadersCache* cache = nullptr);

}  // namespace sluice::catalog
