#include "avro/reader.h"

#include <algorithm>
#include <cstring>
#include <mutex>
#include <unordered_map>

#include "avro/iceberg_schema.h"
#include "common/endian.h"

namespace sluice::avro {

namespace {

constexpr char kMagic[4] = {'O', 'b', 'j', 1};
constexpr int64_t kMaxBlockHeader = 20;  // two varints
constexpr int64_t kMaxZeroSizeRecords = int64_t{1} << 20;

// A header's schema, parsed: the Avro form and the Iceberg schema it maps to.
struct ParsedSchema {
  AvroNodePtr avro;
  std::shared_ptr<const Schema> iceberg;
};

// Parses a header's schema text, through a process-wide cache of the last
// schemas seen: a table's manifests share a handful of schemas (one per
// partition spec), and parsing one costs more than decoding a small manifest.
// Both forms are immutable, so readers share them. Failures are not cached.
Result<ParsedSchema> ParseHeaderSchema(const std::string& text) {
  constexpr size_t kCapacity = 64;
  // Never destroyed: a thread may still open a file while the process exits.
  static auto* mu = new std::mutex;
  static auto* cache = new std::unordered_map<std::string, ParsedSchema>;
  {
    std::lock_guard lock(*mu);
    if (auto it = cache->find(text); it != cache->end()) return it->second;
  }
  ASSIGN_OR_RETURN(AvroNodePtr avro, ParseAvroSchema(text));
  ASSIGN_OR_RETURN(Schema schema, AvroToIcebergSchema(*avro));
  ParsedSchema parsed{std::move(avro), std::make_shared<const Schema>(std::move(schema))};
  std::lock_guard lock(*mu);
  if (cache->size() >= kCapacity) cache->clear();
  cache->emplace(text, parsed);
  return parsed;
}

// Parses the header in `buf`. Returns false with *need_more when the buffer
// ended early (the caller retries with more of the file).
class HeaderParser {
 public:
  HeaderParser(const std::string& buf)
      : p_(reinterpret_cast<const uint8_t*>(buf.data())), begin_(p_), end_(p_ + buf.size()) {}
  bool need_more = false;
  std::string error;

  bool Parse(std::map<std::string, std::string>* meta, std::array<uint8_t, 16>* sync) {
    if (!Need(4)) return false;
    if (std::memcmp(p_, kMagic, 4) != 0)
      return Fail("bad magic: not an Avro object container file");
    p_ += 4;
    for (;;) {
      int64_t n;
      if (!Long(&n)) return false;
      if (n == 0) break;
      if (n < 0) {
        if (n == INT64_MIN) return Fail("bad metadata block count");
        n = -n;
        int64_t bytes;
        if (!Long(&bytes)) return false;
      }
      if (n > (end_ - p_) / 2) {  // each entry takes at least two bytes
        need_more = true;
        return Fail(fmt::format("metadata block of {} entries exceeds the bytes left", n));
      }
      for (int64_t i = 0; i < n; ++i) {
        std::string key, value;
        if (!String(&key) || !String(&value)) return false;
        (*meta)[key] = std::move(value);
      }
    }
    if (!Need(16)) return false;
    std::memcpy(sync->data(), p_, 16);
    p_ += 16;
    return true;
  }
  int64_t offset() const { return p_ - begin_; }

 private:
  bool Fail(std::string what) {
    error = fmt::format("header byte {}: {}", p_ - begin_, what);
    return false;
  }
  bool Need(int64_t n) {
    if (n <= end_ - p_) return true;
    need_more = true;
    return Fail(fmt::format("truncated: {} bytes needed", n));
  }
  bool Long(int64_t* v) {
    uint64_t u;
    const uint8_t* start = p_;
    if (!ReadVarint(&p_, end_, &u)) {
      if (end_ - start < 10) {
        need_more = true;
        return Fail("truncated varint");
      }
      return Fail("overlong varint");
    }
    *v = ZigZagDecode(u);
    return true;
  }
  bool String(std::string* out) {
    int64_t len;
    if (!Long(&len)) return false;
    if (len < 0) return Fail(fmt::format("negative length {}", len));
    if (!Need(len)) return false;
    out->assign(reinterpret_cast<const char*>(p_), len);
    p_ += len;
    return true;
  }
  const uint8_t* p_;
  const uint8_t* begin_;
  const uint8_t* end_;
};

}  // namespace

Result<std::unique_ptr<AvroReader>> AvroReader::Open(std::unique_ptr<InputFile> file,
                                                     ReaderOptions options) {
  auto reader = std::unique_ptr<AvroReader>(new AvroReader());
  reader->file_ = std::move(file);
  reader->options_ = options;
  RETURN_IF_ERROR(reader->ReadHeader());
  return reader;
}

std::string AvroReader::Metadata(const std::string& key) const {
  auto it = metadata_.find(key);
  return it == metadata_.end() ? std::string() : it->second;
}

Status AvroReader::Corrupt(int64_t offset, const std::string& what) const {
  return Status::Corruption("avro file {}: offset {}: {}", file_->path(), offset, what);
}

Status AvroReader::ReadHeader() {
  const int64_t size = file_->size();
  if (size < 4) return Corrupt(0, fmt::format("file of {} bytes is too short for Avro", size));
  int64_t chunk = std::min<int64_t>(size, 64 << 10);
  std::string buf;
  for (;;) {
    RETURN_IF_ERROR(file_->ReadAt(0, chunk, &buf));
    HeaderParser parser(buf);
    metadata_.clear();
    if (parser.Parse(&metadata_, &sync_)) {
      offset_ = parser.offset();
      break;
    }
    if (!parser.need_more || chunk == size) return Corrupt(0, parser.error);
    chunk = std::min(size, chunk * 4);
  }
  auto schema_it = metadata_.find("avro.schema");
  if (schema_it == metadata_.end()) return Corrupt(0, "header has no avro.schema");
  auto parsed = ParseHeaderSchema(schema_it->second);
  if (!parsed.ok()) return parsed.status().WithContextF("avro file {}", file_->path());
  avro_schema_ = parsed->avro;
  schema_ = parsed->iceberg;
  auto codec = ParseCodec(Metadata("avro.codec"));
  if (!codec.ok()) return codec.status().WithContextF("avro file {}", file_->path());
  codec_ = *codec;
  auto decoder = RecordDecoder::Make(*avro_schema_, options_.skip_field_ids);
  if (!decoder.ok()) return decoder.status().WithContextF("avro file {}", file_->path());
  decoder_ = std::move(decoder).value();
  return Status::OK();
}

Result<bool> AvroReader::LoadBlock() {
  const int64_t size = file_->size();
  if (offset_ >= size) return false;
  block_offset_ = offset_;
  std::string head;
  RETURN_IF_ERROR(file_->ReadAt(offset_, std::min(kMaxBlockHeader, size - offset_), &head));
  const uint8_t* p = reinterpret_cast<const uint8_t*>(head.data());
  const uint8_t* end = p + head.size();
  uint64_t count_raw, bytes_raw;
  std::string where = fmt::format("block {}", blocks_read_);
  if (!ReadVarint(&p, end, &count_raw) || !ReadVarint(&p, end, &bytes_raw)) {
    return Corrupt(offset_, where + ": truncated block header");
  }
  int64_t count = ZigZagDecode(count_raw);
  int64_t bytes = ZigZagDecode(bytes_raw);
  int64_t data_offset = offset_ + (p - reinterpret_cast<const uint8_t*>(head.data()));
  if (count < 0 || bytes < 0) {
    return Corrupt(offset_,
                   fmt::format("{}: negative record count {} or size {}", where, count, bytes));
  }
  if (bytes > options_.max_block_bytes) {
    return Corrupt(offset_, fmt::format("{}: size {} exceeds the limit {}", where, bytes,
                                        options_.max_block_bytes));
  }
  if (bytes > size - data_offset || size - data_offset - bytes < 16) {
    return Corrupt(offset_, fmt::format("{}: {} bytes and sync marker extend past the end of "
                                        "the file ({} bytes)",
                                        where, bytes, size));
  }
  RETURN_IF_ERROR(file_->ReadAt(data_offset, bytes + 16, &raw_));
  if (std::memcmp(raw_.data() + bytes, sync_.data(), 16) != 0) {
    return Corrupt(data_offset + bytes, where + ": sync marker does not match the header's");
  }
  raw_.resize(bytes);
  if (codec_ == Codec::kNull) {
    block_.swap(raw_);
  } else {
    Status st = Decompress(codec_, raw_, options_.max_block_bytes, &block_);
    if (!st.ok()) return Corrupt(data_offset, where + ": " + st.message());
  }
  int64_t min_bytes = decoder_->min_record_bytes();
  if (min_bytes > 0 ? count > static_cast<int64_t>(block_.size()) / min_bytes
                    : count > kMaxZeroSizeRecords) {
    return Corrupt(
        offset_, fmt::format("{}: {} records cannot fit in {} bytes", where, count, block_.size()));
  }
  offset_ = data_offset + bytes + 16;
  block_pos_ = 0;
  block_rows_left_ = count;
  block_count_ = count;
  ++blocks_read_;
  return true;
}

Result<bool> AvroReader::Next(Batch* batch) {
  if (batch->schema != schema_) {
    *batch = Batch::Make(schema_);
  } else {
    for (Column& c : batch->columns) c.Clear();
  }
  while (block_rows_left_ == 0) {
    ASSIGN_OR_RETURN(bool more, LoadBlock());
    if (!more) return false;
  }
  int64_t n = block_rows_left_;
  if (options_.batch_rows > 0) n = std::min(n, options_.batch_rows);
  for (Column& c : batch->columns) c.Reserve(n);
  Status st = decoder_->Decode(block_, &block_pos_, n, block_count_ - block_rows_left_, batch);
  std::string where = fmt::format("block {}", blocks_read_ - 1);
  if (!st.ok()) {
    return Corrupt(block_offset_,
                   fmt::format("{} ({}): {}", where,
                               codec_ == Codec::kNull ? "data" : "decompressed", st.message()));
  }
  block_rows_left_ -= n;
  rows_read_ += n;
  if (block_rows_left_ == 0 && block_pos_ != block_.size()) {
    return Corrupt(block_offset_, fmt::format("{}: {} bytes left after its last record", where,
                                              block_.size() - block_pos_));
  }
  return true;
}

}  // namespace sluice::avro
