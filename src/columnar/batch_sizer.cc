#include "columnar/batch_sizer.h"

#include <algorithm>

namespace sluice {

namespace {
// The margin over the last batch's bytes per input byte.
constexpr double kMargin = 1.1;
}  // namespace

void BatchSizer::Reserve(Batch* b, int64_t rows, int64_t input_bytes) const {
  for (size_t i = 0; i < b->columns.size(); ++i) {
    Column& c = b->columns[i];
    c.Reserve(rows);
    if (i < bytes_per_input_byte_.size() && bytes_per_input_byte_[i] > 0) {
      c.ReserveBytes(static_cast<int64_t>(bytes_per_input_byte_[i] * kMargin *
                                          static_cast<double>(input_bytes)));
    }
  }
}

void BatchSizer::Learn(const Batch& b, int64_t input_bytes) {
  if (input_bytes <= 0) return;
  bytes_per_input_byte_.assign(b.columns.size(), 0);
  for (size_t i = 0; i < b.columns.size(); ++i) {
    const Column& c = b.columns[i];
    if (!c.type()->is_binary_like()) continue;
    // (at most one byte per input byte: a hint gone wrong stays bounded)
    bytes_per_input_byte_[i] =
        std::min(1.0, static_cast<double>(c.heap().size()) / static_cast<double>(input_bytes));
  }
}

}  // namespace sluice
