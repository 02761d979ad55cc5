#include "log/batch.h"

#include "common/crc32c.h"
#include "common/endian.h"

namespace sluice::log {
namespace {

// Byte positions inside the header.
constexpr size_t kMagicPos = 0;
constexpr size_t kHeaderLengthPos = 4;
constexpr size_t kVersionPos = 6;
constexpr size_t kPayloadLengthPos = 8;
constexpr size_t kCrcPos = 12;
constexpr size_t kCrcStart = 16;  // the CRC covers [16, header_length) + payload
constexpr size_t kBaseOffsetPos = 16;
constexpr size_t kRecordCountPos = 24;
constexpr size_t kTimestampPos = 28;
constexpr size_t kProducerIdPos = 36;
constexpr size_t kSequencePos = 44;

}  // namespace

void EncodeBatch(int64_t base_offset, int64_t timestamp_ms, int64_t producer_id, int64_t sequence,
                 const std::vector<std::string>& records, std::string* out) {
  std::vector<std::string_view> views(records.begin(), records.end());
  EncodeBatch(base_offset, timestamp_ms, producer_id, sequence, views, out);
}

void EncodeBatch(int64_t base_offset, int64_t timestamp_ms, int64_t producer_id, int64_t sequence,
                 std::span<const std::string_view> records, std::string* out) {
  size_t start = out->size();
  uint64_t payload = 0;
  for (const auto& r : records) payload += 4 + r.size();
  out->resize(start + kBatchHeaderSize);
  char* h = out->data() + start;
  StoreLE<uint32_t>(h + kMagicPos, kBatchMagic);
  StoreLE<uint16_t>(h + kHeaderLengthPos, static_cast<uint16_t>(kBatchHeaderSize));
  StoreLE<uint16_t>(h + kVersionPos, kBatchVersion);
  StoreLE<uint32_t>(h + kPayloadLengthPos, static_cast<uint32_t>(payload));
  StoreLE<int64_t>(h + kBaseOffsetPos, base_offset);
  StoreLE<uint32_t>(h + kRecordCountPos, static_cast<uint32_t>(records.size()));
  StoreLE<int64_t>(h + kTimestampPos, timestamp_ms);
  StoreLE<int64_t>(h + kProducerIdPos, producer_id);
  StoreLE<int64_t>(h + kSequencePos, sequence);
  for (const auto& r : records) {
    AppendLE<uint32_t>(out, static_cast<uint32_t>(r.size()));
    out->append(r);
  }
  std::string_view covered(out->data() + start + kCrcStart, out->size() - start - kCrcStart);
  StoreLE<uint32_t>(out->data() + start + kCrcPos, Crc32c(covered));
}

Status DecodeBatchHeader(std::string_view bytes, int64_t available, BatchHeader* header) {
  if (available < kBatchHeaderSize || static_cast<int64_t>(bytes.size()) < kBatchHeaderSize) {
    return Status::Corruption("short batch header: {} of {} bytes", available, kBatchHeaderSize);
  }
  const char* h = bytes.data();
  uint32_t magic = LoadLE<uint32_t>(h + kMagicPos);
  if (magic != kBatchMagic) return Status::Corruption("bad batch magic 0x{:08x}", magic);
  header->header_length = LoadLE<uint16_t>(h + kHeaderLengthPos);
  uint16_t version = LoadLE<uint16_t>(h + kVersionPos);
  if (version != kBatchVersion) {
    return Status::Corruption("unsupported batch version {}", version);
  }
  if (header->header_length != kBatchHeaderSize) {
    return Status::Corruption("bad batch header length {} (version 1 has {})",
                              header->header_length, kBatchHeaderSize);
  }
  header->payload_length = LoadLE<uint32_t>(h + kPayloadLengthPos);
  header->crc = LoadLE<uint32_t>(h + kCrcPos);
  header->base_offset = LoadLE<int64_t>(h + kBaseOffsetPos);
  header->record_count = LoadLE<uint32_t>(h + kRecordCountPos);
  header->timestamp_ms = LoadLE<int64_t>(h + kTimestampPos);
  header->producer_id = LoadLE<int64_t>(h + kProducerIdPos);
  header->sequence = LoadLE<int64_t>(h + kSequencePos);
  if (header->total_size() > available) {
    return Status::Corruption("short batch: {} bytes declared, {} in the file",
                              header->total_size(), available);
  }
  if (header->record_count == 0 || header->payload_length < 4ull * header->record_count) {
    return Status::Corruption("batch of {} records cannot fit {} payload bytes",
                              header->record_count, header->payload_length);
  }
  if (header->base_offset < 0) {
    return Status::Corruption("negative batch base offset {}", header->base_offset);
  }
  return Status::OK();
}

Status VerifyBatchCrc(const BatchHeader& header, std::string_view header_bytes,
                      std::string_view payload) {
  if (header_bytes.size() != header.header_length || payload.size() != header.payload_length) {
    return Status::Internal("batch CRC check given {}+{} bytes for a {}+{} byte batch",
                            header_bytes.size(), payload.size(), header.header_length,
                            header.payload_length);
  }
  uint32_t crc = Crc32cExtend(Crc32c(header_bytes.substr(kCrcStart)), payload);
  if (crc != header.crc) {
    return Status::Corruption("batch CRC mismatch: stored 0x{:08x}, computed 0x{:08x}", header.crc,
                              crc);
  }
  return Status::OK();
}

Status DecodeBatchRecords(const BatchHeader& header, std::string_view payload,
                          std::vector<std::string_view>* records) {
  records->clear();
  size_t pos = 0;
  for (uint32_t i = 0; i < header.record_count; ++i) {
    if (payload.size() - pos < 4) {
      return Status::Corruption("record {} of {}: length past the payload end", i,
                                header.record_count);
    }
    uint32_t len = LoadLE<uint32_t>(payload.data() + pos);
    pos += 4;
    if (len > payload.size() - pos) {
      return Status::Corruption("record {} of {}: length {} past the payload end", i,
                                header.record_count, len);
    }
    records->push_back(payload.substr(pos, len));
    pos += len;
  }
  if (pos != payload.size()) {
    return Status::Corruption("{} trailing payload bytes after {} records", payload.size() - pos,
                              header.record_count);
  }
  return Status::OK();
}

}  // namespace sluice::log
