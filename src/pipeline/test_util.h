// Helpers for the pipeline tests: a table's rows as sorted JSON lines, the
// multiset of the ids those rows start with (to check exactly-once), and a
// fixture with a catalog, a partitioned target table, its dead-letter table and a
// stream log, whose FileIO can inject faults.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "catalog/catalog.h"
#include "catalog/table.h"
#include "io/fault_injection_file_io.h"
#include "io/file_io.h"
#include "log/stream_log.h"
#include "pipeline/pipeline.h"

namespace sluice::pipeline::testing {

// Every row of the table's current snapshot, as JSON lines, sorted. A table
// that cannot be loaded or scanned adds a test failure and yields no rows.
std::vector<std::string> TableRows(catalog::Catalog& catalog, FileIO& io,
                                   const catalog::TableIdent& table);
// The value of each row's first column (an integer id), as a multiset.
std::multiset<int64_t> LeadingIds(const std::vector<std::string>& rows);
// {from, ..., to - 1}
std::multiset<int64_t> IdRange(int64_t from, int64_t to);

// A scratch warehouse per test: SQLite catalog, lake.events (partitioned by
// day(ts)) with its dead-letter table, and the stream log "events_in". Every table
// file goes through `faults_` (a FaultInjectingFileIO over local files): `io_`.
class PipelineFixture : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;
  // Tears everything down and builds it again, empty (for loops of cases).
  void Reset();

  PipelineOptions Options(int64_t interval_ms = 60'000);
  Result<std::unique_ptr<Pipeline>> Open(PipelineOptions o);
  // A pipeline reading `table`'s changelog (source `source_name`, looking for
  // new snapshots at every poll).
  Result<std::unique_ptr<Pipeline>> OpenOnChangelog(PipelineOptions o,
                                                    const catalog::TableIdent& table,
                                                    const std::string& source_name);
  static std::string Event(int64_t id);
  void Produce(int64_t from, int64_t to);
  // Steps until the source has nothing left, without a checkpoint.
  void Consume(Pipeline& p);
  // The same, returning the first error instead of failing the test.
  Status TryConsume(Pipeline& p);

  // Every row of a table as JSON lines, sorted.
  std::vector<std::string> Rows(const catalog::TableIdent& ident) {
    return TableRows(*catalog_, *io_, ident);
  }
  std::multiset<int64_t> Ids() { return LeadingIds(Rows(target_)); }
  static std::multiset<int64_t> Range(int64_t from, int64_t to) { return IdRange(from, to); }
  const iceberg::Snapshot* Current();
  // Creates `table` (`columns` as in CREATE TABLE, primary key `key`,
  // partitioned by bucket(4, <first key column>)) and its dead-letter table.
  void CreateKeyedTable(const catalog::TableIdent& table, const std::string& columns,
                        const std::vector<std::string>& key, int format_version);

  std::filesystem::path dir_;
  std::string warehouse_;
  catalog::TableIdent target_{{"lake"}, "events"};
  std::shared_ptr<const Schema> schema_;
  std::unique_ptr<catalog::Catalog> catalog_;
  std::unique_ptr<FileIO> local_ = MakeLocalFileIO();
  FaultInjectingFileIO faults_{local_.get()};
  FileIO* io_ = &faults_;
  std::unique_ptr<log::StreamLog> log_;
  std::unique_ptr<catalog::Table> table_;
};

}  // namespace sluice::pipeline::testing
