// Rows printed by `sluice scan` and `sluice table changes`: JSON lines, CSV
// with a header, or an aligned table. Each row may start with leading fields
// (a change's kind and snapshot) before the batch's columns.
#pragma once

#include <string>
#include <vector>

#include "cli/table_printer.h"
#include "columnar/column.h"
#include "common/status.h"

namespace sluice::cli {

class RowOutput {
 public:
  // A leading field of a row: its value as JSON (for jsonl) and as text.
  struct Lead {
    std::string json;
    std::string text;
  };

  // `format`: jsonl, csv or table (kInvalidArgument otherwise). `lead_names`
  // name the leading fields, `schema` the batches' columns.
  static Result<RowOutput> Make(const std::string& format, std::vector<std::string> lead_names,
                                const Schema& schema);

  void Add(const Batch& batch, int64_t row, const std::vector<Lead>& lead = {});
  // Writes what is buffered (the whole table for the table format).
  void Finish();

 private:
  RowOutput(std::string format, std::vector<std::string> lead_names,
            std::vector<std::string> headers);
  void Flush();

  std::string format_;
  std::vector<std::string> lead_names_;
  std::string out_;
  TablePrinter printer_;
};

}  // namespace sluice::cli
