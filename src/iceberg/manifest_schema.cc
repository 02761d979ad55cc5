#include "iceberg/manifest_schema.h"

namespace sluice::iceberg::internal {

namespace {

Field Req(int32_t id, const char* name, TypePtr type) { return Field{id, name, type, true, ""}; }
Field Opt(int32_t id, const char* name, TypePtr type) { return Field{id, name, type, false, ""}; }

TypePtr IntMap(int32_t key_id, int32_t value_id, TypePtr value) {
  return DataType::Map(Field{key_id, "key", DataType::Int(), true, ""},
                       Field{value_id, "value", std::move(value), true, ""});
}

TypePtr ListOf(int32_t element_id, TypePtr element, bool required = true) {
  return DataType::List(Field{element_id, "element", std::move(element), required, ""});
}

}  // namespace

Schema ManifestEntrySchema(const TypePtr& partition_type, int format_version) {
  bool v3 = format_version >= 3;
  std::vector<Field> file = {
      Req(134, "content", DataType::Int()),
      Req(100, "file_path", DataType::String()),
      Req(101, "file_format", DataType::String()),
      Req(102, "partition", partition_type),
      Req(103, "record_count", DataType::Long()),
      Req(104, "file_size_in_bytes", DataType::Long()),
      Opt(108, "column_sizes", IntMap(117, 118, DataType::Long())),
      Opt(109, "value_counts", IntMap(119, 120, DataType::Long())),
      Opt(110, "null_value_counts", IntMap(121, 122, DataType::Long())),
      Opt(137, "nan_value_counts", IntMap(138, 139, DataType::Long())),
      Opt(125, "lower_bounds", IntMap(126, 127, DataType::Binary())),
      Opt(128, "upper_bounds", IntMap(129, 130, DataType::Binary())),
      Opt(131, "key_metadata", DataType::Binary()),
      Opt(132, "split_offsets", ListOf(133, DataType::Long())),
      Opt(135, "equality_ids", ListOf(136, DataType::Int())),
      Opt(140, "sort_order_id", DataType::Int()),
  };
  if (v3) file.push_back(Opt(142, "first_row_id", DataType::Long()));
  file.push_back(Opt(143, "referenced_data_file", DataType::String()));
  if (v3) {
    file.push_back(Opt(144, "content_offset", DataType::Long()));
    file.push_back(Opt(145, "content_size_in_bytes", DataType::Long()));
  }
  Schema s;
  s.fields = {Req(0, "status", DataType::Int()), Opt(1, "snapshot_id", DataType::Long()),
              Opt(3, "sequence_number", DataType::Long()),
              Opt(4, "file_sequence_number", DataType::Long()),
              Req(2, "data_file", DataType::Struct(std::move(file)))};
  return s;
}

Schema ManifestFileSchema(int format_version) {
  TypePtr summary = DataType::Struct({Req(509, "contains_null", DataType::Boolean()),
                                      Opt(518, "contains_nan", DataType::Boolean()),
                                      Opt(510, "lower_bound", DataType::Binary()),
                                      Opt(511, "upper_bound", DataType::Binary())});
  Schema s;
  s.fields = {Req(500, "manifest_path", DataType::String()),
              Req(501, "manifest_length", DataType::Long()),
              Req(502, "partition_spec_id", DataType::Int()),
              Req(517, "content", DataType::Int()),
              Req(515, "sequence_number", DataType::Long()),
              Req(516, "min_sequence_number", DataType::Long()),
              Req(503, "added_snapshot_id", DataType::Long()),
              Req(504, "added_files_count", DataType::Int()),
              Req(505, "existing_files_count", DataType::Int()),
              Req(506, "deleted_files_count", DataType::Int()),
              Req(512, "added_rows_count", DataType::Long()),
              Req(513, "existing_rows_count", DataType::Long()),
              Req(514, "deleted_rows_count", DataType::Long()),
              Opt(507, "partitions", ListOf(508, summary)),
              Opt(519, "key_metadata", DataType::Binary())};
  if (format_version >= 3) s.fields.push_back(Opt(520, "first_row_id", DataType::Long()));
  return s;
}

const Column* ChildById(const Column& parent, int32_t id) {
  const auto& fields = parent.type()->fields();
  for (size_t i = 0; i < fields.size(); ++i) {
    if (fields[i].id == id) return &parent.child(static_cast<int>(i));
  }
  return nullptr;
}

const Column* ColumnById(const Batch& batch, int32_t id) {
  for (size_t i = 0; i < batch.schema->fields.size(); ++i) {
    if (batch.schema->fields[i].id == id) return &batch.columns[i];
  }
  return nullptr;
}

}  // namespace sluice::iceberg::internal
