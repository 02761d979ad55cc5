#include "iceberg/data_writer.h"

#include <sys/resource.h>

#include <algorithm>
#include <map>
#include <unordered_map>

#include "avro/iceberg_schema.h"
#include "columnar/column_ops.h"
#include "columnar/single_value.h"
#include "columnar/value_format.h"
#include "common/endian.h"
#include "common/uuid.h"
#include "parquet/compression.h"
#include "parquet/writer.h"

namespace sluice::iceberg {

namespace {

// Percent-encodes what may not appear in a path segment.
void AppendEscaped(std::string_view s, std::string* out) {
  static const char kHex[] = "0123456789ABCDEF";
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~' || c == ':') {
      out->push_back(static_cast<char>(c));
    } else {
      out->push_back('%');
      out->push_back(kHex[c >> 4]);
      out->push_back(kHex[c & 15]);
    }
  }
}

std::string HumanValue(const Transform& t, const TypePtr& type_ptr, const std::string& v) {
  const DataType& type = *type_ptr;
  std::string out;
  switch (t.kind) {
    case Transform::Kind::kYear: out = std::to_string(1970 + LoadLE<int32_t>(v.data())); return out;
    case Transform::Kind::kMonth: {
      int32_t m = LoadLE<int32_t>(v.data());
      int32_t y = 1970 + (m >= 0 ? m / 12 : (m - 11) / 12);
      int32_t mm = m - (y - 1970) * 12 + 1;
      return fmt::format("{:04d}-{:02d}", y, mm);
    }
    case Transform::Kind::kHour: {
      int32_t h = LoadLE<int32_t>(v.data());
      int32_t day = h >= 0 ? h / 24 : (h - 23) / 24;
      AppendDate(day, &out);
      return fmt::format("{}-{:02d}", out, h - day * 24);
    }
    default: break;
  }
  Column c(type_ptr);
  if (!AppendFromSingleValue(v, &c).ok()) {
    AppendHex(v, &out);
    return out;
  }
  switch (type.id()) {
    case TypeId::kDate: AppendDate(c.Value<int32_t>(0), &out); break;
    case TypeId::kTime: AppendTime(c.Value<int64_t>(0), &out); break;
    case TypeId::kTimestamp:
    case TypeId::kTimestampTz: AppendTimestamp(c.Value<int64_t>(0), false, false, &out); break;
    case TypeId::kTimestampNs:
    case TypeId::kTimestampTzNs: AppendTimestamp(c.Value<int64_t>(0), true, false, &out); break;
    case TypeId::kDecimal: AppendDecimal(c.Value<int128_t>(0), type.scale(), &out); break;
    case TypeId::kString: out = std::string(c.GetBytes(0)); break;
    case TypeId::kUuid: AppendUuid(c.GetBytes(0), &out); break;
    case TypeId::kBinary:
    case TypeId::kFixed: AppendHex(c.GetBytes(0), &out); break;
    case TypeId::kBoolean: out = c.GetBool(0) ? "true" : "false"; break;
    case TypeId::kInt: out = std::to_string(c.Value<int32_t>(0)); break;
    case TypeId::kLong: out = std::to_string(c.Value<int64_t>(0)); break;
    case TypeId::kFloat: AppendFloat(c.Value<float>(0), &out); break;
    case TypeId::kDouble: AppendDouble(c.Value<double>(0), &out); break;
    default: AppendHex(v, &out);
  }
  return out;
}

// The open-file map's key of a partition: each value as a null marker, or a
// marker, its length and its bytes.
void AppendKeyPart(const std::string* value, std::string* key) {
  if (value == nullptr) {
    key->push_back('\0');
  } else {
    key->push_back('\1');
    AppendLE<uint32_t>(key, static_cast<uint32_t>(value->size()));
    *key += *value;
  }
}

std::string PartitionKey(const PartitionValues& values) {
  std::string key;
  for (const auto& v : values) AppendKeyPart(v ? &*v : nullptr, &key);
  return key;
}

}  // namespace

std::string PartitionPath(const PartitionSpec& spec, const TypePtr& partition_type,
                          const PartitionValues& values) {
  std::string out;
  for (size_t i = 0; i < spec.fields.size(); ++i) {
    if (i) out.push_back('/');
    AppendEscaped(spec.fields[i].name, &out);
    out.push_back('=');
    if (i >= values.size() || !values[i]) {
      out += "null";
    } else {
      AppendEscaped(
          HumanValue(spec.fields[i].transform, partition_type->fields()[i].type, *values[i]), &out);
    }
  }
  return out;
}

Result<DataWriterOptions> DataWriterOptionsFromProperties(
    const std::map<std::string, std::string>& props, WriteRole role) {
  DataWriterOptions o;
  auto get_int = [&](const char* key, int64_t* out) -> Status {
    auto it = props.find(key);
    if (it == props.end()) return Status::OK();
    char* end = nullptr;
    long long v = std::strtoll(it->second.c_str(), &end, 10);
    if (end == it->second.c_str() || *end != '\0' || v <= 0) {
      return Status::Invalid("table property {}='{}' is not a positive integer", key, it->second);
    }
    *out = v;
    return Status::OK();
  };
  if (auto it = props.find("write.parquet.compression-codec"); it != props.end()) {
    ASSIGN_OR_RETURN(o.parquet.codec, parquet::ParseCodecName(it->second));
  }
  int64_t level = 0;
  RETURN_IF_ERROR(get_int("write.parquet.compression-level", &level));
  int64_t streaming = 0;
  RETURN_IF_ERROR(get_int("sluice.write.streaming-compression-level", &streaming));
  if (role == WriteRole::kStreaming) {
    if (streaming) {
      level = streaming;
    } else if (!level && o.parquet.codec == parquet::CompressionCodec::kZstd) {
      level = kStreamingZstdLevel;
    }
  }
  o.parquet.compression_level = static_cast<int>(level);
  RETURN_IF_ERROR(get_int("write.parquet.row-group-size-bytes", &o.parquet.row_group_bytes));
  RETURN_IF_ERROR(get_int("sluice.write.parquet.row-group-rows", &o.parquet.row_group_rows));
  RETURN_IF_ERROR(get_int("write.parquet.page-size-bytes", &o.parquet.page_bytes));
  RETURN_IF_ERROR(get_int("write.parquet.page-row-limit", &o.parquet.page_rows));
  RETURN_IF_ERROR(get_int("write.target-file-size-bytes", &o.target_file_bytes));
  return o;
}

struct DataWriter::Impl {
  FileIO* io = nullptr;
  DataWriterOptions options;
  std::shared_ptr<const Schema> schema;
  PartitionSpec spec;
  TypePtr partition_type;
  int32_t sort_order_id = 0;
  bool failed = false;

  struct OpenFile {
    PartitionValues partition;
    std::string path;
    std::unique_ptr<parquet::ParquetWriter> writer;
    int32_t ordinal = 0;    // index in all_paths
    int64_t rows = 0;       // written so far
    int64_t last_used = 0;  // write_clock at the last write (LRU closing)
  };
  std::unordered_map<std::string, OpenFile> open;  // by partition key
  std::map<int64_t, std::string> lru;              // last_used -> partition key
  int64_t buffered = 0;                            // sum of the open writers' buffered_bytes()
  int max_open = 256;
  std::vector<DataFile> done;
  std::vector<std::string> all_paths;
  int64_t file_counter = 0;
  int64_t write_clock = 0;
  int64_t files_closed_for_memory = 0;
  int64_t files_closed_for_open_limit = 0;
  std::string write_uuid = NewUuid();

  Result<OpenFile*> FileFor(const std::string& key, const PartitionValues& values) {
    auto it = open.find(key);
    if (it != open.end()) return &it->second;
    while (static_cast<int>(open.size()) >= max_open) {
      RETURN_IF_ERROR(CloseKey(lru.begin()->second));
      ++files_closed_for_open_limit;
    }
    OpenFile f;
    f.partition = values;
    std::string dir = options.data_location;
    if (!spec.fields.empty()) dir += "/" + PartitionPath(spec, partition_type, values);
    f.path = fmt::format("{}/{}{:05d}-{}.parquet", dir, options.file_name_prefix, file_counter++,
                         write_uuid);
    if (options.before_create) RETURN_IF_ERROR(options.before_create(f.path));
    ASSIGN_OR_RETURN(auto out, io->OpenOutput(f.path));
    ASSIGN_OR_RETURN(f.writer,
                     parquet::ParquetWriter::Open(std::move(out), *schema, options.parquet));
    f.ordinal = static_cast<int32_t>(all_paths.size());
    all_paths.push_back(f.path);
    return &open.emplace(key, std::move(f)).first->second;
  }

  // Appends `rows` to the partition's file; rolls it at the target size and keeps
  // the open files within the memory budget (closing the least recently written).
  // With `placements`, records where each row went: `rows` are the batch's
  // rows `row_ids` (all of them in order when null).
  Status WriteRows(const std::string& key, const PartitionValues& values, const Batch& rows,
                   const std::vector<uint32_t>* row_ids, std::vector<RowPlacement>* placements) {
    return AppendToFile(key, values, rows.num_rows(), row_ids, placements,
                        [&](parquet::ParquetWriter& w) { return w.Write(rows); });
  }

  // Appends `num_rows` rows with `append` to the partition's file (WriteRows).
  Status AppendToFile(const std::string& key, const PartitionValues& values, int64_t num_rows,
                      const std::vector<uint32_t>* row_ids, std::vector<RowPlacement>* placements,
                      const std::function<Status(parquet::ParquetWriter&)>& append) {
    ASSIGN_OR_RETURN(OpenFile * f, FileFor(key, values));
    if (placements != nullptr) {
      for (int64_t i = 0; i < num_rows; ++i) {
        const size_t r = row_ids ? (*row_ids)[static_cast<size_t>(i)] : static_cast<size_t>(i);
        (*placements)[r] = RowPlacement{f->ordinal, f->rows + i};
      }
    }
    f->rows += num_rows;
    lru.erase(f->last_used);
    f->last_used = ++write_clock;
    lru.emplace(f->last_used, key);
    int64_t before = f->writer->buffered_bytes();
    RETURN_IF_ERROR(append(*f->writer));
    buffered += f->writer->buffered_bytes() - before;
    if (f->writer->bytes_written() >= options.target_file_bytes) RETURN_IF_ERROR(CloseKey(key));
    while (buffered > options.memory_budget_bytes && !open.empty()) {
      RETURN_IF_ERROR(CloseKey(lru.begin()->second));
      ++files_closed_for_memory;
    }
    return Status::OK();
  }

  Status CloseKey(const std::string& key) {
    auto it = open.find(key);
    buffered -= it->second.writer->buffered_bytes();
    lru.erase(it->second.last_used);
    Status st = CloseFile(it->second);
    open.erase(it);
    return st;
  }

  Status CloseFile(OpenFile& f) {
    ASSIGN_OR_RETURN(parquet::FileMetrics m, f.writer->Close());
    DataFile d;
    d.file_path = f.path;
    d.file_format = "PARQUET";
    d.partition = f.partition;
    d.spec_id = spec.spec_id;
    d.record_count = m.record_count;
    d.file_size_in_bytes = m.file_size;
    for (const auto& [id, fm] : m.fields) {
      d.column_sizes[id] = fm.column_size;
      d.value_counts[id] = fm.value_count;
      d.null_value_counts[id] = fm.null_count;
      if (fm.nan_count) d.nan_value_counts[id] = *fm.nan_count;
      if (fm.lower_bound) d.lower_bounds[id] = *fm.lower_bound;
      if (fm.upper_bound) d.upper_bounds[id] = *fm.upper_bound;
    }
    d.split_offsets = m.split_offsets;
    d.sort_order_id = sort_order_id;
    done.push_back(std::move(d));
    return Status::OK();
  }
};

DataWriter::DataWriter(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
DataWriter::~DataWriter() {
  if (impl_ && !impl_->open.empty()) Abort();
}

Result<std::unique_ptr<DataWriter>> DataWriter::Make(FileIO& io, const TableMetadata& table,
                                                     DataWriterOptions options) {
  auto impl = std::make_unique<Impl>();
  impl->io = &io;
  impl->options = std::move(options);
  // Column names as Iceberg's writers store them (Avro-compatible), for
  // readers that match by name; sluice reads by field id.
  impl->options.parquet.column_names = avro::SanitizeAvroName;
  if (impl->options.data_location.empty()) impl->options.data_location = table.location + "/data";
  const Schema* schema = table.current_schema();
  if (schema == nullptr) return Status::Invalid("table has no current schema");
  auto file_schema = std::make_shared<Schema>(*schema);
  if (impl->options.row_lineage) {
    // (optional: a row of a file without a first_row_id has no _row_id)
    file_schema->fields.push_back(Field{kRowIdFieldId, "_row_id", DataType::Long(), false, ""});
    file_schema->fields.push_back(Field{kLastUpdatedSequenceNumberFieldId,
                                        "_last_updated_sequence_number", DataType::Long(), false,
                                        ""});
  }
  impl->schema = std::move(file_schema);
  const PartitionSpec* spec = table.spec_by_id(table.default_spec_id);
  if (spec == nullptr) return Status::Invalid("table has no default partition spec");
  impl->spec = *spec;
  ASSIGN_OR_RETURN(impl->partition_type, PartitionType(*spec, *schema));
  impl->sort_order_id = table.default_sort_order_id;
  if (impl->options.max_open_files < 1) {
    return Status::Invalid("max_open_files must be >= 1, got {}", impl->options.max_open_files);
  }
  impl->max_open = impl->options.max_open_files;
  rlimit files{};
  if (::getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur != RLIM_INFINITY) {
    int64_t share = std::max(1, impl->options.open_files_share);
    impl->max_open = std::min<int64_t>(
        impl->max_open, std::max<int64_t>(4, static_cast<int64_t>(files.rlim_cur) / 4 / share));
  }
  return std::unique_ptr<DataWriter>(new DataWriter(std::move(impl)));
}

Status DataWriter::Write(const Batch& batch) { return Write(batch, nullptr); }

Status DataWriter::Write(const Batch& batch, std::vector<RowPlacement>* placements) {
  Impl& im = *impl_;
  if (placements != nullptr) placements->assign(static_cast<size_t>(batch.num_rows()), {});
  if (im.failed) return Status::Internal("data writer failed earlier");
  if (batch.num_rows() == 0) return Status::OK();
  if (batch.columns.size() != im.schema->fields.size()) {
    return Status::Invalid("batch has {} columns, the table {}", batch.columns.size(),
                           im.schema->fields.size());
  }
  for (size_t i = 0; i < batch.columns.size(); ++i) {
    const Field& f = im.schema->fields[i];
    if (!batch.columns[i].type()->Equals(*f.type)) {
      return Status::Invalid("column {} is {}, the table has {}", f.name,
                             batch.columns[i].type()->ToString(), f.type->ToString());
    }
  }
  auto fail = [&](const Status& st) {
    im.failed = true;
    return st;
  };
  if (im.spec.fields.empty()) {
    Status st = im.WriteRows("", {}, batch, nullptr, placements);
    return st.ok() ? st : fail(st);
  }
  // Partition values per row, as single-value bytes.
  std::vector<Column> parts;
  for (const auto& pf : im.spec.fields) {
    const Column* src = FindColumnById(batch, pf.source_id);
    if (src == nullptr) {
      return Status::Invalid("partition source field {} is not in the batch", pf.source_id);
    }
    auto applied = pf.transform.Apply(*src);
    if (!applied.ok()) return applied.status().WithContextF("partition field {}", pf.name);
    parts.push_back(std::move(*applied));
  }
  std::unordered_map<std::string, std::vector<uint32_t>> groups;
  std::unordered_map<std::string, PartitionValues> group_values;
  std::string key, v;  // (reused: a key a row)
  for (int64_t r = 0; r < batch.num_rows(); ++r) {
    key.clear();
    for (const Column& p : parts) {
      if (p.IsNull(r)) {
        AppendKeyPart(nullptr, &key);
      } else {
        v.clear();
        AppendSingleValue(p, r, &v);
        AppendKeyPart(&v, &key);
      }
    }
    auto [it, inserted] = groups.try_emplace(key);
    it->second.push_back(static_cast<uint32_t>(r));
    if (inserted) {
      PartitionValues values;
      for (const Column& p : parts) {
        if (p.IsNull(r)) {
          values.push_back(std::nullopt);
        } else {
          std::string one;
          AppendSingleValue(p, r, &one);
          values.push_back(std::move(one));
        }
      }
      group_values[key] = std::move(values);
    }
  }
  for (auto& [k, rows] : groups) {
    Status st = groups.size() == 1
                    ? im.WriteRows(k, group_values[k], batch, nullptr, placements)
                    : im.WriteRows(k, group_values[k], TakeRows(batch, rows), &rows, placements);
    if (!st.ok()) return fail(st);
  }
  return Status::OK();
}

Status DataWriter::AppendRows(const PartitionValues& partition, int64_t num_rows,
                              const Batch& values, const std::vector<parquet::CopiedPages*>& copied,
                              std::vector<RowPlacement>* placements) {
  Impl& im = *impl_;
  if (placements != nullptr) placements->assign(static_cast<size_t>(num_rows), {});
  if (im.failed) return Status::Internal("data writer failed earlier");
  if (num_rows == 0) return Status::OK();
  if (partition.size() != im.spec.fields.size()) {
    return Status::Invalid("{} partition values for a spec of {} fields", partition.size(),
                           im.spec.fields.size());
  }
  Status st = im.AppendToFile(
      PartitionKey(partition), partition, num_rows, nullptr, placements,
      [&](parquet::ParquetWriter& w) { return w.AppendRows(num_rows, values, copied); });
  if (!st.ok()) im.failed = true;
  return st;
}

Result<std::vector<DataFile>> DataWriter::Close() {
  Impl& im = *impl_;
  if (im.failed) return Status::Internal("data writer failed earlier");
  for (auto& [k, f] : im.open) {
    Status st = im.CloseFile(f);
    if (!st.ok()) {
      im.failed = true;
      return st;
    }
  }
  im.open.clear();
  im.lru.clear();
  im.buffered = 0;
  return std::move(im.done);
}

void DataWriter::Abort() {
  Impl& im = *impl_;
  im.open.clear();  // unclosed writers discard their files
  im.lru.clear();
  im.buffered = 0;
  for (const auto& p : im.all_paths) (void)im.io->Delete(p);
  im.all_paths.clear();
  im.done.clear();
}

std::vector<std::string> DataWriter::FilePaths() const { return impl_->all_paths; }
int64_t DataWriter::files_closed_for_memory() const { return impl_->files_closed_for_memory; }
int64_t DataWriter::files_closed_for_open_limit() const {
  return impl_->files_closed_for_open_limit;
}

}  // namespace sluice::iceberg
