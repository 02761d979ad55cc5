#include "server/metrics.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace sluice::server {

void Counter::Increment(double by) {
  if (!(by >= 0)) return;  // also drops NaN
  value_.fetch_add(by, std::memory_order_relaxed);
}

Histogram::Histogram(std::vector<double> bounds)
    : bounds_(std::move(bounds)), counts_(new std::atomic<uint64_t>[bounds_.size() + 1]) {
  for (size_t i = 0; i <= bounds_.size(); ++i) counts_[i].store(0, std::memory_order_relaxed);
}

void Histogram::Observe(double v) {
  // First bucket whose upper bound is >= v (bounds are inclusive); NaN lands in +Inf.
  size_t i = std::lower_bound(bounds_.begin(), bounds_.end(), v) - bounds_.begin();
  if (std::isnan(v)) i = bounds_.size();
  counts_[i].fetch_add(1, std::memory_order_relaxed);
  sum_.fetch_add(v, std::memory_order_relaxed);
}

std::vector<uint64_t> Histogram::BucketCounts() const {
  std::vector<uint64_t> out(bounds_.size() + 1);
  for (size_t i = 0; i < out.size(); ++i) out[i] = counts_[i].load(std::memory_order_relaxed);
  return out;
}

std::vector<double> DefaultSecondsBuckets() {
  return {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};
}

namespace {

template <typename M>
std::unique_ptr<M> MakeMetric(const std::vector<double>& bounds) {
  if constexpr (std::is_same_v<M, Histogram>) {
    return std::make_unique<Histogram>(bounds);
  } else {
    return std::make_unique<M>();
  }
}

bool IsMetricName(std::string_view s) {
  if (s.empty()) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':' ||
              (i > 0 && c >= '0' && c <= '9');
    if (!ok) return false;
  }
  return true;
}

bool IsLabelName(std::string_view s) {
  return IsMetricName(s) && s.find(':') == std::string_view::npos;
}

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

std::string_view TypeName(MetricType type) {
  switch (type) {
    case MetricType::kCounter: return "counter";
    case MetricType::kGauge: return "gauge";
    case MetricType::kHistogram: return "histogram";
  }
  return "untyped";
}

// `{a="x",b="y"` plus `extra` (already formatted, e.g. `le="0.5"`) and `}`; empty
// when there is nothing to write.
std::string LabelSet(const std::vector<std::string>& names, const std::vector<std::string>& values,
                     std::string_view extra = {}) {
  if (names.empty() && extra.empty()) return "";
  std::string out = "{";
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += ',';
    out += fmt::format("{}=\"{}\"", names[i], EscapeLabelValue(values[i]));
  }
  if (!extra.empty()) {
    if (!names.empty()) out += ',';
    out += extra;
  }
  out += '}';
  return out;
}

}  // namespace

template <typename M>
Result<M*> Family<M>::WithLabels(const std::vector<std::string>& label_values) {
  if (label_values.size() != label_names_.size()) {
    return Status::Invalid("metric {}: {} label values given for {} label names", name_,
                           label_values.size(), label_names_.size());
  }
  std::lock_guard<std::mutex> lock(mu_);
  auto& slot = metrics_[label_values];
  if (slot == nullptr) slot = MakeMetric<M>(bounds_);
  return slot.get();
}

template class Family<Counter>;
template class Family<Gauge>;
template class Family<Histogram>;

struct Registry::Entry {
  MetricType type;
  std::unique_ptr<Family<Counter>> counter;
  std::unique_ptr<Family<Gauge>> gauge;
  std::unique_ptr<Family<Histogram>> histogram;
};

Registry::Registry() = default;
Registry::~Registry() = default;

Result<Registry::Entry*> Registry::Add(MetricType type, const std::string& name,
                                       const std::string& help,
                                       std::vector<std::string> label_names,
                                       const std::vector<double>& bounds) {
  if (!IsMetricName(name) || name.starts_with("__")) {
    return Status::Invalid("metric name '{}' is not a valid Prometheus name", name);
  }
  bool counter = type == MetricType::kCounter;
  if (counter && !EndsWith(name, "_total")) {
    return Status::Invalid("counter '{}' must end in _total", name);
  }
  for (std::string_view suffix : {"_total", "_count", "_sum", "_bucket"}) {
    if (EndsWith(name, suffix) && !(counter && suffix == "_total")) {
      return Status::Invalid("{} '{}' must not end in {}", TypeName(type), name, suffix);
    }
  }
  if (help.empty()) return Status::Invalid("metric {}: HELP text is empty", name);
  for (size_t i = 0; i < label_names.size(); ++i) {
    const std::string& l = label_names[i];
    if (!IsLabelName(l) || l.starts_with("__") || (type == MetricType::kHistogram && l == "le")) {
      return Status::Invalid("metric {}: label name '{}' is invalid or reserved", name, l);
    }
    if (std::find(label_names.begin(), label_names.begin() + i, l) != label_names.begin() + i) {
      return Status::Invalid("metric {}: label name '{}' repeated", name, l);
    }
  }
  if (type == MetricType::kHistogram) {
    if (bounds.empty()) return Status::Invalid("histogram {}: no buckets", name);
    for (size_t i = 0; i < bounds.size(); ++i) {
      if (!std::isfinite(bounds[i]) || (i > 0 && !(bounds[i] > bounds[i - 1]))) {
        return Status::Invalid("histogram {}: bucket bounds must be finite and increasing", name);
      }
    }
  }

  std::lock_guard<std::mutex> lock(mu_);
  auto it = families_.find(name);
  if (it != families_.end()) {
    Entry* e = it->second.get();
    const std::vector<std::string>* names = nullptr;
    const std::string* old_help = nullptr;
    if (e->counter) names = &e->counter->label_names_, old_help = &e->counter->help_;
    if (e->gauge) names = &e->gauge->label_names_, old_help = &e->gauge->help_;
    if (e->histogram) {
      names = &e->histogram->label_names_, old_help = &e->histogram->help_;
      if (e->histogram->bounds_ != bounds) names = nullptr;
    }
    if (e->type != type || names == nullptr || *names != label_names || *old_help != help) {
      return Status::AlreadyExists("metric {} is already registered with another definition", name);
    }
    return e;
  }
  // A histogram's series names must not collide with another family either.
  for (std::string_view suffix : {"_count", "_sum", "_bucket"}) {
    std::string series = name + std::string(suffix);
    if (type == MetricType::kHistogram && families_.count(series)) {
      return Status::AlreadyExists("histogram {}: series {} is already a metric", name, series);
    }
  }
  auto entry = std::make_unique<Entry>();
  entry->type = type;
  bool no_labels = label_names.empty();
  switch (type) {
    case MetricType::kCounter:
      entry->counter.reset(new Family<Counter>(name, help, std::move(label_names), {}));
      if (no_labels) (void)entry->counter->WithLabels({});
      break;
    case MetricType::kGauge:
      entry->gauge.reset(new Family<Gauge>(name, help, std::move(label_names), {}));
      if (no_labels) (void)entry->gauge->WithLabels({});
      break;
    case MetricType::kHistogram:
      entry->histogram.reset(new Family<Histogram>(name, help, std::move(label_names), bounds));
      if (no_labels) (void)entry->histogram->WithLabels({});
      break;
  }
  Entry* out = entry.get();
  families_.emplace(name, std::move(entry));
  return out;
}

Result<Family<Counter>*> Registry::AddCounter(const std::string& name, const std::string& help,
                                              std::vector<std::string> label_names) {
  ASSIGN_OR_RETURN(Entry * e, Add(MetricType::kCounter, name, help, std::move(label_names), {}));
  return e->counter.get();
}

Result<Family<Gauge>*> Registry::AddGauge(const std::string& name, const std::string& help,
                                          std::vector<std::string> label_names) {
  ASSIGN_OR_RETURN(Entry * e, Add(MetricType::kGauge, name, help, std::move(label_names), {}));
  return e->gauge.get();
}

Result<Family<Histogram>*> Registry::AddHistogram(const std::string& name, const std::string& help,
                                                  std::vector<double> bounds,
                                                  std::vector<std::string> label_names) {
  ASSIGN_OR_RETURN(Entry * e,
                   Add(MetricType::kHistogram, name, help, std::move(label_names), bounds));
  return e->histogram.get();
}

std::string Registry::Render() const {
  std::string out;
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& family_entry : families_) {
    const std::string& name = family_entry.first;
    const Entry* e = family_entry.second.get();
    auto header = [&](const std::string& help) {
      out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, EscapeHelp(help), name,
                         TypeName(e->type));
    };
    if (e->counter || e->gauge) {
      auto render = [&](const auto& family) {
        header(family.help_);
        std::lock_guard<std::mutex> family_lock(family.mu_);
        for (const auto& [values, metric] : family.metrics_) {
          out += fmt::format("{}{} {}\n", name, LabelSet(family.label_names_, values),
                             FormatSampleValue(metric->value()));
        }
      };
      if (e->counter) render(*e->counter);
      if (e->gauge) render(*e->gauge);
      continue;
    }
    const Family<Histogram>& family = *e->histogram;
    header(family.help_);
    std::lock_guard<std::mutex> family_lock(family.mu_);
    for (const auto& [values, metric] : family.metrics_) {
      std::vector<uint64_t> counts = metric->BucketCounts();
      uint64_t cumulative = 0;
      for (size_t i = 0; i < counts.size(); ++i) {
        cumulative += counts[i];
        std::string le = i < family.bounds_.size() ? FormatSampleValue(family.bounds_[i]) : "+Inf";
        out += fmt::format("{}_bucket{} {}\n", name,
                           LabelSet(family.label_names_, values, fmt::format("le=\"{}\"", le)),
                           cumulative);
      }
      std::string labels = LabelSet(family.label_names_, values);
      out += fmt::format("{}_sum{} {}\n", name, labels, FormatSampleValue(metric->sum()));
      out += fmt::format("{}_count{} {}\n", name, labels, cumulative);
    }
  }
  return out;
}

std::string EscapeLabelValue(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    switch (c) {
      case '\\': out += "\\\\"; break;
      case '"': out += "\\\""; break;
      case '\n': out += "\\n"; break;
      default: out += c;
    }
  }
  return out;
}

std::string EscapeHelp(std::string_view help) {
  std::string out;
  out.reserve(help.size());
  for (char c : help) {
    switch (c) {
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      default: out += c;
    }
  }
  return out;
}

std::string FormatSampleValue(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  return fmt::format("{}", v);
}

}  // namespace sluice::server
