#include "columnar/single_value.h"

#include <random>

#include "columnar/sql_schema.h"
#include "columnar/value_format.h"
#include "common/testing.h"

namespace sluice {
namespace {

std::string Hex(std::string_view s) {
  std::string out;
  AppendHex(s, &out);
  return out;
}

TEST(SingleValueTest, SpecEncodings) {
  Column d(DataType::Decimal(9, 2));
  d.Append<int128_t>(1420);  // 14.20 → 05 8c (spec Appendix B example)
  d.Append<int128_t>(-1);    // ff
  d.Append<int128_t>(128);   // 00 80
  d.Append<int128_t>(-129);  // ff 7f
  std::vector<std::string> want = {"058c", "ff", "0080", "ff7f"};
  for (int i = 0; i < 4; ++i) {
    std::string s;
    AppendSingleValue(d, i, &s);
    EXPECT_EQ(Hex(s), want[i]);
    Column back(d.type());
    ASSERT_OK(AppendFromSingleValue(s, &back));
    EXPECT_TRUE(back.Value<int128_t>(0) == d.Value<int128_t>(i));
  }
  Column l(DataType::Long());
  l.Append<int64_t>(34);
  std::string s;
  AppendSingleValue(l, 0, &s);
  EXPECT_EQ(Hex(s), "2200000000000000");
}

TEST(SingleValueTest, RoundTripAndOrder) {
  std::mt19937_64 rng(7);
  for (const char* type : {"INT", "BIGINT", "DOUBLE", "FLOAT", "DECIMAL(38,3)", "DATE",
                           "TIMESTAMPTZ", "STRING", "BINARY"}) {
    ASSERT_OK_AND_ASSIGN(TypePtr t, ParseSqlType(type));
    Column c(t);
    for (int i = 0; i < 200; ++i) {
      int64_t v = static_cast<int64_t>(rng()) >> (rng() % 63);
      switch (t->id()) {
        case TypeId::kInt:
        case TypeId::kDate: c.Append<int32_t>(static_cast<int32_t>(v)); break;
        case TypeId::kDouble: c.Append<double>(static_cast<double>(v) / 7); break;
        case TypeId::kFloat: c.Append<float>(static_cast<float>(v) / 7); break;
        case TypeId::kDecimal: c.Append<int128_t>(static_cast<int128_t>(v) * v); break;
        case TypeId::kString:
        case TypeId::kBinary: c.AppendBytes(std::to_string(v)); break;
        default: c.Append<int64_t>(v);
      }
    }
    Column back(t);
    std::vector<std::string> enc;
    for (int i = 0; i < c.size(); ++i) {
      std::string s;
      AppendSingleValue(c, i, &s);
      ASSERT_OK(AppendFromSingleValue(s, &back));
      enc.push_back(s);
    }
    for (int i = 0; i + 1 < c.size(); ++i) {
      std::string a, b;
      AppendSingleValue(back, i, &a);
      EXPECT_EQ(a, enc[i]) << type;
      // Order of encodings follows order of values.
      int want = 0;
      switch (t->id()) {
        case TypeId::kInt:
        case TypeId::kDate:
          want = (c.Value<int32_t>(i) > c.Value<int32_t>(i + 1)) -
                 (c.Value<int32_t>(i) < c.Value<int32_t>(i + 1));
          break;
        case TypeId::kDouble:
          want = (c.Value<double>(i) > c.Value<double>(i + 1)) -
                 (c.Value<double>(i) < c.Value<double>(i + 1));
          break;
        case TypeId::kFloat:
          want = (c.Value<float>(i) > c.Value<float>(i + 1)) -
                 (c.Value<float>(i) < c.Value<float>(i + 1));
          break;
        case TypeId::kDecimal:
          want = (c.Value<int128_t>(i) > c.Value<int128_t>(i + 1)) -
                 (c.Value<int128_t>(i) < c.Value<int128_t>(i + 1));
          break;
        case TypeId::kString:
        case TypeId::kBinary: {
          int r = c.GetBytes(i).compare(c.GetBytes(i + 1));
          want = (r > 0) - (r < 0);
          break;
        }
        default:
          want = (c.Value<int64_t>(i) > c.Value<int64_t>(i + 1)) -
                 (c.Value<int64_t>(i) < c.Value<int64_t>(i + 1));
      }
      EXPECT_EQ(CompareSingleValues(*t, enc[i], enc[i + 1]), want) << type << " row " << i;
    }
  }
}

TEST(SingleValueTest, PromotedWidthsAndBadSizes) {
  Column l(DataType::Long());
  ASSERT_OK(AppendFromSingleValue(std::string("\xff\xff\xff\xff", 4), &l));  // int -1
  EXPECT_EQ(l.Value<int64_t>(0), -1);
  Column ts(DataType::Timestamp());
  ASSERT_OK(AppendFromSingleValue(std::string("\x01\x00\x00\x00", 4), &ts));  // date 1
  EXPECT_EQ(ts.Value<int64_t>(0), 86400LL * 1000000);
  Column i(DataType::Int());
  ASSERT_ERROR(AppendFromSingleValue("abc", &i), StatusCode::kCorruption, "3 bytes");
  Column u(DataType::Uuid());
  ASSERT_ERROR(AppendFromSingleValue("short", &u), StatusCode::kCorruption, "uuid");
}

}  // namespace
}  // namespace sluice
