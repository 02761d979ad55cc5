#include "common/hash.h"

#include <string>

#include "common/endian.h"
#include "common/testing.h"

namespace sluice {
namespace {

std::string LongBytes(int64_t v) {
  std::string s;
  AppendLE(&s, v);
  return s;
}

// Iceberg spec, Appendix B.
TEST(Murmur3Test, IcebergAppendixBVectors) {
  EXPECT_EQ(Murmur3_32(LongBytes(34)), 2017239379);
  EXPECT_EQ(Murmur3_32("34"), -427558391);
  EXPECT_EQ(Murmur3_32(std::string("\x05\x8c", 2)), -500754589);
  EXPECT_EQ(Murmur3_32(LongBytes(17486)), -653330422);
  EXPECT_EQ(Murmur3_32(LongBytes(81068000000)), -662762989);
  EXPECT_EQ(Murmur3_32(LongBytes(1510871468000000)), -2047944441);
  EXPECT_EQ(Murmur3_32(LongBytes(1510871468000001)), -1207196810);
  EXPECT_EQ(Murmur3_32("iceberg"), 1210000089);
  EXPECT_EQ(Murmur3_32(std::string(
                "\xf7\x9c\x3e\x09\x67\x7c\x4b\xbd\xa4\x79\x3f\x34\x9c\xb7\x85\xe7", 16)),
            1488055340);
  EXPECT_EQ(Murmur3_32(std::string("\x00\x01\x02\x03", 4)), -188683207);
}

}  // namespace
}  // namespace sluice

#include "common/uuid.h"

namespace sluice {
namespace {

TEST(UuidTest, FormatAndUniqueness) {
  std::string a = NewUuid(), b = NewUuid();
  EXPECT_EQ(a.size(), 36u);
  EXPECT_EQ(a[14], '4');                                          // version
  EXPECT_NE(std::string("89ab").find(a[19]), std::string::npos);  // variant
  EXPECT_NE(a, b);
  for (int i = 0; i < 100; ++i) EXPECT_GT(NewSnapshotId(), 0);
}

}  // namespace
}  // namespace sluice
