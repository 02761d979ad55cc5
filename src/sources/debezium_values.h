// Debezium's schema-aware values. With the JSON converter's schemas on, each
// event's `schema` block names the logical type of every column, and some of
// their JSON values are encodings, not values: epoch integers at the
// precision the type names, base64 bytes of unscaled decimals. The JSON reader
// reads values by column type alone (integers as µs for timestamps), so these
// are turned into the text forms it reads exactly, before the row is decoded:
//
//   io.debezium.time.Timestamp, Kafka Connect Timestamp   epoch ms   -> ISO timestamp
//   io.debezium.time.MicroTimestamp                      epoch µs   -> ISO timestamp
//   io.debezium.time.NanoTimestamp                       epoch ns   -> ISO timestamp
//   io.debezium.time.Time, Kafka Connect Time            ms of day  -> "HH:MM:SS.ffffff"
//   io.debezium.time.MicroTime                           µs of day  -> "HH:MM:SS.ffffff"
//   io.debezium.time.NanoTime                            ns of day  -> "HH:MM:SS.ffffff"
//   Kafka Connect Decimal (parameters.scale)             base64     -> "123.45"
//   io.debezium.data.VariableScaleDecimal {scale, value}            -> "123.45"
//
// ISO timestamps carry 9 fractional digits and no zone (UTC), so microsecond
// and nanosecond columns, with or without time zone, read them exactly. Dates
// (days since the epoch) and ZonedTimestamp strings are read as they are.
// The schema is either an envelope's (the row struct of its `after` or
// `before` field) or a flattened row's (ExtractNewRecordState).
//
// Thread-safety: one thread at a time.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "common/status.h"

namespace sluice::sources {

class DebeziumValues {
 public:
  // Learns the conversions `schema` (the wrapper's schema JSON) names; the
  // same text as last time is not parsed again. A schema listing no row
  // fields names none. kInvalidArgument for a bad decimal scale.
  Status Learn(std::string_view schema);
  // True when the learned schema names no encoded column.
  bool empty() const { return columns_.empty(); }
  // `image` (a row object) with its encoded values converted; a view into
  // this object, valid until the next call. kInvalidArgument naming the
  // column when a value does not decode.
  Result<std::string_view> Convert(std::string_view image);

 private:
  enum class Kind {
    kMillisTs,
    kMicrosTs,
    kNanosTs,
    kMillisTime,
    kMicrosTime,
    kNanosTime,
    kDecimal,
    kVariableDecimal
  };
  struct Column {
    Kind kind;
    int scale = 0;
  };
  std::string schema_;
  std::map<std::string, Column> columns_;
  std::string out_;
};

}  // namespace sluice::sources
