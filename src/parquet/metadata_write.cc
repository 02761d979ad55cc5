// Thrift compact serialization of the Parquet metadata structs.
#include "parquet/metadata.h"
#include "parquet/thrift_compact.h"

namespace sluice::parquet {

using thrift::CompactWriter;
using thrift::CType;

namespace {

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

}  // namespace sluice::parquet
