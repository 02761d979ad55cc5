// manifest.h's writing half (and PartitionType); reading is manifest_read.cc.
#include "iceberg/manifest.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "avro/writer.h"
#include "columnar/single_value.h"
#include "common/endian.h"
#include "iceberg/manifest_schema.h"
#include "iceberg/schema_json.h"

namespace sluice::iceberg {

Result<TypePtr> PartitionType(const PartitionSpec& spec, const Schema& schema) {
  std::vector<Field> fields;
  for (const auto& pf : spec.fields) {
    const Field* source = schema.FindById(pf.source_id);
    TypePtr type;
    if (source == nullptr) {
      // A dropped source column: the value can only be null (void) for new data.
      type = DataType::Int();
    } else if (pf.transform.kind == Transform::Kind::kUnknown) {
      return Status::NotImplemented("partition field {}: unknown transform \"{}\"", pf.name,
                                    pf.transform.ToString());
    } else {
      ASSIGN_OR_RETURN(type, pf.transform.ResultType(source->type));
    }
    fields.push_back(Field{pf.field_id, pf.name, type, false, ""});
  }
  return DataType::Struct(std::move(fields));
}

// ---------------------------------------------------------------- writing

namespace {

void AppendOptLong(Column* c, const std::optional<int64_t>& v) {
  if (v) {
    c->Append<int64_t>(*v);
  } else {
    c->AppendNull();
  }
}

void AppendOptBytes(Column* c, const std::optional<std::string>& v) {
  if (v) {
    c->AppendBytes(*v);
  } else {
    c->AppendNull();
  }
}

template <typename V>
void AppendIntMap(Column* c, const std::map<int32_t, V>& m) {
  if (m.empty()) {
    c->AppendNull();
    return;
  }
  for (const auto& [k, v] : m) {
    c->mutable_child(0)->Append<int32_t>(k);
    if constexpr (std::is_same_v<V, std::string>) {
      c->mutable_child(1)->AppendBytes(v);
    } else {
      c->mutable_child(1)->Append<int64_t>(v);
    }
  }
  c->FinishNested();
}

template <typename V>
void AppendList(Column* c, const std::vector<V>& values) {
  if (values.empty()) {
    c->AppendNull();
    return;
  }
  for (V v : values) c->mutable_child(0)->Append<V>(v);
  c->FinishNested();
}

}  // namespace

struct ManifestWriter::Impl {
  std::string path;
  ManifestWriterOptions options;
  int32_t spec_id = 0;
  TypePtr partition_type;
  std::shared_ptr<const Schema> entry_schema;
  std::unique_ptr<avro::AvroWriter> writer;
  Batch batch;
  ManifestFile result;
  std::vector<FieldSummary> summaries;
  int64_t min_seq = kInheritedSequence;

  Status Flush() {
    if (batch.num_rows() == 0) return Status::OK();
    RETURN_IF_ERROR(writer->Write(batch));
    for (auto& c : batch.columns) c.Clear();
    return Status::OK();
  }

  void Summarize(const PartitionValues& values) {
    for (size_t i = 0; i < summaries.size(); ++i) {
      FieldSummary& s = summaries[i];
      const auto& v = i < values.size() ? values[i] : std::nullopt;
      if (!v) {
        s.contains_null = true;
        continue;
      }
      const DataType& t = *partition_type->fields()[i].type;
      if (t.id() == TypeId::kFloat || t.id() == TypeId::kDouble) {
        double d = v->size() == 4 ? LoadLE<float>(v->data()) : LoadLE<double>(v->data());
        if (std::isnan(d)) {
          s.contains_nan = true;
          continue;
        }
        if (!s.contains_nan) s.contains_nan = false;
      }
      if (!s.lower_bound || CompareSingleValues(t, *v, *s.lower_bound) < 0) s.lower_bound = *v;
      if (!s.upper_bound || CompareSingleValues(t, *v, *s.upper_bound) > 0) s.upper_bound = *v;
    }
  }
};

ManifestWriter::ManifestWriter(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ManifestWriter::~ManifestWriter() = default;

Result<std::unique_ptr<ManifestWriter>> ManifestWriter::Open(FileIO& io, const std::string& path,
                                                             const Schema& schema,
                                                             const PartitionSpec& spec,
                                                             ManifestWriterOptions options) {
  if (options.format_version < 2) {
    return Status::NotImplemented("writing format v1 manifests is not supported");
  }
  auto impl = std::make_unique<Impl>();
  impl->path = path;
  impl->options = options;
  impl->spec_id = spec.spec_id;
  ASSIGN_OR_RETURN(impl->partition_type, PartitionType(spec, schema));
  impl->entry_schema = std::make_shared<Schema>(
      internal::ManifestEntrySchema(impl->partition_type, options.format_version));
  impl->batch = Batch::Make(impl->entry_schema);
  impl->summaries.resize(spec.fields.size());

  // The spec's fields array only (spec §Manifests).
  std::string spec_json = PartitionSpecToJson(spec);
  std::string fields_json = spec_json.substr(spec_json.find('['));
  fields_json.pop_back();  // the closing brace of the spec object
  avro::WriterOptions wo;
  wo.record_name = "manifest_entry";
  wo.codec = avro::Codec::kDeflate;
  wo.metadata = {{"schema", SchemaToJson(schema)},
                 {"schema-id", std::to_string(schema.schema_id)},
                 {"partition-spec", fields_json},
                 {"partition-spec-id", std::to_string(spec.spec_id)},
                 {"format-version", std::to_string(options.format_version)},
                 {"content", options.content == ManifestContent::kData ? "data" : "deletes"}};
  ASSIGN_OR_RETURN(auto out, io.OpenOutput(path));
  ASSIGN_OR_RETURN(impl->writer, avro::AvroWriter::Open(std::move(out), *impl->entry_schema, wo));

  ManifestFile& m = impl->result;
  m.manifest_path = path;
  m.partition_spec_id = spec.spec_id;
  m.content = options.content;
  m.added_snapshot_id = options.snapshot_id;
  return std::unique_ptr<ManifestWriter>(new ManifestWriter(std::move(impl)));
}

Status ManifestWriter::Add(const ManifestEntry& e) {
  Impl& im = *impl_;
  const DataFile& f = e.file;
  bool is_delete = f.content != FileContent::kData;
  if (is_delete != (im.options.content == ManifestContent::kDeletes)) {
    return Status::Invalid("manifest {}: cannot mix data and delete files ({})", im.path,
                           f.file_path);
  }
  const size_t nparts = im.partition_type->fields().size();
  if (f.partition.size() != nparts) {
    return Status::Invalid("manifest {}: file {} has {} partition values, the spec has {}", im.path,
                           f.file_path, f.partition.size(), nparts);
  }
  if (e.status != EntryStatus::kAdded && (!e.sequence_number || !e.file_sequence_number)) {
    return Status::Invalid("manifest {}: EXISTING/DELETED entry {} needs its sequence numbers",
                           im.path, f.file_path);
  }
  auto& cols = im.batch.columns;
  Column* file = &cols[4];
  // Partition values first: they are the only part that can fail.
  Column* part = file->mutable_child(3);
  for (size_t i = 0; i < nparts; ++i) {
    Column* pc = part->mutable_child(static_cast<int>(i));
    if (f.partition[i]) {
      Status st = AppendFromSingleValue(*f.partition[i], pc);
      if (!st.ok()) {
        for (size_t j = 0; j < i; ++j)
          part->mutable_child(static_cast<int>(j))
              ->Truncate(part->mutable_child(static_cast<int>(j))->size() - 1);
        return st.WithContextF("manifest {}: file {}: partition field {}", im.path, f.file_path,
                               im.partition_type->fields()[i].name);
      }
    } else {
      pc->AppendNull();
    }
  }
  part->FinishNested();

  cols[0].Append<int32_t>(static_cast<int32_t>(e.status));
  // ADDED entries inherit snapshot id and sequence numbers (null when
  // written), but for a data sequence number set explicitly: a rewrite's,
  // older than its snapshot's so that deletes committed since it read its
  // rows still apply to them.
  bool inherit = e.status == EntryStatus::kAdded;
  AppendOptLong(&cols[1], inherit ? std::nullopt : e.snapshot_id);
  AppendOptLong(&cols[2], e.sequence_number);
  AppendOptLong(&cols[3], inherit ? std::nullopt : e.file_sequence_number);
  int c = 0;
  file->mutable_child(c++)->Append<int32_t>(static_cast<int32_t>(f.content));
  file->mutable_child(c++)->AppendBytes(f.file_path);
  file->mutable_child(c++)->AppendBytes(f.file_format);
  ++c;  // partition, done above
  file->mutable_child(c++)->Append<int64_t>(f.record_count);
  file->mutable_child(c++)->Append<int64_t>(f.file_size_in_bytes);
  AppendIntMap(file->mutable_child(c++), f.column_sizes);
  AppendIntMap(file->mutable_child(c++), f.value_counts);
  AppendIntMap(file->mutable_child(c++), f.null_value_counts);
  AppendIntMap(file->mutable_child(c++), f.nan_value_counts);
  AppendIntMap(file->mutable_child(c++), f.lower_bounds);
  AppendIntMap(file->mutable_child(c++), f.upper_bounds);
  AppendOptBytes(file->mutable_child(c++), f.key_metadata);
  AppendList<int64_t>(file->mutable_child(c++), f.split_offsets);
  AppendList<int32_t>(file->mutable_child(c++), f.equality_ids);
  if (f.sort_order_id) {
    file->mutable_child(c++)->Append<int32_t>(*f.sort_order_id);
  } else {
    file->mutable_child(c++)->AppendNull();
  }
  bool v3 = im.options.format_version >= 3;
  if (v3) AppendOptLong(file->mutable_child(c++), f.first_row_id);
  AppendOptBytes(file->mutable_child(c++), f.referenced_data_file);
  if (v3) {
    AppendOptLong(file->mutable_child(c++), f.content_offset);
    AppendOptLong(file->mutable_child(c++), f.content_size_in_bytes);
  }
  file->FinishNested();

  ManifestFile& m = im.result;
  switch (e.status) {
    case EntryStatus::kAdded:
      ++m.added_files_count;
      m.added_rows_count += f.record_count;
      break;
    case EntryStatus::kExisting:
      ++m.existing_files_count;
      m.existing_rows_count += f.record_count;
      break;
    case EntryStatus::kDeleted:
      ++m.deleted_files_count;
      m.deleted_rows_count += f.record_count;
      break;
  }
  if (e.status != EntryStatus::kDeleted && e.sequence_number) {
    im.min_seq = im.min_seq == kInheritedSequence ? *e.sequence_number
                                                  : std::min(im.min_seq, *e.sequence_number);
  }
  im.Summarize(f.partition);
  if (im.batch.num_rows() >= 4096) return im.Flush();
  return Status::OK();
}

Result<ManifestFile> ManifestWriter::Close() {
  Impl& im = *impl_;
  RETURN_IF_ERROR(im.Flush());
  ASSIGN_OR_RETURN(im.result.manifest_length, im.writer->Close());
  im.result.partitions = im.summaries;
  im.result.min_sequence_number = im.min_seq;
  return im.result;
}

Result<int64_t> WriteManifestList(FileIO& io, const std::string& path,
                                  const std::vector<ManifestFile>& manifests,
                                  const ManifestListOptions& o) {
  if (o.format_version < 2) return Status::NotImplemented("writing v1 manifest lists");
  auto schema = std::make_shared<Schema>(internal::ManifestFileSchema(o.format_version));
  Batch b = Batch::Make(schema);
  int64_t next_row_id = o.first_row_id.value_or(0);
  for (const ManifestFile& m0 : manifests) {
    ManifestFile m = m0;
    if (m.added_snapshot_id == o.snapshot_id) {
      m.sequence_number = o.sequence_number;
      m.min_sequence_number = m.min_sequence_number == kInheritedSequence
                                  ? o.sequence_number
                                  : std::min(m.min_sequence_number, o.sequence_number);
    }
    if (o.format_version >= 3 && m.content == ManifestContent::kData && !m.first_row_id) {
      m.first_row_id = next_row_id;
      next_row_id += m.added_rows_count + m.existing_rows_count;
    }
    int c = 0;
    b.columns[c++].AppendBytes(m.manifest_path);
    b.columns[c++].Append<int64_t>(m.manifest_length);
    b.columns[c++].Append<int32_t>(m.partition_spec_id);
    b.columns[c++].Append<int32_t>(static_cast<int32_t>(m.content));
    b.columns[c++].Append<int64_t>(m.sequence_number);
    b.columns[c++].Append<int64_t>(m.min_sequence_number);
    b.columns[c++].Append<int64_t>(m.added_snapshot_id);
    b.columns[c++].Append<int32_t>(m.added_files_count);
    b.columns[c++].Append<int32_t>(m.existing_files_count);
    b.columns[c++].Append<int32_t>(m.deleted_files_count);
    b.columns[c++].Append<int64_t>(m.added_rows_count);
    b.columns[c++].Append<int64_t>(m.existing_rows_count);
    b.columns[c++].Append<int64_t>(m.deleted_rows_count);
    Column* parts = &b.columns[c++];
    Column* s = parts->mutable_child(0);
    for (const FieldSummary& fs : m.partitions) {
      s->mutable_child(0)->AppendBool(fs.contains_null);
      if (fs.contains_nan) {
        s->mutable_child(1)->AppendBool(*fs.contains_nan);
      } else {
        s->mutable_child(1)->AppendNull();
      }
      AppendOptBytes(s->mutable_child(2), fs.lower_bound);
      AppendOptBytes(s->mutable_child(3), fs.upper_bound);
      s->FinishNested();
    }
    parts->FinishNested();
    AppendOptBytes(&b.columns[c++], m.key_metadata);
    if (o.format_version >= 3) AppendOptLong(&b.columns[c++], m.first_row_id);
  }
  avro::WriterOptions wo;
  wo.record_name = "manifest_file";
  wo.codec = avro::Codec::kDeflate;
  wo.metadata = {
      {"snapshot-id", std::to_string(o.snapshot_id)},
      {"parent-snapshot-id", o.parent_snapshot_id ? std::to_string(*o.parent_snapshot_id) : "null"},
      {"sequence-number", std::to_string(o.sequence_number)},
      {"format-version", std::to_string(o.format_version)}};
  if (o.format_version >= 3) {
    wo.metadata.push_back({"first-row-id", std::to_string(o.first_row_id.value_or(0))});
  }
  ASSIGN_OR_RETURN(auto out, io.OpenOutput(path));
  ASSIGN_OR_RETURN(auto writer, avro::AvroWriter::Open(std::move(out), *schema, wo));
  RETURN_IF_ERROR(writer->Write(b));
  RETURN_IF_ERROR(writer->Close());
  return next_row_id - o.first_row_id.value_or(0);
}

}  // namespace sluice::iceberg
