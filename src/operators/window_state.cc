// WindowAggregate, its state files (docs/state.md "File format"): written and
// read as streams of records, from whichever tier holds each group.
#include <algorithm>
#include <cstring>

#include "operators/bytes.h"
#include "operators/window_aggregate.h"
#include "operators/window_internal.h"

namespace sluice::operators {
namespace {

using internal::ChangedPrefix;
using internal::Get;
using internal::GetBytes;
using internal::kFullState;
using internal::kStateDelta;
using internal::ParseStoreKey;
using internal::Put;
using internal::PutBytes;
using internal::StoreKey;

// "SLS3" streams records, accumulators in their compact encoding. Earlier
// formats are still read: "SLS2", the same records with accumulators in the
// fixed layout, and "SLST", one snapshot with counts up front.
constexpr uint32_t kStateMagic = 0x33534C53;      // "SLS3"
constexpr uint32_t kFixedAccsMagic = 0x32534C53;  // "SLS2"
constexpr uint32_t kLegacyMagic = 0x54534C53;     // "SLST"
constexpr uint8_t kTombstoneTag = 1, kGroupTag = 2;

// Records are framed as state/state_stream.h frames them; a window's record
// starts with the window's key. BeginRecord writes the tag and that key,
// EndRecord sets the length once the body is there.
size_t BeginRecord(std::string* out, uint8_t tag, int64_t end, int64_t start,
                   std::string_view key) {
  size_t at = state::BeginRecord(out, tag);
  Put<int64_t>(out, end);
  Put<int64_t>(out, start);
  PutBytes(out, key);
  return at;
}
using state::EndRecord;

}  // namespace

Status WindowAggregate::WriteState(const std::vector<WindowAggregate*>& parts, bool full,
                                   StateWriter* out) {
  int64_t emitted = INT64_MIN;
  for (const WindowAggregate* p : parts) {
    // (A HOP window taken as rows arrive waits in pending_ for Emit; the
    // state says it was emitted, so a state written before would lose it.)
    if ((p->pending_ != nullptr && p->pending_->num_rows() > p->pending_pos_) ||
        !p->pending_failed_.empty()) {
      return Status::Internal(
          "window state: windows closed below {} are taken but not emitted; Emit them before "
          "the state is written",
          p->emitted_below_);
    }
    emitted = std::max(emitted, p->emitted_below_);
  }
  Put<uint32_t>(out->buffer(), kStateMagic);
  Put<uint8_t>(out->buffer(), full ? kFullState : kStateDelta);
  Put<int64_t>(out->buffer(), emitted);
  for (WindowAggregate* p : parts) RETURN_IF_ERROR(p->WriteRecords(full, out));
  state::PutEnd(out->buffer());
  return out->Flush();
}

Status WindowAggregate::WriteRecords(bool full, StateWriter* out) {
  if (full) {
    Scan scan(this);
    while (scan.Valid()) {
      const WindowKey& k = scan.key();
      size_t at = BeginRecord(out->buffer(), kGroupTag, k.end, k.start, k.key);
      if (scan.from_store()) {
        out->buffer()->append(scan.stored_value());  // as it was encoded
      } else {
        ASSIGN_OR_RETURN(const Group* g, scan.group());
        EncodeAccs(*g, out->buffer());
      }
      EndRecord(out->buffer(), at);
      RETURN_IF_ERROR(out->MaybeFlush());
      RETURN_IF_ERROR(scan.Next());
    }
    RETURN_IF_ERROR(scan.status());
  } else {
    for (const WindowKey& k : merged_away_) {
      EndRecord(out->buffer(), BeginRecord(out->buffer(), kTombstoneTag, k.end, k.start, k.key));
    }
    RETURN_IF_ERROR(WriteChanged(out));
  }
  ForgetFrontChanges();
  merged_away_.clear();
  return ForgetStoredChanges();
}

Status WindowAggregate::WriteChanged(StateWriter* out) {
  return ForEachChanged([&](const WindowKey& k, const Group* g, std::string_view stored) {
    size_t at = BeginRecord(out->buffer(), kGroupTag, k.end, k.start, k.key);
    if (g) {
      EncodeAccs(*g, out->buffer());
    } else {
      out->buffer()->append(stored);  // as it was encoded
    }
    EndRecord(out->buffer(), at);
    return out->MaybeFlush();
  });
}

Status WindowAggregate::ForEachChanged(const ChangedFn& fn) {
  // The changed groups of the front (window by window, each window's in key
  // order) and the changed keys the store keeps, merged in order.
  std::unique_ptr<SpillStore::Cursor> stored;
  std::string prefix = ChangedPrefix(changed_generation_);
  if (spilled_) stored = store_->Scan(prefix, ChangedPrefix(changed_generation_ + 1));
  WindowKey sk;
  auto stored_valid = [&]() -> Result<bool> {
    if (!stored) return false;
    if (!stored->Valid()) {
      RETURN_IF_ERROR(stored->status());
      return false;
    }
    if (!ParseStoreKey(stored->key().substr(prefix.size()), &sk.end, &sk.start, &sk.key)) {
      return Status::Corruption("spill store {}: a changed key of {} bytes", store_->dir(),
                                stored->key().size());
    }
    return true;
  };
  // The store's changed key at the cursor, then the cursor moved on: the
  // group as the front holds it, or else the store (which lacks it when it
  // was emitted or merged away since it changed).
  std::string value;
  auto stored_one = [&]() -> Status {
    if (GroupEntry* in_front = FindInFront(sk)) {
      RETURN_IF_ERROR(fn(sk, &in_front->value, {}));
    } else {
      ASSIGN_OR_RETURN(bool found, store_->Get(StoreKey(sk.end, sk.start, sk.key), &value));
      if (found) RETURN_IF_ERROR(fn(sk, nullptr, value));
    }
    stored->Next();
    return Status::OK();
  };
  ASSIGN_OR_RETURN(bool sv, stored_valid());
  WindowKey fk;
  for (auto& [id, window] : windows_) {
    fk.end = id.end;
    fk.start = id.start;
    for (const GroupEntry* e : ChangedInOrder(window)) {
      fk.key.assign(e->key);
      // The store's changed keys before this one, then this one (the
      // front's version wins where both have it).
      while (sv && sk < fk) {
        RETURN_IF_ERROR(stored_one());
        ASSIGN_OR_RETURN(sv, stored_valid());
      }
      if (sv && !(fk < sk)) {
        stored->Next();
        ASSIGN_OR_RETURN(sv, stored_valid());
      }
      RETURN_IF_ERROR(fn(fk, &e->value, {}));
    }
  }
  while (sv) {
    RETURN_IF_ERROR(stored_one());
    ASSIGN_OR_RETURN(sv, stored_valid());
  }
  return Status::OK();
}

Result<std::string> WindowAggregate::Snapshot() {
  return state::WriteToString([this](StateWriter* out) { return WriteState({this}, true, out); });
}

Result<std::string> WindowAggregate::SnapshotChanged() {
  return state::WriteToString([this](StateWriter* out) { return WriteState({this}, false, out); });
}

Status WindowAggregate::RestoreGroup(WindowKey k, Group g, bool known_new) {
  int64_t length;
  if (options_.window.kind == WindowSpec::Kind::kHop &&
      (__builtin_sub_overflow(k.end, k.start, &length) || length != options_.window.slide_us)) {
    return Status::Corruption(
        "window state: a HOP pane [{}, {}) is not one slide ({} µs) long: the state is of "
        "another window definition",
        k.start, k.end, options_.window.slide_us);
  }
  if (options_.window.kind == WindowSpec::Kind::kSession) {
    // Of two sessions with one start (a closed one not emitted, an open one),
    // the index holds the open one, which ends later (AddToSession).
    auto [it, added] = sessions_[k.key].try_emplace(k.start, k.end);
    if (!added) it->second = std::max(it->second, k.end);
  }
  if (GroupEntry* e = FindInFront(k)) {
    memory_ += GroupBytes(k.key, g) - GroupBytes(k.key, e->value);
    g.stored = e->value.stored;
    g.changed = e->value.changed;  // (it stays on the changed list)
    e->value = std::move(g);
    return MaybeSpill();
  }
  bool stored = false;
  if (spilled_ && !known_new) {
    std::string value;
    ASSIGN_OR_RETURN(stored, store_->Get(StoreKey(k.end, k.start, k.key), &value));
  }
  if (!stored) ++groups_;
  g.stored = stored;
  AddToFront(WindowId{k.end, k.start}, k.key, std::move(g));
  return MaybeSpill();
}

Status WindowAggregate::RestoreTombstone(const WindowKey& k) {
  RETURN_IF_ERROR(Erase(k));
  if (options_.window.kind == WindowSpec::Kind::kSession) ForgetSession(k);
  return Status::OK();
}

Status WindowAggregate::FinishRestore(int64_t emitted) {
  // Windows emitted before this state was taken are gone (for HOP: panes
  // whose every window was emitted).
  emitted_below_ = std::max(emitted_below_, emitted);
  bool hop = options_.window.kind == WindowSpec::Kind::kHop;
  int64_t reach = hop ? options_.window.size_us - options_.window.slide_us : 0;
  bool session = options_.window.kind == WindowSpec::Kind::kSession;
  store_floor_.clear();  // restored groups may lie below it
  int64_t max_end;       // (the windows whose last pane the emitted watermark closed)
  if (__builtin_sub_overflow(ClosedThrough(emitted_below_), reach, &max_end)) max_end = INT64_MIN;
  RETURN_IF_ERROR(TakePrefix(max_end, [&](const WindowKey& k, Scan&) -> Result<bool> {
    if (!Closed(k.end + reach, emitted_below_)) return false;
    if (session) ForgetSession(k);
    return true;
  }));
  if (hop && emitted_below_ != INT64_MIN) {
    // The last window end the emitted watermark closed: a multiple of the slide.
    int64_t slide = options_.window.slide_us;
    finalized_end_ = internal::FloorTo(ClosedThrough(emitted_below_), slide);
  }
  // What was restored is not a change of this run.
  ForgetFrontChanges();
  merged_away_.clear();
  return ForgetStoredChanges();
}

Status WindowAggregate::Restore(std::string_view bytes, const KeyFilter& keep, bool clear_on_full) {
  StateReader in = StateReader::Of(bytes);
  return Restore(&in, keep, clear_on_full);
}

Status WindowAggregate::Restore(StateReader* in, const KeyFilter& keep, bool clear_on_full) {
  uint32_t magic = 0;
  uint8_t kind = 0;
  int64_t emitted = 0;
  RETURN_IF_ERROR(in->Next([&](std::string_view* v) {
    return Get(v, &magic) ? Status::OK() : StateReader::Short("window state: no header");
  }));
  if (magic == kLegacyMagic) {
    std::string all;
    RETURN_IF_ERROR(in->ReadAll(&all));
    return RestoreLegacy(all, keep, clear_on_full);
  }
  if (magic != kStateMagic && magic != kFixedAccsMagic) {
    return Status::Corruption("window state: bad header");
  }
  const AccEncoding encoding = magic == kStateMagic ? AccEncoding::kCompact : AccEncoding::kFixed;
  RETURN_IF_ERROR(in->Next([&](std::string_view* v) {
    if (!Get(v, &kind) || !Get(v, &emitted)) return StateReader::Short("window state: header");
    return kind > kStateDelta ? Status::Corruption("window state: bad header") : Status::OK();
  }));
  if (kind == kFullState && clear_on_full) RETURN_IF_ERROR(Clear());
  for (int64_t i = 0;; ++i) {
    uint8_t tag = 0;
    WindowKey k;
    Group g;
    RETURN_IF_ERROR(
        in->NextRecord("window state", i, kGroupTag, &tag, [&](std::string_view body) -> Status {
          if (!Get(&body, &k.end) || !Get(&body, &k.start) || !GetBytes(&body, &k.key)) {
            return Status::Corruption("no window key");
          }
          if (tag == kGroupTag) {
            g = NewGroup();
            RETURN_IF_ERROR(DecodeAccs(&body, &g, encoding));
          }
          if (!body.empty()) {
            return Status::Corruption("{} bytes after its body", body.size());
          }
          return Status::OK();
        }));
    if (tag == state::kEndTag) break;
    if (keep && !keep(k.key)) continue;  // another shard's
    if (tag == kTombstoneTag) {
      RETURN_IF_ERROR(RestoreTombstone(k));
    } else {
      // A full file's keys are all new when it replaces the state.
      RETURN_IF_ERROR(
          RestoreGroup(std::move(k), std::move(g), kind == kFullState && clear_on_full));
    }
  }
  RETURN_IF_ERROR(in->ExpectEnd("window state"));
  return FinishRestore(emitted);
}

Status WindowAggregate::RestoreLegacy(std::string_view in, const KeyFilter& keep,
                                      bool clear_on_full) {
  uint32_t magic = 0, tombstones = 0, count = 0;
  uint8_t kind = 0;
  int64_t emitted = 0;
  if (!Get(&in, &magic) || magic != kLegacyMagic || !Get(&in, &kind) || kind > kStateDelta ||
      !Get(&in, &emitted) || !Get(&in, &tombstones)) {
    return Status::Corruption("window state: bad header");
  }
  if (kind == kFullState && clear_on_full) RETURN_IF_ERROR(Clear());
  for (uint32_t i = 0; i < tombstones; ++i) {
    WindowKey k;
    if (!Get(&in, &k.end) || !Get(&in, &k.start) || !GetBytes(&in, &k.key)) {
      return Status::Corruption("window state: truncated tombstone");
    }
    if (!keep || keep(k.key)) RETURN_IF_ERROR(RestoreTombstone(k));
  }
  if (!Get(&in, &count)) return Status::Corruption("window state: truncated");
  for (uint32_t i = 0; i < count; ++i) {
    WindowKey k;
    if (!Get(&in, &k.end) || !Get(&in, &k.start) || !GetBytes(&in, &k.key)) {
      return Status::Corruption("window state: truncated group {}", i);
    }
    Group g = NewGroup();
    RETURN_IF_ERROR(DecodeAccs(&in, &g, AccEncoding::kFixed));
    if (keep && !keep(k.key)) continue;  // another shard's
    RETURN_IF_ERROR(RestoreGroup(std::move(k), std::move(g), /*known_new=*/false));
  }
  if (!in.empty()) return Status::Corruption("window state: {} bytes after the groups", in.size());
  return FinishRestore(emitted);
}

}  // namespace sluice::operators
