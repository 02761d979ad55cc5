#include "parquet/page_copy.h"

#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>

#include "parquet/compression.h"
#include "parquet/decoding.h"
#include "parquet/writer_shred.h"

namespace sluice::parquet {

namespace {

constexpr int64_t kMaxPageSize = int64_t{1} << 30;  // as the reader's check

bool IsDictionary(Encoding e) {
  return e == Encoding::kPlainDictionary || e == Encoding::kRleDictionary;
}

template <typename T>
bool IsNaN(const std::string& plain) {
  if (plain.size() != sizeof(T)) return false;
  T v;
  std::memcpy(&v, plain.data(), sizeof(T));
  return std::isnan(v);
}

// `body` (compressed with `codec`) decompressed, checked against its stated
// size; into `scratch` unless it was not compressed.
Result<std::string_view> Uncompressed(CompressionCodec codec, std::string_view body,
                                      size_t uncompressed, std::string* scratch) {
  if (codec == CompressionCodec::kUncompressed) {
    if (body.size() != uncompressed) {
      return Status::Corruption("uncompressed page of {} bytes, header says {}", body.size(),
                                uncompressed);
    }
    return body;
  }
  RETURN_IF_ERROR(Decompress(codec, body, uncompressed, scratch));
  return std::string_view(*scratch);
}

// Decompresses `body` (compressed with `codec`) and compresses it with `to`.
Status Recompress(CompressionCodec codec, std::string_view body, size_t uncompressed,
                  PageCompressor* to, std::string* scratch, std::string* out) {
  ASSIGN_OR_RETURN(std::string_view plain, Uncompressed(codec, body, uncompressed, scratch));
  if (to->codec() == CompressionCodec::kUncompressed) {
    out->append(plain);
    return Status::OK();
  }
  return to->Compress(plain, out);
}

// The bytes of a v2 page's levels (never compressed), checked against the page.
Result<int64_t> LevelBytesV2(const PageHeader& h, std::string_view body) {
  const DataPageHeaderV2& v2 = *h.data_page_header_v2;
  const int64_t levels =
      int64_t{v2.definition_levels_byte_length} + v2.repetition_levels_byte_length;
  if (v2.definition_levels_byte_length < 0 || v2.repetition_levels_byte_length < 0 ||
      levels > static_cast<int64_t>(body.size()) || levels > h.uncompressed_page_size) {
    return Status::Corruption("level lengths {} + {} exceed the page",
                              v2.definition_levels_byte_length, v2.repetition_levels_byte_length);
  }
  return levels;
}

// Checks that page `h`'s body decompresses to its stated size.
Status CheckBody(const PageHeader& h, std::string_view body, CompressionCodec codec,
                 std::string* scratch) {
  if (h.type != PageType::kDataPageV2) {
    return Uncompressed(codec, body, static_cast<size_t>(h.uncompressed_page_size), scratch)
        .status();
  }
  ASSIGN_OR_RETURN(const int64_t levels, LevelBytesV2(h, body));
  const DataPageHeaderV2& v2 = *h.data_page_header_v2;
  return Uncompressed(v2.is_compressed ? codec : CompressionCodec::kUncompressed,
                      body.substr(static_cast<size_t>(levels)),
                      static_cast<size_t>(h.uncompressed_page_size - levels), scratch)
      .status();
}

// Appends page `h` (its body `body`) to `out`, recompressed with `to`;
// `*header_len` is the length of its new header.
Status AppendRecompressed(PageHeader h, std::string_view body, CompressionCodec codec,
                          PageCompressor* to, std::string* scratch, std::string* out,
                          size_t* header_len) {
  std::string compressed;
  if (h.type == PageType::kDataPageV2) {
    DataPageHeaderV2& v2 = *h.data_page_header_v2;
    ASSIGN_OR_RETURN(const int64_t levels, LevelBytesV2(h, body));
    compressed.append(body.substr(0, static_cast<size_t>(levels)));
    const std::string_view values = body.substr(static_cast<size_t>(levels));
    const size_t plain_size = static_cast<size_t>(h.uncompressed_page_size - levels);
    RETURN_IF_ERROR(Recompress(v2.is_compressed ? codec : CompressionCodec::kUncompressed, values,
                               plain_size, to, scratch, &compressed));
    v2.is_compressed = to->codec() != CompressionCodec::kUncompressed;
  } else {
    RETURN_IF_ERROR(Recompress(codec, body, static_cast<size_t>(h.uncompressed_page_size), to,
                               scratch, &compressed));
  }
  h.compressed_page_size = static_cast<int32_t>(compressed.size());
  h.crc.reset();  // (of the old bytes)
  const size_t before = out->size();
  SerializePageHeader(h, out);
  *header_len = out->size() - before;
  out->append(compressed);
  return Status::OK();
}

// A copy of chunk `md` of `leaf`, its statistics taken over, no page yet.
CopiedPages StartCopy(const ColumnDescriptor& leaf, const ColumnMetaData& md,
                      CompressionCodec codec) {
  CopiedPages out;
  out.codec = codec;
  const Statistics& s = *md.statistics;
  out.null_count = leaf.max_definition_level > 0 ? *s.null_count : 0;
  if (out.null_count < md.num_values) {
    out.has_min_max = true;
    out.min = *s.min_value;
    out.max = *s.max_value;
    // Byte arrays' bounds may be truncated: exact only when the file says so.
    const bool bytes = leaf.physical_type == PhysicalType::kByteArray;
    out.min_exact = s.is_min_value_exact.value_or(!bytes);
    out.max_exact = s.is_max_value_exact.value_or(!bytes);
  }
  return out;
}

// Appends data page `h` of `leaf` (`raw`: its header, `header_len` bytes, and
// its body, compressed with `codec`) to `out`: as it is with `verbatim` (its
// body checked to decompress), else recompressed with `to`.
Status AppendPage(const ColumnDescriptor& leaf, const PageHeader& h, std::string_view raw,
                  size_t header_len, CompressionCodec codec, bool verbatim, PageCompressor* to,
                  std::string* scratch, CopiedPages* out) {
  int64_t values = 0;
  Encoding encoding = Encoding::kPlain;
  if (h.type == PageType::kDataPage && h.data_page_header) {
    values = h.data_page_header->num_values;
    encoding = h.data_page_header->encoding;
  } else if (h.type == PageType::kDataPageV2 && h.data_page_header_v2) {
    values = h.data_page_header_v2->num_values;
    encoding = h.data_page_header_v2->encoding;
  } else {
    return Status::Corruption("a {} page where only data pages may be",
                              h.type == PageType::kDictionaryPage ? "dictionary" : "malformed");
  }
  if (IsDictionary(encoding)) {
    return Status::Corruption("dictionary-encoded page in a chunk without a dictionary");
  }
  if (values < 0) return Status::Corruption("page of {} values", values);
  const std::string_view body = raw.substr(header_len);
  size_t written_header = header_len;
  if (verbatim) {
    RETURN_IF_ERROR(CheckBody(h, body, codec, scratch));
    out->bytes.append(raw);
  } else {
    RETURN_IF_ERROR(AppendRecompressed(h, body, codec, to, scratch, &out->bytes, &written_header));
  }
  auto add_encoding = [&](Encoding e) {
    if (std::find(out->encodings.begin(), out->encodings.end(), e) == out->encodings.end()) {
      out->encodings.push_back(e);
    }
  };
  add_encoding(encoding);
  if (leaf.max_definition_level > 0 || leaf.max_repetition_level > 0) {
    add_encoding(h.data_page_header ? h.data_page_header->definition_level_encoding
                                    : Encoding::kRle);
  }
  out->uncompressed_bytes += static_cast<int64_t>(written_header) + h.uncompressed_page_size;
  out->num_values += values;
  return Status::OK();
}

}  // namespace

std::optional<int> RecordedCompressionLevel(const FileMetaData& md) {
  for (const KeyValue& kv : md.key_value_metadata) {
    if (kv.key != kCompressionLevelKey || !kv.value) continue;
    int level = 0;
    const std::string& v = *kv.value;
    auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), level);
    if (ec == std::errc() && end == v.data() + v.size()) return level;
  }
  return std::nullopt;
}

bool CanCopyChunk(const ColumnDescriptor& leaf, const ColumnChunk& chunk, int64_t min_bytes,
                  std::string* why) {
  auto no = [&](std::string reason) {
    if (why != nullptr) *why = std::move(reason);
    return false;
  };
  if (leaf.path.size() != 1 || leaf.max_repetition_level > 0) return no("not a top-level leaf");
  if (chunk.file_path) return no("the chunk is in another file");
  if (!chunk.meta_data) return no("no column metadata");
  const ColumnMetaData& md = *chunk.meta_data;
  if (md.dictionary_page_offset && *md.dictionary_page_offset > 0) return no("a dictionary page");
  for (Encoding e : md.encodings) {
    if (IsDictionary(e)) return no("dictionary-encoded pages");
  }
  if (md.num_values <= 0) return no("no values");
  if (md.total_uncompressed_size < min_bytes) return no("small pages");
  if (md.type != leaf.physical_type) return no("another physical type");
  if (!md.statistics) return no("no statistics");
  const Statistics& s = *md.statistics;
  if (leaf.max_definition_level > 0 && !s.null_count) return no("no null count");
  const int64_t nulls = leaf.max_definition_level > 0 ? *s.null_count : 0;
  if (nulls < 0 || nulls > md.num_values) return no("a null count beyond its values");
  if (nulls == md.num_values) return true;  // (all null: no bounds needed)
  if (!s.min_value || !s.max_value) return no("no min_value/max_value");
  if (leaf.physical_type != PhysicalType::kByteArray) {
    // (numbers and fixed widths are never truncated: an inexact bound is
    // another writer's choice this copy could not carry)
    if (!s.is_min_value_exact.value_or(true) || !s.is_max_value_exact.value_or(true)) {
      return no("inexact bounds");
    }
    const auto width = static_cast<size_t>(PhysicalWidth(leaf.physical_type, leaf.type_length));
    if (s.min_value->size() != width || s.max_value->size() != width) {
      return no("bounds of another width");
    }
  }
  if (leaf.physical_type == PhysicalType::kFloat &&
      (IsNaN<float>(*s.min_value) || IsNaN<float>(*s.max_value))) {
    return no("NaN bounds");
  }
  if (leaf.physical_type == PhysicalType::kDouble &&
      (IsNaN<double>(*s.min_value) || IsNaN<double>(*s.max_value))) {
    return no("NaN bounds");
  }
  return true;
}

bool CopyVerbatim(CompressionCodec codec, std::optional<int> recorded_level,
                  const PageCompressor& to) {
  if (codec != to.codec()) return false;
  if (codec != CompressionCodec::kZstd && codec != CompressionCodec::kGzip) return true;
  return recorded_level && *recorded_level >= to.effective_level();
}

Result<CopiedPages> ReadPagesToCopy(const InputFile& file, const ColumnDescriptor& leaf,
                                    const ColumnChunk& chunk, bool verbatim, PageCompressor* to) {
  const std::string column = fmt::format("{}", fmt::join(leaf.path, "."));
  auto where = [&](const Status& st) {
    return st.WithContextF("file {}: column {}", file.path(), column);
  };
  if (!CanCopyChunk(leaf, chunk, 0, nullptr)) {
    return where(Status::Internal("the column chunk cannot be copied"));
  }
  const ColumnMetaData& md = *chunk.meta_data;
  if (md.data_page_offset < 4 || md.total_compressed_size <= 0 ||
      md.total_compressed_size > file.size() - md.data_page_offset) {
    return where(Status::Corruption("column chunk at {} of {} bytes is outside the file ({} bytes)",
                                    md.data_page_offset, md.total_compressed_size, file.size()));
  }
  std::string data;
  RETURN_IF_ERROR(where(file.ReadAt(md.data_page_offset, md.total_compressed_size, &data)));
  CopiedPages out = StartCopy(leaf, md, verbatim ? md.codec : to->codec());
  std::string_view rest(data);
  std::string scratch;
  for (int page = 0; out.num_values < md.num_values; ++page) {
    auto at_page = [&](const Status& st) { return where(st.WithContextF("page {}", page)); };
    if (rest.empty()) {
      return at_page(Status::Corruption("column chunk ends after {} of {} values", out.num_values,
                                        md.num_values));
    }
    size_t header_len = 0;
    auto header = DeserializePageHeader(rest, &header_len);
    if (!header.ok()) return at_page(header.status());
    const PageHeader& h = *header;
    if (h.compressed_page_size < 0 || h.uncompressed_page_size < 0 ||
        h.uncompressed_page_size > kMaxPageSize ||
        static_cast<size_t>(h.compressed_page_size) > rest.size() - header_len) {
      return at_page(Status::Corruption("page sizes exceed the column chunk"));
    }
    const std::string_view raw = rest.substr(0, header_len + h.compressed_page_size);
    rest.remove_prefix(raw.size());
    if (h.type == PageType::kIndexPage) continue;  // (not copied: nothing reads them)
    RETURN_IF_ERROR(
        at_page(AppendPage(leaf, h, raw, header_len, md.codec, verbatim, to, &scratch, &out)));
  }
  if (out.num_values != md.num_values) {
    return where(Status::Corruption("pages hold {} values, column metadata says {}", out.num_values,
                                    md.num_values));
  }
  return out;
}

Result<MergeInput> OpenMergeInput(std::unique_ptr<ParquetReader> footer,
                                  std::unique_ptr<InputFile> values_file, const Schema& schema,
                                  int64_t min_bytes, const std::set<int32_t>& nan_free) {
  MergeInput in;
  in.footer = std::move(footer);
  const std::string& path = in.footer->path();
  const FileMetaData& md = in.footer->metadata();
  const std::vector<ColumnDescriptor>& leaves = in.footer->columns();
  const std::vector<LeafPath> paths = BuildLeafPaths(schema);
  if (paths.size() != leaves.size()) {
    return Status::Invalid("file {}: {} leaves, the schema {}", path, leaves.size(), paths.size());
  }
  in.recorded_level = RecordedCompressionLevel(md);
  in.copy.assign(leaves.size(), true);
  ReaderOptions ro;
  for (size_t i = 0; i < leaves.size(); ++i) {
    const bool floating = leaves[i].physical_type == PhysicalType::kFloat ||
                          leaves[i].physical_type == PhysicalType::kDouble;
    // (min_value/max_value are in the column's order only with TYPE_ORDER)
    if (i >= md.column_orders.size() || !md.column_orders[i] ||
        (floating && !nan_free.count(leaves[i].field_id))) {
      in.copy[i] = false;
    }
    for (const RowGroup& rg : md.row_groups) {
      if (!in.copy[i]) break;
      if (i >= rg.columns.size() || !CanCopyChunk(leaves[i], rg.columns[i], min_bytes, nullptr)) {
        in.copy[i] = false;
        break;
      }
    }
    // (the whole top-level field of a leaf not copied is decoded: a nested
    // leaf is never copied, nor are its siblings)
    const int32_t top = schema.fields[paths[i].top_column].id;
    if (!in.copy[i] &&
        std::find(ro.field_ids.begin(), ro.field_ids.end(), top) == ro.field_ids.end()) {
      ro.field_ids.push_back(top);
    }
  }
  if (!ro.field_ids.empty()) {
    ASSIGN_OR_RETURN(in.values, ParquetReader::Open(std::move(values_file), std::move(ro)));
  }
  return in;
}

Status ReadMergePieces(MergeInput& input, int row_group,
                       const std::shared_ptr<const Schema>& schema, PageCompressor* to,
                       MergePieces* out) {
  const FileMetaData& md = input.footer->metadata();
  if (row_group < 0 || static_cast<size_t>(row_group) >= md.row_groups.size()) {
    return Status::Invalid("file {}: no row group {}", input.footer->path(), row_group);
  }
  const RowGroup& rg = md.row_groups[static_cast<size_t>(row_group)];
  const std::vector<ColumnDescriptor>& leaves = input.footer->columns();
  out->num_rows = rg.num_rows;
  out->copied_bytes = 0;
  out->pages.assign(leaves.size(), CopiedPages{});
  out->copied.assign(leaves.size(), nullptr);
  for (size_t i = 0; i < leaves.size(); ++i) {
    if (!input.copy[i]) continue;
    const ColumnChunk& chunk = rg.columns[i];
    const bool verbatim = CopyVerbatim(chunk.meta_data->codec, input.recorded_level, *to);
    ASSIGN_OR_RETURN(out->pages[i],
                     ReadPagesToCopy(input.footer->file(), leaves[i], chunk, verbatim, to));
    const PhysicalType t = leaves[i].physical_type;
    if (t == PhysicalType::kFloat || t == PhysicalType::kDouble) {
      out->pages[i].nan_count = 0;  // (copied only when free of NaN: OpenMergeInput)
    }
    out->copied[i] = &out->pages[i];
    out->copied_bytes += static_cast<int64_t>(out->pages[i].bytes.size());
  }
  out->values = Batch::Make(schema);
  if (input.values != nullptr) {
    Batch decoded;
    RETURN_IF_ERROR(input.values->ReadRowGroup(row_group, &decoded));
    // (top-level fields by id: the decoded batch holds the projected ones)
    for (size_t d = 0; d < decoded.columns.size(); ++d) {
      const int32_t id = decoded.schema->fields[d].id;
      for (size_t c = 0; c < schema->fields.size(); ++c) {
        if (schema->fields[c].id == id) out->values.columns[c] = std::move(decoded.columns[d]);
      }
    }
  }
  return Status::OK();
}

}  // namespace sluice::parquet
