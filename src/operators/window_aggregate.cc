#include "operators/window_aggregate.h"

#include <algorithm>

#include "columnar/column_ops.h"
#include "columnar/json_writer.h"
#include "columnar/value_format.h"
#include "operators/window_internal.h"

namespace sluice::operators {
namespace {

using internal::WindowBounds;

std::string Time(int64_t micros) {
  std::string s;
  AppendTimestamp(micros, false, true, &s);
  return s;
}

}  // namespace

Result<std::unique_ptr<WindowAggregate>> WindowAggregate::Make(WindowAggregateOptions options) {
  const WindowSpec& w = options.window;
  if (w.kind != WindowSpec::Kind::kGlobal &&
      (w.kind == WindowSpec::Kind::kSession ? w.gap_us <= 0 : w.size_us <= 0)) {
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
  if (watermark == INT64_MIN || options_.window.kind == WindowSpec::Kind::kGlobal) return false;
  int64_t deadline;
  if (__builtin_add_overflow(window_end, options_.allowed_lateness_us, &deadline)) return false;
  return watermark >= deadline;
}

int64_t WindowAggregate::ClosedThrough(int64_t watermark) const {
  if (watermark == INT64_MIN || options_.window.kind == WindowSpec::Kind::kGlobal) return INT64_MIN;
  int64_t end;
  if (__builtin_sub_overflow(watermark, options_.allowed_lateness_us, &end)) return INT64_MIN;
  return end;
}

void WindowAggregate::AddToGroup(Group* g, const Batch& rows, int64_t row, bool retract) {
  size_t arg = 1 + options_.key_types.size();
  for (size_t a = 0; a < options_.aggs.size(); ++a) {
    const Column* values = nullptr;
    if (options_.aggs[a].kind != AggKind::kCountStar) values = &rows.columns[arg++];
    Accumulator& acc = g->accs[a];
    const int64_t before = sizes_fixed_ ? 0 : acc.MemoryUsage();
    if (retract) {
      acc.Retract(values, row);
    } else {
      acc.Add(values, row);
    }
    if (!sizes_fixed_) memory_ += acc.MemoryUsage() - before;
  }
}

Result<bool> WindowAggregate::AddToSession(const std::string& key, int64_t t, int64_t watermark,
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
    ASSIGN_OR_RETURN(Found w, Load(WindowId{e, s}, key));
    if (!w.entry) return Status::Internal("window state: an indexed session has no group");
    for (size_t a = 0; a < merged.accs.size(); ++a) merged.accs[a].Merge(w.entry->value.accs[a]);
    RETURN_IF_ERROR(Erase(old));
    merged_away_.push_back(old);
    open.erase(s);
  }
  // A closed session not emitted yet may start at `start` too: this one, open
  // (so ending later), takes the index's entry over; the closed one's group
  // stays until it is emitted (ForgetSession then leaves this entry be).
  open[start] = end;
  ASSIGN_OR_RETURN(Group * g, FindOrAdd(WindowId{end, start}, key));
  for (size_t a = 0; a < merged.accs.size(); ++a) {
    memory_ -= g->accs[a].MemoryUsage();
    g->accs[a].Merge(merged.accs[a]);
    memory_ += g->accs[a].MemoryUsage();
  }
  AddToGroup(g, rows, row);
  return true;
}

bool WindowAggregate::WindowOf(int64_t t, int64_t* start, int64_t* end) const {
  const WindowSpec& w = options_.window;
  bool fits;
  int64_t first_start;  // HOP: of the first window holding the pane
  switch (w.kind) {
    case WindowSpec::Kind::kSession:
      *start = t;
      fits = !__builtin_add_overflow(t, w.gap_us, end);
      break;
    case WindowSpec::Kind::kHop:
      fits = WindowBounds(t, w.slide_us, w.size_us, start, end) &&
             !__builtin_sub_overflow(*start, w.size_us - w.slide_us, &first_start);
      break;
    default: fits = WindowBounds(t, w.size_us, w.size_us, start, end);
  }
  // Its deadline too: a window whose end plus the lateness left the range
  // would never close (Closed), not even at the end of the input.
  int64_t deadline;
  return fits && !__builtin_add_overflow(*end, options_.allowed_lateness_us, &deadline);
}

Status WindowAggregate::AddRow(const Batch& rows, int64_t r, int64_t wm, std::string* key,
                               std::vector<LateRow>* late) {
  const WindowSpec& w = options_.window;
  key->clear();
  for (size_t k = 0; k < options_.key_types.size(); ++k) {
    AppendValueKey(rows.columns[1 + k], r, key);
  }
  if (w.kind == WindowSpec::Kind::kGlobal) {
    WindowId global{INT64_MAX, INT64_MIN};
    if (options_.retracting && rows.columns.back().GetBool(r)) {
      // A row taken back must have been counted: its group exists.
      ASSIGN_OR_RETURN(Found found, Load(global, *key));
      if (!found.entry) {
        late->push_back({r, "a -U or -D row whose group holds no rows: it was never counted"});
        return Status::OK();
      }
      MarkChanged(found.window, found.entry);
      AddToGroup(&found.entry->value, rows, r, /*retract=*/true);
      return Status::OK();
    }
    ASSIGN_OR_RETURN(Group * g, FindOrAdd(global, *key));
    AddToGroup(g, rows, r);
    return Status::OK();
  }
  const Column& time = rows.columns[0];
  if (time.IsNull(r)) {
    late->push_back({r, "the event time is NULL"});
    return Status::OK();
  }
  int64_t t = time.Value<int64_t>(r);
  int64_t start = 0, end = 0;
  if (!WindowOf(t, &start, &end)) {
    late->push_back({r, fmt::format("the event time {} µs is too close to the end of the "
                                    "timestamp range for its window to end within it",
                                    t)});
    return Status::OK();
  }
  if (w.kind == WindowSpec::Kind::kSession) {
    ASSIGN_OR_RETURN(bool counted, AddToSession(*key, t, wm, rows, r));
    if (!counted) {
      late->push_back(
          {r, fmt::format("late: its session had closed at the watermark {}", Time(wm))});
    }
    return Status::OK();
  }
  if (w.kind == WindowSpec::Kind::kHop) {
    // Windows the watermark closed take their values before this row can
    // count in a pane they share with open ones.
    RETURN_IF_ERROR(FinalizeHop(wm));
    // `start` is the pane's; `end` that of the last window holding the pane.
    if (Closed(end, wm)) {
      late->push_back({r, fmt::format("late: its windows up to [{}, {}) had closed at the "
                                      "watermark {}",
                                      Time(start), Time(end), Time(wm))});
      return Status::OK();
    }
    ASSIGN_OR_RETURN(Group * g, FindOrAdd(WindowId{start + w.slide_us, start}, *key));
    AddToGroup(g, rows, r);
    return Status::OK();
  }
  if (Closed(end, wm)) {
    late->push_back({r, fmt::format("late: its window [{}, {}) had closed at the watermark {}",
                                    Time(start), Time(end), Time(wm))});
    return Status::OK();
  }
  ASSIGN_OR_RETURN(Group * g, FindOrAdd(WindowId{end, start}, *key));
  AddToGroup(g, rows, r);
  return Status::OK();
}

Status WindowAggregate::Add(const Batch& rows, const std::vector<int64_t>& watermarks,
                            std::vector<LateRow>* late, const std::vector<uint32_t>* only) {
  std::string key;
  if (only != nullptr) {
    for (uint32_t r : *only) RETURN_IF_ERROR(AddRow(rows, r, watermarks[r], &key, late));
  } else {
    for (int64_t r = 0; r < rows.num_rows(); ++r) {
      RETURN_IF_ERROR(AddRow(rows, r, watermarks[r], &key, late));
    }
  }
  return MaybeSpill();
}

// ---- Emitting closed windows ----

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

Result<Batch> WindowAggregate::Emit(int64_t watermark, std::vector<FailedGroup>* failed,
                                    int64_t max_rows, bool* done) {
  if (options_.window.kind == WindowSpec::Kind::kHop) {
    return EmitHop(watermark, failed, max_rows, done);
  }
  Batch out = Batch::Make(options_.output_schema);
  if (options_.window.kind == WindowSpec::Kind::kGlobal) {  // never closes: EmitChanged
    *done = true;
    return out;
  }
  bool session = options_.window.kind == WindowSpec::Kind::kSession;
  int64_t n = 0;
  bool more = false;
  RETURN_IF_ERROR(
      TakePrefix(ClosedThrough(watermark), [&](const WindowKey& k, Scan& scan) -> Result<bool> {
        if (!Closed(k.end, watermark)) return false;
        if (n == max_rows) {
          more = true;
          return false;
        }
        ASSIGN_OR_RETURN(const Group* g, scan.group());
        RETURN_IF_ERROR(AppendWindowRow(k.start, k.end, k.key, *g, &out, failed));
        if (session) ForgetSession(k);
        ++n;
        return true;
      }));
  *done = !more;
  if (!*done) return out;
  int64_t below = watermark;
  if (watermark == INT64_MAX) {  // the end of the input: closed up to what it emitted
    below = last_emitted_end_ == INT64_MIN ? emitted_below_
                                           : last_emitted_end_ + options_.allowed_lateness_us;
  }
  emitted_below_ = std::max(emitted_below_, below);
  return out;
}

Result<Batch> WindowAggregate::Emit(int64_t watermark, std::vector<FailedGroup>* failed) {
  bool done = false;
  return Emit(watermark, failed, INT64_MAX, &done);
}

Result<Batch> WindowAggregate::EmitChanged(std::vector<FailedGroup>* failed, Batch* gone) {
  if (options_.window.kind != WindowSpec::Kind::kGlobal) {
    return Status::Internal("EmitChanged is for GROUP BY without a window");
  }
  if (options_.retracting && (gone == nullptr || options_.rows_agg < 0)) {
    return Status::Internal(
        "a retracting aggregate needs its row count and a batch of gone groups");
  }
  Batch out = Batch::Make(options_.output_schema);
  int64_t last_end = last_emitted_end_;  // (nothing closed)
  std::vector<WindowKey> empty;
  auto emit = [&](const WindowKey& k, const Group& g) -> Status {
    if (!options_.retracting || g.accs[options_.rows_agg].count() > 0) {
      return AppendWindowRow(k.start, k.end, k.key, g, &out, failed);
    }
    if (g.accs[options_.rows_agg].count() < 0) {
      return Status::Corruption("a group's rows were taken back more often than added ({})",
                                g.accs[options_.rows_agg].count());
    }
    // No rows left: its key, for the pipeline to delete the group's row.
    gone->columns[0].Append<int64_t>(k.start);
    gone->columns[1].Append<int64_t>(k.end);
    std::string_view key = k.key;
    for (size_t i = 0; i < options_.key_types.size(); ++i) {
      RETURN_IF_ERROR(AppendFromValueKey(&key, &gone->columns[2 + i]));
    }
    for (size_t c = 2 + options_.key_types.size(); c < gone->columns.size(); ++c) {
      gone->columns[c].AppendNull();
    }
    empty.push_back(k);
    return Status::OK();
  };
  RETURN_IF_ERROR(
      ForEachChanged([&](const WindowKey& k, const Group* g, std::string_view stored) -> Status {
        if (g) return emit(k, *g);
        Group decoded = NewGroup();
        RETURN_IF_ERROR_CTX(DecodeAccs(&stored, &decoded), "spill store {}", store_->dir());
        return emit(k, decoded);
      }));
  last_emitted_end_ = last_end;
  for (const WindowKey& k : empty) {
    RETURN_IF_ERROR(Erase(k));
    merged_away_.push_back(k);  // the next state delta removes it
  }
  return out;
}

}  // namespace sluice::operators
