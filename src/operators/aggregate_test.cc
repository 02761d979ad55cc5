// Accumulators that retract (an aggregate over a changelog): after any mix of
// adds and retractions, each one finishes as one that only added the values
// still in the group, and survives its state encoding.
#include "operators/aggregate.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <set>

#include "columnar/json_writer.h"
#include "columnar/value_format.h"
#include "common/endian.h"
#include "common/testing.h"

namespace sluice::operators {
namespace {

// The result of `acc` as text.
std::string Result(const Accumulator& acc, const TypePtr& type) {
  Column out(type);
  std::string error;
  EXPECT_TRUE(acc.Finish(&out, &error)) << error;
  Batch b;
  Field f;
  f.id = 1;
  f.name = "v";
  f.type = type;
  auto schema = std::make_shared<Schema>();
  schema->fields.push_back(f);
  b.schema = std::move(schema);
  b.columns.push_back(std::move(out));
  std::string row;
  AppendJsonRow(b, 0, &row);
  return row;
}

TEST(AccumulatorTest, RetractingLeavesWhatAddingTheRemainingValuesGives) {
  struct Case {
    AggKind kind;
    TypePtr input;
  };
  const Case cases[] = {
      {AggKind::kCountStar, nullptr},
      {AggKind::kCount, DataType::Long()},
      {AggKind::kSum, DataType::Long()},
      {AggKind::kSum, DataType::Decimal(10, 2)},
      {AggKind::kAvg, DataType::Int()},
      {AggKind::kMin, DataType::Long()},
      {AggKind::kMax, DataType::Long()},
      {AggKind::kMin, DataType::String()},
      {AggKind::kMax, DataType::String()},
      {AggKind::kMin, DataType::Double()},
      {AggKind::kMax, DataType::Decimal(10, 2)},
      {AggKind::kCountDistinct, DataType::Long()},
      {AggKind::kCountDistinct, DataType::String()},
  };
  std::mt19937_64 rng(20261202);
  for (const Case& c : cases) {
    TypePtr input = c.input ? c.input : DataType::Long();
    ASSERT_OK_AND_ASSIGN(TypePtr output, ResultType(c.kind, c.input));
    AggSpec spec{c.kind, c.input, output, "agg(v)", true};
    AggSpec plain = spec;
    plain.retracts = false;
    SCOPED_TRACE(fmt::format("kind {} over {}", static_cast<int>(c.kind), input->ToString()));
    // The values: a column of 400 (a few NULLs, many repeats).
    Column values(input);
    for (int i = 0; i < 400; ++i) {
      int64_t v = static_cast<int64_t>(rng() % 30) - 10;
      if (rng() % 17 == 0) {
        values.AppendNull();
      } else if (input->id() == TypeId::kString) {
        values.AppendBytes(fmt::format("s{}", v));
      } else if (input->id() == TypeId::kInt) {
        values.Append<int32_t>(static_cast<int32_t>(v));
      } else if (input->id() == TypeId::kDecimal) {
        values.Append<int128_t>(v * 101);
      } else if (input->id() == TypeId::kDouble) {
        values.Append<double>(static_cast<double>(v) / 4);
      } else {
        values.Append<int64_t>(v);
      }
    }
    Accumulator acc(&spec);
    std::multiset<int> in;  // the rows in the group
    for (int step = 0; step < 1200; ++step) {
      if (in.empty() || rng() % 3 != 0) {
        int row = static_cast<int>(rng() % 400);
        acc.Add(&values, row);
        in.insert(row);
      } else {
        // Take back a row that is in the group (as a changelog's -U or -D does).
        auto it = in.begin();
        std::advance(it, static_cast<long>(rng() % in.size()));
        acc.Retract(&values, *it);
        in.erase(it);
      }
      if (step % 100 != 99) continue;
      Accumulator fresh(&plain);
      for (int row : in) fresh.Add(&values, row);
      ASSERT_EQ(Result(acc, output), Result(fresh, output)) << "step " << step;
      // The state encoding keeps the value counts.
      std::string bytes;
      acc.EncodeTo(&bytes);
      Accumulator decoded(&spec);
      std::string_view view = bytes;
      ASSERT_OK(decoded.DecodeFrom(&view));
      EXPECT_TRUE(view.empty());
      ASSERT_EQ(Result(decoded, output), Result(acc, output)) << "step " << step;
      acc = std::move(decoded);
    }
    // Everything taken back: the empty group's result.
    for (int row : in) acc.Retract(&values, row);
    ASSERT_EQ(Result(acc, output), Result(Accumulator(&plain), output));
  }
}

// An accumulator said to be of fixed size (a caller then skips measuring it)
// keeps its MemoryUsage through any values, sums that leave int128 among
// them, added and taken back; the others are said not to be (and most grow).
TEST(AccumulatorTest, AnAccumulatorOfFixedSizeKeepsItsMemoryUsageThroughAnyValues) {
  struct Case {
    AggKind kind;
    TypePtr input;
    bool retracts;
    bool fixed;
    bool grows = false;  // (not fixed) MemoryUsage changes with these values
  };
  const Case cases[] = {
      {AggKind::kCountStar, nullptr, false, true},
      {AggKind::kCount, DataType::String(), false, true},
      {AggKind::kSum, DataType::Long(), false, true},
      {AggKind::kSum, DataType::Long(), true, true},
      {AggKind::kAvg, DataType::Double(), false, true},
      {AggKind::kMin, DataType::Long(), false, true},
      {AggKind::kMax, DataType::Double(), false, true},
      {AggKind::kMax, DataType::Boolean(), false, true},
      {AggKind::kMin, DataType::Date(), false, true},
      {AggKind::kMax, DataType::Long(), true, false},
      {AggKind::kMin, DataType::Long(), true, false, true},
      {AggKind::kMax, DataType::String(), false, false, true},
      {AggKind::kMin, DataType::Decimal(38, 0), false, false, true},
      {AggKind::kSum, DataType::Decimal(38, 0), false, false},
      {AggKind::kSum, DataType::Decimal(38, 0), true, false, true},
      {AggKind::kCountDistinct, DataType::Long(), false, false, true},
      {AggKind::kApproxCountDistinct, DataType::Long(), false, false, true},
  };
  std::mt19937_64 rng(5);
  for (const Case& c : cases) {
    TypePtr input = c.input ? c.input : DataType::Long();
    ASSERT_OK_AND_ASSIGN(TypePtr output, ResultType(c.kind, c.input));
    AggSpec spec{c.kind, c.input, output, "agg(v)", c.retracts};
    SCOPED_TRACE(fmt::format("kind {} over {}", static_cast<int>(c.kind), input->ToString()));
    EXPECT_EQ(Accumulator::SizeIsFixed(spec), c.fixed);
    Column values(input);
    for (int i = 0; i < 2000; ++i) {
      const auto v = static_cast<int64_t>(rng());
      switch (input->id()) {
        case TypeId::kString: values.AppendBytes(std::string(1 + rng() % 40, 'x')); break;
        case TypeId::kDouble: values.Append<double>(static_cast<double>(v)); break;
        case TypeId::kBoolean: values.AppendBool(v % 2 == 0); break;
        case TypeId::kDate: values.Append<int32_t>(static_cast<int32_t>(v % 100000)); break;
        case TypeId::kDecimal: values.Append<int128_t>(DecimalMaxUnscaled(38) - (v & 0xff)); break;
        default: values.Append<int64_t>(v); break;
      }
    }
    Accumulator acc(&spec);
    const int64_t before = acc.MemoryUsage();
    for (int64_t row = 0; row < values.size(); ++row) acc.Add(&values, row);
    if (c.retracts) {
      for (int64_t row = 0; row < values.size(); row += 2) acc.Retract(&values, row);
    }
    if (c.fixed) {
      EXPECT_EQ(acc.MemoryUsage(), before);
    } else if (c.grows) {
      EXPECT_NE(acc.MemoryUsage(), before);
    }
  }
}

// Values that compare equal but differ (0 and -0): a retracting min or max
// keeps the first seen, as one that only adds does, through its state too;
// when that value leaves, the other stands.
TEST(AccumulatorTest, ARetractingMaxKeepsTheFirstOfEqualValuesAsAddingDoes) {
  ASSERT_OK_AND_ASSIGN(TypePtr output, ResultType(AggKind::kMax, DataType::Double()));
  AggSpec spec{AggKind::kMax, DataType::Double(), output, "max(v)", true};
  AggSpec plain = spec;
  plain.retracts = false;
  Column values(DataType::Double());
  values.Append<double>(0.0);
  values.Append<double>(-0.0);
  values.Append<double>(-1.0);
  Accumulator acc(&spec), fresh(&plain);
  for (int row : {0, 1, 2}) {
    acc.Add(&values, row);
    fresh.Add(&values, row);
  }
  EXPECT_EQ(Result(acc, output), Result(fresh, output));
  EXPECT_EQ(Result(acc, output).find("-0"), std::string::npos) << Result(acc, output);
  std::string bytes;
  acc.EncodeTo(&bytes);
  Accumulator decoded(&spec);
  std::string_view view = bytes;
  ASSERT_OK(decoded.DecodeFrom(&view));
  EXPECT_EQ(Result(decoded, output), Result(acc, output));
  decoded.Retract(&values, 0);  // 0 leaves; -0 is the best left
  EXPECT_NE(Result(decoded, output).find("-0"), std::string::npos) << Result(decoded, output);
  decoded.Retract(&values, 1);
  Accumulator only_minus_one(&plain);
  only_minus_one.Add(&values, 2);
  EXPECT_EQ(Result(decoded, output), Result(only_minus_one, output));
}

// A state file whose min holds a value of the wrong width (a BIGINT of two
// bytes) is refused, not compared past its end.
TEST(AccumulatorTest, AMinWhoseStateHoldsAValueOfTheWrongWidthIsRefused) {
  ASSERT_OK_AND_ASSIGN(TypePtr output, ResultType(AggKind::kMin, DataType::Long()));
  AggSpec spec{AggKind::kMin, DataType::Long(), output, "min(v)", true};
  Column values(DataType::Long());
  values.Append<int64_t>(42);
  Accumulator acc(&spec);
  acc.Add(&values, 0);
  std::string bytes;
  acc.EncodeTo(&bytes);
  Accumulator decoded(&spec);
  std::string_view view = bytes;
  ASSERT_OK(decoded.DecodeFrom(&view));  // (the intact state decodes)
  // The encoding ends with the value counts' one entry: a 4-byte length, the
  // value's 8 bytes and its 8-byte count. The value cut to 2 bytes:
  std::string broken = bytes.substr(0, bytes.size() - 16 - 4);
  broken += std::string("\x02\x00\x00\x00", 4) + std::string(2, '\x2a');
  broken += bytes.substr(bytes.size() - 8);
  view = broken;
  EXPECT_EQ(decoded.DecodeFrom(&view).code(), StatusCode::kCorruption);
  // The encoding starts with a byte of the fields present (bit 0: the count),
  // then the count of values as a zigzag varint (1: the byte 2). A count the
  // value counts do not add up to, or a negative one, is refused too.
  ASSERT_EQ(bytes[0] & 1, 1);
  ASSERT_EQ(bytes[1], 2);
  for (int64_t count : {int64_t{2}, int64_t{-1}}) {
    std::string miscounted = bytes;
    miscounted[1] = static_cast<char>(ZigZagEncode(count));
    view = miscounted;
    EXPECT_EQ(decoded.DecodeFrom(&view).code(), StatusCode::kCorruption) << count;
  }
  // A count of more than 64 bits (its tenth byte above 1) is refused, not cut
  // to its low bits (which say 1 here).
  std::string too_long = bytes.substr(0, 1) + "\x82" + std::string(8, '\x80') + "\x02";
  too_long += bytes.substr(2);
  view = too_long;
  EXPECT_EQ(decoded.DecodeFrom(&view).code(), StatusCode::kCorruption);
  std::string uncounted = bytes;  // no count: 0 values
  uncounted[0] = static_cast<char>(uncounted[0] & ~1);
  uncounted.erase(1, 1);
  view = uncounted;
  EXPECT_EQ(decoded.DecodeFrom(&view).code(), StatusCode::kCorruption);
}

TEST(AccumulatorTest, ARetractingDecimalSumOverflowsOnlyWhileItsValueDoes) {
  TypePtr type = DataType::Decimal(38, 0);
  ASSERT_OK_AND_ASSIGN(TypePtr output, ResultType(AggKind::kSum, type));
  AggSpec spec{AggKind::kSum, type, output, "sum(v)", true};
  Column values(type);
  int128_t big = DecimalMaxUnscaled(38);  // 10^38 - 1: two of them pass 2^127
  values.Append<int128_t>(big);
  values.Append<int128_t>(big);
  values.Append<int128_t>(-7);
  Accumulator acc(&spec);
  acc.Add(&values, 0);
  acc.Add(&values, 1);
  acc.Add(&values, 2);
  Column out(output);
  std::string error;
  EXPECT_FALSE(acc.Finish(&out, &error));
  EXPECT_NE(error.find("decimal overflow"), std::string::npos) << error;
  acc.Retract(&values, 1);  // back in range: big - 7
  Column again(output);
  ASSERT_TRUE(acc.Finish(&again, &error)) << error;
  EXPECT_TRUE(again.Value<int128_t>(0) == big - 7);
  // Through the state encoding, the wrap count too.
  acc.Add(&values, 1);
  std::string bytes;
  acc.EncodeTo(&bytes);
  Accumulator decoded(&spec);
  std::string_view view = bytes;
  ASSERT_OK(decoded.DecodeFrom(&view));
  decoded.Retract(&values, 0);
  Column third(output);
  ASSERT_TRUE(decoded.Finish(&third, &error)) << error;
  EXPECT_TRUE(third.Value<int128_t>(0) == big - 7);
}

TEST(AccumulatorTest, ADoubleSumEmptiedByRetractionsIsExactlyNull) {
  ASSERT_OK_AND_ASSIGN(TypePtr output, ResultType(AggKind::kSum, DataType::Double()));
  AggSpec spec{AggKind::kSum, DataType::Double(), output, "sum(v)", true};
  Column values(DataType::Double());
  values.Append<double>(1e17);
  values.Append<double>(1.0);
  Accumulator acc(&spec);
  acc.Add(&values, 0);
  acc.Add(&values, 1);
  acc.Retract(&values, 0);
  acc.Retract(&values, 1);
  acc.Add(&values, 1);  // a fresh start: no rounding error left over
  Column out(output);
  std::string error;
  ASSERT_TRUE(acc.Finish(&out, &error));
  EXPECT_EQ(out.Value<double>(0), 1.0);
}

}  // namespace
}  // namespace sluice::operators
