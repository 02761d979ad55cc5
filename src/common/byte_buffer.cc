#include "common/byte_buffer.h"

#include <new>

namespace sluice {

void ByteBuffer::Resize(size_t to) {
  if (to + kPadding < kHugePageBytes) {
    void* p = std::realloc(data_, to + kPadding);
    if (p == nullptr) throw std::bad_alloc();
    data_ = static_cast<char*>(p);
    capacity_ = to;
    return;
  }
  HugeBlock block = MapHugeBlock(to + kPadding);
  if (size_ > 0) std::memcpy(block.data, data_, size_);
  Release();
  data_ = static_cast<char*>(block.data);
  capacity_ = block.bytes - kPadding;
}

void ByteBuffer::Release() {
  if (Huge()) {
    UnmapHugeBlock({data_, capacity_ + kPadding});
  } else {
    std::free(data_);
  }
  data_ = nullptr;
  capacity_ = 0;
}

}  // namespace sluice
