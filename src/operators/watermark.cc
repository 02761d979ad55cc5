#include "operators/watermark.h"

#include <nlohmann/json.hpp>

namespace sluice::operators {

void WatermarkTracker::Observe(const std::string& partition, int64_t event_us, int64_t now_ms) {
  Partition& p = partitions_[partition];
  p.last_seen_ms = now_ms;
  bool was_idle = p.idle;
  p.idle = false;
  if (event_us > p.max_event_us || was_idle) {
    p.max_event_us = std::max(p.max_event_us, event_us);
    Recompute();
  }
}

void WatermarkTracker::CheckIdle(int64_t now_ms) {
  if (idle_timeout_ms_ <= 0) return;
  bool changed = false;
  for (auto& [name, p] : partitions_) {
    if (p.last_seen_ms < 0) p.last_seen_ms = now_ms;  // restored: its clock starts now
    if (!p.idle && now_ms - p.last_seen_ms >= idle_timeout_ms_) {
      p.idle = true;
      changed = true;
    }
  }
  if (changed) Recompute();
}

void WatermarkTracker::Recompute() {
  int64_t low = INT64_MAX;
  bool any = false;
  for (const auto& [name, p] : partitions_) {
    if (p.idle) continue;
    any = true;
    low = std::min(low, p.max_event_us);
  }
  if (!any || low == INT64_MIN) return;
  int64_t candidate = low < INT64_MIN + delay_us_ ? INT64_MIN : low - delay_us_;
  // INT64_MAX is the end of a bounded input (every window closes): no event
  // time, not even one at the end of the range, means that.
  watermark_ = std::max(watermark_, std::min(candidate, INT64_MAX - 1));
}

std::string WatermarkTracker::Encode() const {
  nlohmann::json j;
  j["watermark"] = watermark_;
  nlohmann::json parts = nlohmann::json::object();
  for (const auto& [name, p] : partitions_) parts[name] = p.max_event_us;
  j["partitions"] = parts;
  return j.dump();
}

Status WatermarkTracker::Decode(std::string_view text) {
  auto j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("watermark") ||
      !j["watermark"].is_number_integer() || !j.contains("partitions") ||
      !j["partitions"].is_object()) {
    return Status::Corruption("watermark state: not the JSON sluice writes: {}",
                              std::string(text.substr(0, 200)));
  }
  watermark_ = j["watermark"].get<int64_t>();
  partitions_.clear();
  for (const auto& [name, v] : j["partitions"].items()) {
    if (!v.is_number_integer()) return Status::Corruption("watermark state: partition {}", name);
    Partition& p = partitions_[name];
    p.max_event_us = v.get<int64_t>();
    p.last_seen_ms = -1;  // not seen in this run yet: idle only after a whole timeout from now
  }
  return Status::OK();
}

}  // namespace sluice::operators
