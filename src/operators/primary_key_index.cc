#include "operators/primary_key_index.h"

#include <algorithm>

#include "common/kill_point.h"
#include "operators/aggregate.h"

namespace sluice::operators {

bool AppendKey(const Batch& batch, const std::vector<int>& key_columns, int64_t row,
               std::string* out) {
  size_t start = out->size();
  for (int c : key_columns) {
    const Column& col = batch.columns[c];
    if (col.IsNull(row)) {
      out->resize(start);
      return false;
    }
    AppendValueKey(col, row, out);
  }
  return true;
}

uint32_t PrimaryKeyIndex::InternFile(const std::string& path) {
  auto [it, added] = file_ids_.try_emplace(path, static_cast<uint32_t>(files_.size()));
  if (added) files_.push_back(path);
  return it->second;
}

Status PrimaryKeyIndex::Load(std::string_view key, RowLocation at) {
  ASSIGN_OR_RETURN(bool added, committed_.Add(key, committed_.HashOf(key), at));
  if (added) {
    Recount(kNoFile, at.file);
  } else {
    duplicates_.emplace(std::string(key), at);
  }
  return Status::OK();
}

void PrimaryKeyIndex::ClearCommitted() {
  committed_.Clear();
  duplicates_.clear();
  unsaved_.clear();
  unsaved_all_ = true;
  // Keep only the files pending rows are in (renumbered), so that files the
  // table no longer holds do not accumulate.
  std::vector<std::string> kept;
  std::unordered_map<uint32_t, uint32_t> renumber;
  auto keep = [&](RowLocation& at) {
    auto [it, added] = renumber.try_emplace(at.file, static_cast<uint32_t>(kept.size()));
    if (added) kept.push_back(files_[at.file]);
    at.file = it->second;
  };
  pending_.ForEach([&](std::string_view, RowLocation& at) {
    if (at != kGone) keep(at);
  });
  for (RowLocation& at : superseded_) keep(at);
  files_ = std::move(kept);
  rows_in_file_.clear();
  file_ids_.clear();
  for (uint32_t i = 0; i < files_.size(); ++i) file_ids_.emplace(files_[i], i);
}

void PrimaryKeyIndex::Change(std::string_view key, RowLocation at) {
  plan_.reset();  // (Its keys may move as the pending table grows.)
  auto [row, added] = pending_.Insert(key, at);
  if (added) return;
  if (*row != kGone) superseded_.push_back(*row);
  *row = at;
}

void PrimaryKeyIndex::Upsert(std::string_view key, RowLocation at) { Change(key, at); }

void PrimaryKeyIndex::Delete(std::string_view key) { Change(key, kGone); }

Prefixed<PrimaryKeyIndex::PendingChange> PrimaryKeyIndex::SortedPending() const {
  Prefixed<PendingChange> changes;
  changes.reserve(pending_.size());
  pending_.ForEach([&](std::string_view key, const RowLocation& at) {
    changes.emplace_back(KeyPrefix(key), PendingChange{key, at});
  });
  SortPrefixed(&changes, [](const PendingChange& c) { return c.key; });
  return changes;
}

Result<std::vector<RowLocation>> PrimaryKeyIndex::Deletes() {
  // (Reserved: a checkpoint of millions of changes would otherwise copy its
  // deletes at every doubling, into fresh pages each time.)
  std::vector<RowLocation> out;
  out.reserve(superseded_.size() + pending_.size());
  out.insert(out.end(), superseded_.begin(), superseded_.end());
  auto add = [&](std::string_view key, const std::optional<RowLocation>& row) {
    if (row) out.push_back(*row);
    if (duplicates_.empty()) return;
    auto [begin, end] = duplicates_.equal_range(std::string(key));
    for (auto d = begin; d != end; ++d) out.push_back(d->second);
  };
  if (committed_.spilled()) {
    // In key order: neighbouring keys share the store's blocks, so that a
    // block is read once for all of its changed keys, not once each. What
    // was found is kept for CommitPending, which then reads no store.
    plan_ = Plan{};
    Plan& plan = *plan_;
    plan.changes = SortedPending();
    plan.hashes.reserve(plan.changes.size());
    for (const auto& [prefix, c] : plan.changes) plan.hashes.push_back(committed_.HashOf(c.key));
    plan.was_file.assign(plan.changes.size(), kNoFile);
    Status found = committed_.FindSorted([&plan](size_t i) { return plan.key(i); }, plan.hashes,
                                         [&](size_t i, const std::optional<RowLocation>& row) {
                                           plan.was_file[i] = FileOf(row);
                                           add(plan.key(i), row);
                                         });
    if (!found.ok()) {
      plan_.reset();
      return found;
    }
    plan_->version = committed_.version();
    return out;
  }
  plan_.reset();
  Status st;
  ForEachPrefetching(pending_, committed_, [&](std::string_view key, RowLocation, uint64_t hash) {
    if (!st.ok()) return;
    auto row = committed_.Fetch(key, hash);
    if (!row.ok()) {
      st = row.status();
      return;
    }
    add(key, *row);
  });
  RETURN_IF_ERROR(st);
  return out;
}

Status PrimaryKeyIndex::CommitPending(bool state_saved) {
  Status st = ApplyPending(state_saved);
  if (!st.ok()) {
    // (Applied in part: the layer is no state ever saved, so Keep refuses
    // it and the next state is a base.)
    unsaved_.clear();
    unsaved_all_ = true;
  }
  return st;
}

Status PrimaryKeyIndex::ApplyPending(bool state_saved) {
  auto committed = [&](std::string_view key) {
    if (!duplicates_.empty()) duplicates_.erase(std::string(key));
    if (!state_saved) Unsaved(key);
  };
  auto commit = [&](std::string_view key, RowLocation at, uint64_t hash) {
    RETURN_IF_ERROR(FailPoint("key_index.commit"));
    std::optional<RowLocation> was;
    RETURN_IF_ERROR(at == kGone ? committed_.Erase(key, hash, &was)
                                : committed_.Assign(key, hash, at, &was));
    Recount(FileOf(was), at == kGone ? kNoFile : at.file);
    committed(key);
    return Status::OK();
  };
  if (plan_ && plan_->version == committed_.version()) {
    // (The layer is as Deletes found it: whether each key had a row says
    // what a change of it does, without reading the store again.)
    const Plan& plan = *plan_;
    committed_.Reserve(plan.changes.size(), MeanPendingKeyBytes());
    constexpr size_t kAhead = CommittedKeys::kPrefetchAhead;
    for (size_t i = 0; i < kAhead && i < plan.changes.size(); ++i) {
      committed_.Prefetch(plan.hashes[i]);
    }
    for (size_t i = 0; i < plan.changes.size(); ++i) {
      if (i + kAhead < plan.changes.size()) committed_.Prefetch(plan.hashes[i + kAhead]);
      const RowLocation at = plan.changes[i].second.at;
      RETURN_IF_ERROR(FailPoint("key_index.commit"));
      RETURN_IF_ERROR(committed_.Put(plan.key(i), plan.hashes[i],
                                     at == kGone ? std::nullopt : std::optional<RowLocation>(at),
                                     /*was_live=*/plan.was_file[i] != kNoFile));
      Recount(plan.was_file[i], at == kGone ? kNoFile : at.file);
      committed(plan.key(i));
    }
  } else if (committed_.spilled()) {
    // (In key order: a block of the store is read once for its keys.)
    committed_.Reserve(pending_.size(), MeanPendingKeyBytes());
    for (const auto& [prefix, c] : SortedPending()) {
      RETURN_IF_ERROR(commit(c.key, c.at, committed_.HashOf(c.key)));
    }
  } else {
    Status st;
    ForEachPrefetching(pending_, committed_,
                       [&](std::string_view key, RowLocation at, uint64_t hash) {
                         if (st.ok()) st = commit(key, at, hash);
                       });
    RETURN_IF_ERROR(st);
  }
  DiscardPending();
  if (state_saved) MarkSaved();
  return Status::OK();
}

int64_t PrimaryKeyIndex::MeanPendingKeyBytes() const {
  if (pending_.empty()) return 16;
  return pending_.key_bytes() / static_cast<int64_t>(pending_.size()) + 1;
}

void PrimaryKeyIndex::Unsaved(std::string_view key) {
  if (unsaved_all_) return;
  unsaved_.emplace(key);
  // A delta of most keys is a base's worth: past a quarter of them, or past
  // an eighth of the memory budget (the set takes about 64 bytes a key,
  // outside the committed layer's bound), the next state is a base and the
  // set is dropped.
  const auto n = static_cast<int64_t>(unsaved_.size());
  const int64_t budget = committed_.memory_bytes();
  if (n > 4096 &&
      (n * 4 > static_cast<int64_t>(committed_.size()) || (budget > 0 && n * 64 > budget / 8))) {
    unsaved_.clear();
    unsaved_all_ = true;
  }
}

std::optional<uint32_t> PrimaryKeyIndex::FileId(const std::string& path) const {
  auto it = file_ids_.find(path);
  if (it == file_ids_.end()) return std::nullopt;
  return it->second;
}

namespace {
bool In(const std::vector<bool>& files, uint32_t file) {
  return file < files.size() && files[file];
}
}  // namespace

Status PrimaryKeyIndex::ForEachRow(
    const std::function<void(std::string_view key, RowLocation at)>& fn) const {
  RETURN_IF_ERROR(committed_.ForEach(fn));
  for (const auto& [key, at] : duplicates_) fn(key, at);
  return Status::OK();
}

void PrimaryKeyIndex::Recount(uint32_t was, uint32_t now) {
  if (was == now) return;
  if (rows_in_file_.size() < files_.size()) rows_in_file_.resize(files_.size());
  if (was != kNoFile) --rows_in_file_[was];
  if (now != kNoFile) ++rows_in_file_[now];
}

size_t PrimaryKeyIndex::CountIn(const std::vector<bool>& files) const {
  int64_t n = 0;
  for (size_t f = 0; f < files.size() && f < rows_in_file_.size(); ++f) {
    if (files[f]) n += rows_in_file_[f];
  }
  return static_cast<size_t>(n);
}

void PrimaryKeyIndex::Vacated(const std::vector<bool>& files) {
  for (size_t f = 0; f < files.size() && f < rows_in_file_.size(); ++f) {
    if (files[f]) rows_in_file_[f] = 0;
  }
}

Result<size_t> PrimaryKeyIndex::Relocate(const std::vector<std::string_view>& keys,
                                         const std::vector<RowLocation>& to,
                                         const std::vector<bool>& files, bool* missed) {
  *missed = false;
  size_t moved = 0;
  if (!committed_.spilled()) {
    for (size_t i = 0; i < keys.size(); ++i) {
      const uint64_t hash = committed_.HashOf(keys[i]);
      ASSIGN_OR_RETURN(auto at, committed_.Find(keys[i], hash));
      if (!at || !In(files, at->file)) {
        *missed = true;  // (a key named twice has moved already: elsewhere now)
        return moved;
      }
      RETURN_IF_ERROR(committed_.Assign(keys[i], hash, to[i]));
      Recount(kNoFile, to[i].file);  // (out of `files`: Vacated)
      Unsaved(keys[i]);
      ++moved;
    }
    return moved;
  }
  struct Move {
    std::string_view key;
    RowLocation to;
  };
  std::vector<Move> sorted(keys.size());
  for (size_t i = 0; i < keys.size(); ++i) sorted[i] = {keys[i], to[i]};
  SortByKeyPrefix(&sorted, [](const Move& m) { return m.key; });
  std::vector<std::string_view> in_order(sorted.size());
  std::vector<uint64_t> hashes(sorted.size());
  int64_t key_bytes = 0;
  for (size_t i = 0; i < sorted.size(); ++i) {
    if (i > 0 && sorted[i].key == sorted[i - 1].key) {
      *missed = true;
      return moved;
    }
    in_order[i] = sorted[i].key;
    hashes[i] = committed_.HashOf(sorted[i].key);
    key_bytes += static_cast<int64_t>(sorted[i].key.size());
  }
  committed_.Reserve(sorted.size(),
                     sorted.empty() ? 16 : key_bytes / static_cast<int64_t>(sorted.size()) + 1);
  // (Trusted: the caller's count is the check; Put reads no store.)
  constexpr size_t kAhead = CommittedKeys::kPrefetchAhead;
  for (size_t i = 0; i < kAhead && i < sorted.size(); ++i) committed_.Prefetch(hashes[i]);
  for (size_t i = 0; i < sorted.size(); ++i) {
    if (i + kAhead < sorted.size()) committed_.Prefetch(hashes[i + kAhead]);
    RETURN_IF_ERROR(committed_.Put(in_order[i], hashes[i], sorted[i].to, /*was_live=*/true));
    Recount(kNoFile, sorted[i].to.file);
    Unsaved(in_order[i]);
    ++moved;
  }
  return moved;
}

void PrimaryKeyIndex::DiscardPending() {
  plan_.reset();
  pending_.Clear();
  superseded_.clear();
}

int64_t PrimaryKeyIndex::ApproxBytes() const {
  // A hash node of the unsaved set or of the duplicates: the next pointer,
  // the cached hash, the key object (and the value).
  constexpr int64_t kNode = 8 + 8 + sizeof(std::string) + 8;
  int64_t files = 0;
  for (const auto& f : files_) files += static_cast<int64_t>(f.size()) * 2 + 64;
  return committed_.bytes() + pending_.bytes() +
         static_cast<int64_t>(duplicates_.size() + unsaved_.size()) *
             (kNode + static_cast<int64_t>(sizeof(RowLocation))) +
         files;
}

}  // namespace sluice::operators
