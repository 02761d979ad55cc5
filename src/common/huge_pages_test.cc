#include "common/huge_pages.h"

#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "common/testing.h"

namespace sluice {
namespace {

// The mapping that holds `p` in /proc/self/smaps: its range and its VmFlags
// line ("" when no mapping holds it).
struct Mapping {
  uintptr_t begin = 0, end = 0;
  std::string flags;
};
Mapping MappingOf(const void* p) {
  std::ifstream smaps("/proc/self/smaps");
  const auto at = reinterpret_cast<uintptr_t>(p);
  Mapping m;
  bool inside = false;
  for (std::string line; std::getline(smaps, line);) {
    uintptr_t begin = 0, end = 0;
    char perms[5];
    if (std::sscanf(line.c_str(), "%" SCNxPTR "-%" SCNxPTR " %4s", &begin, &end, perms) == 3) {
      inside = begin <= at && at < end;  // a mapping's first line
      if (inside) m = {begin, end, ""};
    } else if (inside && line.rfind("VmFlags:", 0) == 0) {
      m.flags = line;
      return m;
    }
  }
  return {};
}

TEST(HugePages, ABlockIsZeroedAlignedRoundedUpAndAdvisedHuge) {
  const size_t asked = 3 * kHugePageBytes + 1;
  HugeBlock block = MapHugeBlock(asked);
  ASSERT_NE(block.data, nullptr);
  EXPECT_EQ(block.bytes, 4 * kHugePageBytes);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(block.data) % kHugePageBytes, 0u);
  const auto* bytes = static_cast<const unsigned char*>(block.data);
  for (size_t i = 0; i < block.bytes; i += 4096) ASSERT_EQ(bytes[i], 0) << "byte " << i;
  EXPECT_EQ(bytes[block.bytes - 1], 0);
  static_cast<volatile unsigned char*>(block.data)[block.bytes - 1] = 7;  // writable to its end
  EXPECT_EQ(static_cast<volatile unsigned char*>(block.data)[block.bytes - 1], 7);
  if (std::ifstream("/sys/kernel/mm/transparent_hugepage/enabled")) {
    // "hg": the kernel was advised to back it with huge pages. The mapping is
    // the block alone (what was mapped around it to align it is unmapped).
    const Mapping m = MappingOf(block.data);
    ASSERT_NE(m.flags, "") << "no mapping holds the block in /proc/self/smaps";
    EXPECT_NE(m.flags.find(" hg"), std::string::npos) << m.flags;
    EXPECT_EQ(m.begin, reinterpret_cast<uintptr_t>(block.data));
    EXPECT_EQ(m.end - m.begin, block.bytes);
  }
  UnmapHugeBlock(block);
  EXPECT_EQ(MappingOf(block.data).flags, "") << "still mapped";
  UnmapHugeBlock({});  // none: a no-op
}

// A vector of the allocator: small, from the heap; from half a huge page on,
// a huge-page block of its own (aligned, advised), its elements kept as it
// grows and given back (unmapped) when it grows again or goes.
TEST(HugePages, AnArrayOfHalfAHugePageOrMoreIsAHugePageBlock) {
  using Allocator = HugePageAllocator<uint64_t>;
  constexpr size_t kHalf = kHugePageBytes / 2 / sizeof(uint64_t);
  EXPECT_FALSE(Allocator::Huge(kHalf - 1));
  EXPECT_TRUE(Allocator::Huge(kHalf));
  std::vector<uint64_t, Allocator> v;
  for (uint64_t i = 0; i < 1000; ++i) v.push_back(i * 3);
  v.reserve(kHalf);
  const uint64_t* first = v.data();
  EXPECT_EQ(reinterpret_cast<uintptr_t>(first) % kHugePageBytes, 0u);
  for (uint64_t i = v.size(); i < kHalf + 1; ++i) v.push_back(i * 3);  // grows: a new block
  const uint64_t* second = v.data();
  EXPECT_EQ(reinterpret_cast<uintptr_t>(second) % kHugePageBytes, 0u);
  EXPECT_EQ(MappingOf(first).flags, "") << "the first block is still mapped";
  for (uint64_t i = 0; i < v.size(); ++i) ASSERT_EQ(v[i], i * 3) << i;
  if (std::ifstream("/sys/kernel/mm/transparent_hugepage/enabled")) {
    const Mapping m = MappingOf(second);
    EXPECT_NE(m.flags.find(" hg"), std::string::npos) << m.flags;
  }
  std::vector<uint64_t, Allocator>().swap(v);
  EXPECT_EQ(MappingOf(second).flags, "") << "still mapped after the vector went";
}

}  // namespace
}  // namespace sluice
