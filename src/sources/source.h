// Source: where a pipeline's records come from (the stream log that HTTP
// ingest appends to, a Kafka topic, a folder of JSON lines files).
//
// A source is a set of partitions, each an ordered sequence of records with
// increasing offsets. The pipeline owns the positions: it seeks every
// partition to the next offsets stored in the newest committed snapshot of the
// pipeline (exactly-once lives in the table, never in the source, so a source
// must not commit positions anywhere itself), polls records, and after a
// checkpoint commits the positions returned by CurrentPositions().
//
// Contract:
// - Seek(positions): the next Poll returns, per partition, the record at the
//   given next offset; partitions missing from `positions` start at their
//   earliest retained offset. A position that is no longer retained is
//   kOutOfRange (data was lost to retention: the pipeline stops rather than
//   silently skipping).
// - Poll delivers records in offset order per partition, each exactly once
//   after a Seek, and returns the number of records delivered (0 when nothing
//   arrived within `timeout_ms`).
// - CurrentPositions(): per partition, one past the last offset delivered (or the
//   seeked position): the offsets a checkpoint records.
// - Lag(): per partition, records available but not yet delivered (best effort,
//   for metrics and backpressure).
//
// Thread-safety: a source is used by its pipeline's thread only.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "common/status.h"
#include "sources/raw_batch.h"

namespace sluice::sources {

struct SourceRecord {
  const std::string& partition;  // stable partition name: "0", "1", or a file name
  int64_t offset = 0;
  int64_t timestamp_ms = 0;   // when the record entered the system (log append, Kafka timestamp)
  std::string_view value;     // the raw payload (one JSON document for FORMAT JSON)
  std::string_view key = {};  // the message key (Kafka); empty when the connector has none
  bool has_value = true;      // false: a record without a value (a Kafka tombstone)
};

// partition -> next offset
using Positions = std::map<std::string, int64_t>;

class Source {
 public:
  virtual ~Source() = default;
  // A short description for errors and dead letters, e.g. "http:events_in",
  // "kafka:events@broker:9092".
  virtual std::string Describe() const = 0;
  virtual Status Seek(const Positions& positions) = 0;
  // Delivers up to about `max_bytes` of record values to `sink`, waiting at
  // most `timeout_ms` for the first record. The record (and its value) is
  // valid only during the call.
  virtual Result<int64_t> Poll(int64_t max_bytes, int timeout_ms,
                               const std::function<void(const SourceRecord&)>& sink) = 0;
  // Poll, appending the records to `out`. This copies each record Poll
  // delivers; a source that reads bytes it can hand over as they are (a
  // file's lines) reads them straight into `out` instead.
  virtual Result<int64_t> PollInto(int64_t max_bytes, int timeout_ms, RawBatch* out) {
    return Poll(max_bytes, timeout_ms, [out](const SourceRecord& r) {
      out->Add(r.partition, r.offset, r.timestamp_ms, r.value, r.key, r.has_value);
    });
  }
  virtual Positions CurrentPositions() const = 0;
  virtual Positions Lag() const = 0;
  // Bounded runs (`sluice run --bounded`): true once a Poll found nothing
  // more to deliver after looking again (a file source: every complete line
  // of every file is read). Unbounded sources never are.
  virtual bool Exhausted() const { return false; }

  // A source reading a table of the catalog (FROM TABLE): the table
  // ("ns.name") and the snapshot its CurrentPositions() stand at, which a
  // restart needs (with its parent, for changes) and snapshot expiry must
  // therefore keep. Other sources hold nothing.
  struct TableHold {
    std::string table;
    int64_t snapshot_id = 0;
  };
  virtual std::optional<TableHold> Hold() const { return std::nullopt; }
};

}  // namespace sluice::sources
