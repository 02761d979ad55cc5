#include "columnar/value_format.h"

#include <cmath>
#include <limits>
#include <random>
#include <string>

#include "common/testing.h"

namespace sluice {
namespace {

template <typename F, typename... A>
std::string Fmt(F f, A... a) {
  std::string s;
  f(a..., &s);
  return s;
}

TEST(ValueFormatTest, DatesRoundTrip) {
  EXPECT_EQ(Fmt(AppendDate, 0), "1970-01-01");
  EXPECT_EQ(Fmt(AppendDate, -1), "1969-12-31");
  EXPECT_EQ(Fmt(AppendDate, 19753), "2024-01-31");
  for (int32_t d : {-719528, -1, 0, 59, 60, 11016, 19753, 2932896}) {
    std::string s = Fmt(AppendDate, d);
    ASSERT_OK_AND_ASSIGN(int32_t back, ParseDate(s));
    EXPECT_EQ(back, d) << s;
  }
  ASSERT_ERROR(ParseDate("2023-02-29"), StatusCode::kInvalidArgument, "2023-02-29");
}

TEST(ValueFormatTest, FastTimestampAgreesWithParseTimestamp) {
  const char* kCases[] = {"2024-01-31T13:45:00.123456",
                          "2024-01-31 13:45:00",
                          "2024-02-29T00:00:00Z",
                          "2023-02-29T00:00:00",
                          "1969-12-31T23:59:59.999999+00:00",
                          "2024-01-31T13:45:00.1234567891",
                          "2024-13-01T00:00:00",
                          "2024-01-31T24:00:00",
                          "2024-01-31T13:45:00.",
                          "2024-01-31T13:45:00+01:00",
                          "0001-01-01T00:00:00",
                          "9999-12-31T23:59:59.999999",
                          "2024-01-31T13:45",
                          "2024-01-31T13:45:00.5Z",
                          "1677-09-22T00:00:00.000000001",
                          "2262-04-11T23:47:16.854775807"};
  for (const char* c : kCases) {
    for (bool nanos : {false, true}) {
      int64_t fast;
      auto slow = ParseTimestamp(c, nanos);
      if (FastTimestamp(c, nanos, &fast)) {
        ASSERT_TRUE(slow.ok()) << c;
        EXPECT_EQ(fast, *slow) << c << " nanos " << nanos;
      }
    }
  }
  int64_t v;
  EXPECT_TRUE(FastTimestamp("2024-01-31T13:45:00.123456+00:00", false, &v));
  EXPECT_FALSE(FastTimestamp("2023-02-29T00:00:00", false, &v));
  std::mt19937_64 rng(3);
  for (int i = 0; i < 10000; ++i) {
    bool nanos = i % 2;
    int64_t t = static_cast<int64_t>(rng() % 400000000000000000ULL) - 100000000000000000LL;
    if (nanos) t = static_cast<int64_t>(rng() >> 1) * (rng() % 2 ? 1 : -1);
    std::string s;
    AppendTimestamp(t, nanos, i % 3 == 0, &s);
    int64_t fast;
    if (FastTimestamp(s, nanos, &fast)) {
      ASSERT_EQ(fast, t) << s;
    } else {
      ASSERT_OK_AND_ASSIGN(int64_t slow, ParseTimestamp(s, nanos));
      ASSERT_EQ(slow, t) << s;
    }
  }
}

TEST(ValueFormatTest, Timestamps) {
  EXPECT_EQ(Fmt(AppendTimestamp, int64_t{1706708700123456}, false, false),
            "2024-01-31T13:45:00.123456");
  EXPECT_EQ(Fmt(AppendTimestamp, int64_t{-1}, false, true), "1969-12-31T23:59:59.999999+00:00");
  EXPECT_EQ(Fmt(AppendTimestamp, int64_t{1}, true, false), "1970-01-01T00:00:00.000000001");
  ASSERT_OK_AND_ASSIGN(int64_t v, ParseTimestamp("2024-01-31T15:45:00.123456+02:00", false));
  EXPECT_EQ(v, 1706708700123456);
  ASSERT_OK_AND_ASSIGN(v, ParseTimestamp("2024-01-31 13:45", false));
  EXPECT_EQ(v, 1706708700000000);
  ASSERT_OK_AND_ASSIGN(v, ParseTimestamp("1970-01-01T00:00:00.000000001Z", true));
  EXPECT_EQ(v, 1);
  EXPECT_EQ(Fmt(AppendTime, int64_t{49500123456}), "13:45:00.123456");
  ASSERT_OK_AND_ASSIGN(v, ParseTime("13:45:00.123456"));
  EXPECT_EQ(v, 49500123456);
  ASSERT_ERROR(ParseTimestamp("2024-13-01", false), StatusCode::kInvalidArgument, "2024-13-01");
}

TEST(ValueFormatTest, Decimals) {
  EXPECT_EQ(Fmt(AppendDecimal, int128_t{1420}, 2), "14.20");
  EXPECT_EQ(Fmt(AppendDecimal, int128_t{-5}, 3), "-0.005");
  EXPECT_EQ(Fmt(AppendDecimal, int128_t{7}, 0), "7");
  int128_t max38 = DecimalMaxUnscaled(38);
  EXPECT_EQ(Fmt(AppendDecimal, -max38, 0), "-" + std::string(38, '9'));
  ASSERT_OK_AND_ASSIGN(int128_t v, ParseDecimal("14.2", 10, 2));
  EXPECT_EQ(static_cast<int64_t>(v), 1420);
  ASSERT_OK_AND_ASSIGN(v, ParseDecimal("-1.5e2", 10, 2));
  EXPECT_EQ(static_cast<int64_t>(v), -15000);
  ASSERT_ERROR(ParseDecimal("1.234", 10, 2), StatusCode::kOutOfRange, "fractional");
  ASSERT_ERROR(ParseDecimal("123456789", 8, 0), StatusCode::kOutOfRange, "decimal(8,0)");
  ASSERT_ERROR(ParseDecimal("abc", 8, 0), StatusCode::kInvalidArgument, "abc");
}

TEST(ValueFormatTest, FloatsAndBytes) {
  EXPECT_EQ(Fmt(AppendDouble, 0.1), "0.1");
  EXPECT_EQ(Fmt(AppendDouble, std::numeric_limits<double>::quiet_NaN()), "NaN");
  EXPECT_EQ(Fmt(AppendDouble, -std::numeric_limits<double>::infinity()), "-Infinity");
  EXPECT_EQ(Fmt(AppendFloat, 0.1f), "0.1");
  EXPECT_EQ(Fmt(AppendHex, std::string_view("\x01\xab", 2)), "01ab");
  ASSERT_OK_AND_ASSIGN(std::string u, ParseUuid("f79c3e09-677c-4bbd-a479-3f349cb785e7"));
  EXPECT_EQ(Fmt(AppendUuid, std::string_view(u)), "f79c3e09-677c-4bbd-a479-3f349cb785e7");
}

}  // namespace
}  // namespace sluice
