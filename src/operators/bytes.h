// Little-endian encoding helpers for the operators' state (docs/state.md).
// Private to src/operators.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace sluice::operators::internal {

// The kind byte after a state file's magic: the whole state, or the changes
// since the chain's previous file (pipeline/state_files.h chains them).
constexpr uint8_t kFullState = 0, kStateDelta = 1;

template <typename T>
void Put(std::string* out, T v) {
  out->append(reinterpret_cast<const char*>(&v), sizeof(T));
}

// Reads a T from the front of `in`; false (and `in` untouched) when too short.
template <typename T>
bool Get(std::string_view* in, T* v) {
  if (in->size() < sizeof(T)) return false;
  std::memcpy(v, in->data(), sizeof(T));
  in->remove_prefix(sizeof(T));
  return true;
}

// u32 length, then the bytes.
inline void PutBytes(std::string* out, std::string_view bytes) {
  Put<uint32_t>(out, static_cast<uint32_t>(bytes.size()));
  out->append(bytes);
}

inline bool GetBytes(std::string_view* in, std::string* out) {
  uint32_t n = 0;
  std::string_view rest = *in;
  if (!Get(&rest, &n) || rest.size() < n) return false;
  out->assign(rest.data(), n);
  rest.remove_prefix(n);
  *in = rest;
  return true;
}

}  // namespace sluice::operators::internal
