// Aggregate functions: their specs and the accumulators a window operator
// keeps per group (operators/window_aggregate.h).
//
//   count(*)                 BIGINT, rows
//   count(x)                 BIGINT, rows where x is not NULL
//   count(DISTINCT x)        BIGINT, exact (the distinct values are kept)
//   sum(x)                   BIGINT for INT/BIGINT, DECIMAL(38,s) for DECIMAL(p,s),
//                            DOUBLE for DOUBLE; NULL when no non-NULL x; a result outside
//                            its type fails the window's row (never wraps)
//   avg(x)                   DOUBLE (integers and decimals summed exactly first)
//   min(x), max(x)           x's type (numbers, strings, dates, timestamps, booleans)
//   approx_count_distinct(x) BIGINT: exact up to 256 distinct values, then HyperLogLog
//                            with 2^12 registers (standard error 1.04/64 = 1.6%)
//
// Accumulators grow by Add (one value at a time, in the source's order, so
// floating sums are deterministic for a given input order) and merge by Merge
// (HOP windows never need it; SESSION windows merge when sessions join). A
// retracting spec (an aggregate over a changelog: its -U and -D rows take
// their values back) also shrinks by Retract: counts and sums subtract, and
// min, max and count(DISTINCT) keep a count per distinct value (so that the
// next best value is known when the best one is retracted); such an
// accumulator does not Merge, and approx_count_distinct cannot retract. They
// serialize to bytes for state files (EncodeTo / DecodeFrom, little-endian,
// versioned by the state file): compact (a byte of which fields are set, then
// only those; a count as a varint), or the fixed layout of earlier files.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "columnar/column.h"
#include "common/status.h"
#include "operators/value_key.h"

namespace sluice::operators {

enum class AggKind : uint8_t {
  kCountStar,
  kCount,
  kCountDistinct,
  kSum,
  kAvg,
  kMin,
  kMax,
  kApproxCountDistinct,
};

struct AggSpec {
  AggKind kind = AggKind::kCountStar;
  TypePtr input;          // null for count(*)
  TypePtr output;         // the result type (ResultType)
  std::string text;       // as written, for errors: "sum(amount)"
  bool retracts = false;  // Retract may take values back (see above)
};

// The result type of `kind` over `input`, or kInvalidArgument naming the
// unsupported input type.
Result<TypePtr> ResultType(AggKind kind, const TypePtr& input);

// How an accumulator's bytes are laid out (docs/state.md "File format").
enum class AccEncoding {
  kCompact,  // state files "SLS3", spill stores
  kFixed,    // every field, always: state files "SLS2" and "SLST"
};

// One group's state of one aggregate.
class Accumulator {
 public:
  explicit Accumulator(const AggSpec* spec) : spec_(spec) {}
  Accumulator(Accumulator&&) = default;
  Accumulator& operator=(Accumulator&&) = default;

  // Adds row `row` of `values` (a column of spec.input; ignored for count(*)).
  void Add(const Column* values, int64_t row);
  // Takes back a value Add added (a retracting spec only).
  void Retract(const Column* values, int64_t row);
  void Merge(const Accumulator& other);
  // Appends the result to `out` (a column of spec.output). False when it does
  // not fit the type (`error` says why); the caller rejects the row.
  bool Finish(Column* out, std::string* error) const;

  // Writes the compact encoding.
  void EncodeTo(std::string* out) const;
  // Reads an accumulator from `in`, advancing it.
  Status DecodeFrom(std::string_view* in, AccEncoding encoding = AccEncoding::kCompact);
  // Approximate heap bytes held.
  int64_t MemoryUsage() const;
  // Whether Add and Retract leave MemoryUsage as it is for every accumulator
  // of `spec` (counts, sums of integers and doubles, min and max of values
  // held in the accumulator itself): a caller may skip measuring them.
  static bool SizeIsFixed(const AggSpec& spec);
  // count(*), count(x): the count (after retractions: what is left).
  int64_t count() const { return count_; }

 private:
  void AddNumber(const Column& values, int64_t row);
  void AddMinMax(const Column& values, int64_t row);
  void AddDistinct(std::string_view bytes);
  void AddHash(uint64_t hash);
  // The fields in Extra (distinct values, hashes, registers; a retracting
  // spec's wraps and value counts), in the fixed layout both encodings use.
  void EncodeExtra(std::string* out) const;
  // `counted`: a retracting min/max's value counts, added up.
  Status DecodeExtra(std::string_view* in, int64_t* counted);
  // The value's bytes as min/max keep them.
  static std::string BestBytes(const Column& values, int64_t row);

  const AggSpec* spec_;
  int64_t count_ = 0;      // rows (count, avg) or non-NULL values seen
  int128_t exact_ = 0;     // integer and decimal sums
  double real_ = 0;        // double sums
  bool overflow_ = false;  // an exact sum left int128
  // min/max: the best value so far, in the column's physical form (fixed
  // values as raw bytes, strings as themselves).
  std::string best_;
  struct BestOrder {
    const DataType* type;
    bool operator()(const std::string& a, const std::string& b) const;
  };
  // What only some aggregates keep, made when first needed, so that the
  // accumulators of most groups (counts, sums, min, max) are half the size.
  struct Extra {
    explicit Extra(const DataType* type) : ordered(BestOrder{type}) {}
    int64_t wraps = 0;  // retracting decimal sum: times it wrapped up (+) or down (-)
    std::unordered_set<std::string> distinct;  // count(DISTINCT)
    // A retracting count(DISTINCT): how many times each value (AppendValueKey)
    // is in the group.
    std::unordered_map<std::string, int64_t> counts;
    // A retracting min or max: how many times each value (BestBytes) is in the
    // group, in value order (then bytes, so values that compare equal, like 0
    // and -0, stay apart): the best is the first or last, and taking it back
    // finds the next best in O(log n).
    std::map<std::string, int64_t, BestOrder> ordered;
    // The heap bytes of the entries of distinct, counts and ordered, kept as
    // they change (MemoryUsage runs around every Add and Retract).
    int64_t set_bytes = 0;
    // approx_count_distinct: hashes while few, then registers.
    std::vector<uint64_t> hashes;
    std::vector<uint8_t> registers;
  };
  std::unique_ptr<Extra> extra_;
  Extra& extra() {
    if (!extra_) extra_ = std::make_unique<Extra>(spec_->output.get());
    return *extra_;
  }
  // best_ from the ordered values: their first or last (empty when none).
  void BestFromOrdered();
  // Whether `v` has the byte width min/max keep values of the output type in.
  bool BestWidthOk(std::string_view v) const;
};

}  // namespace sluice::operators
