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

int64_t WindowAggregate::GroupBytes(const WindowKey& k, const Group& g) {
  // A node of windows_ and one of changed_, each with a copy of the key.
  int64_t bytes = 2 * (48 + static_cast<int64_t>(sizeof(WindowKey) + k.key.size())) +
                  static_cast<int64_t>(sizeof(Group));
  for (const Accumulator& a : g.accs) bytes += a.MemoryUsage();
  return bytes;
}

void WindowAggregate::EncodeAccs(const Group& g, std::string* out) const {
  for (const Accumulator& acc : g.accs) acc.EncodeTo(out);
}

Status WindowAggregate::DecodeAccs(std::string_view* in, Group* g) const {
  for (Accumulator& acc : g->accs) RETURN_IF_ERROR(acc.DecodeFrom(in));
  return Status::OK();
}

Result<WindowAggregate::Group*> WindowAggregate::Load(const WindowKey& k) {
  auto it = windows_.find(k);
  if (it != windows_.end()) return &it->second;
  if (!spilled_) return nullptr;
  std::string value;
  ASSIGN_OR_RETURN(bool found, store_->Get(StoreKey(k.end, k.start, k.key), &value));
  if (!found) return nullptr;
  Group g = NewGroup();
  std::string_view in = value;
  RETURN_IF_ERROR_CTX(DecodeAccs(&in, &g), "spill store {}", store_->dir());
  g.stored = true;
  memory_ += GroupBytes(k, g);
  return &windows_.emplace(k, std::move(g)).first->second;
}

Result<WindowAggregate::Group*> WindowAggregate::FindOrAdd(const WindowKey& k) {
  ASSIGN_OR_RETURN(Group * g, Load(k));
  if (!g) {
    Group fresh = NewGroup();
    memory_ += GroupBytes(k, fresh);
    g = &windows_.emplace(k, std::move(fresh)).first->second;
    ++groups_;
  }
  MarkChanged(k, g);
  return g;
}

void WindowAggregate::MarkChanged(const WindowKey& k, Group* g) {
  if (g->changed) return;
  changed_.insert(k);
  g->changed = true;
}

void WindowAggregate::ForgetFrontChanges() {
  for (const WindowKey& k : changed_) {
    if (auto it = windows_.find(k); it != windows_.end()) it->second.changed = false;
  }
  changed_.clear();
}

Status WindowAggregate::Erase(const WindowKey& k) {
  bool existed = false, stored = false;
  if (auto it = windows_.find(k); it != windows_.end()) {
    stored = it->second.stored;
    memory_ -= GroupBytes(it->first, it->second);
    windows_.erase(it);
    existed = true;
  }
  changed_.erase(k);
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

Status WindowAggregate::TakePrefix(const TakeFn& take) {
  int64_t n = 0, deletes = 0;
  WindowKey last;
  {
    Scan scan(this);
    while (scan.Valid()) {
      ASSIGN_OR_RETURN(bool taken, take(scan.key(), scan));
      if (!taken) break;
      if (scan.in_store()) {
        store_->Delete(scan.stored_key());
        if (++deletes % 4096 == 0) RETURN_IF_ERROR(store_->Flush());
      }
      last = scan.key();
      ++n;
      RETURN_IF_ERROR(scan.Next());
    }
    RETURN_IF_ERROR(scan.status());
  }
  if (n == 0) return Status::OK();
  auto end = windows_.upper_bound(last);
  for (auto it = windows_.begin(); it != end; ++it) memory_ -= GroupBytes(it->first, it->second);
  windows_.erase(windows_.begin(), end);
  changed_.erase(changed_.begin(), changed_.upper_bound(last));
  groups_ -= n;
  if (!spilled_) return Status::OK();
  // Every stored key up to `last` is gone (the next key after it is last + "\0").
  store_floor_ = StoreKey(last.end, last.start, last.key);
  store_floor_.push_back('\0');
  return store_->Flush();
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
  std::string value;
  int64_t puts = 0;
  for (const auto& [k, g] : windows_) {
    value.clear();
    EncodeAccs(g, &value);
    store_->Put(StoreKey(k.end, k.start, k.key), value);
    if (++puts % 4096 == 0) RETURN_IF_ERROR(store_->Flush());
  }
  for (const WindowKey& k : changed_) {
    store_->Put(ChangedKey(k), "");
    if (++puts % 4096 == 0) RETURN_IF_ERROR(store_->Flush());
  }
  RETURN_IF_ERROR(store_->Flush());
  windows_.clear();
  changed_.clear();
  memory_ = 0;
  spilled_ = true;
  ++spills_;
  return Status::OK();
}

Status WindowAggregate::Clear() {
  windows_.clear();
  sessions_.clear();
  changed_.clear();
  merged_away_.clear();
  groups_ = memory_ = 0;
  // The store goes with its folder; a later spill opens a new one.
  store_.reset();
  spilled_ = false;
  store_floor_.clear();
  changed_generation_ = 0;
  return Status::OK();
}

void WindowAggregate::ForgetSession(const WindowKey& k) {
  if (auto s = sessions_.find(k.key); s != sessions_.end()) {
    s->second.erase(k.start);
    if (s->second.empty()) sessions_.erase(s);
  }
}

}  // namespace sluice::operators
