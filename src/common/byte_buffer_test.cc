#include "common/byte_buffer.h"

#include <cstdint>
#include <cstring>
#include <string>

#include "common/testing.h"

namespace sluice {
namespace {

TEST(ByteBuffer, ExtendKeepsTheBytesBeforeAndLeavesRoomToWriteInPlace) {
  ByteBuffer b;
  EXPECT_TRUE(b.empty());
  b.Append("head:");
  std::string big(100000, 'x');
  std::memcpy(b.Extend(big.size()), big.data(), big.size());  // grows past the first block
  EXPECT_EQ(b.size(), 5 + big.size());
  EXPECT_EQ(b.view().substr(0, 5), "head:");
  EXPECT_EQ(b.view().substr(5), big);
  EXPECT_GE(b.capacity(), b.size());
  b.Truncate(3);
  EXPECT_EQ(b.view(), "hea");
}

TEST(ByteBuffer, ClearKeepsTheBlockAndMoveLeavesAnEmptyBuffer) {
  ByteBuffer a;
  a.Append("abc");
  a.Reserve(4096);
  const char* block = a.data();
  a.clear();
  EXPECT_TRUE(a.empty());
  a.Append("xyz");
  EXPECT_EQ(a.data(), block);  // reused, not reallocated
  ByteBuffer b(std::move(a));
  EXPECT_EQ(b.view(), "xyz");
  EXPECT_EQ(a.size(), 0u);      // NOLINT(bugprone-use-after-move): the contract
  EXPECT_EQ(a.capacity(), 0u);  // NOLINT(bugprone-use-after-move)
  a.Append("again");            // usable after the move
  EXPECT_EQ(a.view(), "again");
}

TEST(ByteBuffer, ReserveGrowsToWhatIsAskedAndKeepsTheBytes) {
  ByteBuffer b;
  b.Reserve(1000);
  EXPECT_EQ(b.capacity(), 1000u);
  b.Append("abc");
  b.Reserve(1100);  // a little more: not doubled
  EXPECT_EQ(b.capacity(), 1100u);
  EXPECT_EQ(b.view(), "abc");
  b.Reserve(500);  // enough already
  EXPECT_EQ(b.capacity(), 1100u);
  b.Extend(1200);  // Extend doubles
  EXPECT_EQ(b.capacity(), 2200u);
  EXPECT_EQ(b.view().substr(0, 3), "abc");
}

TEST(ByteBuffer, ABlockOfAHugePageOrMoreIsAHugePageBlockAndKeepsItsBytesAsItGrows) {
  ByteBuffer b;
  b.Append("abc");
  b.Reserve(3 << 20);
  EXPECT_EQ(b.capacity(), (size_t{4} << 20) - ByteBuffer::kPadding);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(b.data()) % kHugePageBytes, 0u);
  EXPECT_EQ(b.view(), "abc");
  b.Extend(b.capacity() - b.size());  // full
  b.data()[b.size() - 1] = 'z';
  b.Extend(1);  // doubles, the bytes kept
  EXPECT_EQ(b.capacity(), (size_t{8} << 20) - ByteBuffer::kPadding);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(b.data()) % kHugePageBytes, 0u);
  EXPECT_EQ(b.view().substr(0, 3), "abc");
  EXPECT_EQ(b.data()[b.size() - 2], 'z');
}

TEST(ByteBuffer, AMoveTakesAHugeBlockAndOneMovedOntoLetsItsOwnGo) {
  ByteBuffer huge;
  huge.Reserve(kHugePageBytes);
  huge.Append("big");
  ByteBuffer small;
  small.Append("small");
  const char* block = huge.data();
  small = std::move(huge);  // the small block freed (ASan: no leak)
  EXPECT_EQ(small.data(), block);
  EXPECT_EQ(small.view(), "big");
  EXPECT_EQ(huge.capacity(), 0u);
  EXPECT_EQ(huge.data(), nullptr);
  ByteBuffer other;
  other.Reserve(kHugePageBytes);
  small = std::move(other);  // the huge block unmapped, another taken
  EXPECT_TRUE(small.empty());
  EXPECT_GE(small.capacity(), kHugePageBytes);
  ByteBuffer& same = small;
  small = std::move(same);  // a self-move keeps the block
  EXPECT_GE(small.capacity(), kHugePageBytes);
  small.Append("x");
  EXPECT_EQ(small.view(), "x");
}

TEST(ByteBuffer, PaddingPastTheEndIsReadable) {
  ByteBuffer b;
  b.Append("{}");
  // Under ASan a read past the block fails; the padding is inside it.
  volatile char sink = 0;
  for (size_t i = 0; i < ByteBuffer::kPadding; ++i) sink = sink ^ b.data()[b.size() + i];
  (void)sink;
  SUCCEED();
}

TEST(ByteBuffer, ZeroPaddingWritesTheBytesPastTheEndOnly) {
  ByteBuffer b;
  b.ZeroPadding();  // nothing allocated: nothing to write
  b.Append(std::string(200, 'x'));
  b.Truncate(10);  // the bytes past the end now hold 'x'
  b.ZeroPadding();
  EXPECT_EQ(b.view(), std::string(10, 'x'));
  EXPECT_EQ(std::string(b.data() + b.size(), ByteBuffer::kPadding),
            std::string(ByteBuffer::kPadding, '\0'));
  EXPECT_EQ(b.data()[b.size() + ByteBuffer::kPadding], 'x') << "no further than the padding";
}

}  // namespace
}  // namespace sluice
