#include "columnar/column.h"

#include <algorithm>
#include <bit>
#include <cassert>
#include <cstring>
#include <functional>

namespace sluice {

Column::Column(TypePtr type) : type_(std::move(type)) {
  switch (type_->id()) {
    case TypeId::kStruct:
      for (const Field& f : type_->fields()) children_.push_back(std::make_unique<Column>(f.type));
      break;
    case TypeId::kList:
    case TypeId::kMap:
      for (const Field& f : type_->fields()) children_.push_back(std::make_unique<Column>(f.type));
      offsets_.push_back(0);
      break;
    default:
      if (type_->is_binary_like()) offsets_.push_back(0);
  }
}

void Column::Reserve(int64_t n) {
  int w = type_->value_width();
  if (w > 0) values_.reserve(static_cast<size_t>(n * w));
  if (!offsets_.empty()) offsets_.reserve(static_cast<size_t>(n + 1));
}

void Column::EnsureValidity() {
  if (validity_.empty()) {
    // All rows so far are valid.
    validity_.assign(static_cast<size_t>((size_ + 8) / 8 + 64), 0xff);
  }
}

void Column::SetValidBit(int64_t i) {
  size_t byte = static_cast<size_t>(i >> 3);
  if (byte >= validity_.size()) validity_.resize(byte * 2 + 8, 0xff);
  validity_[byte] |= static_cast<uint8_t>(1u << (i & 7));
}

void Column::SetNull(int64_t i) {
  EnsureValidity();
  size_t byte = static_cast<size_t>(i >> 3);
  if (byte >= validity_.size()) validity_.resize(byte * 2 + 8, 0xff);
  uint8_t mask = static_cast<uint8_t>(1u << (i & 7));
  if (validity_[byte] & mask) {
    validity_[byte] &= static_cast<uint8_t>(~mask);
    ++null_count_;
  }
}

void Column::AppendNull() {
  int w = type_->value_width();
  if (w > 0) values_.resize(values_.size() + w, 0);
  switch (type_->id()) {
    case TypeId::kStruct:
      for (auto& c : children_) c->AppendNull();
      break;
    case TypeId::kList:
    case TypeId::kMap: offsets_.push_back(static_cast<uint32_t>(children_[0]->size())); break;
    default:
      if (type_->is_binary_like()) offsets_.push_back(static_cast<uint32_t>(heap_.size()));
  }
  SetNull(size_);
  ++size_;
}

void Column::AppendNulls(int64_t n) {
  if (n <= 0) return;
  const TypeId id = type_->id();
  if (id == TypeId::kStruct || id == TypeId::kList || id == TypeId::kMap) {
    for (int64_t i = 0; i < n; ++i) AppendNull();
    return;
  }
  const int w = type_->value_width();
  if (w > 0) values_.resize(values_.size() + static_cast<size_t>(n) * w, 0);
  if (type_->is_binary_like()) {
    offsets_.insert(offsets_.end(), static_cast<size_t>(n), static_cast<uint32_t>(heap_.size()));
  }
  EnsureValidity();
  const int64_t end = size_ + n;
  const size_t bytes = static_cast<size_t>((end + 7) >> 3);
  if (bytes > validity_.size()) validity_.resize(bytes * 2 + 8, 0xff);
  int64_t i = size_;
  for (; i < end && (i & 7) != 0; ++i) SetNull(i);  // up to a whole byte
  for (; i + 8 <= end; i += 8) {
    null_count_ += std::popcount(validity_[static_cast<size_t>(i >> 3)]);
    validity_[static_cast<size_t>(i >> 3)] = 0;
  }
  for (; i < end; ++i) SetNull(i);
  size_ = end;
}

void Column::AppendRaw(const void* src, int64_t n) {
  size_t bytes = static_cast<size_t>(n * type_->value_width());
  size_t pos = values_.size();
  values_.resize(pos + bytes);
  std::memcpy(values_.data() + pos, src, bytes);
  if (!validity_.empty()) {
    for (int64_t i = 0; i < n; ++i) SetValidBit(size_ + i);
  }
  size_ += n;
}

void Column::AppendBytesBulk(std::string_view heap, const uint32_t* offsets, int64_t n) {
  if (n <= 0) return;
  const uint32_t base = static_cast<uint32_t>(heap_.size()) - offsets[0];
  heap_.append(heap.data() + offsets[0], offsets[n] - offsets[0]);
  size_t pos = offsets_.size();
  offsets_.resize(pos + static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) offsets_[pos + i] = offsets[i + 1] + base;
  if (!validity_.empty()) {
    for (int64_t i = 0; i < n; ++i) SetValidBit(size_ + i);
  }
  size_ += n;
}

void Column::AppendRaw(std::vector<uint8_t>&& values, int64_t n) {
  if (size_ != 0 || values.size() != static_cast<size_t>(n * type_->value_width())) {
    AppendRaw(values.data(), n);
    return;
  }
  values_ = std::move(values);
  validity_.clear();
  size_ = n;
}

void Column::AppendBytesBulk(std::string&& heap, std::vector<uint32_t>&& offsets, int64_t n) {
  if (size_ != 0 || n <= 0 || offsets.size() != static_cast<size_t>(n) + 1 || offsets[0] != 0 ||
      offsets[n] != heap.size()) {
    AppendBytesBulk(std::string_view(heap), offsets.data(), n);
    return;
  }
  heap_ = std::move(heap);
  offsets_ = std::move(offsets);
  validity_.clear();
  size_ = n;
}

void Column::ResizeFixed(int64_t n) {
  values_.resize(static_cast<size_t>(n * type_->value_width()));
  size_ = n;
}

void Column::Clear() {
  size_ = 0;
  null_count_ = 0;
  validity_.clear();
  values_.clear();
  heap_.clear();
  bool has_offsets = !offsets_.empty();
  offsets_.clear();
  if (has_offsets) offsets_.push_back(0);
  for (auto& c : children_) c->Clear();
}

namespace {

// Whether a struct holds no list or map, at any depth.
bool FlatFields(const DataType& t) {
  for (const auto& f : t.fields()) {
    const TypeId id = f.type->id();
    if (id == TypeId::kList || id == TypeId::kMap) return false;
    if (id == TypeId::kStruct && !FlatFields(*f.type)) return false;
  }
  return true;
}

}  // namespace

void Column::SetValidFrom(int64_t from, int64_t to) {
  // Bits past the rows are 1 (what EnsureValidity and SetValidBit assume).
  for (int64_t i = from; i < to && static_cast<size_t>(i >> 3) < validity_.size(); ++i) {
    validity_[static_cast<size_t>(i >> 3)] |= static_cast<uint8_t>(1u << (i & 7));
  }
}

bool Column::KeepRowsInPlace(const std::vector<uint32_t>& rows) {
  const size_t n = rows.size();
  assert(std::adjacent_find(rows.begin(), rows.end(), std::greater_equal<>()) == rows.end() &&
         (n == 0 || rows.back() < static_cast<uint64_t>(size_)));
  switch (type_->id()) {
    case TypeId::kList:
    case TypeId::kMap: return false;
    case TypeId::kStruct:
      if (!FlatFields(*type_)) return false;  // (checked before any child moves)
      for (auto& c : children_) c->KeepRowsInPlace(rows);
      break;
    default:
      if (type_->is_binary_like()) {
        // Row rows[i]'s old bounds are offsets_[rows[i]] and offsets_[rows[i] + 1]:
        // entries past i, not yet rewritten, or offsets_[i] itself when
        // rows[i] == i, which (the rows ascending) means no row before it
        // went, so it was rewritten to the value it had.
        uint32_t out = 0;
        for (size_t i = 0; i < n; ++i) {
          const uint32_t begin = offsets_[rows[i]], end = offsets_[rows[i] + 1];
          if (begin != out) std::memmove(heap_.data() + out, heap_.data() + begin, end - begin);
          out += end - begin;
          offsets_[i + 1] = out;
        }
        offsets_.resize(n + 1);
        heap_.resize(out);
      } else {
        const size_t w = static_cast<size_t>(type_->value_width());
        for (size_t i = 0; i < n; ++i) {
          if (rows[i] != i) std::memcpy(values_.data() + i * w, values_.data() + rows[i] * w, w);
        }
        values_.resize(n * w);
      }
  }
  if (!validity_.empty()) {
    // Bit i is written after bit rows[i] >= i is read, and never read again.
    null_count_ = 0;
    for (size_t i = 0; i < n; ++i) {
      const bool valid = IsValid(rows[i]);
      if (valid) {
        validity_[i >> 3] |= static_cast<uint8_t>(1u << (i & 7));
      } else {
        validity_[i >> 3] &= static_cast<uint8_t>(~(1u << (i & 7)));
        ++null_count_;
      }
    }
    SetValidFrom(static_cast<int64_t>(n), size_);
  }
  size_ = static_cast<int64_t>(n);
  return true;
}

void Column::Truncate(int64_t n) {
  if (n > size_) return;
  if (n < size_) {
    if (!validity_.empty()) {
      for (int64_t i = n; i < size_; ++i) null_count_ -= IsNull(i) ? 1 : 0;
      SetValidFrom(n, size_);
    }
    int w = type_->value_width();
    if (w > 0) values_.resize(static_cast<size_t>(n * w));
    if (!offsets_.empty()) {
      if (type_->is_binary_like()) heap_.resize(offsets_[n]);
      offsets_.resize(static_cast<size_t>(n + 1));
    }
    size_ = n;
  }
  // Children may hold elements of a row whose parent was never finished, even
  // when this column itself has no extra rows.
  switch (type_->id()) {
    case TypeId::kStruct:
      for (auto& c : children_) c->Truncate(n);
      break;
    case TypeId::kList:
    case TypeId::kMap:
      for (auto& c : children_) c->Truncate(offsets_[n]);
      break;
    default: break;
  }
}

int64_t Column::MemoryUsage() const {
  int64_t n = static_cast<int64_t>(validity_.capacity() + values_.capacity() +
                                   offsets_.capacity() * 4 + heap_.capacity());
  for (const auto& c : children_) n += c->MemoryUsage();
  return n;
}

Batch Batch::Make(std::shared_ptr<const Schema> schema) {
  Batch b;
  for (const Field& f : schema->fields) b.columns.emplace_back(f.type);
  b.schema = std::move(schema);
  return b;
}

int64_t Batch::MemoryUsage() const {
  int64_t n = 0;
  for (const auto& c : columns) n += c.MemoryUsage();
  return n;
}

}  // namespace sluice
