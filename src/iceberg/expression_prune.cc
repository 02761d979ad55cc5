// Pruning with bound filters: data-file column bounds, partition values and
// manifest partition summaries (the filter projected through transforms).
#include <cmath>

#include "columnar/single_value.h"
#include "common/endian.h"
#include "iceberg/expression_internal.h"

namespace sluice::iceberg {

using Kind = Expr::Kind;
using Op = Expr::Op;

namespace {

using internal::Holds;
using internal::IsNaNValue;
using internal::PredicateOnValue;

// A three-way answer for pruning: can rows match?
bool RangeMightMatch(const Expr& e, const std::optional<std::string>& lower,
                     const std::optional<std::string>& upper, bool may_have_null,
                     bool may_have_value) {
  switch (e.kind) {
    case Kind::kIsNull: return may_have_null;
    case Kind::kNotNull: return may_have_value;
    case Kind::kNotIn: return may_have_value;
    case Kind::kCompare:
      if (!may_have_value) return false;
      if (e.op == Op::kNe || !lower || !upper) return true;
      if (IsNaNValue(*e.type, e.values[0])) return e.op == Op::kNe;
      {
        const DataType& t = *e.type;
        int lo = CompareSingleValues(t, e.values[0], *lower);  // lit vs lower
        int hi = CompareSingleValues(t, e.values[0], *upper);  // lit vs upper
        switch (e.op) {
          case Op::kEq: return lo >= 0 && hi <= 0;
          case Op::kLt: return lo > 0;  // some value < lit needs lower < lit
          case Op::kLe: return lo >= 0;
          case Op::kGt: return hi < 0;
          case Op::kGe: return hi <= 0;
          default: return true;
        }
      }
    case Kind::kIn:
      if (!may_have_value) return false;
      if (!lower || !upper) return true;
      for (const auto& lit : e.values) {
        if (CompareSingleValues(*e.type, lit, *lower) >= 0 &&
            CompareSingleValues(*e.type, lit, *upper) <= 0) {
          return true;
        }
      }
      return false;
    default: return true;
  }
}

template <typename Leaf>
bool WalkMightMatch(const Expr& e, Leaf&& leaf) {
  switch (e.kind) {
    case Kind::kTrue: return true;
    case Kind::kFalse: return false;
    case Kind::kAnd:
      return WalkMightMatch(*e.children[0], leaf) && WalkMightMatch(*e.children[1], leaf);
    case Kind::kOr:
      return WalkMightMatch(*e.children[0], leaf) || WalkMightMatch(*e.children[1], leaf);
    case Kind::kNot: return true;  // bound expressions have NOT pushed down
    default: return leaf(e);
  }
}

// The predicate projected onto partition field `pf` (inclusive: every row
// matching `e` has a partition value matching the projection), or null when
// the transform cannot narrow it.
std::optional<Expr> Project(const Expr& e, const PartitionField& pf, const Schema& schema) {
  using TK = Transform::Kind;
  const Transform& t = pf.transform;
  if (t.kind == TK::kVoid || t.kind == TK::kUnknown) return std::nullopt;
  Expr p = e;
  if (e.kind == Kind::kIsNull || e.kind == Kind::kNotNull) return p;
  const Field* source = schema.FindById(e.field_id);
  if (source == nullptr) return std::nullopt;
  auto result_type = t.ResultType(source->type);
  if (!result_type.ok()) return std::nullopt;
  p.type = *result_type;
  bool monotonic = t.kind != TK::kBucket;
  if (e.kind == Kind::kNotIn || (e.kind == Kind::kCompare && e.op == Op::kNe)) {
    if (t.kind != TK::kIdentity) return std::nullopt;
    return p;
  }
  if (e.kind == Kind::kCompare && e.op != Op::kEq && !monotonic) return std::nullopt;
  // x < v becomes t(x) <= t(v - 1) for integer-like sources (Java's
  // ProjectionUtil does the same), else t(x) <= t(v); x > v likewise.
  int64_t adjust = 0;
  if (e.kind == Kind::kCompare && t.kind != TK::kIdentity) {
    TypeId sid = source->type->id();
    bool integral = sid == TypeId::kInt || sid == TypeId::kLong || sid == TypeId::kDate ||
                    sid == TypeId::kTime || sid == TypeId::kTimestamp ||
                    sid == TypeId::kTimestampTz || sid == TypeId::kTimestampNs ||
                    sid == TypeId::kTimestampTzNs;
    if (e.op == Op::kLt) {
      p.op = Op::kLe;
      adjust = integral ? -1 : 0;
    }
    if (e.op == Op::kGt) {
      p.op = Op::kGe;
      adjust = integral ? 1 : 0;
    }
  }
  p.values.clear();
  for (const auto& v : e.values) {
    Column lit(source->type);
    if (!AppendFromSingleValue(v, &lit).ok()) return std::nullopt;
    if (adjust != 0) {
      if (lit.type()->value_width() == 4) {
        int64_t x = int64_t{lit.Value<int32_t>(0)} + adjust;
        if (x < INT32_MIN || x > INT32_MAX) return std::nullopt;
        lit.mutable_data<int32_t>()[0] = static_cast<int32_t>(x);
      } else {
        int64_t x = lit.Value<int64_t>(0);
        if ((adjust < 0 && x == INT64_MIN) || (adjust > 0 && x == INT64_MAX)) return std::nullopt;
        lit.mutable_data<int64_t>()[0] = x + adjust;
      }
    }
    auto out = t.Apply(lit);
    if (!out.ok() || out->IsNull(0)) return std::nullopt;
    std::string pv;
    AppendSingleValue(*out, 0, &pv);
    p.values.push_back(std::move(pv));
  }
  return p;
}

}  // namespace

bool FileMightMatch(const Expr& bound, const DataFile& file) {
  return WalkMightMatch(bound, [&](const Expr& e) {
    auto find = [&](const auto& m) -> std::optional<int64_t> {
      auto it = m.find(e.field_id);
      if (it == m.end()) return std::nullopt;
      return it->second;
    };
    auto values = find(file.value_counts);
    auto nulls = find(file.null_value_counts);
    bool may_have_null = !nulls || *nulls > 0;
    bool may_have_value = !(values && nulls && *values == *nulls);
    std::optional<std::string> lower, upper;
    if (auto it = file.lower_bounds.find(e.field_id); it != file.lower_bounds.end())
      lower = it->second;
    if (auto it = file.upper_bounds.find(e.field_id); it != file.upper_bounds.end())
      upper = it->second;
    // NaN values are outside the bounds: comparisons cannot prune float columns holding NaN.
    if (e.type && (e.type->id() == TypeId::kFloat || e.type->id() == TypeId::kDouble)) {
      auto nans = find(file.nan_value_counts);
      if (!nans || *nans > 0) may_have_value = true;
    }
    return RangeMightMatch(e, lower, upper, may_have_null, may_have_value);
  });
}

bool PartitionMightMatch(const Expr& bound, const PartitionSpec& spec, const Schema& schema,
                         const PartitionValues& values) {
  return WalkMightMatch(bound, [&](const Expr& e) {
    for (size_t i = 0; i < spec.fields.size() && i < values.size(); ++i) {
      if (spec.fields[i].source_id != e.field_id) continue;
      auto p = Project(e, spec.fields[i], schema);
      if (!p) continue;
      bool ok = values[i] ? PredicateOnValue(*p, *values[i]) : p->kind == Kind::kIsNull;
      if (!ok) return false;
    }
    return true;
  });
}

bool ManifestMightMatch(const Expr& bound, const PartitionSpec& spec, const Schema& schema,
                        const std::vector<FieldSummary>& summaries) {
  return WalkMightMatch(bound, [&](const Expr& e) {
    for (size_t i = 0; i < spec.fields.size() && i < summaries.size(); ++i) {
      if (spec.fields[i].source_id != e.field_id) continue;
      auto p = Project(e, spec.fields[i], schema);
      if (!p) continue;
      const FieldSummary& s = summaries[i];
      bool has_value = s.lower_bound.has_value() || s.contains_nan.value_or(false);
      if (!RangeMightMatch(*p, s.lower_bound, s.upper_bound, s.contains_null, has_value)) {
        return false;
      }
    }
    return true;
  });
}

}  // namespace sluice::iceberg
