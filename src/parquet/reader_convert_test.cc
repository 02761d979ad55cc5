// Physical → Iceberg conversions of the reader, on values whose expected
// results are worked out by hand in the comments.
#include <gtest/gtest.h>

#include <cmath>

#include "common/endian.h"
#include "common/testing.h"
#include "parquet/reader_internal.h"

namespace sluice::parquet::internal {
namespace {

struct Converted {
  SchemaElement element;
  ColumnDescriptor desc;
};

Converted Leaf(PhysicalType type, int type_length = 0) {
  Converted c;
  c.element.name = "v";
  c.element.type = type;
  if (type_length) c.element.type_length = type_length;
  c.desc.physical_type = type;
  c.desc.type_length = type_length;
  return c;
}

Status Convert(Converted& c, const ValueBuffer& in, Column** out) {
  ASSIGN_OR_RETURN(c.desc.type, IcebergTypeOf(c.element));
  static thread_local std::unique_ptr<Column> col;
  col = std::make_unique<Column>(c.desc.type);
  ValueBuffer values = in;
  RETURN_IF_ERROR(ConvertValues(values, c.desc, c.element, col.get()));
  *out = col.get();
  return Status::OK();
}

template <typename T>
ValueBuffer Fixed(PhysicalType t, std::vector<T> values, int width = 0) {
  ValueBuffer b;
  b.Reset(t, width);
  for (T v : values) {
    uint8_t buf[sizeof(T)];
    StoreLE(buf, v);
    b.fixed.insert(b.fixed.end(), buf, buf + sizeof(T));
  }
  return b;
}

TEST(ReaderConvertTest, Int96Timestamps) {
  // Julian day 2440588 is 1970-01-01; 2440589 + 1.5 s of nanos is
  // 86400 s + 1.5 s after the epoch = 86401500000 µs.
  ValueBuffer b;
  b.Reset(PhysicalType::kInt96, 0);
  for (auto [nanos, day] : {std::pair<int64_t, int32_t>{1500000000, 2440589},
                            std::pair<int64_t, int32_t>{999, 2440587}}) {
    uint8_t buf[12];
    StoreLE(buf, nanos);
    StoreLE(buf + 8, day);
    b.fixed.insert(b.fixed.end(), buf, buf + 12);
  }
  Converted c = Leaf(PhysicalType::kInt96);
  Column* col;
  ASSERT_OK(Convert(c, b, &col));
  EXPECT_EQ(c.desc.type->id(), TypeId::kTimestampTz);
  EXPECT_EQ(col->Value<int64_t>(0), 86401500000);
  // One day before the epoch plus 999 ns: floor to µs is -86400000000 + 0.
  EXPECT_EQ(col->Value<int64_t>(1), -86400000000);
}

TEST(ReaderConvertTest, TimeUnitsAndUnsigned) {
  Converted ms = Leaf(PhysicalType::kInt64);
  ms.element.logical_type = LogicalType{};
  ms.element.logical_type->kind = LogicalType::Kind::kTimestamp;
  ms.element.logical_type->unit = TimeUnit::kMillis;
  Column* col;
  ASSERT_OK(Convert(ms, Fixed<int64_t>(PhysicalType::kInt64, {1700000000123, -1}), &col));
  EXPECT_EQ(ms.desc.type->id(), TypeId::kTimestamp);
  EXPECT_EQ(col->Value<int64_t>(0), 1700000000123000);
  EXPECT_EQ(col->Value<int64_t>(1), -1000);

  Converted conv_only = Leaf(PhysicalType::kInt64);
  conv_only.element.converted_type = ConvertedType::kTimestampMillis;
  ASSERT_OK(Convert(conv_only, Fixed<int64_t>(PhysicalType::kInt64, {5}), &col));
  EXPECT_EQ(conv_only.desc.type->id(), TypeId::kTimestampTz);
  EXPECT_EQ(col->Value<int64_t>(0), 5000);

  Converted time_ms = Leaf(PhysicalType::kInt32);
  time_ms.element.converted_type = ConvertedType::kTimeMillis;
  ASSERT_OK(Convert(time_ms, Fixed<int32_t>(PhysicalType::kInt32, {86399999}), &col));
  EXPECT_EQ(col->Value<int64_t>(0), 86399999000);

  Converted time_ns = Leaf(PhysicalType::kInt64);
  time_ns.element.logical_type = LogicalType{};
  time_ns.element.logical_type->kind = LogicalType::Kind::kTime;
  time_ns.element.logical_type->unit = TimeUnit::kNanos;
  ASSERT_OK(Convert(time_ns, Fixed<int64_t>(PhysicalType::kInt64, {3723000004999}), &col));
  EXPECT_EQ(time_ns.desc.type->id(), TypeId::kTime);
  EXPECT_EQ(col->Value<int64_t>(0), 3723000004);  // 01:02:03.000004999 → µs

  Converted u32 = Leaf(PhysicalType::kInt32);
  u32.element.converted_type = ConvertedType::kUint32;
  ASSERT_OK(Convert(u32, Fixed<int32_t>(PhysicalType::kInt32, {-1}), &col));
  EXPECT_EQ(col->Value<int64_t>(0), 4294967295);

  Converted u64 = Leaf(PhysicalType::kInt64);
  u64.element.logical_type = LogicalType{};
  u64.element.logical_type->kind = LogicalType::Kind::kInteger;
  u64.element.logical_type->bit_width = 64;
  u64.element.logical_type->is_signed = false;
  ASSERT_OK(Convert(u64, Fixed<int64_t>(PhysicalType::kInt64, {-1}), &col));
  EXPECT_EQ(u64.desc.type->ToString(), "decimal(20,0)");
  EXPECT_TRUE(col->Value<int128_t>(0) == int128_t(UINT64_MAX));
}

TEST(ReaderConvertTest, DecimalsFromEveryPhysicalType) {
  Column* col;
  Converted i32 = Leaf(PhysicalType::kInt32);
  i32.element.converted_type = ConvertedType::kDecimal;
  i32.element.precision = 9;
  i32.element.scale = 2;
  ASSERT_OK(Convert(i32, Fixed<int32_t>(PhysicalType::kInt32, {-12345}), &col));
  EXPECT_TRUE(col->Value<int128_t>(0) == -12345);

  // FIXED[9] big-endian two's complement: 0xff..ff fe = -2; 0x00..01 00 = 256.
  Converted f9 = Leaf(PhysicalType::kFixedLenByteArray, 9);
  f9.element.converted_type = ConvertedType::kDecimal;
  f9.element.precision = 20;
  f9.element.scale = 1;
  ValueBuffer b;
  b.Reset(PhysicalType::kFixedLenByteArray, 9);
  for (uint8_t x : {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe}) b.fixed.push_back(x);
  for (uint8_t x : {0, 0, 0, 0, 0, 0, 0, 1, 0}) b.fixed.push_back(x);
  ASSERT_OK(Convert(f9, b, &col));
  EXPECT_TRUE(col->Value<int128_t>(0) == -2);
  EXPECT_TRUE(col->Value<int128_t>(1) == 256);

  // FIXED[16]: 10^30 = 0x0000000c9f2c9cd04674edea40000000.
  Converted f16 = Leaf(PhysicalType::kFixedLenByteArray, 16);
  f16.element.converted_type = ConvertedType::kDecimal;
  f16.element.precision = 38;
  f16.element.scale = 0;
  b.Reset(PhysicalType::kFixedLenByteArray, 16);
  for (uint8_t x : {0x00, 0x00, 0x00, 0x0c, 0x9f, 0x2c, 0x9c, 0xd0, 0x46, 0x74, 0xed, 0xea, 0x40,
                    0x00, 0x00, 0x00}) {
    b.fixed.push_back(x);
  }
  ASSERT_OK(Convert(f16, b, &col));
  int128_t p30 = 1;
  for (int i = 0; i < 30; ++i) p30 *= 10;
  EXPECT_TRUE(col->Value<int128_t>(0) == p30);

  // BYTE_ARRAY of 3 bytes: 0x80 00 00 = -8388608; empty = 0.
  Converted ba = Leaf(PhysicalType::kByteArray);
  ba.element.converted_type = ConvertedType::kDecimal;
  ba.element.precision = 10;
  ba.element.scale = 0;
  b.Reset(PhysicalType::kByteArray, 0);
  ASSERT_OK(b.AppendBytes(std::string("\x80\x00\x00", 3)));
  ASSERT_OK(b.AppendBytes(""));
  ASSERT_OK(Convert(ba, b, &col));
  EXPECT_TRUE(col->Value<int128_t>(0) == -8388608);
  EXPECT_TRUE(col->Value<int128_t>(1) == 0);
}

TEST(ReaderConvertTest, Float16AndUuid) {
  Converted h = Leaf(PhysicalType::kFixedLenByteArray, 2);
  h.element.logical_type = LogicalType{};
  h.element.logical_type->kind = LogicalType::Kind::kFloat16;
  // 0x3c00 = 1.0, 0xc000 = -2.0, 0x0001 = 2^-24, 0x7c00 = +inf (little-endian bytes).
  ValueBuffer b =
      Fixed<uint16_t>(PhysicalType::kFixedLenByteArray, {0x3c00, 0xc000, 0x0001, 0x7c00}, 2);
  Column* col;
  ASSERT_OK(Convert(h, b, &col));
  EXPECT_EQ(col->Value<float>(0), 1.0f);
  EXPECT_EQ(col->Value<float>(1), -2.0f);
  EXPECT_EQ(col->Value<float>(2), std::ldexp(1.0f, -24));
  EXPECT_TRUE(std::isinf(col->Value<float>(3)));

  Converted u = Leaf(PhysicalType::kFixedLenByteArray, 16);
  u.element.logical_type = LogicalType{};
  u.element.logical_type->kind = LogicalType::Kind::kUuid;
  b.Reset(PhysicalType::kFixedLenByteArray, 16);
  for (int i = 0; i < 16; ++i) b.fixed.push_back(static_cast<uint8_t>(i));
  ASSERT_OK(Convert(u, b, &col));
  EXPECT_EQ(u.desc.type->id(), TypeId::kUuid);
  EXPECT_EQ(col->GetBytes(0).size(), 16u);
  EXPECT_EQ(col->GetBytes(0)[15], 15);
}

}  // namespace
}  // namespace sluice::parquet::internal
