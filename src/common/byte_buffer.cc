#include "common/byte_buffer.h"

#include <sys/mman.h>

#include <new>

namespace sluice {

void ByteBuffer::Resize(size_t to) {
  if (to + kPadding < kHugeBlock) {
    void* p = std::realloc(data_.get(), to + kPadding);
    if (p == nullptr) throw std::bad_alloc();
    (void)data_.release();
    data_.reset(static_cast<char*>(p));
    capacity_ = to;
    return;
  }
  const size_t bytes = (to + kPadding + kHugeBlock - 1) / kHugeBlock * kHugeBlock;
  void* p = std::aligned_alloc(kHugeBlock, bytes);
  if (p == nullptr) throw std::bad_alloc();
#ifdef MADV_HUGEPAGE
  // (Advice: where the kernel has no huge pages to give, or they are turned
  // off, the block is pages as any other.)
  (void)madvise(p, bytes, MADV_HUGEPAGE);
#endif
  if (size_ > 0) std::memcpy(p, data_.get(), size_);
  data_.reset(static_cast<char*>(p));
  capacity_ = bytes - kPadding;
}

}  // namespace sluice
