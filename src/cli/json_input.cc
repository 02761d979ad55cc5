#include "cli/json_input.h"

#include <cerrno>
#include <cstring>

namespace sluice::cli {

namespace {
constexpr size_t kReadChunk = size_t{1} << 20;
}  // namespace

Result<std::unique_ptr<JsonLinesReader>> JsonLinesReader::Open(const std::string& path,
                                                               std::shared_ptr<const Schema> schema,
                                                               int64_t batch_rows) {
  std::unique_ptr<JsonLinesReader> r(new JsonLinesReader());
  r->path_ = path;
  if (path == "-") {
    r->file_ = stdin;
  } else {
    r->file_ = std::fopen(path.c_str(), "rb");
    if (r->file_ == nullptr)
      return Status::NotFound("cannot open {}: {}", path, std::strerror(errno));
    r->owned_ = true;
  }
  ASSIGN_OR_RETURN(r->decoder_, JsonDecoder::Make(schema));
  r->schema_ = std::move(schema);
  r->batch_rows_ = batch_rows;
  return r;
}

JsonLinesReader::~JsonLinesReader() {
  if (owned_) std::fclose(file_);
}

// Reads more input after the unconsumed bytes, keeping kPadding spare bytes
// after the data so simdjson can parse in place; false at end of input.
Result<bool> JsonLinesReader::Fill() {
  if (capacity_ - size_ < kReadChunk + JsonDecoder::kPadding) {
    size_t cap = std::max(capacity_ * 2, size_ + kReadChunk + JsonDecoder::kPadding);
    std::unique_ptr<char[]> grown(new char[cap]);
    if (size_ > 0) std::memcpy(grown.get(), buf_.get(), size_);
    buf_ = std::move(grown);
    capacity_ = cap;
  }
  size_t got = std::fread(buf_.get() + size_, 1, kReadChunk, file_);
  size_ += got;
  if (got == 0 && std::ferror(file_)) return Status::IOError("reading {}", path_);
  return got > 0;
}

Result<bool> JsonLinesReader::Next(Batch* batch) {
  *batch = Batch::Make(schema_);
  while (!eof_ && batch->num_rows() < batch_rows_) {
    ASSIGN_OR_RETURN(bool more, Fill());
    eof_ = !more;
    // Decode the complete lines; keep a partial last line for the next read.
    std::string_view data(buf_.get(), size_);
    size_t end = data.size();
    if (more) {
      size_t nl = data.rfind('\n');
      if (nl == std::string_view::npos) continue;
      end = nl + 1;
    }
    RETURN_IF_ERROR_CTX(decoder_->DecodeLines(data.substr(0, end), line_no_, batch, nullptr,
                                              nullptr, /*padded=*/true, &line_no_),
                        "{}", path_);
    std::memmove(buf_.get(), buf_.get() + end, size_ - end);
    size_ -= end;
  }
  return batch->num_rows() > 0;
}

}  // namespace sluice::cli
