// ProducerTable: the idempotency state of a stream log. For each producer id it
// remembers its last few sequences and the offsets they were written at, so a
// retried batch is acknowledged again with its original offsets instead of being
// appended twice. Bounded: at most `max_producers` producers are kept, the one
// that appended least recently is forgotten first (its retries then append anew).
// Rebuilt from the segments on open. Not thread-safe: the log's mutex guards it.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <unordered_map>

namespace sluice::log {

struct ProducerEntry {
  int64_t sequence = 0;
  int64_t first_offset = 0;
  int64_t last_offset = 0;
};

class ProducerTable {
 public:
  static constexpr size_t kSequencesPerProducer = 5;

  explicit ProducerTable(size_t max_producers) : max_producers_(max_producers) {}

  // The entry for (producer, sequence) if it is still remembered.
  std::optional<ProducerEntry> Find(int64_t producer_id, int64_t sequence) const;
  // The last sequence of `producer_id`, if known.
  std::optional<int64_t> LastSequence(int64_t producer_id) const;
  // Records a batch written for (producer, entry.sequence).
  void Record(int64_t producer_id, const ProducerEntry& entry);
  // Takes back a Record whose batch was never acknowledged (its write failed), so a
  // retry is appended rather than answered with offsets that hold nothing.
  void Forget(int64_t producer_id, int64_t sequence);
  size_t size() const { return producers_.size(); }

 private:
  struct State {
    std::deque<ProducerEntry> recent;  // ascending sequence, at most kSequencesPerProducer
  };
  size_t max_producers_;
  std::unordered_map<int64_t, State> producers_;
  std::map<int64_t, int64_t> by_last_offset_;  // last offset written -> producer id (LRU order)
};

}  // namespace sluice::log
