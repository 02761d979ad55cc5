// Private to the window operator's files (window_aggregate.cc, window_store.cc,
// window_state.cc): the spill store's key encoding and the scan of both tiers
// in window order.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "operators/window_aggregate.h"

namespace sluice::operators {
namespace internal {

inline int64_t FloorDiv(int64_t a, int64_t b) { return a / b - (a % b != 0 && (a < 0) != (b < 0)); }

// a rounded down to a multiple of `unit`; INT64_MIN when that is below the
// int64 range (as for a watermark: nothing before it).
inline int64_t FloorTo(int64_t a, int64_t unit) {
  int64_t out;
  return __builtin_mul_overflow(FloorDiv(a, unit), unit, &out) ? INT64_MIN : out;
}

// a + b, held at INT64_MAX (b >= 0): a window end past every window that fits.
inline int64_t AddOrMax(int64_t a, int64_t b) {
  int64_t out;
  return __builtin_add_overflow(a, b, &out) ? INT64_MAX : out;
}

// The window of an event time t: `start`, t rounded down to a multiple of
// `unit` (TUMBLE's size, HOP's slide), and `end` = start + `size`. False when
// either leaves the range of int64 microseconds, which only times within a
// window of its ends (about 292,000 years from 1970) do.
inline bool WindowBounds(int64_t t, int64_t unit, int64_t size, int64_t* start, int64_t* end) {
  return !__builtin_mul_overflow(FloorDiv(t, unit), unit, start) &&
         !__builtin_add_overflow(*start, size, end);
}

// Spill store keys: a space, then (end, start) as big-endian with the sign
// flipped (so bytes order as the numbers), then the group key's bytes: the
// store orders windows as WindowKey does. The "changed" space adds a
// generation after its letter (window_aggregate.h, changed_generation_).
constexpr char kWindowSpace = 'w', kChangedSpace = 'c';

inline void PutOrdered(std::string* out, int64_t v) {
  uint64_t u = static_cast<uint64_t>(v) ^ (uint64_t{1} << 63);
  for (int i = 7; i >= 0; --i) out->push_back(static_cast<char>(u >> (8 * i)));
}

inline int64_t GetOrdered(const char* p) {
  uint64_t u = 0;
  for (int i = 0; i < 8; ++i) u = (u << 8) | static_cast<uint8_t>(p[i]);
  return static_cast<int64_t>(u ^ (uint64_t{1} << 63));
}

inline std::string StoreKey(int64_t end, int64_t start, std::string_view key) {
  std::string out;
  out.reserve(17 + key.size());
  out.push_back(kWindowSpace);
  PutOrdered(&out, end);
  PutOrdered(&out, start);
  out.append(key);
  return out;
}

inline bool ParseStoreKey(std::string_view s, int64_t* end, int64_t* start, std::string* key) {
  if (s.size() < 17) return false;
  *end = GetOrdered(s.data() + 1);
  *start = GetOrdered(s.data() + 9);
  key->assign(s.substr(17));
  return true;
}

inline std::string ChangedPrefix(uint32_t generation) {
  std::string out(1, kChangedSpace);
  for (int i = 3; i >= 0; --i) out.push_back(static_cast<char>(generation >> (8 * i)));
  return out;
}

}  // namespace internal

// The windows of the front and of the store that end by `max_end`, merged in
// (end, start, key) order; a window in both is the front's. The front's
// windows are each sorted when the scan reaches them (so a bound that stops
// before the open windows spares their sorting).
class WindowAggregate::Scan {
 public:
  explicit Scan(WindowAggregate* op, int64_t max_end = INT64_MAX)
      : op_(op), max_end_(max_end), window_(op->windows_.begin()) {
    SortWindow();
    if (op->spilled_) {
      // Below the floor every key was taken: seeking past it skips their
      // deletions.
      store_ = op->store_->Scan(std::max(std::string(1, internal::kWindowSpace), op->store_floor_),
                                std::string(1, internal::kWindowSpace + 1));
      ParseStore();
    }
    Settle();
  }
  bool Valid() const { return status_.ok() && valid_; }
  Status status() const { return status_; }
  const WindowKey& key() const { return from_front_ ? front_key_ : store_key_; }
  // The store holds this window too (its bytes there).
  bool in_store() const { return !from_front_ || both_; }
  std::string_view stored_key() const { return store_->key(); }
  // The group is the store's: its accumulators' bytes, as EncodeAccs wrote them.
  bool from_store() const { return !from_front_; }
  std::string_view stored_value() const { return store_->value(); }
  Result<const Group*> group() {
    if (from_front_) return &(*sorted_)[pos_]->value;
    store_group_ = op_->NewGroup();
    std::string_view v = store_->value();
    RETURN_IF_ERROR(op_->DecodeAccs(&v, &store_group_));
    return &store_group_;
  }
  // The groups before the current one were taken: the next scan of this
  // window starts here (a chunked Emit that stopped here goes on from it).
  void KeepOrder() {
    if (FrontValid()) window_->second.order_from = pos_;
  }
  // Erases this window's group from the front (if it is there; the store's
  // copy stays). The scan goes on; the window, once emptied, stays in the
  // front until the caller erases it.
  void ForgetFront() {
    if (from_front_) op_->EraseFromFront(&window_->second, front_key_.key);
  }
  Status Next() {
    if (from_front_) {
      if (both_) StoreNext();
      FrontNext();
    } else {
      StoreNext();
    }
    Settle();
    return status_;
  }

 private:
  bool FrontValid() const {
    return window_ != op_->windows_.end() && window_->first.end <= max_end_;
  }
  // The groups of the window at window_ in key order (sorted unless the
  // window kept its order from an earlier scan), skipping empty windows.
  void SortWindow() {
    for (; FrontValid(); ++window_) {
      FrontWindow& w = window_->second;
      if (!w.ordered) {
        w.order = w.groups.Sorted();
        w.order_from = 0;
        w.ordered = true;
      }
      sorted_ = &w.order;
      pos_ = w.order_from;
      if (SkipErased()) return;
    }
  }
  void FrontNext() {
    ++pos_;
    if (SkipErased()) return;
    ++window_;
    SortWindow();
  }
  // To the first live entry from pos_ on (an order may hold entries erased
  // since it was made); false at the window's end.
  bool SkipErased() {
    const std::vector<GroupEntry*>& order = *sorted_;
    while (pos_ < order.size() && !order[pos_]->live) ++pos_;
    if (pos_ == order.size()) return false;
    SetFrontKey();
    return true;
  }
  void SetFrontKey() {
    front_key_.end = window_->first.end;
    front_key_.start = window_->first.start;
    front_key_.key.assign((*sorted_)[pos_]->key);
  }
  void StoreNext() {
    store_->Next();
    ParseStore();
  }
  void ParseStore() {
    store_valid_ = store_->Valid();
    if (!store_valid_) {
      if (status_.ok()) status_ = store_->status();
      return;
    }
    if (!internal::ParseStoreKey(store_->key(), &store_key_.end, &store_key_.start,
                                 &store_key_.key)) {
      status_ = Status::Corruption("spill store {}: a key of {} bytes", op_->store_->dir(),
                                   store_->key().size());
      store_valid_ = false;
    } else if (store_key_.end > max_end_) {
      store_valid_ = false;  // (and every later key)
    }
  }
  void Settle() {
    bool front = FrontValid();
    both_ = false;
    if (front && store_valid_) {
      if (front_key_ < store_key_) {
        from_front_ = true;
      } else if (store_key_ < front_key_) {
        from_front_ = false;
      } else {
        from_front_ = both_ = true;
      }
    } else {
      from_front_ = front;
    }
    valid_ = front || store_valid_;
  }

  WindowAggregate* op_;
  const int64_t max_end_;
  Windows::iterator window_;
  const std::vector<GroupEntry*>* sorted_ = nullptr;  // window_'s order
  size_t pos_ = 0;
  WindowKey front_key_;  // (window_, sorted_[pos_])
  std::unique_ptr<SpillStore::Cursor> store_;
  bool store_valid_ = false, from_front_ = false, both_ = false, valid_ = false;
  WindowKey store_key_;
  Group store_group_;
  Status status_;
};

}  // namespace sluice::operators
