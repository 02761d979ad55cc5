#include "operators/aggregate.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>

#include "columnar/sql_schema.h"
#include "columnar/value_format.h"
#include "operators/aggregate_internal.h"

namespace sluice::operators {
namespace {

using internal::CompareBest;
using internal::EntryBytes;
using internal::kCountEntry;
using internal::kHllBits;
using internal::kRegisters;
using internal::kSetEntry;
using internal::kTreeEntry;

constexpr size_t kExactHashes = 256;  // approx_count_distinct is exact up to here

bool IsInteger(TypeId id) { return id == TypeId::kInt || id == TypeId::kLong; }

// The value of a fixed column row as the physical bytes (float widened to double).
std::string FixedBytes(const Column& c, int64_t row) {
  if (c.type()->id() == TypeId::kFloat) {
    double d = c.Value<float>(row);
    return std::string(reinterpret_cast<const char*>(&d), sizeof(d));
  }
  if (c.type()->id() == TypeId::kBoolean) return std::string(1, c.GetBool(row) ? 1 : 0);
  int w = c.type()->value_width();
  return std::string(reinterpret_cast<const char*>(c.data<uint8_t>() + row * w), w);
}

}  // namespace

namespace internal {

// Orders two min/max candidates of `type` (physical bytes as best_ holds them).
int CompareBest(const DataType& type, std::string_view a, std::string_view b) {
  auto three = [](auto x, auto y) { return x < y ? -1 : (y < x ? 1 : 0); };
  auto load = [](std::string_view s, auto* v) { std::memcpy(v, s.data(), sizeof(*v)); };
  switch (type.id()) {
    case TypeId::kString:
    case TypeId::kBinary:
    case TypeId::kUuid:
    case TypeId::kFixed: {
      int c = a.compare(b);
      return c < 0 ? -1 : (c > 0 ? 1 : 0);
    }
    case TypeId::kBoolean: return three(a[0], b[0]);
    case TypeId::kInt:
    case TypeId::kDate: {
      int32_t x, y;
      load(a, &x);
      load(b, &y);
      return three(x, y);
    }
    case TypeId::kFloat:
    case TypeId::kDouble: {
      double x, y;
      load(a, &x);
      load(b, &y);
      bool xn = std::isnan(x), yn = std::isnan(y);
      if (xn || yn) return xn == yn ? 0 : (xn ? 1 : -1);  // NaN above every number
      return three(x, y);
    }
    case TypeId::kDecimal: {
      int128_t x, y;
      load(a, &x);
      load(b, &y);
      return three(x, y);
    }
    default: {
      int64_t x, y;
      load(a, &x);
      load(b, &y);
      return three(x, y);
    }
  }
}

}  // namespace internal

Result<TypePtr> ResultType(AggKind kind, const TypePtr& input) {
  switch (kind) {
    case AggKind::kCountStar:
    case AggKind::kCount:
    case AggKind::kCountDistinct:
    case AggKind::kApproxCountDistinct: return DataType::Long();
    default: break;
  }
  TypeId id = input->id();
  bool number =
      IsInteger(id) || id == TypeId::kFloat || id == TypeId::kDouble || id == TypeId::kDecimal;
  if (kind == AggKind::kSum || kind == AggKind::kAvg) {
    if (!number) return Status::Invalid("needs a number, not {}", ToSqlType(*input));
    if (kind == AggKind::kAvg) return DataType::Double();
    if (IsInteger(id)) return DataType::Long();
    if (id == TypeId::kDecimal) return DataType::Decimal(38, input->scale());
    return DataType::Double();
  }
  if (input->is_nested() || id == TypeId::kTime) {
    return Status::Invalid("cannot order {} values", ToSqlType(*input));
  }
  return id == TypeId::kFloat ? DataType::Double() : input;
}

void Accumulator::Add(const Column* values, int64_t row) {
  if (spec_->kind == AggKind::kCountStar) {
    ++count_;
    return;
  }
  if (values->IsNull(row)) return;
  switch (spec_->kind) {
    case AggKind::kCount: ++count_; return;
    case AggKind::kSum:
    case AggKind::kAvg: AddNumber(*values, row); return;
    case AggKind::kMin:
    case AggKind::kMax: AddMinMax(*values, row); return;
    default: break;
  }
  std::string key;
  AppendValueKey(*values, row, &key);
  if (spec_->kind == AggKind::kCountDistinct) {
    AddDistinct(key);
  } else {
    AddHash(StableHash(key));
  }
}

void Accumulator::AddNumber(const Column& values, int64_t row) {
  ++count_;
  switch (values.type()->id()) {
    case TypeId::kInt: exact_ += values.Value<int32_t>(row); return;
    case TypeId::kLong: exact_ += values.Value<int64_t>(row); return;
    case TypeId::kDecimal: {
      int128_t v = values.Value<int128_t>(row);
      if (__builtin_add_overflow(exact_, v, &exact_)) {
        if (!spec_->retracts) {
          overflow_ = true;
          return;
        }
        // (Retracting: the wrapped sum is exact modulo 2^128; count the wraps,
        // which retractions may undo.)
        int64_t& wraps = extra().wraps;
        wraps += v > 0 ? 1 : -1;
        overflow_ = wraps != 0;
      }
      return;
    }
    case TypeId::kFloat: real_ += values.Value<float>(row); return;
    default: real_ += values.Value<double>(row); return;
  }
}

std::string Accumulator::BestBytes(const Column& values, int64_t row) {
  return values.type()->is_binary_like() ? std::string(values.GetBytes(row))
                                         : FixedBytes(values, row);
}

bool Accumulator::BestOrder::operator()(const std::string& a, const std::string& b) const {
  const int c = CompareBest(*type, a, b);
  return c != 0 ? c < 0 : a < b;
}

void Accumulator::BestFromOrdered() {
  if (!extra_ || extra_->ordered.empty()) {
    best_.clear();
    return;
  }
  const auto& ordered = extra_->ordered;
  best_ = spec_->kind == AggKind::kMin ? ordered.begin()->first : ordered.rbegin()->first;
}

bool Accumulator::BestWidthOk(std::string_view v) const {
  const DataType& type = *spec_->output;
  if (type.is_binary_like()) return true;
  const size_t width = type.id() == TypeId::kFloat ? sizeof(double)  // (FixedBytes widens)
                                                   : static_cast<size_t>(type.value_width());
  return v.size() == width;
}

void Accumulator::AddMinMax(const Column& values, int64_t row) {
  std::string v = BestBytes(values, row);
  // The best is the first value seen of those that compare best (as 0 and
  // -0 do), retracting or not.
  const DataType& type = *spec_->output;
  int c = count_ == 0 ? 1 : CompareBest(type, v, best_);
  const bool better = count_ == 0 || (spec_->kind == AggKind::kMin ? c < 0 : c > 0);
  ++count_;
  if (spec_->retracts) {
    Extra& x = extra();
    auto [it, fresh] = x.ordered.try_emplace(std::move(v), 0);
    if (fresh) x.set_bytes += EntryBytes(kTreeEntry, it->first);
    ++it->second;
    if (better) best_ = it->first;
    return;
  }
  if (better) best_ = std::move(v);
}

void Accumulator::AddDistinct(std::string_view bytes) {
  Extra& x = extra();
  if (spec_->retracts) {
    auto [it, fresh] = x.counts.try_emplace(std::string(bytes), 0);
    if (fresh) x.set_bytes += EntryBytes(kCountEntry, it->first);
    ++it->second;
    return;
  }
  auto [it, fresh] = x.distinct.emplace(bytes);
  if (fresh) x.set_bytes += EntryBytes(kSetEntry, *it);
}

void Accumulator::Retract(const Column* values, int64_t row) {
  if (spec_->kind == AggKind::kCountStar) {
    --count_;
    return;
  }
  if (values->IsNull(row)) return;
  // One of the group's values leaves: the last of its kind leaves the counts.
  auto take = [this](const std::string& v) {
    if (!extra_) return false;
    auto it = extra_->counts.find(v);
    if (it == extra_->counts.end()) return false;
    if (--it->second == 0) {
      extra_->set_bytes -= EntryBytes(kCountEntry, it->first);
      extra_->counts.erase(it);
    }
    return true;
  };
  switch (spec_->kind) {
    case AggKind::kCount: --count_; return;
    case AggKind::kSum:
    case AggKind::kAvg:
      if (--count_ == 0) {  // nothing left: no rounding error or wrap either
        exact_ = 0;
        real_ = 0;
        if (extra_) extra_->wraps = 0;
        overflow_ = false;
        return;
      }
      switch (values->type()->id()) {
        case TypeId::kInt: exact_ -= values->Value<int32_t>(row); return;
        case TypeId::kLong: exact_ -= values->Value<int64_t>(row); return;
        case TypeId::kDecimal: {
          int128_t v = values->Value<int128_t>(row);
          if (__builtin_sub_overflow(exact_, v, &exact_)) extra().wraps += v > 0 ? -1 : 1;
          overflow_ = extra_ && extra_->wraps != 0;
          return;
        }
        case TypeId::kFloat: real_ -= values->Value<float>(row); return;
        default: real_ -= values->Value<double>(row); return;
      }
    case AggKind::kMin:
    case AggKind::kMax: {
      if (!extra_) return;  // (never added: nothing to take back)
      auto& ordered = extra_->ordered;
      auto it = ordered.find(BestBytes(*values, row));
      if (it == ordered.end()) return;
      --count_;
      if (--it->second > 0) return;  // (the best's bytes, if these, are still there)
      const bool was_best = it->first == best_;
      extra_->set_bytes -= EntryBytes(kTreeEntry, it->first);
      ordered.erase(it);
      if (was_best) BestFromOrdered();
      return;
    }
    case AggKind::kCountDistinct: {
      std::string key;
      AppendValueKey(*values, row, &key);
      take(key);
      return;
    }
    case AggKind::kCountStar:                    // (above)
    case AggKind::kApproxCountDistinct: return;  // (refused when planned)
  }
}

void Accumulator::AddHash(uint64_t hash) {
  Extra& x = extra();
  if (x.registers.empty()) {
    auto it = std::lower_bound(x.hashes.begin(), x.hashes.end(), hash);
    if (it != x.hashes.end() && *it == hash) return;
    x.hashes.insert(it, hash);
    if (x.hashes.size() <= kExactHashes) return;
    x.registers.assign(kRegisters, 0);
    std::vector<uint64_t> pending;
    pending.swap(x.hashes);
    for (uint64_t h : pending) AddHash(h);
    return;
  }
  size_t index = hash >> (64 - kHllBits);
  uint64_t rest = (hash << kHllBits) | (uint64_t{1} << (kHllBits - 1));  // never all zero
  uint8_t rank = static_cast<uint8_t>(std::countl_zero(rest) + 1);
  x.registers[index] = std::max(x.registers[index], rank);
}

void Accumulator::Merge(const Accumulator& other) {
  switch (spec_->kind) {
    case AggKind::kMin:
    case AggKind::kMax: {
      if (other.count_ == 0) return;
      int c = count_ == 0 ? 1 : CompareBest(*spec_->output, other.best_, best_);
      if (count_ == 0 || (spec_->kind == AggKind::kMin ? c < 0 : c > 0)) best_ = other.best_;
      count_ += other.count_;
      return;
    }
    case AggKind::kCountDistinct:
      if (other.extra_) {
        for (const std::string& v : other.extra_->distinct) AddDistinct(v);
      }
      return;
    case AggKind::kApproxCountDistinct: {
      if (!other.extra_) return;
      const Extra& o = *other.extra_;
      for (uint64_t h : o.hashes) AddHash(h);
      if (o.registers.empty()) return;
      Extra& x = extra();
      if (x.registers.empty()) {
        std::vector<uint64_t> mine;
        mine.swap(x.hashes);
        x.registers = o.registers;
        for (uint64_t h : mine) AddHash(h);
      } else {
        for (size_t i = 0; i < kRegisters; ++i) {
          x.registers[i] = std::max(x.registers[i], o.registers[i]);
        }
      }
      return;
    }
    case AggKind::kCountStar:
    case AggKind::kCount: count_ += other.count_; return;
    default:
      count_ += other.count_;
      if (__builtin_add_overflow(exact_, other.exact_, &exact_)) overflow_ = true;
      overflow_ = overflow_ || other.overflow_;
      real_ += other.real_;
      return;
  }
}

bool Accumulator::Finish(Column* out, std::string* error) const {
  TypeId in = spec_->input ? spec_->input->id() : TypeId::kLong;
  switch (spec_->kind) {
    case AggKind::kCountStar:
    case AggKind::kCount: out->Append<int64_t>(count_); return true;
    case AggKind::kCountDistinct:
      out->Append<int64_t>(!extra_           ? 0
                           : spec_->retracts ? static_cast<int64_t>(extra_->counts.size())
                                             : static_cast<int64_t>(extra_->distinct.size()));
      return true;
    case AggKind::kApproxCountDistinct: {
      if (!extra_ || extra_->registers.empty()) {
        out->Append<int64_t>(extra_ ? static_cast<int64_t>(extra_->hashes.size()) : 0);
        return true;
      }
      double m = static_cast<double>(kRegisters), sum = 0;
      int zeros = 0;
      for (uint8_t r : extra_->registers) {
        sum += std::ldexp(1.0, -r);
        zeros += r == 0;
      }
      double estimate = 0.7213 / (1 + 1.079 / m) * m * m / sum;
      if (estimate <= 2.5 * m && zeros > 0) estimate = m * std::log(m / zeros);  // small range
      out->Append<int64_t>(static_cast<int64_t>(std::llround(estimate)));
      return true;
    }
    case AggKind::kMin:
    case AggKind::kMax:
      if (count_ == 0) {
        out->AppendNull();
      } else if (out->type()->is_binary_like()) {
        out->AppendBytes(best_);
      } else if (out->type()->id() == TypeId::kBoolean) {
        out->AppendBool(best_[0] != 0);
      } else {
        out->AppendRaw(best_.data(), 1);
      }
      return true;
    case AggKind::kSum:
    case AggKind::kAvg: break;
  }
  if (count_ == 0) {
    out->AppendNull();
    return true;
  }
  bool exact = IsInteger(in) || in == TypeId::kDecimal;
  if (spec_->kind == AggKind::kAvg) {
    double sum = exact ? static_cast<double>(exact_) /
                             std::pow(10.0, in == TypeId::kDecimal ? spec_->input->scale() : 0)
                       : real_;
    out->Append<double>(sum / static_cast<double>(count_));
    return !overflow_ || (*error = fmt::format("decimal overflow in {}", spec_->text), false);
  }
  if (!exact) {
    out->Append<double>(real_);
    return true;
  }
  bool fits = !overflow_;
  if (IsInteger(in)) {
    fits = fits && exact_ >= INT64_MIN && exact_ <= INT64_MAX;
    out->Append<int64_t>(fits ? static_cast<int64_t>(exact_) : 0);
    if (!fits) *error = fmt::format("integer overflow in {}", spec_->text);
  } else {
    int128_t max = DecimalMaxUnscaled(38);
    fits = fits && exact_ <= max && exact_ >= -max;
    out->Append<int128_t>(fits ? exact_ : 0);
    if (!fits) *error = fmt::format("decimal overflow in {}", spec_->text);
  }
  return fits;
}

bool Accumulator::SizeIsFixed(const AggSpec& spec) {
  switch (spec.kind) {
    case AggKind::kCountStar:
    case AggKind::kCount: return true;
    case AggKind::kSum:
    case AggKind::kAvg:  // (a decimal sum that wraps counts the wraps in an Extra)
      return spec.input->id() != TypeId::kDecimal;
    case AggKind::kMin:
    case AggKind::kMax:  // (best_ holds up to 15 bytes in the string itself)
      return !spec.retracts && !spec.output->is_binary_like() && spec.output->value_width() > 0 &&
             spec.output->value_width() <= 8;
    default: return false;
  }
}

int64_t Accumulator::MemoryUsage() const {
  // (A string holds up to 15 bytes in itself.)
  int64_t bytes =
      sizeof(*this) + (best_.capacity() > 15 ? static_cast<int64_t>(best_.capacity()) : 0);
  if (!extra_) return bytes;
  const Extra& x = *extra_;
  return bytes +
         static_cast<int64_t>(sizeof(Extra) + x.hashes.capacity() * 8 + x.registers.capacity()) +
         x.set_bytes;
}

}  // namespace sluice::operators
