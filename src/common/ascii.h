// ASCII case folding, the same in every locale: SQL keywords and
// identifiers, HTTP header names, SigV4's canonical headers and partition
// transform names are ASCII by their grammars; other bytes pass unchanged.
#pragma once

#include <algorithm>
#include <string>
#include <string_view>

namespace sluice {

inline char AsciiLowerChar(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c; }
inline char AsciiUpperChar(char c) { return c >= 'a' && c <= 'z' ? static_cast<char>(c - 32) : c; }

inline std::string AsciiLower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = AsciiLowerChar(c);
  return out;
}

inline std::string AsciiUpper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = AsciiUpperChar(c);
  return out;
}

inline bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return AsciiLowerChar(x) == AsciiLowerChar(y);
         });
}

}  // namespace sluice
