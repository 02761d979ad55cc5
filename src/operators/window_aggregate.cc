#include "operators/window_aggregate.h"

#include <algorithm>
#include <cstring>

#include "columnar/json_writer.h"
#include "columnar/value_format.h"
#include "operators/bytes.h"

namespace sluice::operators {
namespace {

using internal::Get;
using internal::GetBytes;
using internal::Put;
using internal::PutBytes;

int64_t FloorDiv(int64_t a, int64_t b) { return a / b - (a % b != 0 && (a < 0) != (b < 0)); }

std::string Time(int64_t micros) {
  std::string s;
  AppendTimestamp(micros, false, true, &s);
  return s;
}

constexpr uint32_t kStateMagic = 0x54534C53;  // "SLST"
constexpr uint8_t kFull = 0, kDelta = 1;

}  // namespace

Result<std::unique_ptr<WindowAggregate>> WindowAggregate::Make(WindowAggregateOptions options) {
  const WindowSpec& w = options.window;
  if (w.kind == WindowSpec::Kind::kSession ? w.gap_us <= 0 : w.size_us <= 0) {
    return Status::Invalid("a window needs a positive size (or gap)");
  }
  if (w.kind == WindowSpec::Kind::kHop &&
      (w.slide_us <= 0 || w.size_us % w.slide_us != 0 || w.size_us / w.slide_us > 1000)) {
    return Status::Invalid(
        "HOP needs a slide that divides the size into at most 1000 windows (slide {} µs, size {} "
        "µs)",
        w.slide_us, w.size_us);
  }
  if (options.allowed_lateness_us < 0)
    return Status::Invalid("allowed_lateness must not be negative");
  return std::unique_ptr<WindowAggregate>(new WindowAggregate(std::move(options)));
}

WindowAggregate::Group WindowAggregate::NewGroup() const {
  Group g;
  g.accs.reserve(options_.aggs.size());
  for (const AggSpec& spec : options_.aggs) g.accs.emplace_back(&spec);
  return g;
}

bool WindowAggregate::Closed(int64_t window_end, int64_t watermark) const {
  if (watermark == INT64_MIN) return false;
  int64_t deadline;
  if (__builtin_add_overflow(window_end, options_.allowed_lateness_us, &deadline)) return false;
  return watermark >= deadline;
}

WindowAggregate::Group* WindowAggregate::FindOrAdd(const WindowKey& k) {
  auto it = windows_.find(k);
  if (it == windows_.end()) {
    it = windows_.emplace(k, NewGroup()).first;
    ++groups_;
    memory_ += 96 + static_cast<int64_t>(k.key.size());
  }
  changed_.insert(k);
  return &it->second;
}

void WindowAggregate::AddToGroup(Group* g, const Batch& rows, int64_t row) {
  size_t arg = 1 + options_.key_types.size();
  for (size_t a = 0; a < options_.aggs.size(); ++a) {
    const Column* values = nullptr;
    if (options_.aggs[a].kind != AggKind::kCountStar) values = &rows.columns[arg++];
    int64_t before = g->accs[a].MemoryUsage();
    g->accs[a].Add(values, row);
    memory_ += g->accs[a].MemoryUsage() - before;
  }
}

bool WindowAggregate::AddToSession(const std::string& key, int64_t t, int64_t watermark,
                                   const Batch& rows, int64_t row) {
  int64_t gap = options_.window.gap_us;
  std::map<int64_t, int64_t>& open = sessions_[key];  // start -> end (last event + gap)
  int64_t start = t, end = t + gap;
  // Open sessions overlapping [t, t + gap] join this event's session. A
  // closed one never changes (it is emitted as it is, whenever the next Emit
  // comes), so a new session may overlap it: no ordering of the ends can be
  // assumed, and every session starting by t + gap is looked at (a key has
  // few sessions open at once).
  std::vector<std::pair<int64_t, int64_t>> joined;
  for (auto it = open.upper_bound(end); it != open.begin();) {
    --it;
    if (it->second < t || Closed(it->second, watermark)) continue;
    joined.push_back(*it);
    start = std::min(start, it->first);
    end = std::max(end, it->second);
  }
  if (Closed(end, watermark)) {
    if (open.empty()) sessions_.erase(key);
    return false;  // late: even joined, its session is closed
  }
  Group merged = NewGroup();
  for (const auto& [s, e] : joined) {
    WindowKey old{e, s, key};
    auto w = windows_.find(old);
    for (size_t a = 0; a < merged.accs.size(); ++a) {
      memory_ -= w->second.accs[a].MemoryUsage();
      merged.accs[a].Merge(w->second.accs[a]);
    }
    memory_ -= 96 + static_cast<int64_t>(key.size());
    windows_.erase(w);
    changed_.erase(old);
    merged_away_.push_back(old);
    open.erase(s);
    --groups_;
  }
  open[start] = end;
  Group* g = FindOrAdd(WindowKey{end, start, key});
  for (size_t a = 0; a < merged.accs.size(); ++a) {
    memory_ -= g->accs[a].MemoryUsage();
    g->accs[a].Merge(merged.accs[a]);
    memory_ += g->accs[a].MemoryUsage();
  }
  AddToGroup(g, rows, row);
  return true;
}

void WindowAggregate::Add(const Batch& rows, const std::vector<int64_t>& watermarks,
                          std::vector<LateRow>* late) {
  const WindowSpec& w = options_.window;
  const Column& time = rows.columns[0];
  std::string key;
  for (int64_t r = 0; r < rows.num_rows(); ++r) {
    if (time.IsNull(r)) {
      late->push_back({r, "the event time is NULL"});
      continue;
    }
    int64_t t = time.Value<int64_t>(r);
    int64_t wm = watermarks[r];
    key.clear();
    for (size_t k = 0; k < options_.key_types.size(); ++k) {
      AppendValueKey(rows.columns[1 + k], r, &key);
    }
    if (w.kind == WindowSpec::Kind::kSession) {
      if (!AddToSession(key, t, wm, rows, r)) {
        late->push_back(
            {r, fmt::format("late: its session had closed at the watermark {}", Time(wm))});
      }
      continue;
    }
    if (w.kind == WindowSpec::Kind::kHop) {
      // Windows the watermark closed take their values before this row can
      // count in a pane they share with open ones.
      FinalizeHop(wm);
      int64_t start = FloorDiv(t, w.slide_us) * w.slide_us;
      int64_t newest_end = start + w.size_us;  // the last window holding the pane
      if (Closed(newest_end, wm)) {
        late->push_back({r, fmt::format("late: its windows up to [{}, {}) had closed at the "
                                        "watermark {}",
                                        Time(start), Time(newest_end), Time(wm))});
        continue;
      }
      AddToGroup(FindOrAdd(WindowKey{start + w.slide_us, start, key}), rows, r);
      continue;
    }
    int64_t size = w.size_us;
    int64_t slide = size;
    int64_t last_start = FloorDiv(t, slide) * slide;
    bool counted = false;
    int64_t newest_end = last_start + size;
    for (int64_t start = last_start; start > t - size; start -= slide) {
      int64_t end = start + size;
      if (Closed(end, wm)) continue;
      AddToGroup(FindOrAdd(WindowKey{end, start, key}), rows, r);
      counted = true;
    }
    if (!counted) {
      late->push_back({r, fmt::format("late: its window [{}, {}) had closed at the watermark {}",
                                      Time(newest_end - size), Time(newest_end), Time(wm))});
    }
  }
}

Status WindowAggregate::AppendWindowRow(int64_t start, int64_t end, const std::string& key,
                                        const Group& g, Batch* out,
                                        std::vector<FailedGroup>* failed) {
  size_t keys = options_.key_types.size();
  int64_t row = out->num_rows();
  last_emitted_end_ = std::max(last_emitted_end_, end);
  out->columns[0].Append<int64_t>(start);
  out->columns[1].Append<int64_t>(end);
  std::string_view k = key;
  for (size_t i = 0; i < keys; ++i) RETURN_IF_ERROR(AppendFromValueKey(&k, &out->columns[2 + i]));
  std::string reason, error;
  for (size_t a = 0; a < g.accs.size(); ++a) {
    if (!g.accs[a].Finish(&out->columns[2 + keys + a], &error)) {
      out->columns[2 + keys + a].SetNull(row);
      if (reason.empty()) reason = error;
    }
  }
  if (reason.empty()) return Status::OK();
  FailedGroup f;
  f.reason = std::move(reason);
  AppendJsonRow(*out, row, &f.payload);
  failed->push_back(std::move(f));
  for (Column& c : out->columns) c.Truncate(row);
  return Status::OK();
}

void WindowAggregate::FinalizeHop(int64_t watermark) {
  const int64_t size = options_.window.size_us, slide = options_.window.slide_us;
  if (!pending_) pending_ = std::make_unique<Batch>(Batch::Make(options_.output_schema));
  while (!windows_.empty()) {
    // The next window end that has data: after the last finalized one, and
    // no earlier than the oldest pane's own end.
    int64_t e = windows_.begin()->first.end;
    if (finalized_end_ != INT64_MIN) e = std::max(e, finalized_end_ + slide);
    if (!Closed(e, watermark)) break;
    // Window [e - size, e): the panes ending in (e - size, e], merged per key.
    std::map<std::string, Group> merged;
    for (auto it = windows_.begin(); it != windows_.end() && it->first.end <= e; ++it) {
      if (it->first.end <= e - size) continue;
      auto [m, fresh] = merged.try_emplace(it->first.key);
      if (fresh) m->second = NewGroup();
      for (size_t a = 0; a < m->second.accs.size(); ++a)
        m->second.accs[a].Merge(it->second.accs[a]);
    }
    for (const auto& [key, g] : merged) {
      Status st = AppendWindowRow(e - size, e, key, g, pending_.get(), &pending_failed_);
      if (!st.ok() && hop_error_.ok()) hop_error_ = st;
    }
    finalized_end_ = e;
    // Panes whose last window (ending at their end + size - slide) is done.
    while (!windows_.empty() && windows_.begin()->first.end + size - slide <= e) {
      auto it = windows_.begin();
      for (const Accumulator& acc : it->second.accs) memory_ -= acc.MemoryUsage();
      memory_ -= 96 + static_cast<int64_t>(it->first.key.size());
      changed_.erase(it->first);
      windows_.erase(it);
      --groups_;
    }
  }
  // Every window the watermark closed is taken, with data or not: a pane
  // created later must not reach back into one of them.
  if (watermark != INT64_MIN && watermark != INT64_MAX &&
      watermark > INT64_MIN + options_.allowed_lateness_us) {
    int64_t closed_to = watermark - options_.allowed_lateness_us;
    finalized_end_ = std::max(finalized_end_, FloorDiv(closed_to, slide) * slide);
  }
  emitted_below_ = std::max(emitted_below_, watermark == INT64_MAX ? emitted_below_ : watermark);
}

Result<Batch> WindowAggregate::Emit(int64_t watermark, std::vector<FailedGroup>* failed) {
  if (options_.window.kind == WindowSpec::Kind::kHop) {
    FinalizeHop(watermark);
    RETURN_IF_ERROR(hop_error_);
    Batch out = std::move(*pending_);
    pending_.reset();
    for (FailedGroup& f : pending_failed_) failed->push_back(std::move(f));
    pending_failed_.clear();
    if (watermark == INT64_MAX && last_emitted_end_ != INT64_MIN) {
      emitted_below_ = std::max(emitted_below_, last_emitted_end_ + options_.allowed_lateness_us);
    }
    return out;
  }
  Batch out = Batch::Make(options_.output_schema);
  size_t keys = options_.key_types.size();
  std::string error;
  while (!windows_.empty() && Closed(windows_.begin()->first.end, watermark)) {
    auto it = windows_.begin();
    const WindowKey& k = it->first;
    int64_t row = out.num_rows();
    last_emitted_end_ = std::max(last_emitted_end_, k.end);
    out.columns[0].Append<int64_t>(k.start);
    out.columns[1].Append<int64_t>(k.end);
    std::string_view key = k.key;
    for (size_t i = 0; i < keys; ++i)
      RETURN_IF_ERROR(AppendFromValueKey(&key, &out.columns[2 + i]));
    std::string reason;
    for (size_t a = 0; a < it->second.accs.size(); ++a) {
      if (!it->second.accs[a].Finish(&out.columns[2 + keys + a], &error)) {
        out.columns[2 + keys + a].SetNull(row);
        if (reason.empty()) reason = error;
      }
    }
    if (!reason.empty()) {
      FailedGroup f;
      f.reason = std::move(reason);
      AppendJsonRow(out, row, &f.payload);
      failed->push_back(std::move(f));
      for (Column& c : out.columns) c.Truncate(row);
    }
    if (options_.window.kind == WindowSpec::Kind::kSession) {
      auto s = sessions_.find(k.key);
      s->second.erase(k.start);
      if (s->second.empty()) sessions_.erase(s);
    }
    for (const Accumulator& acc : it->second.accs) memory_ -= acc.MemoryUsage();
    memory_ -= 96 + static_cast<int64_t>(k.key.size());
    changed_.erase(k);
    windows_.erase(it);
    --groups_;
  }
  int64_t below = watermark;
  if (watermark == INT64_MAX) {  // the end of the input: closed up to what it emitted
    below = last_emitted_end_ == INT64_MIN ? emitted_below_
                                           : last_emitted_end_ + options_.allowed_lateness_us;
  }
  emitted_below_ = std::max(emitted_below_, below);
  return out;
}

void WindowAggregate::EncodeGroup(const WindowKey& k, const Group& g, std::string* out) const {
  Put<int64_t>(out, k.end);
  Put<int64_t>(out, k.start);
  PutBytes(out, k.key);
  for (const Accumulator& acc : g.accs) acc.EncodeTo(out);
}

std::string WindowAggregate::Snapshot() {
  std::string out;
  Put<uint32_t>(&out, kStateMagic);
  Put<uint8_t>(&out, kFull);
  Put<int64_t>(&out, emitted_below_);
  Put<uint32_t>(&out, 0);  // no tombstones in a full snapshot
  Put<uint32_t>(&out, static_cast<uint32_t>(windows_.size()));
  for (const auto& [k, g] : windows_) EncodeGroup(k, g, &out);
  changed_.clear();
  merged_away_.clear();
  return out;
}

std::string WindowAggregate::SnapshotChanged() {
  std::string out;
  Put<uint32_t>(&out, kStateMagic);
  Put<uint8_t>(&out, kDelta);
  Put<int64_t>(&out, emitted_below_);
  Put<uint32_t>(&out, static_cast<uint32_t>(merged_away_.size()));
  for (const WindowKey& k : merged_away_) {
    Put<int64_t>(&out, k.end);
    Put<int64_t>(&out, k.start);
    PutBytes(&out, k.key);
  }
  Put<uint32_t>(&out, static_cast<uint32_t>(changed_.size()));
  for (const WindowKey& k : changed_) EncodeGroup(k, windows_.at(k), &out);
  changed_.clear();
  merged_away_.clear();
  return out;
}

void WindowAggregate::Clear() {
  windows_.clear();
  sessions_.clear();
  changed_.clear();
  merged_away_.clear();
  groups_ = memory_ = 0;
}

Status WindowAggregate::Restore(std::string_view in, const KeyFilter& keep, bool clear_on_full) {
  uint32_t magic = 0, tombstones = 0, count = 0;
  uint8_t kind = 0;
  int64_t emitted = 0;
  if (!Get(&in, &magic) || magic != kStateMagic || !Get(&in, &kind) || kind > kDelta ||
      !Get(&in, &emitted) || !Get(&in, &tombstones)) {
    return Status::Corruption("window state: bad header");
  }
  if (kind == kFull && clear_on_full) Clear();
  auto erase = [&](const WindowKey& k) {
    auto it = windows_.find(k);
    if (it == windows_.end()) return;
    for (const Accumulator& acc : it->second.accs) memory_ -= acc.MemoryUsage();
    memory_ -= 96 + static_cast<int64_t>(k.key.size());
    if (options_.window.kind == WindowSpec::Kind::kSession) sessions_[k.key].erase(k.start);
    windows_.erase(it);
    --groups_;
  };
  for (uint32_t i = 0; i < tombstones; ++i) {
    WindowKey k;
    if (!Get(&in, &k.end) || !Get(&in, &k.start) || !GetBytes(&in, &k.key)) {
      return Status::Corruption("window state: truncated tombstone");
    }
    if (!keep || keep(k.key)) erase(k);
  }
  if (!Get(&in, &count)) return Status::Corruption("window state: truncated");
  for (uint32_t i = 0; i < count; ++i) {
    WindowKey k;
    if (!Get(&in, &k.end) || !Get(&in, &k.start) || !GetBytes(&in, &k.key)) {
      return Status::Corruption("window state: truncated group {}", i);
    }
    if (options_.window.kind == WindowSpec::Kind::kHop &&
        k.end - k.start != options_.window.slide_us) {
      return Status::Corruption(
          "window state: a HOP pane [{}, {}) is not one slide ({} µs) long: the state is of "
          "another window definition",
          k.start, k.end, options_.window.slide_us);
    }
    Group g = NewGroup();
    for (Accumulator& acc : g.accs) RETURN_IF_ERROR(acc.DecodeFrom(&in));
    if (keep && !keep(k.key)) continue;  // another shard's
    erase(k);
    for (const Accumulator& acc : g.accs) memory_ += acc.MemoryUsage();
    memory_ += 96 + static_cast<int64_t>(k.key.size());
    if (options_.window.kind == WindowSpec::Kind::kSession) sessions_[k.key][k.start] = k.end;
    windows_.emplace(std::move(k), std::move(g));
    ++groups_;
  }
  if (!in.empty()) return Status::Corruption("window state: {} bytes after the groups", in.size());
  // Windows emitted before this state was taken are gone (for HOP: panes
  // whose every window was emitted).
  emitted_below_ = std::max(emitted_below_, emitted);
  bool hop = options_.window.kind == WindowSpec::Kind::kHop;
  int64_t reach = hop ? options_.window.size_us - options_.window.slide_us : 0;
  while (!windows_.empty() && Closed(windows_.begin()->first.end + reach, emitted_below_)) {
    erase(WindowKey(windows_.begin()->first));
  }
  if (hop && emitted_below_ != INT64_MIN) {
    // The last window end the emitted watermark closed: a multiple of the slide.
    int64_t slide = options_.window.slide_us;
    int64_t closed_to = emitted_below_ - options_.allowed_lateness_us;
    finalized_end_ = FloorDiv(closed_to, slide) * slide;
  }
  changed_.clear();
  merged_away_.clear();
  return Status::OK();
}

}  // namespace sluice::operators
