// PositionSet: the row positions of one data file that a delete removes, as
// deletion vectors, position delete files, row deletes, upserts and
// compaction exchange them.
//
// Invariant: the positions are sorted ascending, without repeats. A sorted
// vector (8 bytes a position, unions and differences in one linear merge)
// rather than a std::set (an allocation and 40 bytes a position): an upsert
// commit deleting a million rows spent a fifth of its CPU building and
// merging trees of positions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <vector>

namespace sluice::iceberg {

class PositionSet {
 public:
  using const_iterator = std::vector<int64_t>::const_iterator;

  PositionSet() = default;
  PositionSet(std::initializer_list<int64_t> positions);
  // Any order, repeats allowed; sorted input costs one pass.
  explicit PositionSet(std::vector<int64_t> positions);

  size_t size() const { return positions_.size(); }
  bool empty() const { return positions_.empty(); }
  const_iterator begin() const { return positions_.begin(); }
  const_iterator end() const { return positions_.end(); }
  const std::vector<int64_t>& values() const { return positions_; }
  bool Contains(int64_t position) const;

  // Adds the positions of `other` (the union).
  void Add(const PositionSet& other);
  // Removes the positions of `other` (the difference).
  void Remove(const PositionSet& other);

  bool operator==(const PositionSet& other) const = default;

 private:
  std::vector<int64_t> positions_;
};

// Merges the sorted runs of `v` that `bounds` delimit (0, the end of each
// run, ..., v->size()) into one sorted run, repeats kept: neighbours
// pairwise, round after round, so each value moves once a round and there
// are log2(runs) rounds (a file's deletes from many delete files).
void MergeSortedRuns(std::vector<int64_t>* v, std::vector<size_t> bounds);

}  // namespace sluice::iceberg
