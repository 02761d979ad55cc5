// HOP windows (window_aggregate.h): each key's rows are kept in panes one
// slide long; a window, once the watermark closes it, is the merge of its
// size / slide panes, taken into pending_ and emitted from there.
#include <algorithm>

#include "columnar/column_ops.h"
#include "operators/window_aggregate.h"
#include "operators/window_internal.h"

namespace sluice::operators {

using internal::AddOrMax;
using internal::FloorTo;

Status WindowAggregate::FinalizeHop(int64_t watermark) {
  const int64_t size = options_.window.size_us, slide = options_.window.slide_us;
  if (!pending_) pending_ = std::make_unique<Batch>(Batch::Make(options_.output_schema));
  if (watermark == INT64_MIN) return Status::OK();  // nothing closes before a watermark
  // The next window to take ends at finalized_end_ + slide at the earliest.
  bool may_close =
      finalized_end_ == INT64_MIN || Closed(AddOrMax(finalized_end_, slide), watermark);
  while (may_close && groups_ > 0) {
    int64_t e = 0;
    ASSIGN_OR_RETURN(bool taken, spilled_ ? TakeHopWindowFromBothTiers(watermark, &e)
                                          : TakeHopWindowFromFront(watermark, &e));
    if (!taken) break;
    finalized_end_ = e;
    // Panes whose last window (ending at their end + size - slide) is done.
    int64_t last_pane_end;  // (of the panes whose last window is e's or earlier)
    if (__builtin_sub_overflow(e, size - slide, &last_pane_end)) last_pane_end = INT64_MIN;
    RETURN_IF_ERROR(TakePrefix(last_pane_end, [&](const WindowKey& k, Scan&) -> Result<bool> {
      return k.end <= last_pane_end;
    }));
  }
  // Every window the watermark closed is taken, with data or not: a pane
  // created later must not reach back into one of them.
  if (watermark != INT64_MIN && watermark != INT64_MAX &&
      watermark > INT64_MIN + options_.allowed_lateness_us) {
    int64_t closed_to = watermark - options_.allowed_lateness_us;
    finalized_end_ = std::max(finalized_end_, FloorTo(closed_to, slide));
  }
  emitted_below_ = std::max(emitted_below_, watermark == INT64_MAX ? emitted_below_ : watermark);
  return Status::OK();
}

int64_t WindowAggregate::NextHopWindowEnd(int64_t oldest_pane_end) const {
  // After the last finalized window, and no earlier than the oldest pane's own end.
  int64_t e = oldest_pane_end;
  if (finalized_end_ != INT64_MIN) {
    e = std::max(e, AddOrMax(finalized_end_, options_.window.slide_us));
  }
  return e;
}

Result<bool> WindowAggregate::TakeHopWindowFromBothTiers(int64_t watermark, int64_t* end) {
  const int64_t size = options_.window.size_us;
  Groups merged;  // window [e - size, e): its panes, merged per key
  int64_t e = 0;
  {
    Scan scan(this, ClosedThrough(watermark));
    if (!scan.Valid()) {
      RETURN_IF_ERROR(scan.status());
      return false;  // (groups_ counts none left)
    }
    e = NextHopWindowEnd(scan.key().end);
    if (!Closed(e, watermark)) return false;
    while (scan.Valid() && scan.key().end <= e) {
      if (scan.key().end > e - size) {
        ASSIGN_OR_RETURN(const Group* pane, scan.group());
        auto [m, fresh] = merged.Insert(scan.key().key, Group());
        if (fresh) m->value = NewGroup();
        for (size_t a = 0; a < m->value.accs.size(); ++a) m->value.accs[a].Merge(pane->accs[a]);
      }
      RETURN_IF_ERROR(scan.Next());
    }
    RETURN_IF_ERROR(scan.status());
  }
  for (const GroupEntry* m : merged.Sorted()) {
    RETURN_IF_ERROR(
        AppendWindowRow(e - size, e, m->key, m->value, pending_.get(), &pending_failed_));
  }
  *end = e;
  return true;
}

Result<bool> WindowAggregate::TakeHopWindowFromFront(int64_t watermark, int64_t* end) {
  const int64_t size = options_.window.size_us;
  auto first = std::find_if(windows_.begin(), windows_.end(),
                            [](const auto& w) { return !w.second.groups.empty(); });
  if (first == windows_.end()) return false;
  const int64_t e = NextHopWindowEnd(first->first.end);
  if (!Closed(e, watermark)) return false;
  // The window's panes, each in key order (sorted once, as a Scan does), are
  // merged key by key: the smallest key of the panes' heads next, its panes
  // in pane order (as the scan of both tiers merges them).
  struct Run {
    const std::vector<GroupEntry*>* order;
    size_t pos;
  };
  std::vector<Run> runs;
  for (auto w = first; w != windows_.end() && w->first.end <= e; ++w) {
    if (w->first.end <= e - size) continue;
    FrontWindow& pane = w->second;
    if (!pane.ordered) {
      pane.order = pane.groups.Sorted();
      pane.order_from = 0;
      pane.ordered = true;
    }
    runs.push_back({&pane.order, pane.order_from});
  }
  using Head = std::pair<const GroupEntry*, size_t>;  // a run's entry, the run
  auto after = [](const Head& a, const Head& b) {     // (a min-heap: the later on top)
    int c = a.first->key.compare(b.first->key);
    return c != 0 ? c > 0 : a.second > b.second;
  };
  std::vector<Head> heads;
  auto push_next = [&](size_t r) {  // the run's next live entry, if any
    Run& run = runs[r];
    while (run.pos < run.order->size() && !(*run.order)[run.pos]->live) ++run.pos;
    if (run.pos == run.order->size()) return;
    const GroupEntry* entry = (*run.order)[run.pos++];
    __builtin_prefetch(entry->value.accs.data());  // (merged once it is the smallest)
    if (run.pos < run.order->size()) __builtin_prefetch((*run.order)[run.pos]);
    heads.emplace_back(entry, r);
    std::push_heap(heads.begin(), heads.end(), after);
  };
  for (size_t r = 0; r < runs.size(); ++r) push_next(r);
  Group window = NewGroup();
  while (!heads.empty()) {
    const GroupEntry* key = heads.front().first;
    for (size_t a = 0; a < window.accs.size(); ++a) {
      window.accs[a] = Accumulator(&options_.aggs[a]);
    }
    while (!heads.empty() && heads.front().first->key == key->key) {
      std::pop_heap(heads.begin(), heads.end(), after);
      auto [pane, r] = heads.back();
      heads.pop_back();
      for (size_t a = 0; a < window.accs.size(); ++a) window.accs[a].Merge(pane->value.accs[a]);
      push_next(r);
    }
    RETURN_IF_ERROR(
        AppendWindowRow(e - size, e, key->key, window, pending_.get(), &pending_failed_));
  }
  *end = e;
  return true;
}

Result<Batch> WindowAggregate::EmitHop(int64_t watermark, std::vector<FailedGroup>* failed,
                                       int64_t max_rows, bool* done) {
  RETURN_IF_ERROR(FinalizeHop(watermark));
  for (FailedGroup& f : pending_failed_) failed->push_back(std::move(f));
  pending_failed_.clear();
  Batch out;
  int64_t rows = pending_->num_rows();
  if (pending_pos_ == 0 && rows <= max_rows) {
    out = std::move(*pending_);
    pending_.reset();
  } else {
    const int64_t n = std::min(rows - pending_pos_, max_rows);
    out = Batch::Make(pending_->schema);
    for (size_t c = 0; c < out.columns.size(); ++c) {
      AppendRowsFrom(pending_->columns[c], pending_pos_, n, &out.columns[c]);
    }
    pending_pos_ += n;
    if (pending_pos_ >= rows) {
      pending_.reset();
      pending_pos_ = 0;
    }
  }
  *done = pending_ == nullptr;
  if (*done && watermark == INT64_MAX && last_emitted_end_ != INT64_MIN) {
    emitted_below_ = std::max(emitted_below_, last_emitted_end_ + options_.allowed_lateness_us);
  }
  return out;
}

}  // namespace sluice::operators
