#include "common/crc32c.h"

#include <string>

#include "common/testing.h"

namespace sluice {
namespace {

// Check values from RFC 3720 appendix B.4 and the common "123456789" check value.
TEST(Crc32cTest, KnownVectors) {
  EXPECT_EQ(Crc32c(""), 0u);
  EXPECT_EQ(Crc32c("123456789"), 0xE3069283u);
  EXPECT_EQ(Crc32c(std::string(32, '\0')), 0x8A9136AAu);
  EXPECT_EQ(Crc32c(std::string(32, '\xff')), 0x62A8AB43u);
  std::string ascending;
  std::string descending;
  for (int i = 0; i < 32; ++i) {
    ascending.push_back(static_cast<char>(i));
    descending.push_back(static_cast<char>(31 - i));
  }
  EXPECT_EQ(Crc32c(ascending), 0x46DD794Eu);
  EXPECT_EQ(Crc32c(descending), 0x113FDB5Cu);
}

// Extending piecewise at every split point equals the one-shot value (covers the
// 8-byte fast path and the byte tail).
TEST(Crc32cTest, ExtendMatchesOneShot) {
  std::string data;
  for (int i = 0; i < 100; ++i) data.push_back(static_cast<char>(i * 37 + 11));
  uint32_t whole = Crc32c(data);
  for (size_t split = 0; split <= data.size(); ++split) {
    std::string_view v(data);
    EXPECT_EQ(Crc32cExtend(Crc32c(v.substr(0, split)), v.substr(split)), whole) << split;
  }
  data[50] ^= 1;
  EXPECT_NE(Crc32c(data), whole);
}

// The dispatched implementation (SSE4.2 where available) and the portable one
// agree on every length, alignment and starting value.
TEST(Crc32cTest, DispatchedMatchesPortable) {
  std::string data;
  uint32_t x = 12345;
  for (int i = 0; i < 4096; ++i) {
    x = x * 1103515245u + 12345u;
    data.push_back(static_cast<char>(x >> 24));
  }
  for (size_t start = 0; start < 9; ++start) {
    for (size_t len : {0, 1, 7, 8, 9, 63, 64, 65, 1000, 4000}) {
      std::string_view v = std::string_view(data).substr(start, len);
      EXPECT_EQ(Crc32cExtend(0, v), Crc32cPortable(0, v)) << start << " " << len;
      EXPECT_EQ(Crc32cExtend(0xdeadbeef, v), Crc32cPortable(0xdeadbeef, v)) << start << " " << len;
    }
  }
}

}  // namespace
}  // namespace sluice
