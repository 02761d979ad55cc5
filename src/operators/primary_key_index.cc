#include "operators/primary_key_index.h"

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

void PrimaryKeyIndex::Load(std::string_view key, RowLocation at) {
  auto [row, added] = committed_.Insert(key, at);
  if (!added) duplicates_.emplace(std::string(key), at);
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
  file_ids_.clear();
  for (uint32_t i = 0; i < files_.size(); ++i) file_ids_.emplace(files_[i], i);
}

std::optional<RowLocation> PrimaryKeyIndex::Find(std::string_view key) const {
  const RowLocation* at = committed_.Find(key);
  if (at == nullptr) return std::nullopt;
  return *at;
}

void PrimaryKeyIndex::Change(std::string_view key, RowLocation at) {
  auto [row, added] = pending_.Insert(key, at);
  if (added) return;
  if (*row != kGone) superseded_.push_back(*row);
  *row = at;
}

void PrimaryKeyIndex::Upsert(std::string_view key, RowLocation at) { Change(key, at); }

void PrimaryKeyIndex::Delete(std::string_view key) { Change(key, kGone); }

std::vector<RowLocation> PrimaryKeyIndex::Deletes() const {
  std::vector<RowLocation> out = superseded_;
  ForEachPrefetching(pending_, committed_, [&](std::string_view key, RowLocation, uint64_t hash) {
    if (const RowLocation* c = committed_.Find(key, hash)) {
      out.push_back(*c);
    }
    if (duplicates_.empty()) return;
    auto [begin, end] = duplicates_.equal_range(std::string(key));
    for (auto d = begin; d != end; ++d) out.push_back(d->second);
  });
  return out;
}

void PrimaryKeyIndex::CommitPending(bool state_saved) {
  ForEachPrefetching(pending_, committed_,
                     [&](std::string_view key, RowLocation at, uint64_t hash) {
                       if (!duplicates_.empty()) duplicates_.erase(std::string(key));
                       if (at == kGone) {
                         committed_.Erase(key, hash);
                       } else {
                         *committed_.Insert(key, at, hash).first = at;
                       }
                       if (!unsaved_all_ && !state_saved) unsaved_.emplace(key);
                     });
  DiscardPending();
  if (state_saved) MarkSaved();
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

size_t PrimaryKeyIndex::CountIn(const std::vector<bool>& files) const {
  size_t n = 0;
  committed_.ForEach([&](std::string_view, const RowLocation& at) { n += In(files, at.file); });
  return n;
}

bool PrimaryKeyIndex::Relocate(std::string_view key, const std::vector<bool>& files,
                               RowLocation to) {
  RowLocation* at = committed_.Find(key);
  if (at == nullptr || !In(files, at->file)) return false;
  *at = to;
  if (!unsaved_all_) unsaved_.emplace(key);
  return true;
}

void PrimaryKeyIndex::DiscardPending() {
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
