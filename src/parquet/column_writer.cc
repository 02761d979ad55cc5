#include "parquet/column_writer.h"

#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>
#include <utility>
#include <vector>

#include "common/endian.h"
#include "parquet/dictionary.h"
#include "parquet/leaf_sources.h"
#include "parquet/rle_encoder.h"
#include "parquet/writer_shred.h"

namespace sluice::parquet {

namespace {

template <typename T>
uint64_t KeyBits(T v) {
  uint64_t b = 0;
  std::memcpy(&b, &v, sizeof(T));
  return b;
}

template <typename T>
T FromKeyBits(uint64_t bits) {
  T v;
  std::memcpy(&v, &bits, sizeof(T));
  return v;
}

void AppendLevelsV1(const std::vector<int16_t>& levels, int max_level, std::string* body,
                    std::string* scratch) {
  scratch->clear();
  EncodeRleHybrid(levels.data(), static_cast<int64_t>(levels.size()), BitWidth(max_level), scratch);
  AppendLE<uint32_t>(body, static_cast<uint32_t>(scratch->size()));
  body->append(*scratch);
}

// Values of the first page after which a mostly distinct column stops
// building its dictionary.
constexpr int64_t kDictionaryProbeValues = 16384;

template <typename Source>
class TypedColumnWriter final : public ColumnWriter {
 public:
  using T = typename Source::T;
  static constexpr bool kBytes = std::is_same_v<T, std::string_view>;
  static constexpr bool kFloating = std::is_floating_point_v<T>;
  using Stats = std::conditional_t<kBytes, BytesMinMax, MinMax<T>>;
  using Dict = std::conditional_t<kBytes, BytesDictionary, FixedDictionary>;

  TypedColumnWriter(const ColumnDescriptor& d, const WriterOptions& o, PageCompressor* c,
                    Source source)
      : ColumnWriter(d, o, c),
        source_(std::move(source)),
        dict_(MakeDict(d)),
        initial_mode_(o.dictionary && d.physical_type != PhysicalType::kBoolean ? kDict : kPlain),
        mode_(initial_mode_) {
    if constexpr (kBytes) {
      bool dec = d.type->id() == TypeId::kDecimal;
      page_mm_.signed_decimal = chunk_mm_.signed_decimal = file_mm_.signed_decimal = dec;
    }
  }

  Status Add(const LeafSlice& slice) override {
    LeafSlice s = slice;
    while (options_.page_rows > 0 && page_rows_ + s.num_rows > options_.page_rows) {
      // (The page is flushed at the limit, so it holds fewer rows here.)
      auto [head, tail] =
          SplitLeafSlice(s, options_.page_rows - page_rows_, descriptor_.max_definition_level);
      RETURN_IF_ERROR(AddRows(head));
      s = tail;
    }
    return AddRows(s);
  }

  Status AppendPages(CopiedPages&& p) override {
    if (p.codec != options_.codec) {
      return Status::Internal("pages compressed with {} for a {} column chunk", CodecName(p.codec),
                              CodecName(options_.codec));
    }
    RETURN_IF_ERROR(FlushPage());
    if (mode_ == kDict) {
      if (used_dict_pages_) {
        mode_ = kFallback;  // (the dictionary page still goes first)
      } else {
        dict_.Clear();
        mode_ = kPlain;
      }
    }
    first_page_ = false;
    if (p.has_min_max) RETURN_IF_ERROR(MergeCopiedBounds(p));
    if (num_pages_ == pages_.size()) pages_.emplace_back();
    PageBuffer& page = pages_[num_pages_++];
    page.header.clear();
    pages_bytes_ += static_cast<int64_t>(p.bytes.size());
    page.data = std::move(p.bytes);
    chunk_uncompressed_ += p.uncompressed_bytes;
    chunk_levels_ += p.num_values;
    chunk_nulls_ += p.null_count;
    if constexpr (kFloating) {
      if (p.nan_count) {
        chunk_nans_ += *p.nan_count;
      } else {
        chunk_nans_known_ = false;
      }
    }
    for (Encoding e : p.encodings) {
      if (std::find(copied_encodings_.begin(), copied_encodings_.end(), e) ==
          copied_encodings_.end()) {
        copied_encodings_.push_back(e);
      }
    }
    return Status::OK();
  }

  int64_t BufferedSize() const override {
    return pages_bytes_ + EstimatedPageSize() + (mode_ == kPlain ? 0 : dict_.plain_size());
  }

  Status FlushChunk(OutputFile* out, ColumnChunk* chunk) override {
    RETURN_IF_ERROR(FlushPage());
    const int64_t start = out->position();
    ColumnMetaData md;
    md.type = descriptor_.physical_type;
    md.path_in_schema = descriptor_.path;
    md.codec = options_.codec;
    md.num_values = chunk_levels_;
    int64_t uncompressed = chunk_uncompressed_;
    if (used_dict_pages_) {
      body_.clear();
      dict_.WritePlain(&body_);
      compressed_.clear();
      RETURN_IF_ERROR(compressor_->Compress(body_, &compressed_));
      PageHeader h;
      h.type = PageType::kDictionaryPage;
      h.uncompressed_page_size = static_cast<int32_t>(body_.size());
      h.compressed_page_size = static_cast<int32_t>(compressed_.size());
      DictionaryPageHeader dh;
      dh.num_values = static_cast<int32_t>(dict_.size());
      dh.encoding = Encoding::kPlain;
      h.dictionary_page_header = dh;
      header_.clear();
      SerializePageHeader(h, &header_);
      RETURN_IF_ERROR(out->Append(header_));
      RETURN_IF_ERROR(out->Append(compressed_));
      uncompressed += static_cast<int64_t>(header_.size() + body_.size());
      md.dictionary_page_offset = start;
      md.encodings.push_back(Encoding::kRleDictionary);
    }
    if (used_plain_pages_ || used_dict_pages_) md.encodings.push_back(Encoding::kPlain);
    if (descriptor_.max_definition_level > 0 || descriptor_.max_repetition_level > 0) {
      md.encodings.push_back(Encoding::kRle);
    }
    for (Encoding e : copied_encodings_) {
      if (std::find(md.encodings.begin(), md.encodings.end(), e) == md.encodings.end()) {
        md.encodings.push_back(e);
      }
    }
    md.data_page_offset = out->position();
    for (size_t i = 0; i < num_pages_; ++i) {
      RETURN_IF_ERROR(out->Append(pages_[i].header));
      RETURN_IF_ERROR(out->Append(pages_[i].data));
    }
    md.total_uncompressed_size = uncompressed;
    md.total_compressed_size = out->position() - start;
    EncodedStats chunk_stats = Encode(chunk_mm_, chunk_nulls_, chunk_nans_);
    if constexpr (kBytes) chunk_copied_.FoldInto(&chunk_stats, chunk_mm_.signed_decimal);
    md.statistics = ToParquetStatistics(chunk_stats, descriptor_.physical_type, *descriptor_.type,
                                        options_.statistics_truncate_length);
    chunk->file_offset = start;
    chunk->meta_data = std::move(md);

    total_compressed_bytes_ += out->position() - start;
    total_values_ += chunk_levels_;
    file_mm_.Merge(chunk_mm_);
    file_nulls_ += chunk_nulls_;
    file_nans_ += chunk_nans_;
    file_nans_known_ = file_nans_known_ && chunk_nans_known_;
    if constexpr (kBytes) file_copied_.Merge(chunk_copied_, chunk_mm_.signed_decimal);
    // Start the next chunk.
    num_pages_ = 0;
    pages_bytes_ = 0;
    chunk_mm_.Reset();
    chunk_nulls_ = chunk_nans_ = chunk_levels_ = chunk_uncompressed_ = 0;
    dict_.Clear();
    mode_ = initial_mode_;
    first_page_ = true;
    used_dict_pages_ = used_plain_pages_ = false;
    chunk_copied_.Reset();
    chunk_nans_known_ = true;
    copied_encodings_.clear();
    return Status::OK();
  }

  EncodedStats FileStats() const override {
    EncodedStats stats = Encode(file_mm_, file_nulls_, file_nans_);
    if constexpr (kBytes) file_copied_.FoldInto(&stats, file_mm_.signed_decimal);
    stats.nan_count_known = file_nans_known_;
    return stats;
  }

 private:
  enum Mode { kDict, kFallback, kPlain };

  // A slice that leaves the open page within its row limit.
  Status AddRows(const LeafSlice& s) {
    if (s.def_levels) def_.insert(def_.end(), s.def_levels, s.def_levels + s.num_levels);
    if (s.rep_levels) rep_.insert(rep_.end(), s.rep_levels, s.rep_levels + s.num_levels);
    page_levels_ += s.num_levels;
    page_rows_ += s.num_rows;
    source_.Gather(s, &values_);
    const int64_t n = static_cast<int64_t>(values_.size());
    page_values_ += n;
    if (mode_ == kDict && first_page_ && page_values_ - n >= kDictionaryProbeValues &&
        dict_.size() * 2 > page_values_ - n) {
      // Mostly distinct values so far: drop the dictionary before paying for
      // more hashing.
      DictionaryToPlain();
      mode_ = kPlain;
    }
    // Byte strings in dictionary pages get their statistics from the distinct
    // values a page uses (StatsFromIndices), not value by value.
    if (!kBytes || mode_ != kDict) UpdateStats();
    if (mode_ == kDict) {
      size_t base = indices_.size();
      indices_.resize(base + n);
      uint32_t* dst = indices_.data() + base;
      for (int64_t k = 0; k < n; ++k) {
        if constexpr (kBytes) {
          dst[k] = dict_.GetOrInsert(values_[k]);
        } else {
          dst[k] = dict_.GetOrInsert(KeyBits(values_[k]));
        }
      }
      if (dict_.plain_size() > options_.dictionary_page_bytes) {
        RETURN_IF_ERROR(FlushPage());
        if (mode_ == kDict) mode_ = kFallback;
        return Status::OK();
      }
    } else {
      AppendPlain(values_.data(), n);
    }
    if (EstimatedPageSize() >= options_.page_bytes ||
        (options_.page_rows > 0 && page_rows_ >= options_.page_rows)) {
      return FlushPage();
    }
    return Status::OK();
  }

  static Dict MakeDict(const ColumnDescriptor& d) {
    if constexpr (kBytes) {
      return Dict(d.physical_type == PhysicalType::kFixedLenByteArray ? d.type_length : 0);
    } else {
      return Dict(static_cast<int>(sizeof(T)));
    }
  }

  // Folds copied pages' bounds into the chunk's: numbers are exact values
  // and join the min/max; byte strings may be truncated bounds and are kept
  // apart with their exactness (CopiedBytesBounds).
  Status MergeCopiedBounds(const CopiedPages& p) {
    if constexpr (kBytes) {
      if (descriptor_.physical_type == PhysicalType::kFixedLenByteArray &&
          (p.min.size() != static_cast<size_t>(descriptor_.type_length) ||
           p.max.size() != static_cast<size_t>(descriptor_.type_length))) {
        return Status::Corruption("statistics of {} and {} bytes for a fixed[{}] column",
                                  p.min.size(), p.max.size(), descriptor_.type_length);
      }
      chunk_copied_.Merge(p.min, p.min_exact, p.max, p.max_exact, chunk_mm_.signed_decimal);
    } else {
      // (booleans: one byte a bound, as PLAIN statistics of them are written)
      if (p.min.size() != sizeof(T) || p.max.size() != sizeof(T)) {
        return Status::Corruption("statistics of {} and {} bytes for a {}-byte column",
                                  p.min.size(), p.max.size(), sizeof(T));
      }
      T lo, hi;
      std::memcpy(&lo, p.min.data(), sizeof(T));
      std::memcpy(&hi, p.max.data(), sizeof(T));
      chunk_mm_.Update(lo);
      chunk_mm_.Update(hi);
    }
    return Status::OK();
  }

  void UpdateStats() {
    const int64_t n = static_cast<int64_t>(values_.size());
    if constexpr (kBytes) {
      for (int64_t k = 0; k < n; ++k) page_mm_.Update(values_[k]);
    } else if constexpr (kFloating) {
      int64_t nans = 0;
      for (int64_t k = 0; k < n; ++k) nans += std::isnan(values_[k]) ? 1 : 0;
      if (nans == 0) {
        page_mm_.UpdateAll(values_.data(), n);
      } else {
        page_nans_ += nans;
        for (int64_t k = 0; k < n; ++k) {
          if (!std::isnan(values_[k])) page_mm_.Update(values_[k]);
        }
      }
    } else {
      page_mm_.UpdateAll(values_.data(), n);
    }
  }

  void AppendPlain(const T* v, int64_t n) {
    if constexpr (kBytes) {
      bool fixed = descriptor_.physical_type == PhysicalType::kFixedLenByteArray;
      for (int64_t k = 0; k < n; ++k) {
        if (!fixed) AppendLE<uint32_t>(&plain_, static_cast<uint32_t>(v[k].size()));
        plain_.append(v[k]);
      }
    } else if (descriptor_.physical_type == PhysicalType::kBoolean) {
      bools_.insert(bools_.end(), v, v + n);
    } else {
      plain_.append(reinterpret_cast<const char*>(v), n * sizeof(T));
    }
  }

  int64_t EstimatedPageSize() const {
    int64_t levels = static_cast<int64_t>(def_.size() + rep_.size()) / 4;
    if (mode_ == kDict) {
      int bw = BitWidth(static_cast<uint64_t>(dict_.size()));
      return levels + static_cast<int64_t>(indices_.size()) * (bw > 0 ? bw : 1) / 8;
    }
    return levels + static_cast<int64_t>(plain_.size() + bools_.size() / 8);
  }

  // Re-encodes the open page's dictionary indices as PLAIN values.
  // Folds the distinct dictionary values referenced by the open page into its
  // min/max (byte strings only; others are tracked value by value).
  void StatsFromIndices() {
    if constexpr (kBytes) {
      if (seen_.size() < static_cast<size_t>(dict_.size())) seen_.resize(dict_.size(), 0);
      for (uint32_t i : indices_) {
        if (!seen_[i]) {
          seen_[i] = 1;
          used_.push_back(i);
        }
      }
      for (uint32_t i : used_) {
        page_mm_.Update(dict_.value(i));
        seen_[i] = 0;
      }
      used_.clear();
    }
  }

  void DictionaryToPlain() {
    StatsFromIndices();
    for (uint32_t i : indices_) {
      if constexpr (kBytes) {
        std::string_view v = dict_.value(i);
        AppendPlain(&v, 1);
      } else {
        T v = FromKeyBits<T>(dict_.value(i));
        AppendPlain(&v, 1);
      }
    }
    indices_.clear();
    dict_.Clear();
  }

  Status FlushPage() {
    if (page_levels_ == 0) return Status::OK();
    if (mode_ == kDict && first_page_ && dict_.size() * 2 > page_values_) {
      // Mostly distinct values: a dictionary would not pay for itself.
      DictionaryToPlain();
      mode_ = kPlain;
    }
    first_page_ = false;
    const bool dict_page = mode_ == kDict && !indices_.empty();
    const bool v2 = options_.data_page_v2;
    body_.clear();
    if (descriptor_.max_repetition_level > 0) {
      if (v2) {
        EncodeRleHybrid(rep_.data(), static_cast<int64_t>(rep_.size()),
                        BitWidth(descriptor_.max_repetition_level), &body_);
      } else {
        AppendLevelsV1(rep_, descriptor_.max_repetition_level, &body_, &scratch_);
      }
    }
    const int64_t rep_bytes = static_cast<int64_t>(body_.size());
    if (descriptor_.max_definition_level > 0) {
      if (v2) {
        EncodeRleHybrid(def_.data(), static_cast<int64_t>(def_.size()),
                        BitWidth(descriptor_.max_definition_level), &body_);
      } else {
        AppendLevelsV1(def_, descriptor_.max_definition_level, &body_, &scratch_);
      }
    }
    const int64_t levels_bytes = static_cast<int64_t>(body_.size());
    if (dict_page) {
      StatsFromIndices();
      int bw = BitWidth(static_cast<uint64_t>(dict_.size() - 1));
      if (bw == 0) bw = 1;
      body_.push_back(static_cast<char>(bw));
      EncodeRleHybrid(indices_.data(), static_cast<int64_t>(indices_.size()), bw, &body_);
      used_dict_pages_ = true;
    } else if (descriptor_.physical_type == PhysicalType::kBoolean) {
      BitPack(bools_.data(), static_cast<int64_t>(bools_.size()), 1, &body_);
      used_plain_pages_ = true;
    } else {
      body_.append(plain_);
      used_plain_pages_ = true;
    }
    // Each page keeps its own buffers (reused by later chunks): no copying
    // of compressed bytes into one growing chunk buffer.
    if (num_pages_ == pages_.size()) pages_.emplace_back();
    PageBuffer& page = pages_[num_pages_++];
    std::string& compressed = page.data;
    compressed.clear();
    std::string_view body(body_);
    if (v2) {
      compressed.append(body.substr(0, levels_bytes));
      body.remove_prefix(levels_bytes);
    }
    RETURN_IF_ERROR(compressor_->Compress(body, &compressed));

    PageHeader h;
    h.uncompressed_page_size = static_cast<int32_t>(body_.size());
    h.compressed_page_size = static_cast<int32_t>(compressed.size());
    const Encoding encoding = dict_page ? Encoding::kRleDictionary : Encoding::kPlain;
    std::optional<Statistics> stats;
    if (options_.page_statistics) {
      stats = ToParquetStatistics(Encode(page_mm_, page_levels_ - page_values_, page_nans_),
                                  descriptor_.physical_type, *descriptor_.type,
                                  options_.statistics_truncate_length);
    }
    if (v2) {
      h.type = PageType::kDataPageV2;
      DataPageHeaderV2 d;
      d.num_values = static_cast<int32_t>(page_levels_);
      d.num_nulls = static_cast<int32_t>(page_levels_ - page_values_);
      d.num_rows = static_cast<int32_t>(page_rows_);
      d.encoding = encoding;
      d.definition_levels_byte_length = static_cast<int32_t>(levels_bytes - rep_bytes);
      d.repetition_levels_byte_length = static_cast<int32_t>(rep_bytes);
      d.is_compressed = options_.codec != CompressionCodec::kUncompressed;
      d.statistics = std::move(stats);
      h.data_page_header_v2 = std::move(d);
    } else {
      h.type = PageType::kDataPage;
      DataPageHeader d;
      d.num_values = static_cast<int32_t>(page_levels_);
      d.encoding = encoding;
      d.statistics = std::move(stats);
      h.data_page_header = std::move(d);
    }
    page.header.clear();
    SerializePageHeader(h, &page.header);
    pages_bytes_ += static_cast<int64_t>(page.header.size() + compressed.size());
    chunk_uncompressed_ += static_cast<int64_t>(page.header.size() + body_.size());

    chunk_mm_.Merge(page_mm_);
    chunk_nulls_ += page_levels_ - page_values_;
    chunk_nans_ += page_nans_;
    chunk_levels_ += page_levels_;
    page_mm_.Reset();
    page_levels_ = page_values_ = page_rows_ = page_nans_ = 0;
    def_.clear();
    rep_.clear();
    indices_.clear();
    plain_.clear();
    bools_.clear();
    return Status::OK();
  }

  EncodedStats Encode(const Stats& mm, int64_t nulls, int64_t nans) const {
    EncodedStats e;
    e.null_count = nulls;
    e.nan_count = nans;
    if (!mm.has) return e;
    e.has_min_max = true;
    if constexpr (kBytes) {
      e.min = mm.min;
      e.max = mm.max;
    } else {
      T lo = mm.min, hi = mm.max;
      if constexpr (kFloating) {
        if (lo == 0) lo = -T(0);  // a zero min could hide a -0.0
        if (hi == 0) hi = T(0);
      }
      e.min.assign(reinterpret_cast<const char*>(&lo), sizeof(T));
      e.max.assign(reinterpret_cast<const char*>(&hi), sizeof(T));
    }
    return e;
  }

  Source source_;
  Dict dict_;
  const Mode initial_mode_;
  Mode mode_;
  bool first_page_ = true;
  bool used_dict_pages_ = false, used_plain_pages_ = false;

  std::vector<T> values_;
  std::vector<int16_t> def_, rep_;
  std::vector<uint32_t> indices_;
  std::vector<uint8_t> seen_;  // StatsFromIndices scratch, all zero between calls
  std::vector<uint32_t> used_;
  std::vector<uint8_t> bools_;
  std::string plain_, body_, compressed_, header_, scratch_;
  struct PageBuffer {
    std::string header, data;
  };
  std::vector<PageBuffer> pages_;  // the first num_pages_ hold the chunk's data pages
  size_t num_pages_ = 0;
  int64_t pages_bytes_ = 0;
  int64_t page_levels_ = 0, page_values_ = 0, page_rows_ = 0, page_nans_ = 0;
  int64_t chunk_levels_ = 0, chunk_nulls_ = 0, chunk_nans_ = 0, chunk_uncompressed_ = 0;
  int64_t file_nulls_ = 0, file_nans_ = 0;
  bool chunk_nans_known_ = true, file_nans_known_ = true;
  Stats page_mm_, chunk_mm_, file_mm_;
  CopiedBytesBounds chunk_copied_, file_copied_;  // byte strings' bounds from copied pages
  std::vector<Encoding> copied_encodings_;        // of the chunk's copied pages
};

template <typename Source>
std::unique_ptr<ColumnWriter> MakeTyped(const ColumnDescriptor& d, const WriterOptions& o,
                                        PageCompressor* c, Source source = Source()) {
  return std::make_unique<TypedColumnWriter<Source>>(d, o, c, std::move(source));
}

}  // namespace

Result<std::unique_ptr<ColumnWriter>> ColumnWriter::Make(const ColumnDescriptor& d,
                                                         const WriterOptions& o,
                                                         PageCompressor* c) {
  const bool decimal = d.type->id() == TypeId::kDecimal;
  switch (d.physical_type) {
    case PhysicalType::kBoolean: return MakeTyped<NumericSource<uint8_t, uint8_t>>(d, o, c);
    case PhysicalType::kInt32:
      if (decimal) return MakeTyped<NumericSource<int128_t, int32_t>>(d, o, c);
      return MakeTyped<NumericSource<int32_t, int32_t>>(d, o, c);
    case PhysicalType::kInt64:
      if (decimal) return MakeTyped<NumericSource<int128_t, int64_t>>(d, o, c);
      return MakeTyped<NumericSource<int64_t, int64_t>>(d, o, c);
    case PhysicalType::kFloat: return MakeTyped<NumericSource<float, float>>(d, o, c);
    case PhysicalType::kDouble: return MakeTyped<NumericSource<double, double>>(d, o, c);
    case PhysicalType::kByteArray: return MakeTyped<BytesSource>(d, o, c);
    case PhysicalType::kFixedLenByteArray:
      if (decimal) {
        DecimalFixedSource s;
        s.width = d.type_length;
        return MakeTyped<DecimalFixedSource>(d, o, c, std::move(s));
      }
      return MakeTyped<BytesSource>(d, o, c);
    default:
      return Status::NotImplemented("column {}: writing physical type {}", fmt::join(d.path, "."),
                                    PhysicalTypeName(d.physical_type));
  }
}

}  // namespace sluice::parquet
