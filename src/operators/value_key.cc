// The bytes that identify a value (operators/value_key.h).
#include "operators/value_key.h"

#include "common/hash.h"
#include "operators/bytes.h"

namespace sluice::operators {

namespace {
using internal::GetBytes;
using internal::PutBytes;
}  // namespace

uint64_t StableHash(std::string_view bytes) {
  // FNV-1a over the bytes, then the splitmix64 finalizer to spread the bits.
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return SplitMix64(h);
}

void AppendValueKey(const Column& column, int64_t row, std::string* out) {
  if (column.IsNull(row)) {
    out->push_back(0);
    return;
  }
  out->push_back(1);
  if (column.type()->is_binary_like()) {
    PutBytes(out, column.GetBytes(row));
  } else if (column.type()->id() == TypeId::kBoolean) {
    out->push_back(column.GetBool(row) ? 1 : 0);
  } else {
    int w = column.type()->value_width();
    out->append(reinterpret_cast<const char*>(column.data<uint8_t>() + row * w), w);
  }
}

Status AppendFromValueKey(std::string_view* in, Column* column) {
  if (in->empty()) return Status::Corruption("value key: truncated");
  bool valid = (*in)[0] != 0;
  in->remove_prefix(1);
  if (!valid) {
    column->AppendNull();
    return Status::OK();
  }
  if (column->type()->is_binary_like()) {
    std::string bytes;
    if (!GetBytes(in, &bytes)) return Status::Corruption("value key: truncated bytes");
    column->AppendBytes(bytes);
    return Status::OK();
  }
  if (column->type()->id() == TypeId::kBoolean) {
    if (in->empty()) return Status::Corruption("value key: truncated boolean");
    column->AppendBool((*in)[0] != 0);
    in->remove_prefix(1);
    return Status::OK();
  }
  size_t w = static_cast<size_t>(column->type()->value_width());
  if (in->size() < w) return Status::Corruption("value key: truncated value");
  column->AppendRaw(in->data(), 1);
  in->remove_prefix(w);
  return Status::OK();
}

}  // namespace sluice::operators
