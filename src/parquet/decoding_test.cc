#include "parquet/decoding.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "common/endian.h"
#include "common/testing.h"
#include "parquet/rle_decoder.h"

namespace sluice::parquet {
namespace {

// ---- Test-side encoders, written straight from Encodings.md. ----

// LSB-first bit packing of `values` at `width` bits.
std::string PackBits(const std::vector<uint64_t>& values, int width) {
  std::string out((values.size() * width + 7) / 8, '\0');
  size_t bit = 0;
  for (uint64_t v : values) {
    for (int b = 0; b < width; ++b, ++bit) {
      if ((v >> b) & 1) out[bit / 8] = static_cast<char>(out[bit / 8] | (1 << (bit % 8)));
    }
  }
  return out;
}

// Hybrid runs: an RLE run of `rle_count` copies of `rle_value`, then one
// bit-packed run holding `packed` (padded to a multiple of 8).
std::string EncodeHybrid(int width, uint32_t rle_value, int rle_count,
                         std::vector<uint64_t> packed) {
  std::string out;
  if (rle_count > 0) {
    AppendVarint(&out, static_cast<uint64_t>(rle_count) << 1);
    for (int i = 0; i < (width + 7) / 8; ++i)
      out.push_back(static_cast<char>(rle_value >> (8 * i)));
  }
  if (!packed.empty()) {
    size_t groups = (packed.size() + 7) / 8;
    packed.resize(groups * 8, 0);
    AppendVarint(&out, (groups << 1) | 1);
    out += PackBits(packed, width);
  }
  return out;
}

// DELTA_BINARY_PACKED with blocks of 128 values in 4 miniblocks.
std::string EncodeDelta(const std::vector<int64_t>& values, bool is32) {
  std::string out;
  AppendVarint(&out, 128);
  AppendVarint(&out, 4);
  AppendVarint(&out, values.size());
  AppendVarint(&out, ZigZagEncode(values.empty() ? 0 : values[0]));
  std::vector<uint64_t> deltas;
  for (size_t i = 1; i < values.size(); ++i) {
    uint64_t d = static_cast<uint64_t>(values[i]) - static_cast<uint64_t>(values[i - 1]);
    if (is32) d = static_cast<uint64_t>(static_cast<int64_t>(static_cast<int32_t>(d)));
    deltas.push_back(d);
  }
  for (size_t b = 0; b < deltas.size(); b += 128) {
    size_t n = std::min<size_t>(128, deltas.size() - b);
    int64_t min = static_cast<int64_t>(deltas[b]);
    for (size_t i = 0; i < n; ++i) min = std::min(min, static_cast<int64_t>(deltas[b + i]));
    AppendVarint(&out, ZigZagEncode(min));
    std::vector<std::vector<uint64_t>> minis(4);
    std::string widths;
    for (int m = 0; m < 4; ++m) {
      uint64_t max = 0;
      for (size_t i = m * 32; i < (m + 1) * 32u; ++i) {
        uint64_t v = i < n ? deltas[b + i] - static_cast<uint64_t>(min) : 0;
        minis[m].push_back(v);
        max = std::max(max, v);
      }
      widths.push_back(static_cast<char>(BitWidth(max)));
    }
    out += widths;
    for (int m = 0; m < 4 && m * 32u < n; ++m) out += PackBits(minis[m], widths[m]);
  }
  return out;
}

std::string Int32s(const std::vector<int32_t>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * 4);
}

// ---- Tests ----

TEST(RleDecoderTest, AllBitWidths) {
  std::mt19937_64 rng(1);
  for (int width = 0; width <= 32; ++width) {
    uint64_t mask = width == 0 ? 0 : (width == 32 ? 0xffffffffull : (1ull << width) - 1);
    std::vector<uint64_t> packed(37);
    for (auto& v : packed) v = rng() & mask;
    uint32_t rle_value = static_cast<uint32_t>(rng() & mask);
    std::string data = EncodeHybrid(width, rle_value, 11, packed);
    // Decode in uneven pieces to cross run boundaries.
    RleBitPackedDecoder dec(reinterpret_cast<const uint8_t*>(data.data()), data.size(), width);
    std::vector<uint32_t> got(48);
    ASSERT_OK(dec.Get(got.data(), 5));
    ASSERT_OK(dec.Get(got.data() + 5, 9));
    ASSERT_OK(dec.Get(got.data() + 14, 34));
    for (int i = 0; i < 11; ++i) ASSERT_EQ(got[i], width == 0 ? 0 : rle_value) << width;
    for (int i = 0; i < 37; ++i) ASSERT_EQ(got[11 + i], packed[i]) << width << " " << i;
  }
}

TEST(RleDecoderTest, RunPastTheEndIsAnError) {
  std::string data = EncodeHybrid(3, 5, 4, {});
  RleBitPackedDecoder dec(reinterpret_cast<const uint8_t*>(data.data()), data.size(), 3);
  std::vector<uint32_t> out(10);
  ASSERT_ERROR(dec.Get(out.data(), 10), StatusCode::kCorruption, "RLE run");
  // An RLE run whose value byte is missing.
  std::string cut = data.substr(0, 1);
  RleBitPackedDecoder dec2(reinterpret_cast<const uint8_t*>(cut.data()), cut.size(), 3);
  ASSERT_ERROR(dec2.Get(out.data(), 1), StatusCode::kCorruption, "past the end");
}

TEST(DecodingTest, PlainAllPhysicalTypes) {
  ValueBuffer b;
  b.Reset(PhysicalType::kBoolean, 0);
  // 10 booleans, LSB first: 1,0,1,1,0,0,0,1 | 1,1
  std::string bools = {static_cast<char>(0b10001101), static_cast<char>(0b11)};
  ASSERT_OK(DecodeValues(Encoding::kPlain, bools, 10, nullptr, &b));
  EXPECT_EQ(b.fixed, std::vector<uint8_t>({1, 0, 1, 1, 0, 0, 0, 1, 1, 1}));

  b.Reset(PhysicalType::kInt32, 0);
  ASSERT_OK(DecodeValues(Encoding::kPlain, Int32s({7, -1, 1 << 30}), 3, nullptr, &b));
  ASSERT_EQ(b.size(), 3u);
  EXPECT_EQ(LoadLE<int32_t>(b.fixed.data() + 4), -1);
  ASSERT_ERROR(DecodeValues(Encoding::kPlain, Int32s({1}), 2, nullptr, &b), StatusCode::kCorruption,
               "exceed");

  b.Reset(PhysicalType::kInt96, 0);
  ASSERT_OK(DecodeValues(Encoding::kPlain, std::string(24, 'x'), 2, nullptr, &b));
  EXPECT_EQ(b.size(), 2u);

  b.Reset(PhysicalType::kFixedLenByteArray, 3);
  ASSERT_OK(DecodeValues(Encoding::kPlain, "abcdef", 2, nullptr, &b));
  EXPECT_EQ(b.size(), 2u);

  b.Reset(PhysicalType::kByteArray, 0);
  std::string ba;
  for (std::string s : {"", "hello", "x"}) {
    AppendLE<uint32_t>(&ba, static_cast<uint32_t>(s.size()));
    ba += s;
  }
  ASSERT_OK(DecodeValues(Encoding::kPlain, ba, 3, nullptr, &b));
  ASSERT_EQ(b.size(), 3u);
  EXPECT_EQ(b.Bytes(0), "");
  EXPECT_EQ(b.Bytes(1), "hello");
  EXPECT_EQ(b.Bytes(2), "x");
  ASSERT_ERROR(DecodeValues(Encoding::kPlain, ba.substr(0, ba.size() - 1), 3, nullptr, &b),
               StatusCode::kCorruption, "past the end");
}

TEST(DecodingTest, DictionaryIndices) {
  ValueBuffer dict;
  dict.Reset(PhysicalType::kByteArray, 0);
  ASSERT_OK(dict.AppendBytes("a"));
  ASSERT_OK(dict.AppendBytes("bb"));
  ASSERT_OK(dict.AppendBytes("ccc"));
  std::string page = std::string(1, 2) + EncodeHybrid(2, 1, 3, {2, 0, 2});
  ValueBuffer out;
  out.Reset(PhysicalType::kByteArray, 0);
  ASSERT_OK(DecodeValues(Encoding::kRleDictionary, page, 6, &dict, &out));
  std::vector<std::string> got;
  for (size_t i = 0; i < out.size(); ++i) got.emplace_back(out.Bytes(i));
  EXPECT_EQ(got, std::vector<std::string>({"bb", "bb", "bb", "ccc", "a", "ccc"}));

  std::string bad = std::string(1, 2) + EncodeHybrid(2, 3, 1, {});
  ASSERT_ERROR(DecodeValues(Encoding::kRleDictionary, bad, 1, &dict, &out), StatusCode::kCorruption,
               "dictionary index 3 out of range");

  ValueBuffer idict;
  idict.Reset(PhysicalType::kInt64, 0);
  for (int64_t v : {int64_t{10}, int64_t{-20}}) {
    uint8_t buf[8];
    StoreLE(buf, v);
    idict.fixed.insert(idict.fixed.end(), buf, buf + 8);
  }
  ValueBuffer iout;
  iout.Reset(PhysicalType::kInt64, 0);
  std::string ipage = std::string(1, 1) + EncodeHybrid(1, 0, 0, {1, 0, 1});
  ASSERT_OK(DecodeValues(Encoding::kPlainDictionary, ipage, 3, &idict, &iout));
  EXPECT_EQ(LoadLE<int64_t>(iout.fixed.data()), -20);
  EXPECT_EQ(LoadLE<int64_t>(iout.fixed.data() + 8), 10);
}

TEST(DecodingTest, DeltaBinaryPackedSpecExample) {
  // Encodings.md: 1..5 → header (128, 4, 5, zigzag 1) and one block with min
  // delta 1 and all bit widths 0.
  std::string data = {'\x80', '\x01', 4, 5, 2, 2, 0, 0, 0, 0};
  std::vector<uint8_t> out;
  size_t consumed = 0;
  ASSERT_OK(DecodeDeltaBinaryPacked(data, 5, 4, &out, &consumed));
  ASSERT_EQ(out.size(), 20u);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(LoadLE<int32_t>(out.data() + 4 * i), i + 1);
  EXPECT_EQ(consumed, data.size());
}

TEST(DecodingTest, DeltaBinaryPackedRandomAndExtremes) {
  std::mt19937_64 rng(3);
  std::vector<int64_t> v64 = {INT64_MIN, INT64_MAX, 0, -1, INT64_MAX, INT64_MIN};
  for (int i = 0; i < 700; ++i) v64.push_back(static_cast<int64_t>(rng() >> (rng() % 64)));
  ValueBuffer b;
  b.Reset(PhysicalType::kInt64, 0);
  ASSERT_OK(
      DecodeValues(Encoding::kDeltaBinaryPacked, EncodeDelta(v64, false), v64.size(), nullptr, &b));
  ASSERT_EQ(b.size(), v64.size());
  for (size_t i = 0; i < v64.size(); ++i) ASSERT_EQ(LoadLE<int64_t>(&b.fixed[i * 8]), v64[i]) << i;

  std::vector<int64_t> v32 = {INT32_MIN, INT32_MAX, 5, -5};
  for (int i = 0; i < 300; ++i) v32.push_back(static_cast<int32_t>(rng()));
  b.Reset(PhysicalType::kInt32, 0);
  ASSERT_OK(
      DecodeValues(Encoding::kDeltaBinaryPacked, EncodeDelta(v32, true), v32.size(), nullptr, &b));
  for (size_t i = 0; i < v32.size(); ++i) ASSERT_EQ(LoadLE<int32_t>(&b.fixed[i * 4]), v32[i]) << i;

  std::string enc = EncodeDelta(v64, false);
  ASSERT_ERROR(DecodeValues(Encoding::kDeltaBinaryPacked, enc.substr(0, enc.size() / 2), v64.size(),
                            nullptr, &b),
               StatusCode::kCorruption, "DELTA_BINARY_PACKED");
}

TEST(DecodingTest, DeltaByteArrays) {
  std::vector<std::string> words = {"apple", "applesauce", "apply", "banana", "", "band"};
  std::vector<int64_t> lengths, prefixes, suffix_lengths;
  std::string concat, suffixes;
  std::string prev;
  for (const auto& w : words) {
    lengths.push_back(static_cast<int64_t>(w.size()));
    concat += w;
    size_t p = 0;
    while (p < prev.size() && p < w.size() && prev[p] == w[p]) ++p;
    prefixes.push_back(static_cast<int64_t>(p));
    suffix_lengths.push_back(static_cast<int64_t>(w.size() - p));
    suffixes += w.substr(p);
    prev = w;
  }
  ValueBuffer b;
  b.Reset(PhysicalType::kByteArray, 0);
  ASSERT_OK(DecodeValues(Encoding::kDeltaLengthByteArray, EncodeDelta(lengths, true) + concat,
                         words.size(), nullptr, &b));
  for (size_t i = 0; i < words.size(); ++i) EXPECT_EQ(b.Bytes(i), words[i]);

  b.Reset(PhysicalType::kByteArray, 0);
  std::string dba = EncodeDelta(prefixes, true) + EncodeDelta(suffix_lengths, true) + suffixes;
  ASSERT_OK(DecodeValues(Encoding::kDeltaByteArray, dba, words.size(), nullptr, &b));
  for (size_t i = 0; i < words.size(); ++i) EXPECT_EQ(b.Bytes(i), words[i]);

  // A prefix longer than the previous value.
  std::string bad = EncodeDelta({0, 9}, true) + EncodeDelta({1, 1}, true) + "ab";
  ASSERT_ERROR(DecodeValues(Encoding::kDeltaByteArray, bad, 2, nullptr, &b),
               StatusCode::kCorruption, "prefix");
}

TEST(DecodingTest, ByteStreamSplit) {
  std::vector<float> f = {1.5f, -2.25f, 1e30f};
  std::string raw(reinterpret_cast<const char*>(f.data()), 12), split(12, '\0');
  for (int i = 0; i < 3; ++i) {
    for (int k = 0; k < 4; ++k) split[k * 3 + i] = raw[i * 4 + k];
  }
  ValueBuffer b;
  b.Reset(PhysicalType::kFloat, 0);
  ASSERT_OK(DecodeValues(Encoding::kByteStreamSplit, split, 3, nullptr, &b));
  EXPECT_EQ(std::memcmp(b.fixed.data(), f.data(), 12), 0);
  // FIXED_LEN_BYTE_ARRAY(2) per the newer spec.
  b.Reset(PhysicalType::kFixedLenByteArray, 2);
  ASSERT_OK(DecodeValues(Encoding::kByteStreamSplit, "acbd", 2, nullptr, &b));
  EXPECT_EQ(std::string(b.fixed.begin(), b.fixed.end()), "abcd");
}

TEST(DecodingTest, Levels) {
  std::string rle = EncodeHybrid(2, 2, 3, {0, 1, 2, 1});
  std::string v1;
  AppendLE<uint32_t>(&v1, static_cast<uint32_t>(rle.size()));
  v1 += rle + "values";
  std::vector<int16_t> levels(7);
  size_t consumed = 0;
  ASSERT_OK(DecodeLevels(Encoding::kRle, 2, v1, 7, true, levels.data(), &consumed));
  EXPECT_EQ(levels, std::vector<int16_t>({2, 2, 2, 0, 1, 2, 1}));
  EXPECT_EQ(v1.substr(consumed), "values");
  // Deprecated BIT_PACKED levels are packed most significant bit first.
  std::string msb = {static_cast<char>(0b10011100)};  // 2, 1, 3, 0 at width 2
  std::vector<int16_t> l2(4);
  ASSERT_OK(DecodeLevels(Encoding::kBitPacked, 2, msb, 4, false, l2.data(), &consumed));
  EXPECT_EQ(l2, std::vector<int16_t>({2, 1, 3, 0}));
  ASSERT_ERROR(DecodeLevels(Encoding::kRle, 2, v1.substr(0, 3), 7, true, levels.data(), &consumed),
               StatusCode::kCorruption, "length prefix");
}

}  // namespace
}  // namespace sluice::parquet
