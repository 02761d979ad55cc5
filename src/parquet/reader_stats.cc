// Decoding column-chunk statistics into Iceberg values (for pruning and the CLI).
#include "columnar/json_writer.h"
#include "parquet/reader.h"
#include "parquet/reader_internal.h"

namespace sluice::parquet {

namespace {

// Converts one raw statistics value to a one-row Column of the leaf's type.
std::optional<Column> StatToColumn(const ColumnDescriptor& desc, const SchemaElement& element,
                                   std::string_view raw) {
  ValueBuffer buf;
  buf.Reset(desc.physical_type, desc.type_length);
  if (buf.is_byte_array()) {
    if (!buf.AppendBytes(raw).ok()) return std::nullopt;
  } else {
    if (raw.size() != static_cast<size_t>(buf.width)) return std::nullopt;
    buf.fixed.assign(raw.begin(), raw.end());
  }
  Column col(desc.type);
  if (!internal::ConvertValues(buf, desc, element, &col).ok() || col.size() != 1) {
    return std::nullopt;
  }
  return col;
}

bool IsUnsignedOrder(const SchemaElement& e) {
  if (e.logical_type && e.logical_type->kind == LogicalType::Kind::kInteger) {
    return !e.logical_type->is_signed;
  }
  return e.converted_type == ConvertedType::kUint8 || e.converted_type == ConvertedType::kUint16 ||
         e.converted_type == ConvertedType::kUint32 || e.converted_type == ConvertedType::kUint64;
}

}  // namespace

std::optional<IntStats> DecodeIntStats(const ColumnDescriptor& desc, const SchemaElement& element,
                                       const Statistics& stats) {
  TypeId t = desc.type->id();
  bool is_int32 = t == TypeId::kInt || t == TypeId::kDate;
  bool is_int64 = t == TypeId::kLong || t == TypeId::kTime || t == TypeId::kTimestamp ||
                  t == TypeId::kTimestampTz || t == TypeId::kTimestampNs ||
                  t == TypeId::kTimestampTzNs;
  if ((!is_int32 && !is_int64) || desc.physical_type == PhysicalType::kInt96) return std::nullopt;
  const std::optional<std::string>* lo = &stats.min_value;
  const std::optional<std::string>* hi = &stats.max_value;
  if (!lo->has_value() || !hi->has_value()) {
    // The deprecated fields use signed order, wrong for unsigned columns.
    if (IsUnsignedOrder(element)) return std::nullopt;
    lo = &stats.min;
    hi = &stats.max;
  }
  if (!lo->has_value() || !hi->has_value()) return std::nullopt;
  auto a = StatToColumn(desc, element, **lo);
  auto b = StatToColumn(desc, element, **hi);
  if (!a || !b) return std::nullopt;
  IntStats s;
  if (is_int32) {
    s.min = a->Value<int32_t>(0);
    s.max = b->Value<int32_t>(0);
  } else {
    s.min = a->Value<int64_t>(0);
    s.max = b->Value<int64_t>(0);
  }
  return s;
}

std::string FormatStatValue(const ColumnDescriptor& desc, const SchemaElement& element,
                            std::string_view raw) {
  std::string out;
  if (auto col = StatToColumn(desc, element, raw)) {
    AppendJsonValue(*col, 0, &out);
  } else {
    out = "0x";
    static const char kHex[] = "0123456789abcdef";
    for (unsigned char c : raw) {
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

}  // namespace sluice::parquet
