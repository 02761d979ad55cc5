#include "parquet/rle_encoder.h"

#include <random>
#include <vector>

#include "common/testing.h"
#include "parquet/rle_decoder.h"

namespace sluice::parquet {
namespace {

std::string Hex(const std::string& s) {
  std::string out;
  for (unsigned char c : s) out += fmt::format("{:02x}", c);
  return out;
}

TEST(RleEncoder, BitWidth) {
  EXPECT_EQ(BitWidth(0), 0);
  EXPECT_EQ(BitWidth(1), 1);
  EXPECT_EQ(BitWidth(7), 3);
  EXPECT_EQ(BitWidth(8), 4);
  EXPECT_EQ(BitWidth(0xFFFFFFFFu), 32);
}

TEST(RleEncoder, BitPackedRunMatchesSpecExample) {
  // Encodings.md: 0..7 at bit width 3 pack to 10001000 11000110 11111010.
  std::vector<uint32_t> v = {0, 1, 2, 3, 4, 5, 6, 7};
  std::string out;
  EncodeRleHybrid(v.data(), 8, 3, &out);
  EXPECT_EQ(Hex(out), "0388c6fa");  // header (1 group << 1 | 1), then the bits
}

TEST(RleEncoder, RepeatedRunIsRle) {
  std::vector<uint32_t> v(100, 5);
  std::string out;
  EncodeRleHybrid(v.data(), 100, 3, &out);
  EXPECT_EQ(Hex(out), "c80105");  // varint(100 << 1), value in 1 byte
  out.clear();
  std::vector<uint32_t> w(9, 0x12345);
  EncodeRleHybrid(w.data(), 9, 17, &out);
  EXPECT_EQ(Hex(out), "12452301");  // value in ceil(17/8) = 3 bytes, little-endian
}

TEST(RleEncoder, LiteralBeforeRunIsPaddedFromTheRun) {
  // 3 distinct values then 20 equal ones: the literal run borrows 5 values of
  // the repeated run to fill its group of 8, the rest (15) is an RLE run.
  std::vector<uint32_t> v = {1, 2, 3};
  v.insert(v.end(), 20, 0);
  std::string out;
  EncodeRleHybrid(v.data(), static_cast<int64_t>(v.size()), 2, &out);
  // 03 = 1 group bit-packed; 0x39 = 1|2<<2|3<<4; 0x00 (rest zeros); then 0x1e = 15<<1, value 00.
  EXPECT_EQ(Hex(out), "0339001e00");
}

template <typename T>
void CheckRoundTrip(const std::vector<T>& v, int bit_width) {
  std::string out;
  EncodeRleHybrid(v.data(), static_cast<int64_t>(v.size()), bit_width, &out);
  RleBitPackedDecoder dec(reinterpret_cast<const uint8_t*>(out.data()), out.size(), bit_width);
  std::vector<T> got(v.size());
  ASSERT_OK(dec.Get(got.data(), got.size()));
  ASSERT_EQ(got, v) << "bit width " << bit_width;
}

TEST(RleEncoder, RoundTripsEveryBitWidthWithRunsAtBoundaries) {
  std::mt19937_64 rng(7);
  const int kRunLengths[] = {1, 2, 7, 8, 9, 15, 16, 17, 63, 64, 65, 300};
  for (int bw = 0; bw <= 32; ++bw) {
    const uint64_t max = bw == 0 ? 0 : (bw == 32 ? 0xFFFFFFFFull : (uint64_t{1} << bw) - 1);
    for (int trial = 0; trial < 20; ++trial) {
      std::vector<uint32_t> v;
      int n_runs = 1 + static_cast<int>(rng() % 40);
      for (int r = 0; r < n_runs; ++r) {
        uint32_t value = max == 0 ? 0 : static_cast<uint32_t>(rng() % (max + 1));
        if (rng() % 4 == 0) value = static_cast<uint32_t>(max);  // the widest value
        v.insert(v.end(), kRunLengths[rng() % 12], value);
      }
      CheckRoundTrip(v, bw);
    }
    CheckRoundTrip(std::vector<uint32_t>{}, bw);
    CheckRoundTrip(std::vector<uint32_t>{static_cast<uint32_t>(max)}, bw);
  }
}

TEST(RleEncoder, LevelsAsInt16) {
  std::vector<int16_t> levels;
  for (int i = 0; i < 1000; ++i) levels.push_back(static_cast<int16_t>((i / 13) % 4));
  CheckRoundTrip(levels, 2);
}

TEST(RleEncoder, BitPackBooleans) {
  std::vector<uint8_t> b = {1, 0, 1, 1, 0, 0, 0, 1, 1};
  std::string out;
  BitPack(b.data(), static_cast<int64_t>(b.size()), 1, &out);
  EXPECT_EQ(Hex(out), "8d01");  // LSB first: 10110001 → 0x8d, then 1
}

}  // namespace
}  // namespace sluice::parquet
