// Huge-page blocks: mapped memory for large arrays that are written through
// once they are made (a batch's records read in place, a key table's slots),
// aligned to and rounded up to kHugePageBytes and advised to the kernel as
// transparent huge pages (MADV_HUGEPAGE). The first write to each 4 KiB page
// of ordinary memory is a page fault, several microseconds each in a virtual
// machine (bench/README.md, "Page faults of a batch's records; shard ids from
// the value"); a huge page is one fault per 2 MiB, and fewer TLB misses on
// random reads. The advice is a hint: where the kernel has no huge page to
// give, or they are turned off, the block is ordinary pages.
//
// A block is zeroed (fresh mapped memory), and costs a mapping of its own:
// for arrays of megabytes, not for many small ones.
#pragma once

#include <cstddef>
#include <new>

namespace sluice {

// A huge page of x86-64 and arm64 (with 4 KiB pages).
inline constexpr size_t kHugePageBytes = size_t{2} << 20;

struct HugeBlock {
  void* data = nullptr;
  size_t bytes = 0;  // what was asked, rounded up to kHugePageBytes
};

// A zeroed block of at least `bytes` (> 0) bytes; throws std::bad_alloc when
// it cannot be mapped.
HugeBlock MapHugeBlock(size_t bytes);
// Unmaps a block MapHugeBlock made (none: a no-op).
void UnmapHugeBlock(HugeBlock block);
// What MapHugeBlock maps for `bytes`: rounded up to kHugePageBytes.
inline size_t HugeBlockBytes(size_t bytes) {
  return (bytes + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes;
}

// A std allocator for arrays that grow to megabytes and are refilled, kept
// (a batch's records, sources/raw_batch.h): an array of half a huge page or
// more is a huge-page block (rounded up, so at most half of it unused), a
// smaller one comes from operator new. Stateless: any two are equal. As with
// ByteBuffer's blocks, ASan does not check a huge-page array's bounds or
// lifetime (a pointer kept across a growth reads unmapped memory or another
// mapping), and MSan and valgrind take it as written.
template <typename T>
struct HugePageAllocator {
  static_assert(alignof(T) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__);
  using value_type = T;
  HugePageAllocator() = default;
  template <typename U>
  HugePageAllocator(const HugePageAllocator<U>&) {}  // NOLINT: a rebind

  // Whether an array of n is a huge-page block.
  static bool Huge(size_t n) { return n * sizeof(T) >= kHugePageBytes / 2; }
  T* allocate(size_t n) {
    if (!Huge(n)) return static_cast<T*>(::operator new(n * sizeof(T)));
    return static_cast<T*>(MapHugeBlock(n * sizeof(T)).data);
  }
  void deallocate(T* p, size_t n) {
    if (!Huge(n)) {
      ::operator delete(p);
      return;
    }
    UnmapHugeBlock({p, HugeBlockBytes(n * sizeof(T))});
  }
  bool operator==(const HugePageAllocator&) const { return true; }
};

}  // namespace sluice
