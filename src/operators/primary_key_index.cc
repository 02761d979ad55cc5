#include "operators/primary_key_index.h"

#include "operators/aggregate.h"

namespace sluice::operators {

namespace {

// Heap bytes of a std::string key (beyond the object itself).
int64_t HeapBytes(const std::string& s) {
  return s.capacity() > 15 ? static_cast<int64_t>(s.capacity()) + 1 : 0;
}

}  // namespace

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
  auto [it, added] = committed_.try_emplace(std::string(key), at);
  if (added) {
    key_bytes_ += HeapBytes(it->first);
  } else {
    duplicates_.emplace(it->first, at);
  }
}

void PrimaryKeyIndex::ClearCommitted() {
  committed_.clear();
  duplicates_.clear();
  key_bytes_ = 0;
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
  for (auto& [key, at] : pending_) {
    if (at) keep(*at);
  }
  for (RowLocation& at : superseded_) keep(at);
  files_ = std::move(kept);
  file_ids_.clear();
  for (uint32_t i = 0; i < files_.size(); ++i) file_ids_.emplace(files_[i], i);
}

std::optional<RowLocation> PrimaryKeyIndex::Find(std::string_view key) const {
  auto it = committed_.find(std::string(key));
  if (it == committed_.end()) return std::nullopt;
  return it->second;
}

void PrimaryKeyIndex::Upsert(std::string_view key, RowLocation at) {
  auto [it, added] = pending_.try_emplace(std::string(key), at);
  if (added) return;
  if (it->second) superseded_.push_back(*it->second);
  it->second = at;
}

void PrimaryKeyIndex::Delete(std::string_view key) {
  auto [it, added] = pending_.try_emplace(std::string(key), std::nullopt);
  if (added) return;
  if (it->second) superseded_.push_back(*it->second);
  it->second = std::nullopt;
}

std::vector<RowLocation> PrimaryKeyIndex::Deletes() const {
  std::vector<RowLocation> out = superseded_;
  for (const auto& [key, at] : pending_) {
    if (auto c = committed_.find(key); c != committed_.end()) out.push_back(c->second);
    auto [begin, end] = duplicates_.equal_range(key);
    for (auto d = begin; d != end; ++d) out.push_back(d->second);
  }
  return out;
}

void PrimaryKeyIndex::SetCommitted(std::string_view key, RowLocation at) {
  auto [it, added] = committed_.try_emplace(std::string(key), at);
  if (added) {
    key_bytes_ += HeapBytes(it->first);
  } else {
    it->second = at;
  }
}

void PrimaryKeyIndex::EraseCommitted(std::string_view key) {
  if (auto it = committed_.find(std::string(key)); it != committed_.end()) {
    key_bytes_ -= HeapBytes(it->first);
    committed_.erase(it);
  }
}

void PrimaryKeyIndex::CommitPending() {
  for (auto& [key, at] : pending_) {
    if (!duplicates_.empty()) duplicates_.erase(key);
    if (at) {
      SetCommitted(key, *at);
    } else {
      EraseCommitted(key);
    }
    if (!unsaved_all_) unsaved_.insert(key);
  }
  DiscardPending();
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
  for (const auto& [key, at] : committed_) n += In(files, at.file) ? 1 : 0;
  return n;
}

bool PrimaryKeyIndex::Relocate(std::string_view key, const std::vector<bool>& files,
                               RowLocation to) {
  auto it = committed_.find(std::string(key));
  if (it == committed_.end() || !In(files, it->second.file)) return false;
  it->second = to;
  if (!unsaved_all_) unsaved_.insert(it->first);
  return true;
}

void PrimaryKeyIndex::DiscardPending() {
  pending_.clear();
  superseded_.clear();
}

int64_t PrimaryKeyIndex::ApproxBytes() const {
  // A node: the next pointer, the cached hash, the key object and the value;
  // a bucket pointer per element at load factor 1.
  constexpr int64_t kNode = 8 + 8 + sizeof(std::string) + sizeof(RowLocation) + 8;
  int64_t files = 0;
  for (const auto& f : files_) files += static_cast<int64_t>(f.size()) * 2 + 64;
  return static_cast<int64_t>(committed_.size() + duplicates_.size() + pending_.size() +
                              unsaved_.size()) *
             kNode +
         key_bytes_ + files;
}

}  // namespace sluice::operators
