#include "pipeline/decoded_columns.h"

#include <algorithm>

namespace sluice::pipeline {

DecodedColumns::DecodedColumns(std::shared_ptr<const Schema> source, const std::vector<bool>& read)
    : source_(std::move(source)), decoded_(source_) {
  const size_t n = source_->fields.size();
  std::vector<bool> keep(n, read.empty());
  bool any = false;
  for (size_t i = 0; i < n && i < read.size(); ++i) {
    keep[i] = read[i];
    if (read[i]) any = true;
  }
  // A pipeline that reads no column still counts the records' rows: it
  // decodes the first column.
  if (!any && n > 0) keep[0] = true;
  if (std::find(keep.begin(), keep.end(), false) == keep.end()) return;
  auto narrow = std::make_shared<Schema>(*source_);
  narrow->fields.clear();
  for (size_t i = 0; i < n; ++i) {
    if (keep[i]) {
      from_.push_back(static_cast<int>(narrow->fields.size()));
      narrow->fields.push_back(source_->fields[i]);
    } else {
      from_.push_back(-1);
    }
  }
  decoded_ = std::move(narrow);
}

Batch DecodedColumns::Widen(Batch rows) const {
  if (decoded_ == source_) return rows;
  const int64_t n = rows.num_rows();
  Batch out;
  out.schema = source_;
  out.columns.reserve(from_.size());
  for (size_t i = 0; i < from_.size(); ++i) {
    if (from_[i] >= 0) {
      out.columns.push_back(std::move(rows.columns[from_[i]]));
    } else {
      Column nulls(source_->fields[i].type);
      nulls.AppendNulls(n);
      out.columns.push_back(std::move(nulls));
    }
  }
  return out;
}

}  // namespace sluice::pipeline
