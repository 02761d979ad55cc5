#include "sources/debezium_values.h"

#include <nlohmann/json.hpp>

#include "columnar/value_format.h"
#include "common/digest.h"

namespace sluice::sources {
namespace {

using json = nlohmann::json;

// The row struct's fields: an envelope's `after` (or `before`), else the
// schema itself (a flattened row).
const json* RowFields(const json& schema) {
  if (!schema.is_object() || !schema.contains("fields") || !schema["fields"].is_array()) {
    return nullptr;
  }
  for (const char* image : {"after", "before"}) {
    for (const json& f : schema["fields"]) {
      if (f.is_object() && f.value("field", "") == image && f.contains("fields") &&
          f["fields"].is_array()) {
        return &f["fields"];
      }
    }
  }
  return &schema["fields"];
}

// A big-endian two's complement integer of at most 16 bytes.
Result<int128_t> Unscaled(std::string_view bytes, const std::string& column) {
  if (bytes.empty() || bytes.size() > 16) {
    return Status::Invalid("column {}: a decimal of {} bytes (1 to 16 fit)", column, bytes.size());
  }
  int128_t v = static_cast<int8_t>(bytes[0]);  // the sign
  for (size_t i = 1; i < bytes.size(); ++i) {
    v = v * 256 + static_cast<uint8_t>(bytes[i]);
  }
  return v;
}

Result<std::string> DecimalText(const json& b64, int scale, const std::string& column) {
  if (!b64.is_string()) return Status::Invalid("column {}: a decimal is not base64 text", column);
  auto bytes = DecodeBase64(b64.get<std::string>());
  if (!bytes) return Status::Invalid("column {}: '{}' is not base64", column, b64.dump());
  ASSIGN_OR_RETURN(int128_t unscaled, Unscaled(*bytes, column));
  std::string text;
  AppendDecimal(unscaled, scale, &text);
  return text;
}

// `v` as an int64 (an unsigned number above INT64_MAX is refused, not wrapped).
Result<int64_t> Int64Of(const json& v, const std::string& column, std::string_view what) {
  bool fits = v.is_number_integer() &&
              (!v.is_number_unsigned() || v.get<uint64_t>() <= uint64_t{INT64_MAX});
  if (!fits) return Status::Invalid("column {}: {} is not {}", column, v.dump(), what);
  return v.get<int64_t>();
}

}  // namespace

Status DebeziumValues::Learn(std::string_view schema) {
  if (schema == schema_) return Status::OK();
  // Learned whole or not at all: a failure (or a throw) leaves nothing cached.
  schema_.clear();
  columns_.clear();
  json j = json::parse(schema, nullptr, false);
  const json* fields = j.is_discarded() ? nullptr : RowFields(j);
  std::map<std::string, Column> columns;
  for (const json& f : fields == nullptr ? json::array() : *fields) {
    if (!f.is_object() || !f.contains("field") || !f["field"].is_string()) continue;
    std::string name =
        f.contains("name") && f["name"].is_string() ? f["name"].get<std::string>() : "";
    std::string column = f["field"].get<std::string>();
    Column c{Kind::kMillisTs};
    if (name == "io.debezium.time.Timestamp" || name == "org.apache.kafka.connect.data.Timestamp") {
      c.kind = Kind::kMillisTs;
    } else if (name == "io.debezium.time.MicroTimestamp") {
      c.kind = Kind::kMicrosTs;
    } else if (name == "io.debezium.time.NanoTimestamp") {
      c.kind = Kind::kNanosTs;
    } else if (name == "io.debezium.time.Time" || name == "org.apache.kafka.connect.data.Time") {
      c.kind = Kind::kMillisTime;
    } else if (name == "io.debezium.time.MicroTime") {
      c.kind = Kind::kMicrosTime;
    } else if (name == "io.debezium.time.NanoTime") {
      c.kind = Kind::kNanosTime;
    } else if (name == "org.apache.kafka.connect.data.Decimal") {
      c.kind = Kind::kDecimal;
      // parameters.scale: a string in Connect's schemas (a number is taken too)
      const json* scale = nullptr;
      if (f.contains("parameters") && f["parameters"].is_object() &&
          f["parameters"].contains("scale")) {
        scale = &f["parameters"]["scale"];
      }
      std::string text = scale == nullptr     ? "0"
                         : scale->is_string() ? scale->get<std::string>()
                                              : scale->dump();
      char* end = nullptr;
      long s = std::strtol(text.c_str(), &end, 10);
      if (text.empty() || *end != '\0' || s < 0 || s > 38) {
        return Status::Invalid("column {}: decimal scale '{}'", column, text);
      }
      c.scale = static_cast<int>(s);
    } else if (name == "io.debezium.data.VariableScaleDecimal") {
      c.kind = Kind::kVariableDecimal;
    } else {
      continue;  // read as it is
    }
    columns[column] = c;
  }
  columns_ = std::move(columns);
  schema_.assign(schema);
  return Status::OK();
}

Result<std::string_view> DebeziumValues::Convert(std::string_view image) {
  if (columns_.empty()) return image;
  json row = json::parse(image, nullptr, false);
  if (!row.is_object()) return Status::Invalid("the row image is not a JSON object");
  for (auto& [column, c] : columns_) {
    auto it = row.find(column);
    if (it == row.end() || it->is_null()) continue;
    json& v = *it;
    std::string text;
    switch (c.kind) {
      case Kind::kMillisTs:
      case Kind::kMicrosTs:
      case Kind::kNanosTs: {
        ASSIGN_OR_RETURN(int64_t n, Int64Of(v, column, "an epoch integer"));
        // Milli- and microsecond timestamps as µs text (years 1 to 9999 fit:
        // the sentinels 0001-01-01 and 9999-12-31 included); nanosecond ones
        // as ns text, which µs columns read too.
        if (c.kind == Kind::kNanosTs) {
          AppendTimestamp(n, /*nanos=*/true, /*utc=*/false, &text);
          break;
        }
        int64_t per = c.kind == Kind::kMillisTs ? 1000 : 1;
        if (n > INT64_MAX / per || n < INT64_MIN / per) {
          return Status::Invalid("column {}: {} is out of range", column, n);
        }
        AppendTimestamp(n * per, /*nanos=*/false, /*utc=*/false, &text);
        break;
      }
      case Kind::kMillisTime:
      case Kind::kMicrosTime:
      case Kind::kNanosTime: {
        ASSIGN_OR_RETURN(int64_t n, Int64Of(v, column, "a time of day"));
        int64_t per_day = c.kind == Kind::kMillisTime   ? int64_t{86400} * 1000
                          : c.kind == Kind::kMicrosTime ? int64_t{86400} * 1000000
                                                        : int64_t{86400} * 1000000000;
        if (n < 0 || n >= per_day) {  // checked before scaling: no overflow
          return Status::Invalid("column {}: {} is not a time of day", column, n);
        }
        int64_t micros = c.kind == Kind::kMillisTime   ? n * 1000
                         : c.kind == Kind::kMicrosTime ? n
                                                       : n / 1000;
        AppendTime(micros, &text);
        break;
      }
      case Kind::kDecimal: {
        ASSIGN_OR_RETURN(text, DecimalText(v, c.scale, column));
        break;
      }
      case Kind::kVariableDecimal: {
        if (!v.is_object() || !v.contains("scale") || !v["scale"].is_number_integer() ||
            !v.contains("value")) {
          return Status::Invalid("column {}: {} is not a {{scale, value}} decimal", column,
                                 v.dump());
        }
        int64_t scale = v["scale"].is_number_unsigned() && v["scale"].get<uint64_t>() > 38
                            ? 39
                            : v["scale"].get<int64_t>();
        if (scale < 0 || scale > 38) return Status::Invalid("column {}: scale {}", column, scale);
        ASSIGN_OR_RETURN(text, DecimalText(v["value"], static_cast<int>(scale), column));
        break;
      }
    }
    v = text;
  }
  out_ = row.dump();
  return std::string_view(out_);
}

}  // namespace sluice::sources
