// The decoding plan of JsonDecoder (json_reader.h): a schema compiled into a
// tree of nodes, one per field, with each struct's member lookup (exact raw-key
// comparison for simple names, then a hash map). Internal to src/columnar.
#pragma once

#include <simdjson.h>

#include <bit>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "columnar/types.h"

namespace sluice::json_internal {

namespace od = simdjson::ondemand;

// A cache line of "seen" bits: 512 members of a struct (MembersSeen).
struct alignas(64) SeenBits {
  uint64_t words[8] = {};
};

// How to decode one field: the schema compiled into a tree. A struct node (and
// the root) also keeps its member lookup table and scratch bits for the
// members a row has set; nodes are never re-entered while in use (a type
// cannot contain itself).
struct Node {
  const Field* field = nullptr;  // null for the root
  TypeId id = TypeId::kStruct;
  const DataType* type = nullptr;
  bool required = false;
  std::vector<std::unique_ptr<Node>> children;
  std::vector<std::string_view> names;
  std::unordered_map<std::string_view, int> index;
  // Scratch of MembersSeen for the members past the first 64.
  std::vector<SeenBits> seen_wide;
  // Names free of quotes, backslashes and control characters compare equal to
  // a key's raw (still escaped) JSON text.
  std::vector<uint8_t> simple;
  std::vector<uint64_t> prefix_word, prefix_mask;  // first (up to 8) bytes of each name

  // The member whose name is the raw key text, or -1 (then the key may still be
  // an escaped spelling of a name: see Find).
  int FindRaw(od::raw_json_string key, int hint) const {
    const char* p = key.raw();
    const int n = static_cast<int>(names.size());
    if (hint < n && RawEquals(p, hint)) return hint;
    if (n > 8) return -1;
    for (int i = 0; i < n; ++i) {
      if (RawEquals(p, i)) return i;
    }
    return -1;
  }

  // Whether the raw key text at `p` (after its opening quote) is exactly the
  // simple name `i`. Reading 8 bytes is safe: the input is padded.
  bool RawEquals(const char* p, int i) const {
    if (!simple[i]) return false;
    uint64_t w;
    std::memcpy(&w, p, 8);
    if ((w & prefix_mask[i]) != prefix_word[i]) return false;
    const std::string_view name = names[i];
    if (name.size() > 8 && std::memcmp(p + 8, name.data() + 8, name.size() - 8) != 0) {
      return false;
    }
    return p[name.size()] == '"';
  }

  int Find(std::string_view key, int hint) const {
    if (hint < static_cast<int>(names.size()) && names[hint] == key) return hint;
    if (names.size() <= 8) {
      for (size_t i = 0; i < names.size(); ++i) {
        if (names[i] == key) return static_cast<int>(i);
      }
      return -1;
    }
    auto it = index.find(key);
    return it == index.end() ? -1 : it->second;
  }
};

// The members of a struct that one row has set so far: bits in a local word
// for the first 64, in the node's scratch lines past that. (A row's decoding
// writes them for every member, so they are not in the node's small heap
// blocks: two lanes' decoders, built one after the other, shared cache lines
// there, and decoding at two lanes at once took 1.7x the CPU of one lane.)
class MembersSeen {
 public:
  explicit MembersSeen(Node& node) : wide_(node.seen_wide.data()) {
    for (SeenBits& line : node.seen_wide) line = SeenBits{};
  }
  // Marks member i; false if it was marked already.
  bool Mark(int i) {
    if (i < 64) [[likely]] {
      const uint64_t bit = uint64_t{1} << i;
      const bool fresh = (first_ & bit) == 0;
      first_ |= bit;
      return fresh;
    }
    uint64_t& word = WideWord(i);
    const uint64_t bit = uint64_t{1} << (i % 64);
    const bool fresh = (word & bit) == 0;
    word |= bit;
    return fresh;
  }
  // The first member from `from` on that is not marked, or `members`.
  int NextMissing(int from, int members) {
    if (from < 64) {
      uint64_t missing = ~first_ & (~uint64_t{0} << from);
      if (members < 64) missing &= (uint64_t{1} << members) - 1;
      if (missing != 0) return std::countr_zero(missing);
      from = 64;
    }
    for (int i = from; i < members; ++i) {
      if ((WideWord(i) & (uint64_t{1} << (i % 64))) == 0) return i;
    }
    return members;
  }

 private:
  uint64_t& WideWord(int i) {
    const int j = i - 64;
    return wide_[j / 512].words[(j % 512) / 64];
  }

  uint64_t first_ = 0;  // members 0-63
  SeenBits* wide_;
};

// The tree of a whole schema (the root is a struct of `fields`).
std::unique_ptr<Node> CompileSchemaTree(const std::vector<Field>& fields);

}  // namespace sluice::json_internal
