// String functions and LIKE. Lengths and positions count UTF-8 code points;
// lower/upper fold ASCII letters only (other bytes pass through unchanged).
#include <re2/re2.h>

#include "expr/kernels.h"

namespace sluice::expr::internal {
namespace {

bool IsContinuation(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

int64_t CodePoints(std::string_view s) {
  int64_t n = 0;
  for (char c : s) n += IsContinuation(c) ? 0 : 1;
  return n;
}

// Byte offset of code point `k` (0-based) in s, or s.size().
size_t ByteOfCodePoint(std::string_view s, int64_t k) {
  size_t i = 0;
  while (i < s.size() && k > 0) {
    ++i;
    while (i < s.size() && IsContinuation(s[i])) ++i;
    --k;
  }
  return i;
}

// The byte length of the code point starting at s[i].
size_t CodePointBytes(std::string_view s, size_t i) {
  size_t j = i + 1;
  while (j < s.size() && IsContinuation(s[j])) ++j;
  return j - i;
}

}  // namespace

// `value` LIKE `pattern`: % any run of characters, _ one character, `escape`
// (when not 0) makes the next pattern character literal. Linear in practice:
// only the last % seen is backtracked to.
bool LikeMatch(std::string_view value, std::string_view pattern, char escape) {
  size_t v = 0, p = 0;
  size_t star_p = std::string_view::npos, star_v = 0;
  while (v < value.size()) {
    if (p < pattern.size()) {
      char c = pattern[p];
      if (c == '%') {
        star_p = ++p;
        star_v = v;
        continue;
      }
      if (c == '_') {
        v += CodePointBytes(value, v);
        ++p;
        continue;
      }
      if (escape != 0 && c == escape && p + 1 < pattern.size()) c = pattern[++p];
      if (value[v] == c) {
        ++v;
        ++p;
        continue;
      }
    }
    if (star_p == std::string_view::npos) return false;
    p = star_p;  // let the last % absorb one more character
    star_v += CodePointBytes(value, star_v);
    v = star_v;
  }
  while (p < pattern.size() && pattern[p] == '%') ++p;
  return p == pattern.size();
}

namespace {

// Applies `f(row)` to rows active with every argument valid; f appends one
// value to `out` (or returns an error text: the row fails).
template <typename F>
Column Map(const Node& node, const std::vector<Column>& args, RowErrors* errors,
           const Active& active, F&& f) {
  int64_t n = args[0].size();
  Column out(node.type);
  out.Reserve(n);
  for (int64_t i = 0; i < n; ++i) {
    if (!IsActive(active, i) || !AllValid(args, i)) {
      out.AppendNull();
      continue;
    }
    if (const char* error = f(i, &out)) {
      RowError(errors, node, i, error);
      out.AppendNull();
    }
  }
  return out;
}

std::string_view Trim(std::string_view s, bool left, bool right) {
  while (left && !s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (right && !s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

}  // namespace

Result<Column> EvalString(const Node& node, std::vector<Column>& args, RowErrors* errors,
                          const Active& active) {
  const Column& a = args[0];
  std::string buf;
  switch (node.op) {
    case Op::kConcat:
      return Map(node, args, errors, active, [&](int64_t i, Column* out) {
        buf.assign(a.GetBytes(i));
        buf.append(args[1].GetBytes(i));
        out->AppendBytes(buf);
        return nullptr;
      });
    case Op::kConcatSkipNull: {
      Column out(node.type);
      out.Reserve(a.size());
      for (int64_t i = 0; i < a.size(); ++i) {
        if (!IsActive(active, i)) {
          out.AppendNull();
          continue;
        }
        buf.clear();
        for (const Column& c : args) {
          if (c.IsValid(i)) buf.append(c.GetBytes(i));
        }
        out.AppendBytes(buf);
      }
      return out;
    }
    case Op::kLower:
    case Op::kUpper: {
      bool upper = node.op == Op::kUpper;
      return Map(node, args, errors, active, [&](int64_t i, Column* out) {
        buf.assign(a.GetBytes(i));
        for (char& c : buf) {
          if (upper && c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
          if (!upper && c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
        }
        out->AppendBytes(buf);
        return nullptr;
      });
    }
    case Op::kLength:
      return Map(node, args, errors, active, [&](int64_t i, Column* out) {
        out->Append<int64_t>(CodePoints(a.GetBytes(i)));
        return nullptr;
      });
    case Op::kSubstring:
      return Map(node, args, errors, active, [&](int64_t i, Column* out) -> const char* {
        std::string_view s = a.GetBytes(i);
        // Characters [start, end) in 1-based positions, clipped to the string.
        int64_t start = args[1].Value<int64_t>(i);
        int64_t end = INT64_MAX;
        if (args.size() > 2) {
          int64_t len = args[2].Value<int64_t>(i);
          if (len < 0) return "negative substring length";
          if (__builtin_add_overflow(start, len, &end)) end = INT64_MAX;
        }
        int64_t first = std::max<int64_t>(start, 1) - 1;
        if (end <= first + 1) {
          out->AppendBytes("");
          return nullptr;
        }
        size_t b = ByteOfCodePoint(s, first);
        size_t e = end == INT64_MAX ? s.size() : b + ByteOfCodePoint(s.substr(b), end - 1 - first);
        out->AppendBytes(s.substr(b, e - b));
        return nullptr;
      });
    case Op::kTrim:
    case Op::kLTrim:
    case Op::kRTrim: {
      bool left = node.op != Op::kRTrim, right = node.op != Op::kLTrim;
      return Map(node, args, errors, active, [&](int64_t i, Column* out) {
        out->AppendBytes(Trim(a.GetBytes(i), left, right));
        return nullptr;
      });
    }
    case Op::kStartsWith:
      return Map(node, args, errors, active, [&](int64_t i, Column* out) {
        out->AppendBool(a.GetBytes(i).substr(0, args[1].GetBytes(i).size()) == args[1].GetBytes(i));
        return nullptr;
      });
    case Op::kRegexpMatches: {
      const re2::RE2& re = *node.regex;
      return Map(node, args, errors, active, [&](int64_t i, Column* out) {
        std::string_view s = a.GetBytes(i);
        out->AppendBool(re2::RE2::PartialMatch(re2::StringPiece(s.data(), s.size()), re));
        return nullptr;
      });
    }
    case Op::kLike:
      return Map(node, args, errors, active, [&](int64_t i, Column* out) {
        out->AppendBool(LikeMatch(a.GetBytes(i), node.pattern, node.like_escape));
        return nullptr;
      });
    default: return Status::Internal("{}: unknown string function", node.where);
  }
}

}  // namespace sluice::expr::internal
