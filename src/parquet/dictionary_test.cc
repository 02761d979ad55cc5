#include "parquet/dictionary.h"

#include <cstring>
#include <map>
#include <string>

#include "common/testing.h"

namespace sluice::parquet {
namespace {

TEST(BytesDictionary, DenseIndicesInFirstSeenOrderAndPlainOutput) {
  BytesDictionary dict(0);
  std::map<std::string, uint32_t> expected;
  // Many short and long strings, including ones equal but for one middle byte.
  for (int round = 0; round < 2; ++round) {
    for (int i = 0; i < 50000; ++i) {
      std::string s = std::to_string(i % 1000) + std::string(i % 13, 'x') + std::to_string(i);
      if (i % 7 == 0) s = s.substr(0, i % 4);  // "", 1..3 bytes
      uint32_t idx = dict.GetOrInsert(s);
      auto [it, inserted] = expected.emplace(s, static_cast<uint32_t>(expected.size()));
      ASSERT_EQ(idx, it->second) << "value '" << s << "' round " << round;
      ASSERT_EQ(dict.value(idx), s);
    }
  }
  EXPECT_EQ(dict.size(), static_cast<int64_t>(expected.size()));
  std::string plain;
  dict.WritePlain(&plain);
  EXPECT_EQ(static_cast<int64_t>(plain.size()), dict.plain_size());
  // PLAIN BYTE_ARRAY: 4-byte little-endian length, then the bytes.
  uint32_t len0;
  std::memcpy(&len0, plain.data(), 4);
  EXPECT_EQ(plain.substr(4, len0), dict.value(0));
  dict.Clear();
  EXPECT_EQ(dict.size(), 0);
  EXPECT_EQ(dict.GetOrInsert("again"), 0u);
}

TEST(FixedDictionary, KeysByBitPatternAndWritesLittleEndian) {
  FixedDictionary dict(8);
  double neg_zero = -0.0, pos_zero = 0.0;
  uint64_t a, b;
  std::memcpy(&a, &neg_zero, 8);
  std::memcpy(&b, &pos_zero, 8);
  EXPECT_EQ(dict.GetOrInsert(a), 0u);
  EXPECT_EQ(dict.GetOrInsert(b), 1u);  // -0.0 and +0.0 stay distinct
  for (uint64_t i = 0; i < 100000; ++i) ASSERT_EQ(dict.GetOrInsert(i * 977 + 3), i + 2);
  EXPECT_EQ(dict.GetOrInsert(a), 0u);
  std::string plain;
  FixedDictionary four(4);
  four.GetOrInsert(0xfffffffeu);  // int32 -2
  four.GetOrInsert(7);
  four.WritePlain(&plain);
  EXPECT_EQ(plain, std::string("\xfe\xff\xff\xff\x07\x00\x00\x00", 8));
}

TEST(Hash, ShortStringsDifferingInAnyByteHashDifferently) {
  // Not a guarantee in general, but every byte must reach the hash.
  for (size_t n = 1; n <= 24; ++n) {
    std::string base(n, 'a');
    uint64_t h = HashBytes(base);
    for (size_t i = 0; i < n; ++i) {
      std::string s = base;
      s[i] = 'b';
      EXPECT_NE(HashBytes(s), h) << "length " << n << " byte " << i;
    }
  }
  EXPECT_NE(HashBytes(""), HashBytes(std::string(1, '\0')));
}

}  // namespace
}  // namespace sluice::parquet
