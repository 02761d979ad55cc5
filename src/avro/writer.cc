#include "avro/writer.h"

#include <random>

#include "avro/iceberg_schema.h"
#include "common/endian.h"

namespace sluice::avro {

namespace {

void AppendLong(std::string* out, int64_t v) { AppendVarint(out, ZigZagEncode(v)); }

void AppendString(std::string* out, std::string_view s) {
  AppendLong(out, static_cast<int64_t>(s.size()));
  out->append(s);
}

}  // namespace

Result<std::unique_ptr<AvroWriter>> AvroWriter::Open(std::unique_ptr<OutputFile> file,
                                                     const Schema& schema, WriterOptions options) {
  auto w = std::unique_ptr<AvroWriter>(new AvroWriter());
  w->file_ = std::move(file);
  w->options_ = std::move(options);
  const std::string& path = w->file_->path();
  for (const auto& [key, value] : w->options_.metadata) {
    if (key.rfind("avro.", 0) == 0) {
      return Status::Invalid("avro file {}: metadata key '{}' is reserved", path, key);
    }
  }
  if (w->options_.avro_schema_json.empty()) {
    ASSIGN_OR_RETURN(w->avro_schema_, IcebergToAvroSchema(schema, w->options_.record_name));
  } else {
    auto parsed = ParseAvroSchema(w->options_.avro_schema_json);
    if (!parsed.ok()) return parsed.status().WithContextF("avro file {}", path);
    w->avro_schema_ = *parsed;
  }
  auto encoder = RecordEncoder::Make(*w->avro_schema_, schema);
  if (!encoder.ok()) return encoder.status().WithContextF("avro file {}", path);
  w->encoder_ = std::move(encoder).value();
  if (w->options_.sync_marker) {
    w->sync_ = *w->options_.sync_marker;
  } else {
    std::random_device rd;
    for (auto& b : w->sync_) b = static_cast<uint8_t>(rd());
  }
  RETURN_IF_ERROR_CTX(w->WriteHeader(), "avro file {}", path);
  return w;
}

Status AvroWriter::WriteHeader() {
  std::string h("Obj\x01", 4);
  std::vector<std::pair<std::string, std::string>> meta = {
      {"avro.schema", AvroSchemaToString(*avro_schema_)},
      {"avro.codec", std::string(CodecName(options_.codec))}};
  meta.insert(meta.end(), options_.metadata.begin(), options_.metadata.end());
  AppendLong(&h, static_cast<int64_t>(meta.size()));
  for (const auto& [key, value] : meta) {
    AppendString(&h, key);
    AppendString(&h, value);
  }
  AppendLong(&h, 0);
  h.append(reinterpret_cast<const char*>(sync_.data()), sync_.size());
  return file_->Append(h);
}

Status AvroWriter::Write(const Batch& batch) {
  if (closed_) return Status::Invalid("avro file {}: write after close", file_->path());
  size_t mark = buffer_.size();
  Status st = encoder_->Encode(batch, 0, batch.num_rows(), &buffer_);
  if (!st.ok()) {
    buffer_.resize(mark);
    return st.WithContextF("avro file {}", file_->path());
  }
  block_rows_ += batch.num_rows();
  rows_written_ += batch.num_rows();
  if (static_cast<int64_t>(buffer_.size()) >= options_.block_bytes) return FlushBlock();
  return Status::OK();
}

Status AvroWriter::FlushBlock() {
  if (block_rows_ == 0) return Status::OK();
  RETURN_IF_ERROR_CTX(Compress(options_.codec, buffer_, &compressed_), "avro file {}",
                      file_->path());
  std::string head;
  AppendLong(&head, block_rows_);
  AppendLong(&head, static_cast<int64_t>(compressed_.size()));
  RETURN_IF_ERROR(file_->Append(head));
  RETURN_IF_ERROR(file_->Append(compressed_));
  RETURN_IF_ERROR(
      file_->Append(std::string_view(reinterpret_cast<const char*>(sync_.data()), sync_.size())));
  buffer_.clear();
  block_rows_ = 0;
  return Status::OK();
}

Result<int64_t> AvroWriter::Close() {
  if (closed_) return Status::Invalid("avro file {}: closed twice", file_->path());
  RETURN_IF_ERROR(FlushBlock());
  closed_ = true;
  int64_t size = file_->position();
  RETURN_IF_ERROR(file_->Close());
  return size;
}

}  // namespace sluice::avro
