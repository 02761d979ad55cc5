#include "operators/sharded_window_aggregate.h"

#include <algorithm>
#include <cstring>
#include <tuple>
#include <type_traits>
#include <utility>

#include "columnar/column_ops.h"
#include "operators/bytes.h"
#include "operators/key_table.h"

namespace sluice::operators {
namespace {

using internal::Get;
using internal::kFullState;
using internal::kStateDelta;
using internal::Put;

constexpr uint32_t kShardsMagic = 0x48534C53;  // "SLSH"

// The group key of row `r` as WindowAggregate builds it (columns 1..keys).
void KeyOf(const Batch& rows, size_t keys, int64_t r, std::string* key) {
  key->clear();
  for (size_t k = 0; k < keys; ++k) AppendValueKey(rows.columns[1 + k], r, key);
}

}  // namespace

Result<std::unique_ptr<ShardedWindowAggregate>> ShardedWindowAggregate::Make(
    WindowAggregateOptions options, TaskPool* pool, int shards) {
  if (shards < 1 || shards > pool->threads() || shards > UINT16_MAX) {
    return Status::Invalid("{} shards on {} threads", shards, pool->threads());
  }
  std::unique_ptr<ShardedWindowAggregate> s(new ShardedWindowAggregate(options, pool));
  for (int i = 0; i < shards; ++i) {
    WindowAggregateOptions own = options;
    own.memory_budget = options.memory_budget / shards;
    if (!options.spill_dir.empty())
      own.spill_dir = fmt::format("{}/shard-{}", options.spill_dir, i);
    ASSIGN_OR_RETURN(auto shard, WindowAggregate::Make(std::move(own)));
    s->shards_.push_back(std::move(shard));
  }
  return s;
}

void ShardedWindowAggregate::AssignShards(const Batch& rows, int64_t begin, int64_t end,
                                          ShardIds* shard) const {
  if (options_.key_types.size() == 1) {
    // One key column of 8 or 4 bytes (an id, a time): its key's hash taken
    // from the value, as ShardOf hashes the key AppendValueKey builds (a
    // valid byte, then the value's).
    const Column& column = rows.columns[1];
    const DataType& type = *column.type();
    const int width =
        type.is_binary_like() || type.id() == TypeId::kBoolean ? 0 : type.value_width();
    auto assign = [&]<int kWidth>() {
      static constexpr char kNull[1] = {0};
      const uint16_t null_shard = static_cast<uint16_t>(ShardOf({kNull, 1}));
      const uint8_t* values = column.data<uint8_t>();
      uint16_t* out = shard->data();
      for (int64_t r = begin; r < end; ++r) {
        if (column.IsNull(r)) {
          out[r] = null_shard;
          continue;
        }
        std::conditional_t<kWidth == 8, uint64_t, uint32_t> value;
        std::memcpy(&value, values + r * kWidth, kWidth);
        out[r] =
            static_cast<uint16_t>(ShardOfHash(SeededHashOfValidValue<kWidth>(kShardSeed, value)));
      }
    };
    if (width == 8) return assign.template operator()<8>();
    if (width == 4) return assign.template operator()<4>();
  }
  std::string key;
  for (int64_t r = begin; r < end; ++r) {
    KeyOf(rows, options_.key_types.size(), r, &key);
    (*shard)[r] = static_cast<uint16_t>(ShardOf(key));
  }
}

Status ShardedWindowAggregate::Add(const Batch& rows, const std::vector<int64_t>& watermarks,
                                   std::vector<LateRow>* late, const ShardIds* shard) {
  int n = shards();
  const int64_t count = rows.num_rows();
  ShardIds assigned;
  if (shard == nullptr && n > 1) {
    assigned.resize(count);
    pool_->Run(n,
               [&](int i) { AssignShards(rows, count * i / n, count * (i + 1) / n, &assigned); });
    shard = &assigned;
  }
  std::vector<std::vector<LateRow>> lates(1);
  const Part part{&rows, &watermarks, shard};
  RETURN_IF_ERROR(AddParts({&part, 1}, &lates));
  for (LateRow& l : lates[0]) late->push_back(std::move(l));
  return Status::OK();
}

Status ShardedWindowAggregate::AddParts(std::span<const Part> parts,
                                        std::vector<std::vector<LateRow>>* late) {
  late->assign(parts.size(), {});
  int n = shards();
  if (n == 1) {
    for (size_t p = 0; p < parts.size(); ++p) {
      RETURN_IF_ERROR(shards_[0]->Add(*parts[p].rows, *parts[p].watermarks, &(*late)[p]));
    }
    return Status::OK();
  }
  for (const Part& part : parts) {
    if (part.shard == nullptr || static_cast<int64_t>(part.shard->size()) != part.rows->num_rows())
      return Status::Internal("window operator: {} shard ids for {} rows",
                              part.shard == nullptr ? 0 : part.shard->size(),
                              part.rows->num_rows());
  }
  // Each shard takes its keys' rows of each part, in order, where they are.
  std::vector<std::vector<std::vector<LateRow>>> lates(n);
  std::vector<Status> st(n);
  pool_->Run(n, [&](int i) {
    lates[i].resize(parts.size());
    std::vector<uint32_t> take;
    for (size_t p = 0; p < parts.size() && st[i].ok(); ++p) {
      const int64_t count = parts[p].rows->num_rows();
      const ShardIds& shard = *parts[p].shard;
      // (Every row written, the next slot taken only by this shard's: no
      // branch to mispredict on a hash.)
      take.resize(static_cast<size_t>(count));
      size_t taken = 0;
      for (int64_t r = 0; r < count; ++r) {
        take[taken] = static_cast<uint32_t>(r);
        taken += shard[r] == i;
      }
      take.resize(taken);
      st[i] = shards_[i]->Add(*parts[p].rows, *parts[p].watermarks, &lates[i][p], &take);
    }
  });
  for (const Status& s : st) RETURN_IF_ERROR(s);
  for (size_t p = 0; p < parts.size(); ++p) {
    std::vector<LateRow>& out = (*late)[p];
    for (auto& shard_lates : lates) {
      for (LateRow& l : shard_lates[p]) out.push_back(std::move(l));
    }
    std::sort(out.begin(), out.end(),
              [](const LateRow& a, const LateRow& b) { return a.row < b.row; });
  }
  return Status::OK();
}

Result<Batch> ShardedWindowAggregate::Emit(int64_t watermark, std::vector<FailedGroup>* failed,
                                           int64_t max_rows, bool* done) {
  int n = shards();
  if (n == 1) return shards_[0]->Emit(watermark, failed, max_rows, done);
  chunks_.resize(n);
  Batch merged = Batch::Make(options_.output_schema);
  for (;;) {
    // A new chunk from every shard whose chunk is used up and that has more.
    std::vector<int> refill;
    for (int i = 0; i < n; ++i) {
      if (chunks_[i].pos >= chunks_[i].rows.num_rows() && !chunks_[i].done) refill.push_back(i);
    }
    std::vector<Status> st(refill.size());
    std::vector<std::vector<FailedGroup>> fails(refill.size());
    if (!refill.empty())
      pool_->Run(static_cast<int>(refill.size()), [&](int j) {
        Chunk& c = chunks_[refill[j]];
        auto rows = shards_[refill[j]]->Emit(watermark, &fails[j], max_rows, &c.done);
        st[j] = rows.status();
        if (rows.ok()) c.rows = std::move(*rows);
        c.pos = 0;
      });
    for (size_t j = 0; j < refill.size(); ++j) {
      RETURN_IF_ERROR(st[j]);
      for (FailedGroup& f : fails[j]) failed->push_back(std::move(f));
    }
    // In the order one operator emits: by window end, then start, then shard
    // (a table the windows go to is read in that order by a chained
    // pipeline's watermark). Rows are taken only while every shard that may
    // have more has rows at hand, a run at a time: the first shard's rows
    // up to the next shard's next row (a window's groups in a shard are one
    // run).
    bool starved = false;
    while (merged.num_rows() < max_rows) {
      // The least and the second least next row: (end, start, shard); past
      // every row when there is none.
      using Head = std::tuple<int64_t, int64_t, int>;
      const Head none{INT64_MAX, INT64_MAX, n};
      Head first = none, second = none;
      for (int i = 0; i < n && !starved; ++i) {
        const Chunk& c = chunks_[i];
        if (c.pos >= c.rows.num_rows()) {
          starved = !c.done;
          continue;
        }
        Head head{c.rows.columns[1].Value<int64_t>(c.pos), c.rows.columns[0].Value<int64_t>(c.pos),
                  i};
        if (head < first) {
          second = first;
          first = head;
        } else if (head < second) {
          second = head;
        }
      }
      if (starved || first == none) break;
      const int best = std::get<2>(first);
      Chunk& c = chunks_[best];
      // (max_rows may be INT64_MAX: no sum that could overflow.)
      const int64_t limit =
          c.pos + std::min(c.rows.num_rows() - c.pos, max_rows - merged.num_rows());
      int64_t stop = c.pos + 1;
      while (stop < limit && Head{c.rows.columns[1].Value<int64_t>(stop),
                                  c.rows.columns[0].Value<int64_t>(stop), best} < second) {
        ++stop;
      }
      if (c.pos == 0 && stop == c.rows.num_rows()) {
        // A whole chunk in one run (a shard's rows of one window, as a
        // window closes at a time) is given as it is, alone: the rows
        // before it first, then it by the next call.
        if (merged.num_rows() == 0) merged = std::exchange(c.rows, Batch{});
        break;
      }
      for (size_t col = 0; col < merged.columns.size(); ++col) {
        AppendRowsFrom(c.rows.columns[col], c.pos, stop - c.pos, &merged.columns[col]);
      }
      c.pos = stop;
    }
    if (!starved) break;  // full, or every shard done and taken
  }
  *done = true;
  for (const Chunk& c : chunks_) *done = *done && c.done && c.pos >= c.rows.num_rows();
  if (*done) chunks_.clear();
  return merged;
}

Result<Batch> ShardedWindowAggregate::EmitChanged(std::vector<FailedGroup>* failed, Batch* gone) {
  int n = shards();
  if (n == 1) return shards_[0]->EmitChanged(failed, gone);
  std::vector<Result<Batch>> rows;
  for (int i = 0; i < n; ++i) rows.emplace_back(Batch{});
  std::vector<Batch> gones(n);
  std::vector<std::vector<FailedGroup>> fails(n);
  pool_->Run(n, [&](int i) {
    gones[i] = Batch::Make(options_.output_schema);
    rows[i] = shards_[i]->EmitChanged(&fails[i], gone ? &gones[i] : nullptr);
  });
  Batch out = Batch::Make(options_.output_schema);
  for (int i = 0; i < n; ++i) {
    RETURN_IF_ERROR(rows[i].status());
    for (FailedGroup& f : fails[i]) failed->push_back(std::move(f));
    AppendBatch(*rows[i], &out);
    if (gone) AppendBatch(gones[i], gone);
  }
  return out;
}

Result<Batch> ShardedWindowAggregate::Emit(int64_t watermark, std::vector<FailedGroup>* failed) {
  bool done = false;
  ASSIGN_OR_RETURN(Batch all, Emit(watermark, failed, INT64_MAX, &done));
  while (!done) {
    ASSIGN_OR_RETURN(Batch more, Emit(watermark, failed, INT64_MAX, &done));
    AppendBatch(more, &all);
  }
  return all;
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

int64_t ShardedWindowAggregate::spills() const {
  int64_t m = 0;
  for (const auto& s : shards_) m += s->spills();
  return m;
}

Status ShardedWindowAggregate::WriteState(bool full, StateWriter* out) {
  std::vector<WindowAggregate*> parts;
  for (const auto& s : shards_) parts.push_back(s.get());
  return WindowAggregate::WriteState(parts, full, out);
}

Result<std::string> ShardedWindowAggregate::Snapshot() {
  return state::WriteToString([this](StateWriter* out) { return WriteState(true, out); });
}

Result<std::string> ShardedWindowAggregate::SnapshotChanged() {
  return state::WriteToString([this](StateWriter* out) { return WriteState(false, out); });
}

Status ShardedWindowAggregate::Restore(std::string_view bytes) {
  return Restore([bytes]() -> Result<std::unique_ptr<StateReader>> {
    return std::make_unique<StateReader>(StateReader::Of(bytes));
  });
}

Status ShardedWindowAggregate::Restore(const Opener& open) {
  int n = shards();
  std::vector<std::unique_ptr<StateReader>> readers(n);
  for (int i = 0; i < n; ++i) {
    ASSIGN_OR_RETURN(readers[i], open());
  }
  uint32_t magic = 0;
  RETURN_IF_ERROR(readers[0]->Next([&](std::string_view* in) {
    std::string_view peek = *in;  // read, not taken
    return Get(&peek, &magic) ? Status::OK() : StateReader::Short("window state: no header");
  }));
  if (magic == kShardsMagic) {
    std::string all;
    RETURN_IF_ERROR(readers[0]->ReadAll(&all));
    return RestoreShardContainer(all);
  }
  // Every shard reads the whole file, keeping its own keys.
  std::vector<Status> st(n);
  pool_->Run(n, [&](int i) {
    WindowAggregate::KeyFilter mine = nullptr;
    if (n > 1) mine = [this, i](std::string_view key) { return ShardOf(key) == i; };
    st[i] = shards_[i]->Restore(readers[i].get(), mine);
  });
  for (const Status& s : st) RETURN_IF_ERROR(s);
  return Status::OK();
}

Status ShardedWindowAggregate::RestoreShardContainer(std::string_view bytes) {
  std::vector<std::string_view> parts;
  std::string_view in = bytes;
  uint32_t magic = 0, count = 0;
  uint8_t kind = 0;
  if (!Get(&in, &magic) || !Get(&in, &kind) || kind > kStateDelta || !Get(&in, &count) ||
      count == 0 || count > 4096) {
    return Status::Corruption("window state: bad shard header");
  }
  bool full = kind == kFullState;
  for (uint32_t i = 0; i < count; ++i) {
    uint64_t size = 0;
    if (!Get(&in, &size) || size > in.size()) {
      return Status::Corruption("window state: shard {} of {} is truncated", i, count);
    }
    parts.push_back(in.substr(0, size));
    in.remove_prefix(size);
  }
  if (!in.empty()) return Status::Corruption("window state: {} bytes after the shards", in.size());
  // Every shard reads every part, keeping its own keys.
  std::vector<Status> st(shards_.size());
  pool_->Run(shards(), [&](int i) {
    if (full) st[i] = shards_[i]->Clear();
    WindowAggregate::KeyFilter mine = nullptr;
    if (shards() > 1) mine = [this, i](std::string_view key) { return ShardOf(key) == i; };
    for (std::string_view part : parts) {
      if (!st[i].ok()) return;
      st[i] = shards_[i]->Restore(part, mine, /*clear_on_full=*/false);
    }
  });
  for (const Status& s : st) RETURN_IF_ERROR(s);
  return Status::OK();
}

}  // namespace sluice::operators
