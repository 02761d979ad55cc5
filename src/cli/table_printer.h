// Output of listing commands: an aligned text table for people, or a JSON
// array of objects (--json) for scripts.
#pragma once

#include <string>
#include <vector>

namespace sluice::cli {

class TablePrinter {
 public:
  explicit TablePrinter(std::vector<std::string> headers) : headers_(std::move(headers)) {}
  void AddRow(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  // Prints to stdout; as JSON when `json` (values that look like integers are numbers).
  void Print(bool json) const;

 private:
  std::vector<std::string> headers_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace sluice::cli
