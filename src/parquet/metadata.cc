// Thrift compact (de)serialization of the Parquet metadata structs.
#include "parquet/metadata.h"

#include "parquet/thrift_compact.h"

namespace sluice::parquet {

using thrift::CompactReader;
using thrift::CompactWriter;
using thrift::CType;

namespace {

// ---------------------------------------------------------------- reading

Status Read(CompactReader& r, CType t, bool* v) { return r.ReadBool(t, v); }
Status Read(CompactReader& r, CType t, int8_t* v) { return r.ReadI8(t, v); }
Status Read(CompactReader& r, CType t, int16_t* v) { return r.ReadI16(t, v); }
Status Read(CompactReader& r, CType t, int32_t* v) { return r.ReadI32(t, v); }
Status Read(CompactReader& r, CType t, int64_t* v) { return r.ReadI64(t, v); }
Status Read(CompactReader& r, CType t, std::string* v) { return r.ReadBinary(t, v); }

template <typename E>
requires std::is_enum_v<E> Status Read(CompactReader& r, CType t, E* v) {
  int32_t raw;
  RETURN_IF_ERROR(r.ReadI32(t, &raw));
  *v = static_cast<E>(raw);
  return Status::OK();
}

Status Read(CompactReader& r, CType t, LogicalType* v);
Status Read(CompactReader& r, CType t, Statistics* v);
Status Read(CompactReader& r, CType t, SchemaElement* v);
Status Read(CompactReader& r, CType t, KeyValue* v);
Status Read(CompactReader& r, CType t, ColumnMetaData* v);
Status Read(CompactReader& r, CType t, ColumnChunk* v);
Status Read(CompactReader& r, CType t, SortingColumn* v);
Status Read(CompactReader& r, CType t, RowGroup* v);
Status Read(CompactReader& r, CType t, DataPageHeader* v);
Status Read(CompactReader& r, CType t, DictionaryPageHeader* v);
Status Read(CompactReader& r, CType t, DataPageHeaderV2* v);

template <typename T>
Status Read(CompactReader& r, CType t, std::optional<T>* v) {
  T x{};
  RETURN_IF_ERROR(Read(r, t, &x));
  *v = std::move(x);
  return Status::OK();
}

template <typename T>
Status Read(CompactReader& r, CType t, std::vector<T>* v) {
  CType elem;
  int32_t n;
  RETURN_IF_ERROR(r.ReadListHeader(t, &elem, &n));
  v->clear();
  v->reserve(n);
  for (int32_t i = 0; i < n; ++i) {
    v->emplace_back();
    RETURN_IF_ERROR_CTX(Read(r, elem, &v->back()), "element {}", i);
  }
  return Status::OK();
}

// Iterates the fields of a struct, calling `on_field(type, id)` for each; the
// callback returns a Status and skips ids it does not know. Missing required
// fields (bit i of `required` = field id i) are reported by name.
template <typename F>
Status ReadStruct(CompactReader& r, CType t, const char* name, uint32_t required, F&& on_field) {
  if (t != CType::kStruct) {
    return Status::Corruption("thrift: {} has type {}, expected struct", name, CTypeName(t));
  }
  RETURN_IF_ERROR(r.StructBegin());
  uint32_t seen = 0;
  while (true) {
    CType ft;
    int16_t id;
    RETURN_IF_ERROR_CTX(r.ReadFieldHeader(&ft, &id), "{}", name);
    if (ft == CType::kStop) break;
    if (id > 0 && id < 32) seen |= 1u << id;
    RETURN_IF_ERROR_CTX(on_field(ft, id), "{} field {}", name, id);
  }
  r.StructEnd();
  uint32_t missing = required & ~seen;
  if (missing != 0) {
    return Status::Corruption("thrift: {} lacks required field {}", name, __builtin_ctz(missing));
  }
  return Status::OK();
}

#define SLUICE_FIELD(num, member) \
  case num: return Read(r, ft, &v->member)

Status ReadEmpty(CompactReader& r, CType t) { return r.Skip(t); }

Status ReadTimeUnit(CompactReader& r, CType t, TimeUnit* unit) {
  return ReadStruct(r, t, "TimeUnit", 0, [&](CType ft, int16_t id) -> Status {
    switch (id) {
      case 1: *unit = TimeUnit::kMillis; break;
      case 2: *unit = TimeUnit::kMicros; break;
      case 3: *unit = TimeUnit::kNanos; break;
    }
    return r.Skip(ft);
  });
}

Status Read(CompactReader& r, CType t, LogicalType* v) {
  return ReadStruct(r, t, "LogicalType", 0, [&](CType ft, int16_t id) -> Status {
    switch (id) {
      case 5:
        v->kind = LogicalType::Kind::kDecimal;
        return ReadStruct(r, ft, "DecimalType", 0b110, [&](CType t2, int16_t id2) -> Status {
          if (id2 == 1) return Read(r, t2, &v->scale);
          if (id2 == 2) return Read(r, t2, &v->precision);
          return r.Skip(t2);
        });
      case 7:
      case 8:
        v->kind = static_cast<LogicalType::Kind>(id);
        return ReadStruct(r, ft, id == 7 ? "TimeType" : "TimestampType", 0b110,
                          [&](CType t2, int16_t id2) -> Status {
                            if (id2 == 1) return Read(r, t2, &v->is_adjusted_to_utc);
                            if (id2 == 2) return ReadTimeUnit(r, t2, &v->unit);
                            return r.Skip(t2);
                          });
      case 10:
        v->kind = LogicalType::Kind::kInteger;
        return ReadStruct(r, ft, "IntType", 0b110, [&](CType t2, int16_t id2) -> Status {
          if (id2 == 1) return Read(r, t2, &v->bit_width);
          if (id2 == 2) return Read(r, t2, &v->is_signed);
          return r.Skip(t2);
        });
      case 1:
      case 2:
      case 3:
      case 4:
      case 6:
      case 11:
      case 12:
      case 13:
      case 14:
      case 15: v->kind = static_cast<LogicalType::Kind>(id); return ReadEmpty(r, ft);
      default: return r.Skip(ft);
    }
  });
}

Status Read(CompactReader& r, CType t, Statistics* v) {
  return ReadStruct(r, t, "Statistics", 0, [&](CType ft, int16_t id) -> Status {
    switch (id) {
      SLUICE_FIELD(1, max);
      SLUICE_FIELD(2, min);
      SLUICE_FIELD(3, null_count);
      SLUICE_FIELD(4, distinct_count);
      SLUICE_FIELD(5, max_value);
      SLUICE_FIELD(6, min_value);
      SLUICE_FIELD(7, is_max_value_exact);
      SLUICE_FIELD(8, is_min_value_exact);
      default: return r.Skip(ft);
    }
  });
}

Status Read(CompactReader& r, CType t, SchemaElement* v) {
  return ReadStruct(r, t, "SchemaElement", 1u << 4, [&](CType ft, int16_t id) -> Status {
    switch (id) {
      SLUICE_FIELD(1, type);
      SLUICE_FIELD(2, type_length);
      SLUICE_FIELD(3, repetition_type);
      SLUICE_FIELD(4, name);
      SLUICE_FIELD(5, num_children);
      SLUICE_FIELD(6, converted_type);
      SLUICE_FIELD(7, scale);
      SLUICE_FIELD(8, precision);
      SLUICE_FIELD(9, field_id);
      SLUICE_FIELD(10, logical_type);
      default: return r.Skip(ft);
    }
  });
}

Status Read(CompactReader& r, CType t, KeyValue* v) {
  return ReadStruct(r, t, "KeyValue", 1u << 1, [&](CType ft, int16_t id) -> Status {
    switch (id) {
      SLUICE_FIELD(1, key);
      SLUICE_FIELD(2, value);
      default: return r.Skip(ft);
    }
  });
}

Status Read(CompactReader& r, CType t, ColumnMetaData* v) {
  constexpr uint32_t kRequired = 0b1011111110;  // 1-7 and 9
  return ReadStruct(r, t, "ColumnMetaData", kRequired, [&](CType ft, int16_t id) -> Status {
    switch (id) {
      SLUICE_FIELD(1, type);
      SLUICE_FIELD(2, encodings);
      SLUICE_FIELD(3, path_in_schema);
      SLUICE_FIELD(4, codec);
      SLUICE_FIELD(5, num_values);
      SLUICE_FIELD(6, total_uncompressed_size);
      SLUICE_FIELD(7, total_compressed_size);
      SLUICE_FIELD(8, key_value_metadata);
      SLUICE_FIELD(9, data_page_offset);
      SLUICE_FIELD(10, index_page_offset);
      SLUICE_FIELD(11, dictionary_page_offset);
      SLUICE_FIELD(12, statistics);
      default: return r.Skip(ft);
    }
  });
}

Status Read(CompactReader& r, CType t, ColumnChunk* v) {
  return ReadStruct(r, t, "ColumnChunk", 0, [&](CType ft, int16_t id) -> Status {
    switch (id) {
      SLUICE_FIELD(1, file_path);
      SLUICE_FIELD(2, file_offset);
      SLUICE_FIELD(3, meta_data);
      default: return r.Skip(ft);
    }
  });
}

Status Read(CompactReader& r, CType t, SortingColumn* v) {
  return ReadStruct(r, t, "SortingColumn", 0b1110, [&](CType ft, int16_t id) -> Status {
    switch (id) {
      SLUICE_FIELD(1, column_idx);
      SLUICE_FIELD(2, descending);
      SLUICE_FIELD(3, nulls_first);
      default: return r.Skip(ft);
    }
  });
}

Status Read(CompactReader& r, CType t, RowGroup* v) {
  return ReadStruct(r, t, "RowGroup", 0b1110, [&](CType ft, int16_t id) -> Status {
    switch (id) {
      SLUICE_FIELD(1, columns);
      SLUICE_FIELD(2, total_byte_size);
      SLUICE_FIELD(3, num_rows);
      SLUICE_FIELD(4, sorting_columns);
      SLUICE_FIELD(5, file_offset);
      SLUICE_FIELD(6, total_compressed_size);
      SLUICE_FIELD(7, ordinal);
      default: return r.Skip(ft);
    }
  });
}

Status ReadColumnOrders(CompactReader& r, CType t, std::vector<bool>* v) {
  CType elem;
  int32_t n;
  RETURN_IF_ERROR(r.ReadListHeader(t, &elem, &n));
  v->clear();
  for (int32_t i = 0; i < n; ++i) {
    bool type_order = false;
    RETURN_IF_ERROR(ReadStruct(r, elem, "ColumnOrder", 0, [&](CType ft, int16_t id) -> Status {
      if (id == 1) type_order = true;
      return r.Skip(ft);
    }));
    v->push_back(type_order);
  }
  return Status::OK();
}

Status ReadFileMetaData(CompactReader& r, FileMetaData* v) {
  return ReadStruct(r, CType::kStruct, "FileMetaData", 0b11110,
                    [&](CType ft, int16_t id) -> Status {
                      switch (id) {
                        SLUICE_FIELD(1, version);
                        SLUICE_FIELD(2, schema);
                        SLUICE_FIELD(3, num_rows);
                        SLUICE_FIELD(4, row_groups);
                        SLUICE_FIELD(5, key_value_metadata);
                        SLUICE_FIELD(6, created_by);
                        case 7: return ReadColumnOrders(r, ft, &v->column_orders);
                        default: return r.Skip(ft);
                      }
                    });
}

Status Read(CompactReader& r, CType t, DataPageHeader* v) {
  return ReadStruct(r, t, "DataPageHeader", 0b11110, [&](CType ft, int16_t id) -> Status {
    switch (id) {
      SLUICE_FIELD(1, num_values);
      SLUICE_FIELD(2, encoding);
      SLUICE_FIELD(3, definition_level_encoding);
      SLUICE_FIELD(4, repetition_level_encoding);
      SLUICE_FIELD(5, statistics);
      default: return r.Skip(ft);
    }
  });
}

Status Read(CompactReader& r, CType t, DictionaryPageHeader* v) {
  return ReadStruct(r, t, "DictionaryPageHeader", 0b110, [&](CType ft, int16_t id) -> Status {
    switch (id) {
      SLUICE_FIELD(1, num_values);
      SLUICE_FIELD(2, encoding);
      SLUICE_FIELD(3, is_sorted);
      default: return r.Skip(ft);
    }
  });
}

Status Read(CompactReader& r, CType t, DataPageHeaderV2* v) {
  return ReadStruct(r, t, "DataPageHeaderV2", 0b1111110, [&](CType ft, int16_t id) -> Status {
    switch (id) {
      SLUICE_FIELD(1, num_values);
      SLUICE_FIELD(2, num_nulls);
      SLUICE_FIELD(3, num_rows);
      SLUICE_FIELD(4, encoding);
      SLUICE_FIELD(5, definition_levels_byte_length);
      SLUICE_FIELD(6, repetition_levels_byte_length);
      SLUICE_FIELD(7, is_compressed);
      SLUICE_FIELD(8, statistics);
      default: return r.Skip(ft);
    }
  });
}

Status ReadPageHeader(CompactReader& r, PageHeader* v) {
  return ReadStruct(r, CType::kStruct, "PageHeader", 0b1110, [&](CType ft, int16_t id) -> Status {
    switch (id) {
      SLUICE_FIELD(1, type);
      SLUICE_FIELD(2, uncompressed_page_size);
      SLUICE_FIELD(3, compressed_page_size);
      SLUICE_FIELD(4, crc);
      SLUICE_FIELD(5, data_page_header);
      SLUICE_FIELD(7, dictionary_page_header);
      SLUICE_FIELD(8, data_page_header_v2);
      default: return r.Skip(ft);
    }
  });
}

#undef SLUICE_FIELD

// ---------------------------------------------------------------- writing

void WriteEnumList(CompactWriter& w, int16_t id, const std::vector<Encoding>& v) {
  w.FieldListBegin(id, CType::kI32, static_cast<int32_t>(v.size()));
  for (Encoding e : v) w.ElemI32(static_cast<int32_t>(e));
}

void WriteStringList(CompactWriter& w, int16_t id, const std::vector<std::string>& v) {
  w.FieldListBegin(id, CType::kBinary, static_cast<int32_t>(v.size()));
  for (const auto& s : v) w.ElemBinary(s);
}

void WriteKeyValues(CompactWriter& w, int16_t id, const std::vector<KeyValue>& kvs) {
  if (kvs.empty()) return;
  w.FieldListBegin(id, CType::kStruct, static_cast<int32_t>(kvs.size()));
  for (const KeyValue& kv : kvs) {
    w.StructBegin();
    w.FieldBinary(1, kv.key);
    if (kv.value) w.FieldBinary(2, *kv.value);
    w.StructEnd();
  }
}

void WriteEmptyStructField(CompactWriter& w, int16_t id) {
  w.FieldStructBegin(id);
  w.StructEnd();
}

void WriteLogicalType(CompactWriter& w, const LogicalType& lt) {
  using K = LogicalType::Kind;
  int16_t id = static_cast<int16_t>(lt.kind);
  switch (lt.kind) {
    case K::kNone: return;
    case K::kDecimal:
      w.FieldStructBegin(id);
      w.FieldI32(1, lt.scale);
      w.FieldI32(2, lt.precision);
      w.StructEnd();
      break;
    case K::kTime:
    case K::kTimestamp:
      w.FieldStructBegin(id);
      w.FieldBool(1, lt.is_adjusted_to_utc);
      w.FieldStructBegin(2);
      WriteEmptyStructField(w, static_cast<int16_t>(static_cast<int>(lt.unit) + 1));
      w.StructEnd();
      w.StructEnd();
      break;
    case K::kInteger:
      w.FieldStructBegin(id);
      w.FieldI8(1, lt.bit_width);
      w.FieldBool(2, lt.is_signed);
      w.StructEnd();
      break;
    default: WriteEmptyStructField(w, id); break;
  }
}

void WriteStatistics(CompactWriter& w, const Statistics& s) {
  if (s.max) w.FieldBinary(1, *s.max);
  if (s.min) w.FieldBinary(2, *s.min);
  if (s.null_count) w.FieldI64(3, *s.null_count);
  if (s.distinct_count) w.FieldI64(4, *s.distinct_count);
  if (s.max_value) w.FieldBinary(5, *s.max_value);
  if (s.min_value) w.FieldBinary(6, *s.min_value);
  if (s.is_max_value_exact) w.FieldBool(7, *s.is_max_value_exact);
  if (s.is_min_value_exact) w.FieldBool(8, *s.is_min_value_exact);
}

void WriteSchemaElement(CompactWriter& w, const SchemaElement& e) {
  w.StructBegin();
  if (e.type) w.FieldI32(1, static_cast<int32_t>(*e.type));
  if (e.type_length) w.FieldI32(2, *e.type_length);
  if (e.repetition_type) w.FieldI32(3, static_cast<int32_t>(*e.repetition_type));
  w.FieldBinary(4, e.name);
  if (e.num_children) w.FieldI32(5, *e.num_children);
  if (e.converted_type) w.FieldI32(6, static_cast<int32_t>(*e.converted_type));
  if (e.scale) w.FieldI32(7, *e.scale);
  if (e.precision) w.FieldI32(8, *e.precision);
  if (e.field_id) w.FieldI32(9, *e.field_id);
  if (e.logical_type && e.logical_type->kind != LogicalType::Kind::kNone) {
    w.FieldStructBegin(10);
    WriteLogicalType(w, *e.logical_type);
    w.StructEnd();
  }
  w.StructEnd();
}

void WriteColumnMetaData(CompactWriter& w, const ColumnMetaData& m) {
  w.FieldI32(1, static_cast<int32_t>(m.type));
  WriteEnumList(w, 2, m.encodings);
  WriteStringList(w, 3, m.path_in_schema);
  w.FieldI32(4, static_cast<int32_t>(m.codec));
  w.FieldI64(5, m.num_values);
  w.FieldI64(6, m.total_uncompressed_size);
  w.FieldI64(7, m.total_compressed_size);
  WriteKeyValues(w, 8, m.key_value_metadata);
  w.FieldI64(9, m.data_page_offset);
  if (m.index_page_offset) w.FieldI64(10, *m.index_page_offset);
  if (m.dictionary_page_offset) w.FieldI64(11, *m.dictionary_page_offset);
  if (m.statistics) {
    w.FieldStructBegin(12);
    WriteStatistics(w, *m.statistics);
    w.StructEnd();
  }
}

void WriteRowGroup(CompactWriter& w, const RowGroup& rg) {
  w.StructBegin();
  w.FieldListBegin(1, CType::kStruct, static_cast<int32_t>(rg.columns.size()));
  for (const ColumnChunk& c : rg.columns) {
    w.StructBegin();
    if (c.file_path) w.FieldBinary(1, *c.file_path);
    w.FieldI64(2, c.file_offset);
    if (c.meta_data) {
      w.FieldStructBegin(3);
      WriteColumnMetaData(w, *c.meta_data);
      w.StructEnd();
    }
    w.StructEnd();
  }
  w.FieldI64(2, rg.total_byte_size);
  w.FieldI64(3, rg.num_rows);
  if (!rg.sorting_columns.empty()) {
    w.FieldListBegin(4, CType::kStruct, static_cast<int32_t>(rg.sorting_columns.size()));
    for (const SortingColumn& s : rg.sorting_columns) {
      w.StructBegin();
      w.FieldI32(1, s.column_idx);
      w.FieldBool(2, s.descending);
      w.FieldBool(3, s.nulls_first);
      w.StructEnd();
    }
  }
  if (rg.file_offset) w.FieldI64(5, *rg.file_offset);
  if (rg.total_compressed_size) w.FieldI64(6, *rg.total_compressed_size);
  if (rg.ordinal) w.FieldI16(7, *rg.ordinal);
  w.StructEnd();
}

}  // namespace

void SerializeFileMetaData(const FileMetaData& md, std::string* out) {
  CompactWriter w(out);
  w.StructBegin();
  w.FieldI32(1, md.version);
  w.FieldListBegin(2, CType::kStruct, static_cast<int32_t>(md.schema.size()));
  for (const SchemaElement& e : md.schema) WriteSchemaElement(w, e);
  w.FieldI64(3, md.num_rows);
  w.FieldListBegin(4, CType::kStruct, static_cast<int32_t>(md.row_groups.size()));
  for (const RowGroup& rg : md.row_groups) WriteRowGroup(w, rg);
  WriteKeyValues(w, 5, md.key_value_metadata);
  if (md.created_by) w.FieldBinary(6, *md.created_by);
  if (!md.column_orders.empty()) {
    w.FieldListBegin(7, CType::kStruct, static_cast<int32_t>(md.column_orders.size()));
    for (bool type_order : md.column_orders) {
      w.StructBegin();
      if (type_order) WriteEmptyStructField(w, 1);
      w.StructEnd();
    }
  }
  w.StructEnd();
}

Result<FileMetaData> DeserializeFileMetaData(std::string_view data) {
  CompactReader r(data);
  FileMetaData md;
  RETURN_IF_ERROR(ReadFileMetaData(r, &md));
  return md;
}

void SerializePageHeader(const PageHeader& h, std::string* out) {
  CompactWriter w(out);
  w.StructBegin();
  w.FieldI32(1, static_cast<int32_t>(h.type));
  w.FieldI32(2, h.uncompressed_page_size);
  w.FieldI32(3, h.compressed_page_size);
  if (h.crc) w.FieldI32(4, *h.crc);
  if (const auto& d = h.data_page_header) {
    w.FieldStructBegin(5);
    w.FieldI32(1, d->num_values);
    w.FieldI32(2, static_cast<int32_t>(d->encoding));
    w.FieldI32(3, static_cast<int32_t>(d->definition_level_encoding));
    w.FieldI32(4, static_cast<int32_t>(d->repetition_level_encoding));
    if (d->statistics) {
      w.FieldStructBegin(5);
      WriteStatistics(w, *d->statistics);
      w.StructEnd();
    }
    w.StructEnd();
  }
  if (const auto& d = h.dictionary_page_header) {
    w.FieldStructBegin(7);
    w.FieldI32(1, d->num_values);
    w.FieldI32(2, static_cast<int32_t>(d->encoding));
    if (d->is_sorted) w.FieldBool(3, *d->is_sorted);
    w.StructEnd();
  }
  if (const auto& d = h.data_page_header_v2) {
    w.FieldStructBegin(8);
    w.FieldI32(1, d->num_values);
    w.FieldI32(2, d->num_nulls);
    w.FieldI32(3, d->num_rows);
    w.FieldI32(4, static_cast<int32_t>(d->encoding));
    w.FieldI32(5, d->definition_levels_byte_length);
    w.FieldI32(6, d->repetition_levels_byte_length);
    w.FieldBool(7, d->is_compressed);
    if (d->statistics) {
      w.FieldStructBegin(8);
      WriteStatistics(w, *d->statistics);
      w.StructEnd();
    }
    w.StructEnd();
  }
  w.StructEnd();
}

Result<PageHeader> DeserializePageHeader(std::string_view data, size_t* consumed) {
  CompactReader r(data);
  PageHeader h;
  RETURN_IF_ERROR(ReadPageHeader(r, &h));
  if (consumed != nullptr) *consumed = r.position();
  return h;
}

std::string_view EncodingName(Encoding e) {
  switch (e) {
    case Encoding::kPlain: return "PLAIN";
    case Encoding::kPlainDictionary: return "PLAIN_DICTIONARY";
    case Encoding::kRle: return "RLE";
    case Encoding::kBitPacked: return "BIT_PACKED";
    case Encoding::kDeltaBinaryPacked: return "DELTA_BINARY_PACKED";
    case Encoding::kDeltaLengthByteArray: return "DELTA_LENGTH_BYTE_ARRAY";
    case Encoding::kDeltaByteArray: return "DELTA_BYTE_ARRAY";
    case Encoding::kRleDictionary: return "RLE_DICTIONARY";
    case Encoding::kByteStreamSplit: return "BYTE_STREAM_SPLIT";
  }
  return "UNKNOWN_ENCODING";
}

std::string_view CodecName(CompressionCodec c) {
  switch (c) {
    case CompressionCodec::kUncompressed: return "UNCOMPRESSED";
    case CompressionCodec::kSnappy: return "SNAPPY";
    case CompressionCodec::kGzip: return "GZIP";
    case CompressionCodec::kLzo: return "LZO";
    case CompressionCodec::kBrotli: return "BROTLI";
    case CompressionCodec::kLz4: return "LZ4";
    case CompressionCodec::kZstd: return "ZSTD";
    case CompressionCodec::kLz4Raw: return "LZ4_RAW";
  }
  return "UNKNOWN_CODEC";
}

std::string_view PhysicalTypeName(PhysicalType t) {
  switch (t) {
    case PhysicalType::kBoolean: return "BOOLEAN";
    case PhysicalType::kInt32: return "INT32";
    case PhysicalType::kInt64: return "INT64";
    case PhysicalType::kInt96: return "INT96";
    case PhysicalType::kFloat: return "FLOAT";
    case PhysicalType::kDouble: return "DOUBLE";
    case PhysicalType::kByteArray: return "BYTE_ARRAY";
    case PhysicalType::kFixedLenByteArray: return "FIXED_LEN_BYTE_ARRAY";
  }
  return "UNKNOWN_TYPE";
}

}  // namespace sluice::parquet
