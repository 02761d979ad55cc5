// WindowAggregate, its two tiers: the in-memory front and the spill store
// (window_aggregate.h "Beyond memory").
#include <algorithm>

#include "operators/window_aggregate.h"
#include "operators/window_internal.h"

namespace sluice::operators {
namespace {

using internal::ChangedPrefix;
using internal::StoreKey;

}  // namespace

std::string WindowAggregate::ChangedKey(const WindowKey& k) const {
  return ChangedPrefix(changed_generation_) + StoreKey(k.end, k.start, k.key);
}

namespace {

// A window of the front beside its groups: its map node and a table's first
// slots and entry.
constexpr int64_t kWindowBytes = 256;

}  // namespace

int64_t WindowAggregate::GroupBytes(std::string_view key, const Group& g) const {
  // Its entry and slots, the key's bytes beyond the string's own (inline up
  // to 15), a pointer in the changed list and one in the window's order.
  int64_t bytes = Groups::kBytesPerEntry +
                  (key.size() > 15 ? static_cast<int64_t>(key.size()) : 0) +
                  2 * static_cast<int64_t>(sizeof(GroupEntry*));
  if (sizes_fixed_) {  // (what MemoryUsage says of each: its size)
    return bytes + static_cast<int64_t>(g.accs.size() * sizeof(Accumulator));
  }
  for (const Accumulator& a : g.accs) bytes += a.MemoryUsage();
  return bytes;
}

void WindowAggregate::EncodeAccs(const Group& g, std::string* out) const {
  for (const Accumulator& acc : g.accs) acc.EncodeTo(out);
}

Status WindowAggregate::DecodeAccs(std::string_view* in, Group* g, AccEncoding encoding) const {
  for (Accumulator& acc : g->accs) RETURN_IF_ERROR(acc.DecodeFrom(in, encoding));
  return Status::OK();
}

WindowAggregate::Found WindowAggregate::AddToFront(WindowId id, std::string_view key, Group g) {
  memory_ += GroupBytes(key, g);
  auto [it, fresh] = windows_.try_emplace(id);
  if (fresh) memory_ += kWindowBytes;
  FrontWindow& window = it->second;
  if (window.ordered) {  // (a new key: the order is not the window's any more)
    window.ordered = false;
    window.order = {};
  }
  return Found{&window, window.groups.Insert(key, std::move(g)).first};
}

WindowAggregate::GroupEntry* WindowAggregate::FindInFront(const WindowKey& k) {
  auto w = windows_.find(WindowId{k.end, k.start});
  return w == windows_.end() ? nullptr : w->second.groups.Find(k.key);
}

void WindowAggregate::EraseWindow(Windows::iterator it) {
  memory_ -= kWindowBytes;
  windows_.erase(it);
}

void WindowAggregate::EraseFromFront(FrontWindow* window, std::string_view key) {
  GroupEntry* e = window->groups.Find(key);
  if (e == nullptr) return;
  memory_ -= GroupBytes(key, e->value);
  window->groups.Erase(key);
}

Result<WindowAggregate::Found> WindowAggregate::Load(WindowId id, std::string_view key) {
  if (auto w = windows_.find(id); w != windows_.end()) {
    if (GroupEntry* e = w->second.groups.Find(key)) return Found{&w->second, e};
  }
  if (!spilled_) return Found{};
  std::string value;
  ASSIGN_OR_RETURN(bool found, store_->Get(StoreKey(id.end, id.start, key), &value));
  if (!found) return Found{};
  Group g = NewGroup();
  std::string_view in = value;
  RETURN_IF_ERROR_CTX(DecodeAccs(&in, &g), "spill store {}", store_->dir());
  g.stored = true;
  return AddToFront(id, key, std::move(g));
}

Result<WindowAggregate::Group*> WindowAggregate::FindOrAdd(WindowId id, std::string_view key) {
  ASSIGN_OR_RETURN(Found found, Load(id, key));
  if (!found.entry) {
    found = AddToFront(id, key, NewGroup());
    ++groups_;
  }
  MarkChanged(found.window, found.entry);
  return &found.entry->value;
}

void WindowAggregate::MarkChanged(FrontWindow* window, GroupEntry* e) {
  if (e->value.changed) return;
  window->changed.push_back(e);
  e->value.changed = true;
}

std::vector<WindowAggregate::GroupEntry*> WindowAggregate::ChangedInOrder(FrontWindow& window) {
  std::vector<GroupEntry*> out = window.changed;
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  std::erase_if(out, [](const GroupEntry* e) { return !e->live || !e->value.changed; });
  Groups::SortByKey(&out);
  return out;
}

void WindowAggregate::ForgetFrontChanges() {
  for (auto& [id, window] : windows_) {
    for (GroupEntry* e : window.changed) {
      if (e->live) e->value.changed = false;
    }
    window.changed.clear();
  }
}

Status WindowAggregate::Erase(const WindowKey& k) {
  bool existed = false, stored = false;
  if (auto w = windows_.find(WindowId{k.end, k.start}); w != windows_.end()) {
    if (GroupEntry* e = w->second.groups.Find(k.key)) {
      stored = e->value.stored;
      EraseFromFront(&w->second, k.key);
      if (w->second.groups.empty()) EraseWindow(w);
      existed = true;
    }
  }
  if (spilled_) {
    std::string key = StoreKey(k.end, k.start, k.key), value;
    if (!existed) {
      ASSIGN_OR_RETURN(stored, store_->Get(key, &value));
    }
    if (stored) {
      store_->Delete(key);
      RETURN_IF_ERROR(store_->Flush());  // before the next read
      existed = true;
    }
  }
  if (existed) --groups_;
  return Status::OK();
}

Status WindowAggregate::TakePrefix(int64_t max_end, const TakeFn& take) {
  int64_t n = 0;
  WindowKey last;
  Status taking = TakeFromScan(max_end, take, &n, &last);
  // Whether or not it failed: the groups taken are gone from the front (and
  // the windows they emptied, a prefix: the scan took the front in order).
  groups_ -= n;
  while (!windows_.empty() && windows_.begin()->second.groups.empty()) {
    EraseWindow(windows_.begin());
  }
  if (n == 0 || !spilled_) return taking;
  // Every stored key up to `last` is gone (the next key after it is last +
  // "\0"), once the deletes are flushed: after an error too (the groups
  // taken must not come back from the store).
  store_floor_ = StoreKey(last.end, last.start, last.key);
  store_floor_.push_back('\0');
  Status flushed = store_->Flush();
  return taking.ok() ? flushed : taking;
}

Status WindowAggregate::TakeFromScan(int64_t max_end, const TakeFn& take, int64_t* n,
                                     WindowKey* last) {
  int64_t deletes = 0;
  Scan scan(this, max_end);
  while (scan.Valid()) {
    ASSIGN_OR_RETURN(bool taken, take(scan.key(), scan));
    if (!taken) {
      scan.KeepOrder();
      break;
    }
    const bool flush = scan.in_store() && ++deletes % 4096 == 0;
    if (scan.in_store()) store_->Delete(scan.stored_key());
    *last = scan.key();
    scan.ForgetFront();
    ++*n;  // (taken: counted before anything can fail)
    if (flush) RETURN_IF_ERROR(store_->Flush());
    RETURN_IF_ERROR(scan.Next());
  }
  return scan.status();
}

Status WindowAggregate::ForgetStoredChanges() {
  if (!spilled_) return Status::OK();
  int64_t deletes = 0;
  auto c = store_->Scan(ChangedPrefix(changed_generation_), ChangedPrefix(changed_generation_ + 1));
  for (; c->Valid(); c->Next()) {
    store_->Delete(c->key());
    if (++deletes % 4096 == 0) RETURN_IF_ERROR(store_->Flush());
  }
  RETURN_IF_ERROR(c->status());
  ++changed_generation_;
  return store_->Flush();
}

Status WindowAggregate::MaybeSpill() {
  // Half the budget for the front, half for the store's own buffers.
  if (options_.memory_budget <= 0 || memory_ <= options_.memory_budget / 2) return Status::OK();
  return Spill();
}

Status WindowAggregate::Spill() {
  if (!store_) {
    if (options_.spill_dir.empty()) {
      return Status::Invalid("window state is over its memory budget and has no spill folder");
    }
    ASSIGN_OR_RETURN(store_, SpillStore::Open(options_.spill_dir, options_.memory_budget / 2));
  }
  // In the store's order: windows in order, each one's keys sorted.
  std::string value;
  int64_t puts = 0;
  for (auto& [id, window] : windows_) {
    for (const GroupEntry* e : window.groups.Sorted()) {
      value.clear();
      EncodeAccs(e->value, &value);
      store_->Put(StoreKey(id.end, id.start, e->key), value);
      if (++puts % 4096 == 0) RETURN_IF_ERROR(store_->Flush());
    }
  }
  for (auto& [id, window] : windows_) {
    for (const GroupEntry* e : ChangedInOrder(window)) {
      store_->Put(ChangedKey(WindowKey{id.end, id.start, e->key}), "");
      if (++puts % 4096 == 0) RETURN_IF_ERROR(store_->Flush());
    }
  }
  RETURN_IF_ERROR(store_->Flush());
  windows_.clear();
  memory_ = 0;
  spilled_ = true;
  ++spills_;
  return Status::OK();
}

Status WindowAggregate::Clear() {
  windows_.clear();
  sessions_.clear();
  merged_away_.clear();
  groups_ = memory_ = 0;
  // The store goes with its folder; a later spill opens a new one.
  store_.reset();
  spilled_ = false;
  store_floor_.clear();
  changed_generation_ = 0;
  // What was emitted, and HOP windows taken but not emitted, belong to the
  // state being replaced: the restored state says what it emitted.
  emitted_below_ = last_emitted_end_ = finalized_end_ = INT64_MIN;
  pending_.reset();
  pending_pos_ = 0;
  pending_failed_.clear();
  return Status::OK();
}

void WindowAggregate::ForgetSession(const WindowKey& k) {
  if (auto s = sessions_.find(k.key); s != sessions_.end()) {
    // Only this session: an open one that took over its start stays.
    if (auto it = s->second.find(k.start); it != s->second.end() && it->second == k.end) {
      s->second.erase(it);
    }
    if (s->second.empty()) sessions_.erase(s);
  }
}

}  // namespace sluice::operators
