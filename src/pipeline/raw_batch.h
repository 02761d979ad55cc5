// RawBatch: the records a pipeline polled and has not decoded yet, as they
// came (values and message keys back to back in one buffer), with where each
// came from. The pipeline's thread fills one while its lanes decode another;
// a windowed pipeline's window stage keeps a batch's records for the dead
// letters of its late rows (pipeline.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sluice::pipeline {

// Where a record (and the row decoded from it) came from, for its dead letter.
struct RowOrigin {
  uint32_t partition;  // index into its RawBatch's partitions
  int64_t offset;
  int64_t timestamp_ms;
};

// A record polled but not yet decoded: its value is raw[begin, begin + size).
struct RawRecord {
  size_t begin, size;
  RowOrigin origin;
  uint32_t key_size = 0;  // the message key follows the value in raw
  bool has_value = true;  // false: a tombstone
};

struct RawBatch {
  std::string raw;
  std::vector<RawRecord> records;
  std::vector<std::string> partitions;  // names, indexed by RowOrigin::partition
  uint32_t last_partition = 0;
  void Clear() {
    raw.clear();
    records.clear();
    partitions.clear();
  }
  // Record i's value and message key (their bytes in raw).
  std::string_view Value(size_t i) const {
    return std::string_view(raw.data() + records[i].begin, records[i].size);
  }
  std::string_view Key(size_t i) const {
    const RawRecord& r = records[i];
    return std::string_view(raw.data() + r.begin + r.size, r.key_size);
  }
  // The bytes of records [begin, end) (values and keys).
  int64_t Bytes(size_t begin, size_t end) const {
    if (begin >= end) return 0;
    const RawRecord& last = records[end - 1];
    return static_cast<int64_t>(last.begin + last.size + last.key_size - records[begin].begin);
  }
};

}  // namespace sluice::pipeline
