#include "cli/table_printer.h"

#include <algorithm>
#include <cstdio>

#include "columnar/json_writer.h"

namespace sluice::cli {

namespace {
bool IsInteger(const std::string& s) {
  if (s.empty() || s.size() > 18) return false;
  size_t i = s[0] == '-' ? 1 : 0;
  if (i == s.size() || (s[i] == '0' && s.size() > i + 1)) return false;
  return std::all_of(s.begin() + static_cast<long>(i), s.end(), ::isdigit);
}
}  // namespace

void TablePrinter::Print(bool json) const {
  std::string out;
  if (json) {
    out.push_back('[');
    for (size_t r = 0; r < rows_.size(); ++r) {
      out += r ? ",\n {" : "{";
      for (size_t c = 0; c < headers_.size(); ++c) {
        if (c) out.push_back(',');
        AppendJsonString(headers_[c], &out);
        out.push_back(':');
        const std::string& v = c < rows_[r].size() ? rows_[r][c] : std::string();
        if (IsInteger(v)) {
          out += v;
        } else {
          AppendJsonString(v, &out);
        }
      }
      out.push_back('}');
    }
    out += "]\n";
  } else {
    std::vector<size_t> width(headers_.size());
    for (size_t c = 0; c < headers_.size(); ++c) width[c] = headers_[c].size();
    for (const auto& row : rows_) {
      for (size_t c = 0; c < row.size() && c < width.size(); ++c) {
        width[c] = std::max(width[c], row[c].size());
      }
    }
    auto line = [&](const std::vector<std::string>& row) {
      for (size_t c = 0; c < headers_.size(); ++c) {
        const std::string& v = c < row.size() ? row[c] : std::string();
        out += v;
        if (c + 1 < headers_.size()) out.append(width[c] - v.size() + 2, ' ');
      }
      while (!out.empty() && out.back() == ' ') out.pop_back();
      out.push_back('\n');
    };
    line(headers_);
    std::vector<std::string> rule;
    for (size_t w : width) rule.push_back(std::string(w, '-'));
    line(rule);
    for (const auto& row : rows_) line(row);
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
}

}  // namespace sluice::cli
