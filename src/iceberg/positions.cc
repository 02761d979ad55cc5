#include "iceberg/positions.h"

#include <algorithm>
#include <iterator>

namespace sluice::iceberg {

PositionSet::PositionSet(std::initializer_list<int64_t> positions)
    : PositionSet(std::vector<int64_t>(positions)) {}

PositionSet::PositionSet(std::vector<int64_t> positions) : positions_(std::move(positions)) {
  if (!std::is_sorted(positions_.begin(), positions_.end())) {
    std::sort(positions_.begin(), positions_.end());
  }
  positions_.erase(std::unique(positions_.begin(), positions_.end()), positions_.end());
}

bool PositionSet::Contains(int64_t position) const {
  return std::binary_search(positions_.begin(), positions_.end(), position);
}

void PositionSet::Add(const PositionSet& other) {
  if (other.empty()) return;
  if (positions_.empty() || positions_.back() < other.positions_.front()) {
    positions_.insert(positions_.end(), other.begin(), other.end());
    return;
  }
  std::vector<int64_t> merged;
  merged.reserve(positions_.size() + other.size());
  std::set_union(positions_.begin(), positions_.end(), other.begin(), other.end(),
                 std::back_inserter(merged));
  positions_ = std::move(merged);
}

void PositionSet::Remove(const PositionSet& other) {
  if (other.empty() || positions_.empty()) return;
  // In place: the write cursor never passes the read cursor.
  auto out = positions_.begin();
  auto drop = other.begin();
  for (auto in = positions_.begin(); in != positions_.end(); ++in) {
    while (drop != other.end() && *drop < *in) ++drop;
    if (drop != other.end() && *drop == *in) continue;
    *out++ = *in;
  }
  positions_.erase(out, positions_.end());
}

void MergeSortedRuns(std::vector<int64_t>* v, std::vector<size_t> bounds) {
  while (bounds.size() > 2) {
    std::vector<size_t> next{0};
    for (size_t i = 0; i + 1 < bounds.size(); i += 2) {
      const size_t begin = bounds[i], mid = bounds[i + 1];
      const size_t end = i + 2 < bounds.size() ? bounds[i + 2] : mid;
      std::inplace_merge(v->begin() + static_cast<std::ptrdiff_t>(begin),
                         v->begin() + static_cast<std::ptrdiff_t>(mid),
                         v->begin() + static_cast<std::ptrdiff_t>(end));
      next.push_back(end);
    }
    bounds = std::move(next);
  }
}

}  // namespace sluice::iceberg
