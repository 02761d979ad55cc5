// Change formats: what one record of a change-data-capture source says
// changed (docs/cdc.md).
//
// A source's FORMAT says how its records are read:
//   JSON      every record is a row (an event; into a primary-key table, an
//             upsert of the row's key).
//   UPSERT    every record is the current row of its key; a delete is
//             - a record without a value (a Kafka tombstone) whose message key
//               holds the key columns as a JSON object, or the JSON literal
//               null (bare or as the wrapper's payload) with such a key, or
//             - a row with "__deleted": true (or "true"): what Debezium's
//               ExtractNewRecordState transform writes with
//               delete.handling.mode=rewrite.
//   DEBEZIUM  Debezium's change event envelope: {"before", "after", "source",
//             "op", "ts_ms"}, bare or inside the JSON converter's
//             {"schema": ..., "payload": ...} wrapper (a null payload is a
//             tombstone). op c (create), r
//             (snapshot read) and u (update) upsert `after`; d deletes the key
//             of `before`. Tombstones (no value, or null) change nothing.
//             Other ops (t truncate, m message) are errors: the record is a
//             dead letter.
// The key of a record (a Kafka message key) may also be wrapped in
// {"schema", "payload"}.
//
// Log positions (DEBEZIUM): Parse encodes the change's position in the
// database's log as a string that compares (as bytes) in the log's order:
//   PostgreSQL  source.sequence ["<lsn of the last commit>", "<lsn>"]
//   MySQL       source.file, source.pos, source.row
//   SQL Server  source.commit_lsn, source.change_lsn, source.event_serial_no
// Other connectors, and PostgreSQL events without `sequence` (their lsn alone
// is not in stream order across transactions), have no position: they are
// never treated as replays. ChangeReplayed() decides with these positions.
// Positions that go backwards (a MySQL binlog reset: RESET MASTER, a new
// server without GTID continuity) look like replays: docs/cdc.md says what to
// do then.
//
// Errors are kInvalidArgument naming what is wrong ("op 'd' without a
// before image"); the caller makes the record a dead letter.
//
// Thread-safety: a ChangeParser is used by one thread at a time.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "common/status.h"

namespace sluice::sources {

// kChangelog is not a FORMAT a user writes: it is how a table source in
// changelog mode (FROM TABLE ... WITH (mode = 'changelog')) delivers rows:
// each record is the row with a "_change" field, +I or +U (upserts), -D or
// -U (deletes its key; an update's +U follows its -U).
enum class ChangeFormat { kJson, kUpsert, kDebezium, kChangelog };

// "json", "upsert", "debezium" (lowercase) -> the format; kInvalidArgument
// naming the known ones otherwise.
Result<ChangeFormat> ParseChangeFormat(std::string_view name);
const char* ChangeFormatName(ChangeFormat format);

struct Change {
  enum class Kind { kUpsert, kDelete, kNone };
  Kind kind = Kind::kNone;
  // kUpsert: the new row, a JSON object. kDelete: a JSON object holding at
  // least the key's columns (the old row, or the message key). Parse reads
  // the top-level fields only: values nested inside the image are checked
  // when the row is decoded (a bad one makes the record a dead letter there).
  // Valid until the parser's next Parse.
  std::string_view image;
  std::string position;   // empty: the format or connector gives none
  bool snapshot = false;  // a snapshot read (op r, or source.snapshot set): for errors and stats
};

class ChangeParser {
 public:
  explicit ChangeParser(ChangeFormat format);
  ~ChangeParser();
  ChangeParser(const ChangeParser&) = delete;
  ChangeParser& operator=(const ChangeParser&) = delete;

  ChangeFormat format() const { return format_; }
  // `value` is nullopt for a record without a value (a tombstone); `key` is
  // the record's message key (empty when the connector has none).
  Status Parse(std::optional<std::string_view> value, std::string_view key, Change* out);

 private:
  struct Impl;
  ChangeFormat format_;
  std::unique_ptr<Impl> impl_;
};

// Whether a change at `position` repeats one already applied, given the
// highest position applied so far from its source partition (`applied`):
// it is strictly below it. A change at exactly that position is applied (a
// key update is a delete and a create at one position; snapshot reads share
// one). Changes without a position, or before any, are never replays.
bool ChangeReplayed(const std::string& applied, const std::string& position);
// The highest position applied after `position`.
void AdvanceChangePosition(const std::string& position, std::string* applied);

}  // namespace sluice::sources
