#include "parquet/statistics.h"

#include <cmath>
#include <limits>

#include "columnar/single_value.h"
#include "common/testing.h"

namespace sluice::parquet {
namespace {

TEST(Truncate, ShortValuesAreExact) {
  EXPECT_EQ(TruncateLowerBound("abc", 16, true), "abc");
  EXPECT_EQ(TruncateUpperBound("abc", 16, true), std::optional<std::string>("abc"));
  EXPECT_EQ(TruncateUpperBound("abc", 0, true), std::optional<std::string>("abc"));
}

TEST(Truncate, AsciiUpperBoundIncrementsLastByte) {
  EXPECT_EQ(TruncateLowerBound("abcdef", 3, true), "abc");
  EXPECT_EQ(TruncateUpperBound("abcdef", 3, true), std::optional<std::string>("abd"));
}

TEST(Truncate, Utf8CountsCodePointsAndNeverSplitsThem) {
  // "héllo wörld": é and ö are two bytes each.
  std::string s = "h\xc3\xa9llo w\xc3\xb6rld";
  EXPECT_EQ(TruncateLowerBound(s, 2, true), "h\xc3\xa9");
  // Upper bound: é (U+00E9) + 1 = ê (U+00EA).
  EXPECT_EQ(TruncateUpperBound(s, 2, true), std::optional<std::string>("h\xc3\xaa"));
  // U+07FF + 1 = U+0800 changes the encoded length (2 → 3 bytes).
  EXPECT_EQ(TruncateUpperBound("a\xdf\xbfzz", 2, true),
            std::optional<std::string>("a\xe0\xa0\x80"));
  // U+D7FF + 1 would be a surrogate: jump to U+E000.
  EXPECT_EQ(TruncateUpperBound("\xed\x9f\xbfzz", 1, true),
            std::optional<std::string>("\xee\x80\x80"));
  // A trailing U+10FFFF cannot grow: carry to the previous code point.
  EXPECT_EQ(TruncateUpperBound("ab\xf4\x8f\xbf\xbfz", 3, true), std::optional<std::string>("ac"));
  EXPECT_EQ(TruncateUpperBound("\xf4\x8f\xbf\xbf\xf4\x8f\xbf\xbfz", 2, true), std::nullopt);
  // 4-byte code points: 😀 U+1F600 → U+1F601.
  EXPECT_EQ(TruncateUpperBound("\xf0\x9f\x98\x80xyz", 1, true),
            std::optional<std::string>("\xf0\x9f\x98\x81"));
}

TEST(Truncate, BinaryCarriesOver0xFF) {
  EXPECT_EQ(TruncateLowerBound(std::string("\x01\x02\x03", 3), 2, false), std::string("\x01\x02"));
  EXPECT_EQ(TruncateUpperBound(std::string("\x01\xff\x03", 3), 2, false),
            std::optional<std::string>("\x02"));
  EXPECT_EQ(TruncateUpperBound(std::string("\xff\xff\x03", 3), 2, false), std::nullopt);
  // The bytes are compared unsigned: 0x7f < 0x80 < 0xff.
  EXPECT_TRUE(LessBytes("\x7f", "\x80", false));
  EXPECT_TRUE(LessBytes("\x80", "\xff", false));
  EXPECT_TRUE(LessBytes("ab", "abc", false));
}

TEST(Statistics, DecimalBytesCompareSigned) {
  // Big-endian two's complement: -1 (ff ff) < 0 (00 00) < 256 (01 00).
  EXPECT_TRUE(LessBytes(std::string("\xff\xff", 2), std::string("\x00\x00", 2), true));
  EXPECT_TRUE(LessBytes(std::string("\x00\x00", 2), std::string("\x01\x00", 2), true));
  EXPECT_TRUE(LessBytes(std::string("\x80\x00", 2), std::string("\xff\x00", 2), true));
  EXPECT_FALSE(LessBytes(std::string("\x00\x00", 2), std::string("\xff\xff", 2), true));
  BytesMinMax mm;
  mm.signed_decimal = true;
  char buf[4];
  for (int128_t v : {int128_t{5}, int128_t{-300}, int128_t{70000}, int128_t{-1}}) {
    DecimalToFixedBytes(v, 4, buf);
    mm.Update(std::string_view(buf, 4));
  }
  DecimalToFixedBytes(-300, 4, buf);
  EXPECT_EQ(mm.min, std::string(buf, 4));
  DecimalToFixedBytes(70000, 4, buf);
  EXPECT_EQ(mm.max, std::string(buf, 4));
}

TEST(Statistics, DecimalMinimalBytes) {
  EXPECT_EQ(DecimalToBigEndian(0), std::string("\x00", 1));
  EXPECT_EQ(DecimalToBigEndian(127), "\x7f");
  EXPECT_EQ(DecimalToBigEndian(128), std::string("\x00\x80", 2));
  EXPECT_EQ(DecimalToBigEndian(-1), "\xff");
  EXPECT_EQ(DecimalToBigEndian(-128), "\x80");
  EXPECT_EQ(DecimalToBigEndian(-129), "\xff\x7f");
  EXPECT_EQ(DecimalToBigEndian(1234), "\x04\xd2");
}

TEST(Statistics, FloatMinMaxIgnoresNaN) {
  MinMax<double> mm;
  for (double v : {3.0, -2.5, 7.25}) mm.Update(v);
  EXPECT_EQ(mm.min, -2.5);
  EXPECT_EQ(mm.max, 7.25);
  MinMax<double> all;
  double values[] = {1.0, -4.0, 2.0};
  all.UpdateAll(values, 3);
  EXPECT_EQ(all.min, -4.0);
  EXPECT_EQ(all.max, 2.0);
}

TEST(Statistics, ParquetStatisticsTruncateStringsAndKeepLegacyOnlyForSignedOrders) {
  EncodedStats e;
  e.null_count = 3;
  e.has_min_max = true;
  e.min = "aaaaaaaaaaaaaaaaaaaa";  // 20 chars
  e.max = "zzzz";
  Statistics s = ToParquetStatistics(e, PhysicalType::kByteArray, *DataType::String(), 16);
  EXPECT_EQ(s.null_count, 3);
  EXPECT_EQ(s.min_value, std::string(16, 'a'));
  EXPECT_EQ(s.is_min_value_exact, false);
  EXPECT_EQ(s.max_value, "zzzz");
  EXPECT_EQ(s.is_max_value_exact, true);
  EXPECT_FALSE(s.min.has_value());  // legacy order of byte arrays is signed: not written
  EncodedStats i;
  i.has_min_max = true;
  i.min = std::string("\xfe\xff\xff\xff", 4);  // -2
  i.max = std::string("\x05\x00\x00\x00", 4);
  Statistics si = ToParquetStatistics(i, PhysicalType::kInt32, *DataType::Int(), 16);
  EXPECT_EQ(si.min, i.min);
  EXPECT_EQ(si.max_value, i.max);
}

TEST(Statistics, IcebergBounds) {
  EncodedStats e;
  e.has_min_max = true;
  int32_t lo = -5, hi = 1234;
  e.min.assign(reinterpret_cast<const char*>(&lo), 4);
  e.max.assign(reinterpret_cast<const char*>(&hi), 4);
  std::optional<std::string> lower, upper;
  // decimal(9,2) stored as INT32 → minimal big-endian bytes.
  ToIcebergBounds(e, PhysicalType::kInt32, *DataType::Decimal(9, 2), 16, &lower, &upper);
  EXPECT_EQ(lower, std::optional<std::string>("\xfb"));
  EXPECT_EQ(upper, std::optional<std::string>("\x04\xd2"));
  // date stays little-endian int.
  ToIcebergBounds(e, PhysicalType::kInt32, *DataType::Date(), 16, &lower, &upper);
  EXPECT_EQ(lower, e.min);
  EncodedStats s;
  s.has_min_max = true;
  s.min = std::string(20, 'b');
  s.max = std::string(20, '\xff');
  ToIcebergBounds(s, PhysicalType::kByteArray, *DataType::Binary(), 4, &lower, &upper);
  EXPECT_EQ(lower, std::optional<std::string>("bbbb"));
  EXPECT_EQ(upper, std::nullopt);
  EncodedStats none;
  ToIcebergBounds(none, PhysicalType::kInt64, *DataType::Long(), 16, &lower, &upper);
  EXPECT_FALSE(lower.has_value());
}

}  // namespace
}  // namespace sluice::parquet
