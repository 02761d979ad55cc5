// Comparisons, and the helpers every kernel shares (row errors, constant
// columns, powers of ten).
#include <array>
#include <cmath>
#include <cstring>

#include "expr/kernels.h"

namespace sluice::expr::internal {

void RowError(RowErrors* errors, const Node& node, int64_t row, std::string_view what) {
  if (errors->Failed(row)) return;
  errors->Fail(row, fmt::format("{}: {} in {}", node.where, what, node.text));
}

Column NullColumn(const TypePtr& type, int64_t n) {
  Column out(type);
  out.Reserve(n);
  for (int64_t i = 0; i < n; ++i) out.AppendNull();
  return out;
}

Column Broadcast(const Column& one, int64_t n) {
  if (one.IsNull(0)) return NullColumn(one.type(), n);
  Column out(one.type());
  if (one.type()->is_binary_like()) {
    std::string_view v = one.GetBytes(0);
    out.Reserve(n);
    for (int64_t i = 0; i < n; ++i) out.AppendBytes(v);
    return out;
  }
  int width = one.type()->value_width();
  out.ResizeFixed(n);
  auto* dst = out.mutable_data<uint8_t>();
  const auto* src = one.data<uint8_t>();
  for (int64_t i = 0; i < n; ++i) std::memcpy(dst + i * width, src, width);
  return out;
}

int128_t Pow10(int exponent) {
  static const auto kTable = [] {
    std::array<int128_t, 39> t{};
    t[0] = 1;
    for (size_t i = 1; i < t.size(); ++i) t[i] = t[i - 1] * 10;
    return t;
  }();
  return kTable[exponent];
}

namespace {

bool Holds(Op op, int c) {
  switch (op) {
    case Op::kEqual: return c == 0;
    case Op::kNotEqual: return c != 0;
    case Op::kLess: return c < 0;
    case Op::kLessEqual: return c <= 0;
    case Op::kGreater: return c > 0;
    default: return c >= 0;
  }
}

template <typename T>
void CompareFixed(Op op, const Column& a, const Column& b, const Active& active, Column* out) {
  const T* x = a.data<T>();
  const T* y = b.data<T>();
  for (int64_t i = 0; i < a.size(); ++i) {
    if (!IsActive(active, i) || a.IsNull(i) || b.IsNull(i)) {
      out->AppendNull();
    } else {
      out->AppendBool(Holds(op, ThreeWay(x[i], y[i])));
    }
  }
}

// Decimals of different scales (the binder leaves them so when their common
// type would need more than 38 digits): the side of the smaller scale is
// scaled up; when that leaves int128 its magnitude exceeds any 38-digit
// value, so its sign decides.
int CompareScaled(int128_t x, int x_scale, int128_t y, int y_scale) {
  if (x_scale > y_scale) return -CompareScaled(y, y_scale, x, x_scale);
  int128_t scaled;
  if (__builtin_mul_overflow(x, Pow10(y_scale - x_scale), &scaled)) return x < 0 ? -1 : 1;
  return ThreeWay(scaled, y);
}

}  // namespace

int CompareValues(const Column& a, int64_t i, const Column& b, int64_t j) {
  if (a.type()->id() == TypeId::kDecimal && a.type()->scale() != b.type()->scale()) {
    return CompareScaled(a.Value<int128_t>(i), a.type()->scale(), b.Value<int128_t>(j),
                         b.type()->scale());
  }
  return CompareRows(a, i, b, j);
}

Result<Column> EvalCompare(const Node& node, std::vector<Column>& args, const Active& active) {
  const Column& a = args[0];
  const Column& b = args[1];
  Column out(DataType::Boolean());
  out.Reserve(a.size());
  // Strings, and decimals of different scales (CompareValues scales them).
  bool by_value = a.type()->is_binary_like() ||
                  (a.type()->id() == TypeId::kDecimal && a.type()->scale() != b.type()->scale());
  if (by_value) {
    for (int64_t i = 0; i < a.size(); ++i) {
      if (!IsActive(active, i) || a.IsNull(i) || b.IsNull(i)) {
        out.AppendNull();
      } else {
        out.AppendBool(Holds(node.op, CompareValues(a, i, b, i)));
      }
    }
    return out;
  }
  if (a.type()->is_nested()) {
    return Status::Internal("{}: comparison of {}", node.where, a.type()->ToString());
  }
  VisitFixed(a.type()->id(), [&](auto t) {
    using T = decltype(t);
    CompareFixed<T>(node.op, a, b, active, &out);
  });
  return out;
}

}  // namespace sluice::expr::internal
