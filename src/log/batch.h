// The on-disk record batch of the stream log (format: docs/log_format.md).
//
// A batch is a fixed little-endian header followed by records as [u32 length][bytes].
// EncodeBatch builds one; DecodeBatchHeader/DecodeBatchRecords validate every field
// (magic, version, lengths bounded by `available` bytes, CRC-32C, record framing)
// before allocating or trusting anything, and report the reason as kCorruption.
// Pure functions, no I/O; thread-compatible.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace sluice::log {

inline constexpr uint32_t kBatchMagic = 0x474C4C53;  // "SLLG" as little-endian bytes
inline constexpr uint16_t kBatchVersion = 1;
inline constexpr int64_t kBatchHeaderSize = 52;
inline constexpr int64_t kNoProducer = -1;  // producer_id of a batch without idempotency key

struct BatchHeader {
  uint32_t payload_length = 0;
  uint32_t crc = 0;
  int64_t base_offset = 0;
  uint32_t record_count = 0;
  int64_t timestamp_ms = 0;
  int64_t producer_id = kNoProducer;
  int64_t sequence = -1;
  uint16_t header_length = kBatchHeaderSize;

  int64_t total_size() const { return header_length + static_cast<int64_t>(payload_length); }
  int64_t end_offset() const { return base_offset + record_count; }
};

// Appends one encoded batch holding `records` to `out`.
void EncodeBatch(int64_t base_offset, int64_t timestamp_ms, int64_t producer_id, int64_t sequence,
                 std::span<const std::string_view> records, std::string* out);
void EncodeBatch(int64_t base_offset, int64_t timestamp_ms, int64_t producer_id, int64_t sequence,
                 const std::vector<std::string>& records, std::string* out);

// Decodes the header at the start of `bytes` (at least kBatchHeaderSize bytes).
// `available` is how many bytes the file holds from this batch's start: a payload
// longer than that is a short (torn) batch. Does not check the CRC.
Status DecodeBatchHeader(std::string_view bytes, int64_t available, BatchHeader* header);

// Checks the CRC over header bytes [16, header_length) + payload. `header_bytes` is
// the raw header (header_length bytes), `payload` the payload_length bytes after it.
Status VerifyBatchCrc(const BatchHeader& header, std::string_view header_bytes,
                      std::string_view payload);

// Splits a verified payload into record_count records (views into `payload`);
// the framing must consume the payload exactly.
Status DecodeBatchRecords(const BatchHeader& header, std::string_view payload,
                          std::vector<std::string_view>* records);

}  // namespace sluice::log
