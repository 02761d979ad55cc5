#include "avro/writer.h"

#include <algorithm>
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
  std::string probe;  // validates the compression level up front
  RETURN_IF_ERROR_CTX(Compress(w->options_.codec, "", &probe, w->options_.compression_level),
                      "avro file {}", path);
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
  // Encode the whole batch first (so a bad row leaves nothing behind), noting
  // where blocks of about block_bytes end; then flush the complete blocks.
  constexpr int64_t kChunkRows = 256;
  size_t mark = buffer_.size();
  std::vector<std::pair<size_t, int64_t>> cuts;  // (end byte, rows) of each full block
  size_t block_start = 0;
  int64_t rows_in_block = block_rows_;
  for (int64_t begin = 0; begin < batch.num_rows(); begin += kChunkRows) {
    int64_t end = std::min(batch.num_rows(), begin + kChunkRows);
    Status st = encoder_->Encode(batch, begin, end, &buffer_);
    if (!st.ok()) {
      buffer_.resize(mark);
      return st.WithContextF("avro file {}", file_->path());
    }
    rows_in_block += end - begin;
    if (static_cast<int64_t>(buffer_.size() - block_start) >= options_.block_bytes) {
      cuts.emplace_back(buffer_.size(), rows_in_block);
      block_start = buffer_.size();
      rows_in_block = 0;
    }
  }
  rows_written_ += batch.num_rows();
  size_t flushed = 0;
  for (const auto& [end, rows] : cuts) {
    RETURN_IF_ERROR(WriteBlock(std::string_view(buffer_).substr(flushed, end - flushed), rows));
    flushed = end;
  }
  buffer_.erase(0, flushed);
  block_rows_ = rows_in_block;
  return Status::OK();
}

Status AvroWriter::FlushBlock() {
  if (block_rows_ == 0) return Status::OK();
  RETURN_IF_ERROR(WriteBlock(buffer_, block_rows_));
  buffer_.clear();
  block_rows_ = 0;
  return Status::OK();
}

Status AvroWriter::WriteBlock(std::string_view data, int64_t rows) {
  RETURN_IF_ERROR_CTX(Compress(options_.codec, data, &compressed_, options_.compression_level),
                      "avro file {}", file_->path());
  std::string head;
  AppendLong(&head, rows);
  AppendLong(&head, static_cast<int64_t>(compressed_.size()));
  RETURN_IF_ERROR(file_->Append(head));
  RETURN_IF_ERROR(file_->Append(compressed_));
  return file_->Append(std::string_view(reinterpret_cast<const char*>(sync_.data()), sync_.size()));
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
