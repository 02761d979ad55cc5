#include "log/producer_table.h"

namespace sluice::log {

std::optional<ProducerEntry> ProducerTable::Find(int64_t producer_id, int64_t sequence) const {
  auto it = producers_.find(producer_id);
  if (it == producers_.end()) return std::nullopt;
  for (const auto& e : it->second.recent) {
    if (e.sequence == sequence) return e;
  }
  return std::nullopt;
}

std::optional<int64_t> ProducerTable::LastSequence(int64_t producer_id) const {
  auto it = producers_.find(producer_id);
  if (it == producers_.end() || it->second.recent.empty()) return std::nullopt;
  return it->second.recent.back().sequence;
}

void ProducerTable::Record(int64_t producer_id, const ProducerEntry& entry) {
  State& state = producers_[producer_id];
  if (!state.recent.empty()) by_last_offset_.erase(state.recent.back().last_offset);
  state.recent.push_back(entry);
  while (state.recent.size() > kSequencesPerProducer) state.recent.pop_front();
  by_last_offset_[entry.last_offset] = producer_id;
  while (producers_.size() > max_producers_ && !by_last_offset_.empty()) {
    auto oldest = by_last_offset_.begin();
    producers_.erase(oldest->second);
    by_last_offset_.erase(oldest);
  }
}

void ProducerTable::Forget(int64_t producer_id, int64_t sequence) {
  auto it = producers_.find(producer_id);
  if (it == producers_.end()) return;
  std::deque<ProducerEntry>& recent = it->second.recent;
  for (auto e = recent.begin(); e != recent.end(); ++e) {
    if (e->sequence != sequence) continue;
    bool was_last = std::next(e) == recent.end();
    if (was_last) by_last_offset_.erase(e->last_offset);
    recent.erase(e);
    if (recent.empty()) {
      producers_.erase(it);
    } else if (was_last) {
      by_last_offset_[recent.back().last_offset] = producer_id;
    }
    return;
  }
}

}  // namespace sluice::log
