#include "common/huge_pages.h"

#include <sys/mman.h>

#include <cstdint>
#include <new>

namespace sluice {

HugeBlock MapHugeBlock(size_t bytes) {
  const size_t rounded = HugeBlockBytes(bytes);
  // A huge page more than needed, so that an aligned block lies within; the
  // head before it and the tail after it are unmapped.
  const size_t mapped = rounded + kHugePageBytes;
  void* p = mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  const auto start = reinterpret_cast<uintptr_t>(p);
  const uintptr_t aligned = (start + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes;
  const size_t head = aligned - start;
  const size_t tail = mapped - head - rounded;
  if (head > 0) munmap(p, head);
  if (tail > 0) munmap(reinterpret_cast<void*>(aligned + rounded), tail);
#ifdef MADV_HUGEPAGE
  (void)madvise(reinterpret_cast<void*>(aligned), rounded, MADV_HUGEPAGE);  // (a hint)
#endif
  return {reinterpret_cast<void*>(aligned), rounded};
}

void UnmapHugeBlock(HugeBlock block) {
  if (block.data != nullptr) munmap(block.data, block.bytes);
}

}  // namespace sluice
