#include "operators/sharded_window_aggregate.h"

#include <algorithm>

#include "columnar/column_ops.h"
#include "operators/bytes.h"

namespace sluice::operators {
namespace {

using internal::Get;
using internal::Put;

constexpr uint32_t kShardsMagic = 0x48534C53;  // "SLSH"
constexpr uint8_t kFull = 0, kDelta = 1;

// The group key of row `r` as WindowAggregate builds it (columns 1..keys).
void KeyOf(const Batch& rows, size_t keys, int64_t r, std::string* key) {
  key->clear();
  for (size_t k = 0; k < keys; ++k) AppendValueKey(rows.columns[1 + k], r, key);
}

}  // namespace

Result<std::unique_ptr<ShardedWindowAggregate>> ShardedWindowAggregate::Make(
    WindowAggregateOptions options, TaskPool* pool, int shards) {
  if (shards < 1 || shards > pool->threads()) {
    return Status::Invalid("{} shards on {} threads", shards, pool->threads());
  }
  std::unique_ptr<ShardedWindowAggregate> s(new ShardedWindowAggregate(options, pool));
  for (int i = 0; i < shards; ++i) {
    ASSIGN_OR_RETURN(auto shard, WindowAggregate::Make(options));
    s->shards_.push_back(std::move(shard));
  }
  return s;
}

int ShardedWindowAggregate::ShardOf(std::string_view key) const {
  return static_cast<int>(StableHash(key) % shards_.size());
}

void ShardedWindowAggregate::Add(const Batch& rows, const std::vector<int64_t>& watermarks,
                                 std::vector<LateRow>* late) {
  int n = shards();
  if (n == 1) return shards_[0]->Add(rows, watermarks, late);
  // Each shard gets its keys' rows, in order, with their watermarks.
  std::vector<std::vector<uint32_t>> take(n);
  std::string key;
  for (int64_t r = 0; r < rows.num_rows(); ++r) {
    KeyOf(rows, options_.key_types.size(), r, &key);
    take[ShardOf(key)].push_back(static_cast<uint32_t>(r));
  }
  std::vector<std::vector<LateRow>> lates(n);
  pool_->Run(n, [&](int i) {
    Batch part = TakeRows(rows, take[i]);
    std::vector<int64_t> marks(take[i].size());
    for (size_t j = 0; j < take[i].size(); ++j) marks[j] = watermarks[take[i][j]];
    shards_[i]->Add(part, marks, &lates[i]);
    for (LateRow& l : lates[i]) l.row = take[i][l.row];
  });
  size_t first = late->size();
  for (auto& ls : lates) {
    for (LateRow& l : ls) late->push_back(std::move(l));
  }
  std::sort(late->begin() + static_cast<std::ptrdiff_t>(first), late->end(),
            [](const LateRow& a, const LateRow& b) { return a.row < b.row; });
}

Result<Batch> ShardedWindowAggregate::Emit(int64_t watermark, std::vector<FailedGroup>* failed) {
  int n = shards();
  if (n == 1) return shards_[0]->Emit(watermark, failed);
  std::vector<Batch> out(n);
  std::vector<Status> st(n);
  std::vector<std::vector<FailedGroup>> fails(n);
  pool_->Run(n, [&](int i) {
    auto emitted = shards_[i]->Emit(watermark, &fails[i]);
    st[i] = emitted.status();
    if (emitted.ok()) out[i] = std::move(*emitted);
  });
  for (int i = 0; i < n; ++i) {
    RETURN_IF_ERROR(st[i]);
    for (FailedGroup& f : fails[i]) failed->push_back(std::move(f));
  }
  // In the order one operator emits: by window end, then start (a table the
  // windows go to is read in that order by a chained pipeline's watermark).
  struct Ref {
    int64_t end, start;
    int shard;
    int64_t row;
  };
  std::vector<Ref> refs;
  for (int i = 0; i < n; ++i) {
    const Batch& b = out[i];
    for (int64_t r = 0; r < b.num_rows(); ++r) {
      refs.push_back({b.columns[1].Value<int64_t>(r), b.columns[0].Value<int64_t>(r), i, r});
    }
  }
  std::stable_sort(refs.begin(), refs.end(), [](const Ref& a, const Ref& b) {
    return a.end != b.end ? a.end < b.end : a.start < b.start;
  });
  Batch merged = Batch::Make(options_.output_schema);
  for (Column& c : merged.columns) c.Reserve(static_cast<int64_t>(refs.size()));
  for (const Ref& ref : refs) {
    const Batch& b = out[ref.shard];
    for (size_t c = 0; c < merged.columns.size(); ++c) {
      AppendRowFrom(b.columns[c], ref.row, &merged.columns[c]);
    }
  }
  return merged;
}

int64_t ShardedWindowAggregate::groups() const {
  int64_t g = 0;
  for (const auto& s : shards_) g += s->groups();
  return g;
}

int64_t ShardedWindowAggregate::emitted_below() const {
  int64_t e = INT64_MIN;
  for (const auto& s : shards_) e = std::max(e, s->emitted_below());
  return e;
}

int64_t ShardedWindowAggregate::MemoryUsage() const {
  int64_t m = 0;
  for (const auto& s : shards_) m += s->MemoryUsage();
  return m;
}

std::string ShardedWindowAggregate::Container(bool full) {
  std::vector<std::string> parts(shards_.size());
  pool_->Run(shards(), [&](int i) {
    parts[i] = full ? shards_[i]->Snapshot() : shards_[i]->SnapshotChanged();
  });
  std::string out;
  Put<uint32_t>(&out, kShardsMagic);
  Put<uint8_t>(&out, full ? kFull : kDelta);
  Put<uint32_t>(&out, static_cast<uint32_t>(parts.size()));
  for (const std::string& p : parts) {
    Put<uint64_t>(&out, p.size());
    out += p;
  }
  return out;
}

std::string ShardedWindowAggregate::Snapshot() { return Container(true); }
std::string ShardedWindowAggregate::SnapshotChanged() { return Container(false); }

Status ShardedWindowAggregate::Restore(std::string_view bytes) {
  // The shard snapshots in the blob (a plain WindowAggregate snapshot is one).
  std::vector<std::string_view> parts;
  bool full = false;
  std::string_view in = bytes;
  uint32_t magic = 0;
  if (!Get(&in, &magic)) return Status::Corruption("window state: bad header");
  if (magic != kShardsMagic) {
    parts.push_back(bytes);
    uint8_t kind = 0;
    full = Get(&in, &kind) && kind == kFull;
  } else {
    uint8_t kind = 0;
    uint32_t count = 0;
    if (!Get(&in, &kind) || kind > kDelta || !Get(&in, &count) || count == 0 || count > 4096) {
      return Status::Corruption("window state: bad shard header");
    }
    full = kind == kFull;
    for (uint32_t i = 0; i < count; ++i) {
      uint64_t size = 0;
      if (!Get(&in, &size) || size > in.size()) {
        return Status::Corruption("window state: shard {} of {} is truncated", i, count);
      }
      parts.push_back(in.substr(0, size));
      in.remove_prefix(size);
    }
    if (!in.empty())
      return Status::Corruption("window state: {} bytes after the shards", in.size());
  }
  // Every shard reads every part, keeping its own keys.
  std::vector<Status> st(shards_.size());
  pool_->Run(shards(), [&](int i) {
    if (full) shards_[i]->Clear();
    WindowAggregate::KeyFilter mine = nullptr;
    if (shards() > 1) mine = [this, i](std::string_view key) { return ShardOf(key) == i; };
    for (std::string_view part : parts) {
      st[i] = shards_[i]->Restore(part, mine, /*clear_on_full=*/false);
      if (!st[i].ok()) return;
    }
  });
  for (const Status& s : st) RETURN_IF_ERROR(s);
  return Status::OK();
}

}  // namespace sluice::operators
