// JSON lines → Batch: the ingest decoder for newline-delimited JSON records.
//
// One JsonDecoder per schema, reused across calls (it keeps the simdjson parser
// and scratch buffers). Each line must be one JSON object; blank lines are
// skipped. Keys are matched to top-level (and struct member) field names
// exactly; unknown keys are ignored; a repeated key is an error. A missing or
// null optional field becomes null; a missing or null required field is an
// error.
//
// Coercions, by Iceberg type:
//   boolean            true / false
//   int, long          JSON integers, range-checked (1.0 or "1" are rejected)
//   float, double      JSON numbers, or the strings "NaN", "Infinity", "-Infinity";
//                      float is parsed from the number text directly (no double
//                      rounding); a finite number beyond float's range is an error
//   decimal(p,s)       JSON numbers or strings, exact from their text (ParseDecimal):
//                      more than s fractional digits or p digits is an error
//   date               "YYYY-MM-DD" or an integer day number since 1970-01-01
//   time               "HH:MM[:SS[.ffffff]]" or integer µs since midnight
//   timestamp[tz]      ISO strings (ParseTimestamp; a zone offset is applied, no
//                      zone means UTC) or integer epoch µs
//   timestamp[tz]_ns   the same, at ns precision; integer epoch ns
//   string             JSON strings (UTF-8 validated by the parser)
//   binary, fixed[n]   hex strings ("0a1b"); fixed checks the length is n bytes
//   uuid               canonical "8-4-4-4-12" hex strings
//   list<T>            arrays
//   map<K,V>           objects (string keys, map<string, V> only) or arrays of
//                      {"key": k, "value": v} objects (any key type)
//   struct<...>        objects
// This is the inverse of AppendJsonRow (json_writer.h): every row it writes
// decodes back to identical values.
//
// Errors are kInvalidArgument (or kOutOfRange for values that do not fit) with
// the message "line N: field a.b[2]: reason". A failed line leaves the batch
// exactly as it was, so a caller may dead-letter it and continue.
//
// Thread-safety: a decoder is used by one thread at a time. Several decoders
// may decode on several threads at once (a pipeline's lanes). What a decoder
// writes for each record lies, as far as it controls it, where another
// decoder's data cannot share its cache lines: its own state on lines of its
// own (aligned), the members a row has set in a register (or on the struct's
// own lines past 64 members), and the parser's state allocated with the
// decoder (ReserveRecords). Its smaller scratch blocks (the path of nested
// values, the copy of an unpadded line) and the parser's own blocks are
// ordinary heap blocks (bench/README.md, "Two lanes' decoders on one cache
// line": in some heap layouts two lanes still decode slower than one).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "columnar/column.h"
#include "common/status.h"

namespace sluice {

class JsonDecoder {
 public:
  // Called for a line that failed to decode. Returning OK skips the line and
  // continues; returning an error stops DecodeLines with that error.
  using ErrorHandler =
      std::function<Status(int64_t line_no, std::string_view line, const Status& error)>;

  static Result<std::unique_ptr<JsonDecoder>> Make(std::shared_ptr<const Schema> schema);
  ~JsonDecoder();

  const std::shared_ptr<const Schema>& schema() const;

  // Allocates the parser's state now, for records of up to `record_bytes`
  // (a larger record grows it), not at the first record. Decoders built one
  // after the other for threads that decode at once (a pipeline's lanes) call
  // it as they are built: allocated by its first record instead, on whichever
  // thread decodes it, one decoder's parser state (written for every record)
  // could share a cache line with another's.
  Status ReserveRecords(size_t record_bytes);

  // Appends one row decoded from `line` (one JSON object) to `batch`, which must
  // have been made for this decoder's schema. A blank line appends nothing.
  // `line_no` is used in error messages only. When `padded`, `line` is
  // followed by a line end ('\n' or '\r') and at least kPadding readable
  // bytes after it, and is parsed where it lies instead of copied.
  Status DecodeLine(std::string_view line, int64_t line_no, Batch* batch, bool padded = false);

  // Decodes every '\n'-separated line of `buffer` (a trailing "\r" is ignored;
  // the last line need not end in '\n'). The first line is numbered
  // `first_line_no`. Without `on_error` the first bad line stops decoding and is
  // returned (rows of earlier lines stay appended). `*rows_appended`, when
  // given, receives the rows appended by this call.
  // When `padded`, at least kPadding readable bytes follow `buffer` (their
  // content is ignored) and the buffer is parsed in place instead of copied.
  // `*next_line_no`, when given, receives the number of the line after the
  // last one read.
  Status DecodeLines(std::string_view buffer, int64_t first_line_no, Batch* batch,
                     const ErrorHandler& on_error = nullptr, int64_t* rows_appended = nullptr,
                     bool padded = false, int64_t* next_line_no = nullptr);

  static constexpr size_t kPadding = 64;

 private:
  class Impl;
  explicit JsonDecoder(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace sluice
