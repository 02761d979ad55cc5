// Arithmetic (+ - * / % and unary -) and math functions (abs, round, floor,
// ceil) on INT, BIGINT, DOUBLE and DECIMAL. Integer and decimal results
// outside their type are row errors; so is / or % by zero, for doubles too.
#include <cmath>
#include <limits>

#include "columnar/value_format.h"
#include "expr/kernels.h"

namespace sluice::expr::internal {
namespace {

// Rounds n / d half away from zero (d > 0).
int128_t DivRound(int128_t n, int128_t d) {
  int128_t q = n / d, r = n % d;
  if (r < 0) r = -r;
  if (2 * r >= d) q += n < 0 ? -1 : 1;
  return q;
}

int128_t FloorDiv(int128_t n, int128_t d) {
  int128_t q = n / d;
  if (n % d != 0 && n < 0) --q;
  return q;
}

// Applies `f(x, y, &r)` (returns an error text or nullptr) to every row that
// is active with both arguments valid.
template <typename T, typename F>
Column Loop2(const Node& node, const Column& a, const Column& b, RowErrors* errors,
             const Active& active, F&& f) {
  int64_t n = a.size();
  Column out(node.type);
  out.ResizeFixed(n);
  T* o = out.mutable_data<T>();
  const T* x = a.data<T>();
  const T* y = b.data<T>();
  bool nullable = a.null_count() > 0 || b.null_count() > 0 || !active.empty();
  for (int64_t i = 0; i < n; ++i) {
    if (nullable && (!IsActive(active, i) || a.IsNull(i) || b.IsNull(i))) {
      out.SetNull(i);
      continue;
    }
    if (const char* error = f(x[i], y[i], &o[i])) {
      RowError(errors, node, i, error);
      out.SetNull(i);
    }
  }
  return out;
}

template <typename T, typename F>
Column Loop1(const Node& node, const Column& a, RowErrors* errors, const Active& active, F&& f) {
  int64_t n = a.size();
  Column out(node.type);
  out.ResizeFixed(n);
  T* o = out.mutable_data<T>();
  const T* x = a.data<T>();
  for (int64_t i = 0; i < n; ++i) {
    if (!IsActive(active, i) || a.IsNull(i)) {
      out.SetNull(i);
      continue;
    }
    if (const char* error = f(x[i], &o[i])) {
      RowError(errors, node, i, error);
      out.SetNull(i);
    }
  }
  return out;
}

constexpr const char* kOverflow = "integer overflow";
constexpr const char* kDecimalOverflow = "decimal overflow";
constexpr const char* kDivByZero = "division by zero";

template <typename T>
Column IntegerOp(const Node& node, const Column& a, const Column& b, RowErrors* e,
                 const Active& act) {
  switch (node.op) {
    case Op::kAdd:
      return Loop2<T>(node, a, b, e, act, [](T x, T y, T* r) {
        return __builtin_add_overflow(x, y, r) ? kOverflow : nullptr;
      });
    case Op::kSubtract:
      return Loop2<T>(node, a, b, e, act, [](T x, T y, T* r) {
        return __builtin_sub_overflow(x, y, r) ? kOverflow : nullptr;
      });
    case Op::kMultiply:
      return Loop2<T>(node, a, b, e, act, [](T x, T y, T* r) {
        return __builtin_mul_overflow(x, y, r) ? kOverflow : nullptr;
      });
    case Op::kDivide:
      return Loop2<T>(node, a, b, e, act, [](T x, T y, T* r) -> const char* {
        if (y == 0) return kDivByZero;
        if (y == -1 && x == std::numeric_limits<T>::min()) return kOverflow;
        *r = x / y;
        return nullptr;
      });
    default:  // kModulo
      return Loop2<T>(node, a, b, e, act, [](T x, T y, T* r) -> const char* {
        if (y == 0) return kDivByZero;
        *r = y == -1 ? 0 : x % y;
        return nullptr;
      });
  }
}

Column DoubleOp(const Node& node, const Column& a, const Column& b, RowErrors* e,
                const Active& act) {
  switch (node.op) {
    case Op::kAdd:
      return Loop2<double>(node, a, b, e, act, [](double x, double y, double* r) {
        *r = x + y;
        return nullptr;
      });
    case Op::kSubtract:
      return Loop2<double>(node, a, b, e, act, [](double x, double y, double* r) {
        *r = x - y;
        return nullptr;
      });
    case Op::kMultiply:
      return Loop2<double>(node, a, b, e, act, [](double x, double y, double* r) {
        *r = x * y;
        return nullptr;
      });
    case Op::kDivide:
      return Loop2<double>(node, a, b, e, act, [](double x, double y, double* r) -> const char* {
        if (y == 0) return kDivByZero;
        *r = x / y;
        return nullptr;
      });
    default:
      return Loop2<double>(node, a, b, e, act, [](double x, double y, double* r) -> const char* {
        if (y == 0) return kDivByZero;
        *r = std::fmod(x, y);
        return nullptr;
      });
  }
}

// Both arguments are at the result's scale for + - %; for * their scales add
// up to it (the binder arranged that).
Column DecimalOp(const Node& node, const Column& a, const Column& b, RowErrors* e,
                 const Active& act) {
  int128_t max = DecimalMaxUnscaled(node.type->precision());
  auto check = [max](int128_t v) { return v > max || v < -max ? kDecimalOverflow : nullptr; };
  switch (node.op) {
    case Op::kAdd:
      return Loop2<int128_t>(node, a, b, e, act, [&](int128_t x, int128_t y, int128_t* r) {
        return __builtin_add_overflow(x, y, r) ? kDecimalOverflow : check(*r);
      });
    case Op::kSubtract:
      return Loop2<int128_t>(node, a, b, e, act, [&](int128_t x, int128_t y, int128_t* r) {
        return __builtin_sub_overflow(x, y, r) ? kDecimalOverflow : check(*r);
      });
    case Op::kMultiply:
      return Loop2<int128_t>(node, a, b, e, act, [&](int128_t x, int128_t y, int128_t* r) {
        // Factors within 64 bits (the usual case) multiply without overflow
        // in 128 and skip the costlier overflow-checked 128-bit product.
        if (x == static_cast<int64_t>(x) && y == static_cast<int64_t>(y)) {
          *r = int128_t{static_cast<int64_t>(x)} * static_cast<int64_t>(y);
          return check(*r);
        }
        return __builtin_mul_overflow(x, y, r) ? kDecimalOverflow : check(*r);
      });
    default:  // kModulo (decimal / is computed in DOUBLE)
      return Loop2<int128_t>(node, a, b, e, act,
                             [](int128_t x, int128_t y, int128_t* r) -> const char* {
                               if (y == 0) return kDivByZero;
                               *r = x % y;
                               return nullptr;
                             });
  }
}

template <typename T>
Column Negate(const Node& node, const Column& a, RowErrors* e, const Active& act) {
  return Loop1<T>(node, a, e, act, [](T x, T* r) -> const char* {
    if constexpr (std::is_integral_v<T>) {
      if (x == std::numeric_limits<T>::min()) return kOverflow;
    }
    *r = -x;
    return nullptr;
  });
}

template <typename T>
Column IntegerMath(const Node& node, const Column& a, RowErrors* e, const Active& act) {
  switch (node.op) {
    case Op::kAbs:
      return Loop1<T>(node, a, e, act, [](T x, T* r) -> const char* {
        if (x == std::numeric_limits<T>::min()) return kOverflow;
        *r = x < 0 ? -x : x;
        return nullptr;
      });
    case Op::kRound:
      if (node.round_digits < 0) {
        int128_t unit = node.round_digits < -38 ? 0 : Pow10(-node.round_digits);
        return Loop1<T>(node, a, e, act, [unit](T x, T* r) -> const char* {
          int128_t v = unit == 0 ? 0 : DivRound(x, unit) * unit;
          if (v > std::numeric_limits<T>::max() || v < std::numeric_limits<T>::min()) {
            return kOverflow;
          }
          *r = static_cast<T>(v);
          return nullptr;
        });
      }
      [[fallthrough]];
    default:  // floor, ceil, round to >= 0 digits: the value itself
      return Loop1<T>(node, a, e, act, [](T x, T* r) -> const char* {
        *r = x;
        return nullptr;
      });
  }
}

Column DoubleMath(const Node& node, const Column& a, RowErrors* e, const Active& act) {
  switch (node.op) {
    case Op::kAbs:
      return Loop1<double>(node, a, e, act, [](double x, double* r) {
        *r = std::fabs(x);
        return nullptr;
      });
    case Op::kFloor:
      return Loop1<double>(node, a, e, act, [](double x, double* r) {
        *r = std::floor(x);
        return nullptr;
      });
    case Op::kCeil:
      return Loop1<double>(node, a, e, act, [](double x, double* r) {
        *r = std::ceil(x);
        return nullptr;
      });
    default: {
      double scale = std::pow(10.0, node.round_digits);
      return Loop1<double>(node, a, e, act, [scale](double x, double* r) {
        double scaled = std::round(x * scale) / scale;
        *r = std::isfinite(scaled) ? scaled : x;  // huge digits: x is already exact
        return nullptr;
      });
    }
  }
}

// The argument DECIMAL(p, s); the result's scale is node.type->scale().
Column DecimalMath(const Node& node, const Column& a, RowErrors* e, const Active& act) {
  int s = a.type()->scale();
  int128_t max = DecimalMaxUnscaled(node.type->precision());
  auto check = [max](int128_t v) { return v > max || v < -max ? kDecimalOverflow : nullptr; };
  switch (node.op) {
    case Op::kAbs:
      return Loop1<int128_t>(node, a, e, act, [](int128_t x, int128_t* r) {
        *r = x < 0 ? -x : x;
        return nullptr;
      });
    case Op::kFloor:
    case Op::kCeil: {
      int128_t unit = Pow10(s);
      bool ceil = node.op == Op::kCeil;
      return Loop1<int128_t>(node, a, e, act, [=](int128_t x, int128_t* r) {
        *r = ceil ? -FloorDiv(-x, unit) : FloorDiv(x, unit);
        return check(*r);
      });
    }
    default: {
      int d = node.round_digits;
      if (d >= s) {
        return Loop1<int128_t>(node, a, e, act, [](int128_t x, int128_t* r) {
          *r = x;
          return nullptr;
        });
      }
      int drop = s - d;  // digits rounded away
      int128_t unit = drop > 38 ? 0 : Pow10(drop);
      int128_t back = d < 0 ? Pow10(std::min(-d, 38)) : 1;
      return Loop1<int128_t>(node, a, e, act, [=](int128_t x, int128_t* r) -> const char* {
        int128_t q = unit == 0 ? 0 : DivRound(x, unit);
        if (__builtin_mul_overflow(q, back, r)) return kDecimalOverflow;
        return check(*r);
      });
    }
  }
}

}  // namespace

Result<Column> EvalArithmetic(const Node& node, std::vector<Column>& args, RowErrors* errors,
                              const Active& active) {
  TypeId id = args[0].type()->id();
  if (node.op == Op::kNegate) {
    switch (id) {
      case TypeId::kInt: return Negate<int32_t>(node, args[0], errors, active);
      case TypeId::kLong: return Negate<int64_t>(node, args[0], errors, active);
      case TypeId::kDouble: return Negate<double>(node, args[0], errors, active);
      case TypeId::kDecimal: return Negate<int128_t>(node, args[0], errors, active);
      default: break;
    }
  } else {
    switch (id) {
      case TypeId::kInt: return IntegerOp<int32_t>(node, args[0], args[1], errors, active);
      case TypeId::kLong: return IntegerOp<int64_t>(node, args[0], args[1], errors, active);
      case TypeId::kDouble: return DoubleOp(node, args[0], args[1], errors, active);
      case TypeId::kDecimal: return DecimalOp(node, args[0], args[1], errors, active);
      default: break;
    }
  }
  return Status::Internal("{}: arithmetic on {}", node.where, args[0].type()->ToString());
}

Result<Column> EvalMath(const Node& node, std::vector<Column>& args, RowErrors* errors,
                        const Active& active) {
  switch (args[0].type()->id()) {
    case TypeId::kInt: return IntegerMath<int32_t>(node, args[0], errors, active);
    case TypeId::kLong: return IntegerMath<int64_t>(node, args[0], errors, active);
    case TypeId::kDouble: return DoubleMath(node, args[0], errors, active);
    case TypeId::kDecimal: return DecimalMath(node, args[0], errors, active);
    default: return Status::Internal("{}: math on {}", node.where, args[0].type()->ToString());
  }
}

}  // namespace sluice::expr::internal
