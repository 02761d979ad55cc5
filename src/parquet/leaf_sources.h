// Leaf sources of the Parquet column writer (column_writer.cc): each turns a
// leaf Column's values at a slice's positions into the column's physical
// values (`T`), into a reused buffer. Internal to the writer.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "parquet/column_writer.h"
#include "parquet/statistics.h"

namespace sluice::parquet {

template <typename Stored, typename Physical>
struct NumericSource {
  using T = Physical;
  void Gather(const LeafSlice& s, std::vector<T>* out) {
    const Stored* data = s.values->data<Stored>();
    out->resize(static_cast<size_t>(s.num_values));
    T* dst = out->data();
    if (s.positions != nullptr) {
      for (int64_t k = 0; k < s.num_values; ++k) dst[k] = static_cast<T>(data[s.positions[k]]);
    } else if constexpr (std::is_same_v<Stored, T>) {
      if (s.num_values > 0) std::memcpy(dst, data + s.first, s.num_values * sizeof(T));
    } else {
      for (int64_t k = 0; k < s.num_values; ++k) dst[k] = static_cast<T>(data[s.first + k]);
    }
  }
};

struct BytesSource {
  using T = std::string_view;
  void Gather(const LeafSlice& s, std::vector<T>* out) {
    out->resize(static_cast<size_t>(s.num_values));
    for (int64_t k = 0; k < s.num_values; ++k) {
      (*out)[k] = s.values->GetBytes(s.positions ? s.positions[k] : s.first + k);
    }
  }
};

// Decimals stored as FIXED_LEN_BYTE_ARRAY: big-endian two's complement.
struct DecimalFixedSource {
  using T = std::string_view;
  int width = 16;
  std::string scratch;
  void Gather(const LeafSlice& s, std::vector<T>* out) {
    const int128_t* data = s.values->data<int128_t>();
    scratch.resize(static_cast<size_t>(s.num_values * width));
    out->resize(static_cast<size_t>(s.num_values));
    for (int64_t k = 0; k < s.num_values; ++k) {
      char* dst = scratch.data() + k * width;
      DecimalToFixedBytes(data[s.positions ? s.positions[k] : s.first + k], width, dst);
      (*out)[k] = std::string_view(dst, width);
    }
  }
};

}  // namespace sluice::parquet
