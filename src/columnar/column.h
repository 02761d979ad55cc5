// Column and Batch: the in-memory columnar format every sluice module exchanges.
//
// Physical layout of a Column by type:
//   boolean                         uint8_t per value (0 or 1)
//   int, date                       int32_t
//   long, time, timestamp*(_ns)     int64_t (µs, or ns for the _ns types)
//   float, double                   float, double
//   decimal(p,s)                    __int128 unscaled value
//   string, binary, fixed, uuid     offsets (size()+1 uint32) into a byte heap
//   struct                          one child Column per member, same size()
//   list                            offsets (size()+1) into child(0)
//   map                             offsets (size()+1) into child(0)=keys, child(1)=values
// Validity is a bitmap (bit set = valid), allocated at the first null. A null
// slot holds a zero value, an empty byte string or an empty list; a null struct
// has null children. Columns are move-only values; not thread-safe for writes.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "columnar/types.h"

namespace sluice {

using int128_t = __int128;

class Column {
 public:
  explicit Column(TypePtr type);
  Column(Column&&) = default;
  Column& operator=(Column&&) = default;
  Column(const Column&) = delete;
  Column& operator=(const Column&) = delete;

  const TypePtr& type() const { return type_; }
  int64_t size() const { return size_; }
  int64_t null_count() const { return null_count_; }
  bool IsValid(int64_t i) const { return validity_.empty() || (validity_[i >> 3] >> (i & 7)) & 1; }
  bool IsNull(int64_t i) const { return !IsValid(i); }

  // Fixed-width values; T must match the physical type above.
  template <typename T>
  const T* data() const {
    return reinterpret_cast<const T*>(values_.data());
  }
  template <typename T>
  T* mutable_data() {
    return reinterpret_cast<T*>(values_.data());
  }
  template <typename T>
  T Value(int64_t i) const {
    T v;
    std::memcpy(&v, values_.data() + i * sizeof(T), sizeof(T));
    return v;
  }
  bool GetBool(int64_t i) const { return values_[i] != 0; }

  // Bytes of a string/binary/fixed/uuid value.
  std::string_view GetBytes(int64_t i) const {
    return std::string_view(heap_.data() + offsets_[i], offsets_[i + 1] - offsets_[i]);
  }
  // list/map: element range [ListBegin(i), ListEnd(i)) in child(0) (and child(1)).
  uint32_t ListBegin(int64_t i) const { return offsets_[i]; }
  uint32_t ListEnd(int64_t i) const { return offsets_[i + 1]; }
  const std::vector<uint32_t>& offsets() const { return offsets_; }
  const std::string& heap() const { return heap_; }

  int num_children() const { return static_cast<int>(children_.size()); }
  const Column& child(int i) const { return *children_[i]; }
  Column* mutable_child(int i) { return children_[i].get(); }

  // ---- Building. Append one value per row, matching the physical type. ----
  void Reserve(int64_t n);
  // Room for `bytes` more bytes of byte values (string/binary/fixed/uuid).
  void ReserveBytes(int64_t bytes) {
    if (bytes > 0) heap_.reserve(heap_.size() + static_cast<size_t>(bytes));
  }
  // Appends a null: zero value, empty bytes/list; for a struct also a null in each child.
  void AppendNull();
  // Appends `n` nulls, as n AppendNull calls would, at once for a column of
  // primitive or byte values (a column no row of a batch has a value in).
  void AppendNulls(int64_t n);
  template <typename T>
  void Append(T v) {
    size_t pos = values_.size();
    values_.resize(pos + sizeof(T));
    std::memcpy(values_.data() + pos, &v, sizeof(T));
    MarkValid();
  }
  void AppendBool(bool v) {
    values_.push_back(v ? 1 : 0);
    MarkValid();
  }
  void AppendBytes(std::string_view v) {
    heap_.append(v);
    offsets_.push_back(static_cast<uint32_t>(heap_.size()));
    MarkValid();
  }
  // list/map: append the entry's elements to the child column(s) first, then
  // call this to close the entry. struct: append one value to every child, then
  // call this to mark the struct row valid.
  void FinishNested() {
    if (type_->id() != TypeId::kStruct) {
      offsets_.push_back(static_cast<uint32_t>(children_[0]->size()));
    }
    MarkValid();
  }
  // Appends n values copied raw from `src` (fixed-width types), all valid.
  void AppendRaw(const void* src, int64_t n);
  // Appends n byte values (string/binary/fixed/uuid), all valid: value i is
  // heap[offsets[i] - offsets[0], offsets[i + 1] - offsets[0]). Bulk AppendBytes.
  void AppendBytesBulk(std::string_view heap, const uint32_t* offsets, int64_t n);
  // The same, taking the buffers instead of copying them when the column is
  // empty (`values`: n values; `offsets`: n + 1 entries). The buffers are left
  // valid but unspecified.
  void AppendRaw(std::vector<uint8_t>&& values, int64_t n);
  void AppendBytesBulk(std::string&& heap, std::vector<uint32_t>&& offsets, int64_t n);
  // Sets the number of fixed-width values and marks them all valid; the caller
  // fills mutable_data() afterwards. Only on an empty column.
  void ResizeFixed(int64_t n);
  // Sets the validity of row i (after it has been appended).
  void SetNull(int64_t i);

  void Clear();
  // Keeps only rows `rows` (strictly ascending, each below size()), moving
  // them to the front of the buffers it holds: no allocation, and the
  // buffers keep their capacity. Flat columns and structs of them; false
  // (the column unchanged) for a list or map, or a struct holding one.
  bool KeepRowsInPlace(const std::vector<uint32_t>& rows);
  // Drops rows [n, size()) and the child elements they own (n <= size()), so a
  // decoder can undo a partly appended row.
  void Truncate(int64_t n);
  // Approximate heap bytes held.
  int64_t MemoryUsage() const;

 private:
  void MarkValid() {
    if (!validity_.empty()) SetValidBit(size_);
    ++size_;
  }
  void SetValidBit(int64_t i);
  // Sets the validity bits of rows [from, to) (dropped rows: bits past the
  // rows are 1).
  void SetValidFrom(int64_t from, int64_t to);
  void EnsureValidity();

  TypePtr type_;
  int64_t size_ = 0;
  int64_t null_count_ = 0;
  std::vector<uint8_t> validity_;
  std::vector<uint8_t> values_;
  std::vector<uint32_t> offsets_;  // bytes/list/map: size_+1 entries, first is 0
  std::string heap_;
  std::vector<std::unique_ptr<Column>> children_;
};

// A set of rows: one Column per top-level field of the schema.
struct Batch {
  std::shared_ptr<const Schema> schema;
  std::vector<Column> columns;

  static Batch Make(std::shared_ptr<const Schema> schema);
  int64_t num_rows() const { return columns.empty() ? 0 : columns[0].size(); }
  int64_t MemoryUsage() const;
};

}  // namespace sluice
