// JsonLinesReader: streams a JSON lines file (or stdin, "-") into Batches of
// a schema, in bounded memory: lines are parsed in place from a growing read
// buffer with simdjson's padding. A line that does not fit the schema is an
// error naming the file, the line, the field and the reason.
#pragma once

#include <cstdio>
#include <memory>
#include <string>

#include "columnar/json_reader.h"

namespace sluice::cli {

class JsonLinesReader {
 public:
  static Result<std::unique_ptr<JsonLinesReader>> Open(const std::string& path,
                                                       std::shared_ptr<const Schema> schema,
                                                       int64_t batch_rows = 64 * 1024);
  ~JsonLinesReader();

  // Replaces *batch with the next rows (at least one); false at the end.
  Result<bool> Next(Batch* batch);
  int64_t lines_read() const { return line_no_ - 1; }

 private:
  JsonLinesReader() = default;
  Result<bool> Fill();

  std::string path_;
  std::FILE* file_ = nullptr;
  bool owned_ = false;
  bool eof_ = false;
  std::unique_ptr<JsonDecoder> decoder_;
  std::shared_ptr<const Schema> schema_;
  int64_t batch_rows_ = 0;
  int64_t line_no_ = 1;
  std::unique_ptr<char[]> buf_;
  size_t size_ = 0, capacity_ = 0;
};

}  // namespace sluice::cli
