#include "parquet/writer.h"

#include <fmt/ranges.h>

#include <algorithm>

#include "common/endian.h"
#include "parquet/column_writer.h"
#include "parquet/metadata.h"
#include "parquet/schema.h"
#include "parquet/statistics.h"
#include "parquet/writer_shred.h"

namespace sluice::parquet {

namespace {
constexpr char kMagic[] = "PAR1";
// Rows handed to the column writers at a time: the granularity at which page
// and row-group sizes are checked.
constexpr int64_t kSliceRows = 4096;
}  // namespace

class ParquetWriter::Impl {
 public:
  Impl(std::unique_ptr<OutputFile> file, const Schema& schema, WriterOptions options)
      : file_(std::move(file)),
        schema_(schema),
        options_(std::move(options)),
        compressor_(options_.codec, options_.compression_level) {}

  ~Impl() {
    if (!closed_) file_->Abort();
  }

  Status Init() {
    RETURN_IF_ERROR_CTX(ToParquetSchema(schema_, &elements_, &leaves_, options_.column_names),
                        "file {}", file_->path());
    paths_ = BuildLeafPaths(schema_);
    if (paths_.size() != leaves_.size()) {
      return Status::Internal("file {}: {} leaf paths for {} Parquet leaves", file_->path(),
                              paths_.size(), leaves_.size());
    }
    for (size_t i = 0; i < leaves_.size(); ++i) {
      const ColumnDescriptor& d = leaves_[i];
      const LeafPath& p = paths_[i];
      if (d.field_id != p.field_id || d.max_definition_level != p.max_definition_level ||
          d.max_repetition_level != p.max_repetition_level) {
        return Status::Internal(
            "file {}: leaf {} (id {}, levels {}/{}) does not match the Parquet schema (id {}, "
            "levels {}/{})",
            file_->path(), p.name, p.field_id, p.max_definition_level, p.max_repetition_level,
            d.field_id, d.max_definition_level, d.max_repetition_level);
      }
      ASSIGN_OR_RETURN(auto w, ColumnWriter::Make(d, options_, &compressor_));
      writers_.push_back(std::move(w));
    }
    return Fail(file_->Append(std::string_view(kMagic, 4)));
  }

  Status Write(const Batch& batch) {
    if (closed_) return Status::Invalid("file {}: write after close", file_->path());
    RETURN_IF_ERROR(failed_);
    if (batch.columns.size() != schema_.fields.size()) {
      return Status::Invalid("file {}: batch has {} columns, schema has {}", file_->path(),
                             batch.columns.size(), schema_.fields.size());
    }
    for (size_t c = 0; c < batch.columns.size(); ++c) {
      const DataType& got = *batch.columns[c].type();
      const DataType& want = *schema_.fields[c].type;
      if (&got != &want && !got.Equals(want)) {
        return Status::Invalid("file {}: column {} is {}, schema says {}", file_->path(),
                               schema_.fields[c].name, got.ToString(), want.ToString());
      }
    }
    const int64_t n = batch.num_rows();
    int64_t begin = 0;
    while (begin < n) {
      int64_t end = std::min(n, begin + kSliceRows);
      if (options_.row_group_rows > 0) {
        end = std::min(end, begin + (options_.row_group_rows - group_rows_));
      }
      int64_t buffered = 0;
      for (size_t i = 0; i < writers_.size(); ++i) {
        const LeafPath& p = paths_[i];
        LeafSlice slice;
        Status st = shredder_.Shred(p, batch.columns[p.top_column], begin, end, &slice);
        if (st.ok()) st = writers_[i]->Add(slice);
        RETURN_IF_ERROR(Fail(st.WithContextF("file {}", file_->path())));
        buffered += writers_[i]->BufferedSize();
      }
      group_rows_ += end - begin;
      rows_ += end - begin;
      begin = end;
      if ((options_.row_group_rows > 0 && group_rows_ >= options_.row_group_rows) ||
          buffered >= options_.row_group_bytes) {
        RETURN_IF_ERROR(Fail(FlushRowGroup()));
      }
    }
    return Status::OK();
  }

  Status AppendRows(int64_t num_rows, const Batch& values,
                    const std::vector<CopiedPages*>& copied) {
    if (closed_) return Status::Invalid("file {}: write after close", file_->path());
    RETURN_IF_ERROR(failed_);
    if (copied.size() != writers_.size() || values.columns.size() != schema_.fields.size()) {
      return Status::Invalid("file {}: {} copied leaves and {} columns for {} leaves, {} columns",
                             file_->path(), copied.size(), values.columns.size(), writers_.size(),
                             schema_.fields.size());
    }
    for (size_t i = 0; i < writers_.size(); ++i) {
      const LeafPath& p = paths_[i];
      const ColumnDescriptor& d = leaves_[i];
      if (copied[i] != nullptr) {
        if (d.path.size() != 1 || d.max_repetition_level > 0 || copied[i]->num_values != num_rows) {
          return Status::Invalid("file {}: pages of {} values copied for {} rows of leaf {}",
                                 file_->path(), copied[i]->num_values, num_rows,
                                 fmt::join(d.path, "."));
        }
      } else {
        const Column& c = values.columns[p.top_column];
        const Field& f = schema_.fields[p.top_column];
        if (c.size() != num_rows || !c.type()->Equals(*f.type)) {
          return Status::Invalid("file {}: column {} holds {} rows of {}, not {} of {}",
                                 file_->path(), f.name, c.size(), c.type()->ToString(), num_rows,
                                 f.type->ToString());
        }
      }
    }
    for (size_t i = 0; i < writers_.size(); ++i) {
      if (copied[i] == nullptr) continue;
      RETURN_IF_ERROR(Fail(
          writers_[i]
              ->AppendPages(std::move(*copied[i]))
              .WithContextF("file {}: column {}", file_->path(), fmt::join(leaves_[i].path, "."))));
    }
    for (int64_t begin = 0; begin < num_rows; begin += kSliceRows) {
      const int64_t end = std::min(num_rows, begin + kSliceRows);
      for (size_t i = 0; i < writers_.size(); ++i) {
        if (copied[i] != nullptr) continue;
        const LeafPath& p = paths_[i];
        LeafSlice slice;
        Status st = shredder_.Shred(p, values.columns[p.top_column], begin, end, &slice);
        if (st.ok()) st = writers_[i]->Add(slice);
        RETURN_IF_ERROR(Fail(st.WithContextF("file {}", file_->path())));
      }
    }
    group_rows_ += num_rows;
    rows_ += num_rows;
    if ((options_.row_group_rows > 0 && group_rows_ >= options_.row_group_rows) ||
        buffered() >= options_.row_group_bytes) {
      RETURN_IF_ERROR(Fail(FlushRowGroup()));
    }
    return Status::OK();
  }

  Result<FileMetrics> Close() {
    if (closed_) return Status::Invalid("file {}: already closed", file_->path());
    RETURN_IF_ERROR(failed_);
    if (group_rows_ > 0) RETURN_IF_ERROR(Fail(FlushRowGroup()));
    FileMetaData md;
    md.version = 1;
    md.schema = elements_;
    md.num_rows = rows_;
    md.row_groups = std::move(row_groups_);
    md.created_by = options_.created_by;
    if (compressor_.effective_level() > 0) {
      md.key_value_metadata.push_back(
          KeyValue{kCompressionLevelKey, std::to_string(compressor_.effective_level())});
    }
    md.column_orders.assign(leaves_.size(), true);
    std::string footer;
    SerializeFileMetaData(md, &footer);
    AppendLE<uint32_t>(&footer, static_cast<uint32_t>(footer.size()));
    footer.append(kMagic, 4);
    RETURN_IF_ERROR(Fail(file_->Append(footer)));
    const int64_t size = file_->position();
    RETURN_IF_ERROR(Fail(file_->Close()));
    closed_ = true;
    return Metrics(size);
  }

  int64_t rows() const { return rows_; }
  int64_t bytes() const { return file_->position(); }
  int64_t buffered() const {
    int64_t n = 0;
    for (const auto& w : writers_) n += w->BufferedSize();
    return n;
  }

 private:
  // Records the first error: the writer stays failed and the file is dropped.
  Status Fail(Status st) {
    if (!st.ok() && failed_.ok()) {
      failed_ = st;
      file_->Abort();
    }
    return st;
  }

  Status FlushRowGroup() {
    RowGroup rg;
    rg.num_rows = group_rows_;
    const int64_t start = file_->position();
    rg.file_offset = start;
    for (auto& w : writers_) {
      ColumnChunk chunk;
      RETURN_IF_ERROR_CTX(w->FlushChunk(file_.get(), &chunk), "file {}: column {}", file_->path(),
                          fmt::join(w->descriptor().path, "."));
      rg.total_byte_size += chunk.meta_data->total_uncompressed_size;
      rg.columns.push_back(std::move(chunk));
    }
    rg.total_compressed_size = file_->position() - start;
    rg.ordinal = static_cast<int16_t>(row_groups_.size());
    row_groups_.push_back(std::move(rg));
    split_offsets_.push_back(start);
    group_rows_ = 0;
    return Status::OK();
  }

  FileMetrics Metrics(int64_t size) const {
    FileMetrics m;
    m.record_count = rows_;
    m.file_size = size;
    m.split_offsets = split_offsets_;
    for (size_t i = 0; i < writers_.size(); ++i) {
      const ColumnDescriptor& d = leaves_[i];
      const ColumnWriter& w = *writers_[i];
      FieldMetrics& f = m.fields[d.field_id];
      EncodedStats stats = w.FileStats();
      f.column_size = w.total_compressed_bytes();
      f.value_count = w.total_values();
      f.null_count = stats.null_count;
      TypeId id = d.type->id();
      if ((id == TypeId::kFloat || id == TypeId::kDouble) && stats.nan_count_known) {
        f.nan_count = stats.nan_count;
      }
      if (d.max_repetition_level == 0) {
        ToIcebergBounds(stats, d.physical_type, *d.type, options_.statistics_truncate_length,
                        &f.lower_bound, &f.upper_bound);
      }
    }
    return m;
  }

  std::unique_ptr<OutputFile> file_;
  Schema schema_;
  WriterOptions options_;
  PageCompressor compressor_;
  std::vector<SchemaElement> elements_;
  std::vector<ColumnDescriptor> leaves_;
  std::vector<LeafPath> paths_;
  std::vector<std::unique_ptr<ColumnWriter>> writers_;
  Shredder shredder_;
  std::vector<RowGroup> row_groups_;
  std::vector<int64_t> split_offsets_;
  int64_t group_rows_ = 0;
  int64_t rows_ = 0;
  bool closed_ = false;
  Status failed_;
};

Result<std::unique_ptr<ParquetWriter>> ParquetWriter::Open(std::unique_ptr<OutputFile> file,
                                                           const Schema& schema,
                                                           WriterOptions options) {
  if (file == nullptr) return Status::Invalid("ParquetWriter: no output file");
  if (options.page_bytes <= 0 || options.row_group_bytes <= 0 || options.row_group_rows < 0 ||
      options.page_rows < 0) {
    return Status::Invalid(
        "file {}: page_bytes ({}) and row_group_bytes ({}) must be positive, page_rows ({}) and "
        "row_group_rows ({}) not negative",
        file->path(), options.page_bytes, options.row_group_bytes, options.page_rows,
        options.row_group_rows);
  }
  auto impl = std::make_unique<Impl>(std::move(file), schema, std::move(options));
  RETURN_IF_ERROR(impl->Init());
  return std::unique_ptr<ParquetWriter>(new ParquetWriter(std::move(impl)));
}

ParquetWriter::ParquetWriter(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ParquetWriter::~ParquetWriter() = default;

Status ParquetWriter::Write(const Batch& batch) { return impl_->Write(batch); }
Status ParquetWriter::AppendRows(int64_t num_rows, const Batch& values,
                                 const std::vector<CopiedPages*>& copied) {
  return impl_->AppendRows(num_rows, values, copied);
}
Result<FileMetrics> ParquetWriter::Close() { return impl_->Close(); }
int64_t ParquetWriter::rows_written() const { return impl_->rows(); }
int64_t ParquetWriter::bytes_written() const { return impl_->bytes(); }
int64_t ParquetWriter::buffered_bytes() const { return impl_->buffered(); }

}  // namespace sluice::parquet
