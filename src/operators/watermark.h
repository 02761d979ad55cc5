// Watermarks: how far event time has progressed, per source partition.
//
// WATERMARK FOR ts AS ts - INTERVAL 'd' declares that events of a partition
// arrive at most d out of order: a partition's watermark is the largest event
// time it has delivered minus d, and the pipeline's watermark is the smallest
// over the partitions that are not idle, never going back. A partition that
// delivered nothing for `idle_timeout_ms` (wall clock, when set) stops holding
// the watermark back until it delivers again. A source whose partitions form
// one ordered stream (a folder of files read in name order) uses one
// partition for all. Before any event the watermark is INT64_MIN (nothing is
// late, nothing closes).
//
// The state (per-partition maxima, the watermark) is part of a pipeline's
// checkpoint, so a restart judges lateness exactly as the run before.
// Thread-safety: one thread.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "common/status.h"

namespace sluice::operators {

class WatermarkTracker {
 public:
  WatermarkTracker(int64_t delay_us, int64_t idle_timeout_ms)
      : delay_us_(delay_us), idle_timeout_ms_(idle_timeout_ms) {}

  int64_t current() const { return watermark_; }
  // An event at `event_us` from `partition`, seen at `now_ms` (wall clock).
  void Observe(const std::string& partition, int64_t event_us, int64_t now_ms);
  // Lets partitions idle since before now - idle_timeout stop holding the watermark.
  void CheckIdle(int64_t now_ms);
  // Raises the watermark to at least `w` (after a bounded input's end closed
  // every window up to it).
  void AdvanceTo(int64_t w) { watermark_ = std::max(watermark_, w); }

  std::string Encode() const;
  Status Decode(std::string_view text);  // what Encode wrote

 private:
  struct Partition {
    int64_t max_event_us = INT64_MIN;
    int64_t last_seen_ms = 0;
    bool idle = false;
  };
  void Recompute();

  int64_t delay_us_;
  int64_t idle_timeout_ms_;
  std::map<std::string, Partition> partitions_;
  int64_t watermark_ = INT64_MIN;
};

}  // namespace sluice::operators
