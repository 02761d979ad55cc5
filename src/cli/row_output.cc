#include "cli/row_output.h"

#include <cstdio>

#include "columnar/json_writer.h"

namespace sluice::cli {

namespace {

// A value as text for CSV and table output: JSON form without string quotes.
std::string PlainValue(const Column& c, int64_t row) {
  std::string s;
  if (c.IsNull(row)) return "";
  AppendJsonValue(c, row, &s);
  if (s.size() >= 2 && s.front() == '"' && !c.type()->is_nested()) {
    if (c.type()->id() == TypeId::kString) return std::string(c.GetBytes(row));
    return s.substr(1, s.size() - 2);
  }
  return s;
}

void AppendCsvField(const std::string& v, std::string* out) {
  if (v.find_first_of(",\"\n\r") == std::string::npos) {
    out->append(v);
    return;
  }
  out->push_back('"');
  for (char ch : v) {
    if (ch == '"') out->push_back('"');
    out->push_back(ch);
  }
  out->push_back('"');
}

}  // namespace

Result<RowOutput> RowOutput::Make(const std::string& format, std::vector<std::string> lead_names,
                                  const Schema& schema) {
  if (format != "jsonl" && format != "csv" && format != "table") {
    return Status::Invalid("--format must be jsonl, csv or table, not '{}'", format);
  }
  std::vector<std::string> headers = lead_names;
  for (const Field& f : schema.fields) headers.push_back(f.name);
  return RowOutput(format, std::move(lead_names), std::move(headers));
}

RowOutput::RowOutput(std::string format, std::vector<std::string> lead_names,
                     std::vector<std::string> headers)
    : format_(std::move(format)), lead_names_(std::move(lead_names)), printer_(headers) {
  if (format_ == "csv") {
    for (size_t i = 0; i < headers.size(); ++i) {
      if (i) out_.push_back(',');
      AppendCsvField(headers[i], &out_);
    }
    out_.push_back('\n');
  }
}

void RowOutput::Add(const Batch& b, int64_t r, const std::vector<Lead>& lead) {
  if (format_ == "jsonl") {
    size_t start = out_.size();
    AppendJsonRow(b, r, &out_);
    if (!lead.empty()) {
      // {"_lead":..., <the row's fields>}
      std::string fields;
      for (size_t i = 0; i < lead.size(); ++i) {
        fields += fmt::format("\"{}\":{}", lead_names_[i], lead[i].json);
        if (i + 1 < lead.size() || out_.size() - start > 2) fields.push_back(',');
      }
      out_.insert(start + 1, fields);
    }
    out_.push_back('\n');
  } else if (format_ == "csv") {
    for (size_t i = 0; i < lead.size(); ++i) {
      if (i) out_.push_back(',');
      AppendCsvField(lead[i].text, &out_);
    }
    for (size_t i = 0; i < b.columns.size(); ++i) {
      if (i || !lead.empty()) out_.push_back(',');
      AppendCsvField(PlainValue(b.columns[i], r), &out_);
    }
    out_.push_back('\n');
  } else {
    std::vector<std::string> row;
    for (const Lead& l : lead) row.push_back(l.text);
    for (const auto& c : b.columns) row.push_back(c.IsNull(r) ? "NULL" : PlainValue(c, r));
    printer_.AddRow(std::move(row));
  }
  if (out_.size() > (1 << 20)) Flush();
}

void RowOutput::Flush() {
  std::fwrite(out_.data(), 1, out_.size(), stdout);
  out_.clear();
}

void RowOutput::Finish() {
  Flush();
  if (format_ == "table") printer_.Print(false);
}

}  // namespace sluice::cli
