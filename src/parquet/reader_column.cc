// Reading one column chunk: page headers, decompression, levels and values.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "common/endian.h"
#include "parquet/compression.h"
#include "parquet/reader_internal.h"
#include "parquet/rle_decoder.h"

namespace sluice::parquet::internal {

namespace {

// Pages larger than this, or holding more values, are rejected before
// allocating (corrupt headers). Writers use far smaller pages (parquet-mr and
// Arrow: 1 MiB and 20,000 rows by default).
constexpr int64_t kMaxPageSize = int64_t{1} << 30;
constexpr int64_t kMaxPageValues = int64_t{1} << 26;
// The most a column chunk's value buffers are reserved up front from the
// footer's counts and sizes (ChunkReader::ReserveValues).
constexpr size_t kMaxReserve = size_t{256} << 20;
constexpr size_t kMaxReserveRatio = 32;

class ChunkReader {
 public:
  ChunkReader(const ColumnMetaData& meta, const ColumnDescriptor& desc, ChunkData* out)
      : meta_(meta), desc_(desc), out_(out) {
    values_.Reset(desc.physical_type, desc.type_length);
    dict_.Reset(desc.physical_type, desc.type_length);
  }

  Status ReadPages(std::string_view chunk) {
    size_t pos = 0;
    int page = 0;
    const bool has_def = desc_.max_definition_level > 0;
    const bool has_rep = desc_.max_repetition_level > 0;
    if (meta_.num_values < 0 || meta_.num_values > (int64_t{1} << 40)) {
      return Status::Corruption("column chunk claims {} values", meta_.num_values);
    }
    // Reserve from the footer's count, bounded by what the chunk could hold.
    size_t expect = static_cast<size_t>(
        std::min<int64_t>(meta_.num_values, static_cast<int64_t>(chunk.size()) * 8 + 1024));
    const size_t levels = std::min(expect, ReserveCap(chunk.size()) / sizeof(int16_t));
    if (has_def) out_->def.reserve(levels);
    if (has_rep) out_->rep.reserve(levels);
    ReserveValues(expect, chunk.size());
    while (static_cast<int64_t>(out_->num_levels) < meta_.num_values) {
      if (pos >= chunk.size()) {
        return Status::Corruption("page {}: column chunk ends after {} of {} values", page,
                                  out_->num_levels, meta_.num_values);
      }
      size_t header_len = 0;
      auto header = DeserializePageHeader(chunk.substr(pos), &header_len);
      if (!header.ok()) return header.status().WithContextF("page {}: header", page);
      const PageHeader& h = *header;
      pos += header_len;
      if (h.compressed_page_size < 0 || h.uncompressed_page_size < 0 ||
          h.uncompressed_page_size > kMaxPageSize ||
          static_cast<size_t>(h.compressed_page_size) > chunk.size() - pos) {
        return Status::Corruption(
            "page {}: sizes (compressed {}, uncompressed {}) exceed the column chunk ({} bytes "
            "left)",
            page, h.compressed_page_size, h.uncompressed_page_size, chunk.size() - pos);
      }
      std::string_view body = chunk.substr(pos, h.compressed_page_size);
      pos += h.compressed_page_size;
      Status st;
      switch (h.type) {
        case PageType::kDictionaryPage: st = ReadDictionary(h, body); break;
        case PageType::kDataPage: st = ReadDataPageV1(h, body); break;
        case PageType::kDataPageV2: st = ReadDataPageV2(h, body); break;
        default: break;  // index pages and unknown pages are skipped
      }
      RETURN_IF_ERROR_CTX(st, "page {}", page);
      ++page;
    }
    if (static_cast<int64_t>(out_->num_levels) != meta_.num_values) {
      return Status::Corruption("pages hold {} values, column metadata says {}", out_->num_levels,
                                meta_.num_values);
    }
    return Status::OK();
  }

  ValueBuffer& values() { return values_; }

  // Reserves the values' buffers once, so that the pages append without
  // moving what came before: room for `expect` values (byte arrays: and the
  // uncompressed bytes less their lengths, as PLAIN pages hold them). Only a
  // hint from the footer, so bounded: at most kMaxReserve bytes a buffer and
  // kMaxReserveRatio times the chunk's bytes (a chunk that decodes to more
  // grows as it is read).
  static size_t ReserveCap(size_t chunk_bytes) {
    return std::min<size_t>(kMaxReserve, chunk_bytes * kMaxReserveRatio);
  }
  void ReserveValues(size_t expect, size_t chunk_bytes) {
    const size_t cap = ReserveCap(chunk_bytes);
    const size_t per_value =
        values_.is_byte_array() ? sizeof(uint32_t) : static_cast<size_t>(values_.width);
    const size_t count = std::min(expect, cap / std::max<size_t>(per_value, 1));
    size_t heap = 0;
    if (values_.is_byte_array() && meta_.total_uncompressed_size > 0) {
      const auto u = static_cast<uint64_t>(meta_.total_uncompressed_size);
      const uint64_t lengths = 4 * static_cast<uint64_t>(meta_.num_values);  // (num_values < 2^41)
      heap = static_cast<size_t>(std::min<uint64_t>(u > lengths ? u - lengths : 0, cap));
    }
    values_.ReserveMore(count, heap);
  }

 private:
  Status Decompress(std::string_view body, size_t size, std::string_view* out) {
    if (meta_.codec == CompressionCodec::kUncompressed || (size == 0 && body.empty())) {
      if (body.size() != size) {
        return Status::Corruption("uncompressed page of {} bytes, header says {}", body.size(),
                                  size);
      }
      *out = body;
      return Status::OK();
    }
    RETURN_IF_ERROR(parquet::Decompress(meta_.codec, body, size, &scratch_));
    *out = scratch_;
    return Status::OK();
  }

  Status ReadDictionary(const PageHeader& h, std::string_view body) {
    if (!h.dictionary_page_header) return Status::Corruption("dictionary page without header");
    const DictionaryPageHeader& d = *h.dictionary_page_header;
    if (d.encoding != Encoding::kPlain && d.encoding != Encoding::kPlainDictionary) {
      return Status::NotImplemented("dictionary page encoding {}", EncodingName(d.encoding));
    }
    if (d.num_values < 0) return Status::Corruption("dictionary of {} values", d.num_values);
    std::string_view data;
    RETURN_IF_ERROR(Decompress(body, h.uncompressed_page_size, &data));
    dict_.Reset(desc_.physical_type, desc_.type_length);
    RETURN_IF_ERROR_CTX(DecodeValues(Encoding::kPlain, data, d.num_values, nullptr, &dict_),
                        "dictionary");
    has_dict_ = true;
    return Status::OK();
  }

  // Decodes `n` levels into `levels` (appending) and checks them against `max`.
  Status Levels(Encoding enc, int16_t max, std::string_view data, size_t n, bool prefixed,
                std::vector<int16_t>* levels, size_t* consumed, const char* what) {
    size_t pos = levels->size();
    levels->resize(pos + n);
    RETURN_IF_ERROR_CTX(DecodeLevels(enc, BitWidth(static_cast<uint64_t>(max)), data, n, prefixed,
                                     levels->data() + pos, consumed),
                        "{} levels", what);
    for (size_t i = pos; i < pos + n; ++i) {
      if ((*levels)[i] < 0 || (*levels)[i] > max) {
        return Status::Corruption("{} level {} exceeds the maximum {}", what, (*levels)[i], max);
      }
    }
    return Status::OK();
  }

  size_t CountPresent(size_t from, size_t n) const {
    if (desc_.max_definition_level == 0) return n;
    const int16_t max = desc_.max_definition_level;
    size_t c = 0;
    for (size_t i = from; i < from + n; ++i) c += out_->def[i] == max;
    return c;
  }

  Status Values(Encoding enc, std::string_view data, size_t n) {
    if ((enc == Encoding::kRleDictionary || enc == Encoding::kPlainDictionary) && !has_dict_) {
      return Status::Corruption("dictionary-encoded page before any dictionary page");
    }
    size_t before = values_.size();
    RETURN_IF_ERROR_CTX(DecodeValues(enc, data, n, &dict_, &values_), "{} values",
                        EncodingName(enc));
    if (values_.size() - before != n) {
      return Status::Internal("decoded {} values, expected {}", values_.size() - before, n);
    }
    return Status::OK();
  }

  Status CheckCount(int64_t n) {
    if (n > kMaxPageValues) {
      return Status::NotImplemented("page of {} values (more than {} per page)", n, kMaxPageValues);
    }
    if (n < 0 || n > meta_.num_values - static_cast<int64_t>(out_->num_levels)) {
      return Status::Corruption("page of {} values exceeds the column chunk's {} (after {})", n,
                                meta_.num_values, out_->num_levels);
    }
    return Status::OK();
  }

  Status ReadDataPageV1(const PageHeader& h, std::string_view body) {
    if (!h.data_page_header) return Status::Corruption("data page without header");
    const DataPageHeader& d = *h.data_page_header;
    RETURN_IF_ERROR(CheckCount(d.num_values));
    const size_t n = static_cast<size_t>(d.num_values);
    std::string_view data;
    RETURN_IF_ERROR(Decompress(body, h.uncompressed_page_size, &data));
    size_t used = 0;
    if (desc_.max_repetition_level > 0) {
      RETURN_IF_ERROR(Levels(d.repetition_level_encoding, desc_.max_repetition_level, data, n, true,
                             &out_->rep, &used, "repetition"));
      data.remove_prefix(used);
    }
    size_t first = out_->def.size();
    if (desc_.max_definition_level > 0) {
      RETURN_IF_ERROR(Levels(d.definition_level_encoding, desc_.max_definition_level, data, n, true,
                             &out_->def, &used, "definition"));
      data.remove_prefix(used);
    }
    RETURN_IF_ERROR(Values(d.encoding, data, CountPresent(first, n)));
    out_->num_levels += n;
    return Status::OK();
  }

  Status ReadDataPageV2(const PageHeader& h, std::string_view body) {
    if (!h.data_page_header_v2) return Status::Corruption("data page v2 without header");
    const DataPageHeaderV2& d = *h.data_page_header_v2;
    RETURN_IF_ERROR(CheckCount(d.num_values));
    const size_t n = static_cast<size_t>(d.num_values);
    int64_t rep_len = d.repetition_levels_byte_length, def_len = d.definition_levels_byte_length;
    if (rep_len < 0 || def_len < 0 || rep_len + def_len > static_cast<int64_t>(body.size()) ||
        rep_len + def_len > h.uncompressed_page_size) {
      return Status::Corruption("level lengths {} + {} exceed the page", rep_len, def_len);
    }
    size_t used = 0;
    if (desc_.max_repetition_level > 0) {
      RETURN_IF_ERROR(Levels(Encoding::kRle, desc_.max_repetition_level, body.substr(0, rep_len), n,
                             false, &out_->rep, &used, "repetition"));
    }
    size_t first = out_->def.size();
    if (desc_.max_definition_level > 0) {
      RETURN_IF_ERROR(Levels(Encoding::kRle, desc_.max_definition_level,
                             body.substr(rep_len, def_len), n, false, &out_->def, &used,
                             "definition"));
    }
    std::string_view values = body.substr(rep_len + def_len);
    size_t values_size = static_cast<size_t>(h.uncompressed_page_size - rep_len - def_len);
    std::string_view data;
    if (d.is_compressed) {
      RETURN_IF_ERROR(Decompress(values, values_size, &data));
    } else {
      data = values;
    }
    RETURN_IF_ERROR(Values(d.encoding, data, CountPresent(first, n)));
    out_->num_levels += n;
    return Status::OK();
  }

  const ColumnMetaData& meta_;
  const ColumnDescriptor& desc_;
  ChunkData* out_;
  ValueBuffer values_;
  ValueBuffer dict_;
  bool has_dict_ = false;
  std::string scratch_;
};

}  // namespace

Status ReadColumnChunk(const InputFile& file, int64_t limit, const ColumnChunk& chunk,
                       const ColumnDescriptor& desc, const SchemaElement& element, ChunkData* out) {
  if (chunk.file_path) {
    return Status::NotImplemented("column chunk stored in another file ({})", *chunk.file_path);
  }
  if (!chunk.meta_data) {
    return Status::NotImplemented("column chunk without metadata (encrypted columns?)");
  }
  const ColumnMetaData& meta = *chunk.meta_data;
  if (meta.type != desc.physical_type) {
    return Status::Corruption("column chunk type {} differs from the schema's {}",
                              PhysicalTypeName(meta.type), PhysicalTypeName(desc.physical_type));
  }
  int64_t start = meta.data_page_offset;
  if (meta.dictionary_page_offset && *meta.dictionary_page_offset > 0 &&
      *meta.dictionary_page_offset < start) {
    start = *meta.dictionary_page_offset;
  }
  if (start < 4 || start >= limit) {
    return Status::Corruption("column chunk offset {} outside the data region [4, {})", start,
                              limit);
  }
  // Some writers under-report total_compressed_size; read to the end of the
  // data region when that is small, else trust the metadata.
  int64_t length = meta.total_compressed_size;
  if (length <= 0 || length > limit - start) length = limit - start;
  std::string bytes;
  RETURN_IF_ERROR(file.ReadAt(start, length, &bytes));
  ChunkReader reader(meta, desc, out);
  Status st = reader.ReadPages(bytes);
  if (!st.ok() && length < limit - start && meta.total_compressed_size > 0) {
    // Retry with the whole remaining region in case total_compressed_size lies.
    ChunkData again;
    RETURN_IF_ERROR(file.ReadAt(start, limit - start, &bytes));
    ChunkReader retry(meta, desc, &again);
    if (retry.ReadPages(bytes).ok()) {
      *out = std::move(again);
      out->values.emplace(desc.type);
      return ConvertValues(retry.values(), desc, element, &*out->values);
    }
    return st;
  }
  RETURN_IF_ERROR(st);
  out->values.emplace(desc.type);
  return ConvertValues(reader.values(), desc, element, &*out->values);
}

}  // namespace sluice::parquet::internal
