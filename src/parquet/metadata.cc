// Thrift compact deserialization of the Parquet metadata structs (writing: metadata_write.cc).
#include "parquet/metadata.h"

#include <algorithm>

#include "parquet/thrift_compact.h"

namespace sluice::parquet {

using thrift::CompactReader;
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
  v->reserve(std::min<int32_t>(n, 1024));  // n is bounded by bytes, not by memory
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

}  // namespace

Result<FileMetaData> DeserializeFileMetaData(std::string_view data) {
  CompactReader r(data);
  FileMetaData md;
  RETURN_IF_ERROR(ReadFileMetaData(r, &md));
  return md;
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
