// Metrics: a small Prometheus registry (counters, gauges, fixed-bucket histograms)
// rendered as the text exposition format 0.0.4 for GET /metrics.
//
// Model: a family has a name, HELP text, a type and label names; each distinct set of
// label values is one metric (a time series). Callers look a metric up once and keep
// the handle: updating it is a lock-free atomic operation, cheap enough for hot paths.
//
//   ASSIGN_OR_RETURN(auto* family, registry.AddCounter("sluice_records_in_total",
//                                                      "Records accepted.", {"stream"}));
//   ASSIGN_OR_RETURN(Counter* in, family->WithLabels({"events_in"}));
//   in->Increment(batch.size());
//
// Naming rules enforced at registration (what `promtool check metrics` expects):
// valid Prometheus names, counters end in `_total`, no `_total/_count/_sum/_bucket`
// suffix on other types, label names not reserved (`__*`, `le` on histograms).
// Units belong in names (`_seconds`, `_bytes`).
//
// Ownership and threads: the registry owns families and metrics; handles stay valid
// for its lifetime. Every method is thread-safe. Render() reads each value atomically
// (a histogram's buckets are read one by one; its _count is their sum, so a rendered
// histogram is always self-consistent).
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/status.h"

namespace sluice::server {

// A value that only goes up (restarts at 0 when the process restarts).
class Counter {
 public:
  // `by` must be >= 0 (a negative or NaN increment is ignored).
  void Increment(double by = 1);
  double value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0};
};

// A value that goes up and down.
class Gauge {
 public:
  void Set(double v) { value_.store(v, std::memory_order_relaxed); }
  void Add(double by) { value_.fetch_add(by, std::memory_order_relaxed); }
  double value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0};
};

// Observations counted into fixed buckets (upper bounds, inclusive) plus +Inf.
class Histogram {
 public:
  explicit Histogram(std::vector<double> bounds);
  void Observe(double v);

  const std::vector<double>& bounds() const { return bounds_; }
  // Per bucket (not cumulative), the last one being +Inf; and the sum of observations.
  std::vector<uint64_t> BucketCounts() const;
  double sum() const { return sum_.load(std::memory_order_relaxed); }

 private:
  const std::vector<double> bounds_;                 // strictly increasing, finite
  std::unique_ptr<std::atomic<uint64_t>[]> counts_;  // bounds_.size() + 1
  std::atomic<double> sum_{0};
};

// Default buckets for request durations in seconds (1 ms .. 10 s).
std::vector<double> DefaultSecondsBuckets();

enum class MetricType { kCounter, kGauge, kHistogram };

// One metric family: the metrics of one name, by label values.
template <typename M>
class Family {
 public:
  // The metric for `label_values` (one per label name, in order), created at first
  // use. kInvalidArgument if the number of values is wrong. Keep the handle.
  Result<M*> WithLabels(const std::vector<std::string>& label_values);

  const std::string& name() const { return name_; }

 private:
  friend class Registry;
  Family(std::string name, std::string help, std::vector<std::string> label_names,
         std::vector<double> bounds)
      : name_(std::move(name)),
        help_(std::move(help)),
        label_names_(std::move(label_names)),
        bounds_(std::move(bounds)) {}

  const std::string name_;
  const std::string help_;
  const std::vector<std::string> label_names_;
  const std::vector<double> bounds_;  // histograms only
  mutable std::mutex mu_;
  std::map<std::vector<std::string>, std::unique_ptr<M>> metrics_;  // guarded by mu_
};

class Registry {
 public:
  Registry();
  ~Registry();
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  // Registers a family (or returns the existing one if it was registered with the same
  // type, help and label names; kAlreadyExists otherwise). A family without labels
  // gets its single metric at once, so it renders 0 before the first update.
  Result<Family<Counter>*> AddCounter(const std::string& name, const std::string& help,
                                      std::vector<std::string> label_names = {});
  Result<Family<Gauge>*> AddGauge(const std::string& name, const std::string& help,
                                  std::vector<std::string> label_names = {});
  // `bounds`: strictly increasing finite upper bounds (+Inf is implicit).
  Result<Family<Histogram>*> AddHistogram(const std::string& name, const std::string& help,
                                          std::vector<double> bounds,
                                          std::vector<std::string> label_names = {});

  // Every family, sorted by name, in the text exposition format 0.0.4.
  std::string Render() const;

 private:
  struct Entry;
  Result<Entry*> Add(MetricType type, const std::string& name, const std::string& help,
                     std::vector<std::string> label_names, const std::vector<double>& bounds);

  mutable std::mutex mu_;
  std::map<std::string, std::unique_ptr<Entry>> families_;  // guarded by mu_
};

// Label value / HELP escaping of the text format (exposed for tests).
std::string EscapeLabelValue(std::string_view value);
std::string EscapeHelp(std::string_view help);
// A sample value as the text format writes it: "+Inf", "-Inf", "NaN" or the shortest
// decimal that reads back as the same double.
std::string FormatSampleValue(double v);

}  // namespace sluice::server
