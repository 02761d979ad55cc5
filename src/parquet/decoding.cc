#include "parquet/decoding.h"

#include <algorithm>
#include <cstring>

#include "common/endian.h"
#include "parquet/rle_decoder.h"

namespace sluice::parquet {

int PhysicalWidth(PhysicalType t, int type_length) {
  switch (t) {
    case PhysicalType::kBoolean: return 1;
    case PhysicalType::kInt32:
    case PhysicalType::kFloat: return 4;
    case PhysicalType::kInt64:
    case PhysicalType::kDouble: return 8;
    case PhysicalType::kInt96: return 12;
    case PhysicalType::kFixedLenByteArray: return type_length;
    case PhysicalType::kByteArray: return 0;
  }
  return 0;
}

void ValueBuffer::Reset(PhysicalType t, int type_length) {
  type = t;
  width = std::max(1, PhysicalWidth(t, type_length));
  fixed.clear();
  offsets.assign(1, 0);
  heap.clear();
}

Status ValueBuffer::AppendBytes(std::string_view v) {
  if (heap.size() + v.size() > UINT32_MAX) {
    return Status::NotImplemented("more than 4 GiB of byte arrays in one column chunk");
  }
  heap.append(v);
  offsets.push_back(static_cast<uint32_t>(heap.size()));
  return Status::OK();
}

namespace {

template <typename Buffer>
void GrowFor(Buffer* b, size_t more) {
  const size_t need = b->size() + more;
  if (need > b->capacity()) b->reserve(std::max(need, 2 * b->capacity()));
}

}  // namespace

void ValueBuffer::ReserveMore(size_t more, size_t heap_bytes) {
  if (is_byte_array()) {
    GrowFor(&offsets, more);
    GrowFor(&heap, heap_bytes);
  } else {
    GrowFor(&fixed, more * static_cast<size_t>(width));
  }
}

namespace {

Status DecodePlain(std::string_view data, size_t n, ValueBuffer* out) {
  const auto* p = reinterpret_cast<const uint8_t*>(data.data());
  const size_t len = data.size();
  switch (out->type) {
    case PhysicalType::kBoolean: {
      if ((n + 7) / 8 > len) {
        return Status::Corruption("PLAIN: {} booleans need {} bytes, page has {}", n, (n + 7) / 8,
                                  len);
      }
      size_t pos = out->fixed.size();
      out->fixed.resize(pos + n);
      UnpackBits(p, 1, n, out->fixed.data() + pos);
      return Status::OK();
    }
    case PhysicalType::kByteArray: {
      size_t off = 0;
      // The page holds at most len - 4n bytes of values.
      out->ReserveMore(n, len > 4 * n ? len - 4 * n : 0);
      for (size_t i = 0; i < n; ++i) {
        if (len - off < 4) {
          return Status::Corruption("PLAIN: byte array {} of {}: length past the end of the page",
                                    i, n);
        }
        uint32_t l = LoadLE<uint32_t>(p + off);
        off += 4;
        if (l > len - off) {
          return Status::Corruption(
              "PLAIN: byte array {} of {} bytes runs past the end of the page", i, l);
        }
        RETURN_IF_ERROR(out->AppendBytes(data.substr(off, l)));
        off += l;
      }
      return Status::OK();
    }
    default: {
      size_t w = static_cast<size_t>(out->width);
      if (n > len / w) {
        return Status::Corruption("PLAIN: {} values of {} bytes exceed the page's {} bytes", n, w,
                                  len);
      }
      out->fixed.insert(out->fixed.end(), p, p + n * w);
      return Status::OK();
    }
  }
}

Status DecodeDictionary(std::string_view data, size_t n, const ValueBuffer* dict,
                        ValueBuffer* out) {
  if (dict == nullptr) {
    return Status::Corruption("dictionary-encoded page without a dictionary page");
  }
  if (data.empty()) {
    if (n == 0) return Status::OK();
    return Status::Corruption("dictionary indices: empty page");
  }
  int bw = static_cast<uint8_t>(data[0]);
  if (bw > 32) return Status::Corruption("dictionary indices: bit width {}", bw);
  std::vector<uint32_t> idx(n);
  RleBitPackedDecoder dec(reinterpret_cast<const uint8_t*>(data.data()) + 1, data.size() - 1, bw);
  RETURN_IF_ERROR_CTX(dec.Get(idx.data(), n), "dictionary indices");
  const size_t dict_size = dict->size();
  for (size_t i = 0; i < n; ++i) {
    if (idx[i] >= dict_size) {
      return Status::Corruption("dictionary index {} out of range (dictionary has {} values)",
                                idx[i], dict_size);
    }
  }
  if (out->is_byte_array()) {
    size_t total = 0;
    for (size_t i = 0; i < n; ++i) total += dict->offsets[idx[i] + 1] - dict->offsets[idx[i]];
    if (out->heap.size() + total > UINT32_MAX) {
      return Status::NotImplemented("more than 4 GiB of byte arrays in one column chunk");
    }
    size_t pos = out->offsets.size();
    out->offsets.resize(pos + n);
    // Reserved, then appended: a resize would zero the bytes first (a
    // position delete file's paths make that half of reading it).
    out->ReserveMore(0, total);
    for (size_t i = 0; i < n; ++i) {
      uint32_t begin = dict->offsets[idx[i]], len = dict->offsets[idx[i] + 1] - begin;
      out->heap.append(dict->heap.data() + begin, len);
      out->offsets[pos + i] = static_cast<uint32_t>(out->heap.size());
    }
    return Status::OK();
  }
  const size_t w = static_cast<size_t>(out->width);
  size_t pos = out->fixed.size();
  out->fixed.resize(pos + n * w);
  uint8_t* dst = out->fixed.data() + pos;
  const uint8_t* src = dict->fixed.data();
  switch (w) {
    case 4:
      for (size_t i = 0; i < n; ++i) std::memcpy(dst + i * 4, src + idx[i] * 4, 4);
      break;
    case 8:
      for (size_t i = 0; i < n; ++i) std::memcpy(dst + i * 8, src + idx[i] * 8, 8);
      break;
    default:
      for (size_t i = 0; i < n; ++i) std::memcpy(dst + i * w, src + idx[i] * w, w);
  }
  return Status::OK();
}

Status DecodeRleBoolean(std::string_view data, size_t n, ValueBuffer* out) {
  if (data.size() < 4) return Status::Corruption("RLE booleans: missing length prefix");
  uint32_t len = LoadLE<uint32_t>(data.data());
  if (len > data.size() - 4) {
    return Status::Corruption("RLE booleans: length {} exceeds the page", len);
  }
  size_t pos = out->fixed.size();
  out->fixed.resize(pos + n);
  RleBitPackedDecoder dec(reinterpret_cast<const uint8_t*>(data.data()) + 4, len, 1);
  return dec.Get(out->fixed.data() + pos, n);
}

Status DecodeDeltaLengths(std::string_view data, size_t n, std::vector<int32_t>* lengths,
                          size_t* consumed) {
  std::vector<uint8_t> raw;
  RETURN_IF_ERROR(DecodeDeltaBinaryPacked(data, n, 4, &raw, consumed));
  lengths->resize(n);
  std::memcpy(lengths->data(), raw.data(), n * 4);
  for (int32_t l : *lengths) {
    if (l < 0) return Status::Corruption("negative length {} in a delta-encoded page", l);
  }
  return Status::OK();
}

Status DecodeDeltaLengthByteArray(std::string_view data, size_t n, ValueBuffer* out,
                                  size_t* consumed) {
  std::vector<int32_t> lengths;
  size_t off = 0;
  RETURN_IF_ERROR_CTX(DecodeDeltaLengths(data, n, &lengths, &off), "DELTA_LENGTH_BYTE_ARRAY");
  out->ReserveMore(n);
  for (size_t i = 0; i < n; ++i) {
    size_t l = static_cast<size_t>(lengths[i]);
    if (l > data.size() - off) {
      return Status::Corruption("DELTA_LENGTH_BYTE_ARRAY: value {} of {} bytes runs past the end",
                                i, l);
    }
    RETURN_IF_ERROR(out->AppendBytes(data.substr(off, l)));
    off += l;
  }
  if (consumed != nullptr) *consumed = off;
  return Status::OK();
}

Status DecodeDeltaByteArray(std::string_view data, size_t n, ValueBuffer* out) {
  std::vector<int32_t> prefixes;
  size_t off = 0;
  RETURN_IF_ERROR_CTX(DecodeDeltaLengths(data, n, &prefixes, &off), "DELTA_BYTE_ARRAY prefixes");
  ValueBuffer suffixes;
  suffixes.Reset(PhysicalType::kByteArray, 0);
  RETURN_IF_ERROR_CTX(DecodeDeltaLengthByteArray(data.substr(off), n, &suffixes, nullptr),
                      "DELTA_BYTE_ARRAY suffixes");
  std::string prev, cur;
  for (size_t i = 0; i < n; ++i) {
    size_t p = static_cast<size_t>(prefixes[i]);
    if (p > prev.size()) {
      return Status::Corruption("DELTA_BYTE_ARRAY: prefix {} longer than previous value ({})", p,
                                prev.size());
    }
    cur.assign(prev, 0, p);
    cur.append(suffixes.Bytes(i));
    if (out->is_byte_array()) {
      RETURN_IF_ERROR(out->AppendBytes(cur));
    } else {
      if (cur.size() != static_cast<size_t>(out->width)) {
        return Status::Corruption("DELTA_BYTE_ARRAY: value of {} bytes in a FIXED[{}] column",
                                  cur.size(), out->width);
      }
      out->fixed.insert(out->fixed.end(), cur.begin(), cur.end());
    }
    prev.swap(cur);
  }
  return Status::OK();
}

Status DecodeByteStreamSplit(std::string_view data, size_t n, ValueBuffer* out) {
  if (out->is_byte_array() || out->type == PhysicalType::kBoolean) {
    return Status::Corruption("BYTE_STREAM_SPLIT used for {}", PhysicalTypeName(out->type));
  }
  const size_t w = static_cast<size_t>(out->width);
  if (n > data.size() / w) {
    return Status::Corruption("BYTE_STREAM_SPLIT: {} values of {} bytes exceed the page's {}", n, w,
                              data.size());
  }
  // Streams are laid out for all values of the page, which may exceed n.
  const size_t stride = data.size() / w;
  size_t pos = out->fixed.size();
  out->fixed.resize(pos + n * w);
  uint8_t* dst = out->fixed.data() + pos;
  const auto* src = reinterpret_cast<const uint8_t*>(data.data());
  for (size_t k = 0; k < w; ++k) {
    const uint8_t* stream = src + k * stride;
    for (size_t i = 0; i < n; ++i) dst[i * w + k] = stream[i];
  }
  return Status::OK();
}

}  // namespace

Status DecodeDeltaBinaryPacked(std::string_view data, size_t num_values, int width,
                               std::vector<uint8_t>* out, size_t* consumed) {
  const auto* begin = reinterpret_cast<const uint8_t*>(data.data());
  const uint8_t* p = begin;
  const uint8_t* end = p + data.size();
  uint64_t block_size, miniblocks, total, first_raw;
  if (!ReadVarint(&p, end, &block_size) || !ReadVarint(&p, end, &miniblocks) ||
      !ReadVarint(&p, end, &total) || !ReadVarint(&p, end, &first_raw)) {
    return Status::Corruption("DELTA_BINARY_PACKED: truncated header");
  }
  if (block_size == 0 || block_size % 128 != 0 || block_size > (1u << 20) || miniblocks == 0 ||
      block_size % miniblocks != 0 || (block_size / miniblocks) % 32 != 0) {
    return Status::Corruption("DELTA_BINARY_PACKED: invalid block size {} with {} miniblocks",
                              block_size, miniblocks);
  }
  if (total < num_values) {
    return Status::Corruption("DELTA_BINARY_PACKED: page holds {} values, {} expected", total,
                              num_values);
  }
  const size_t per_mini = block_size / miniblocks;
  size_t pos = out->size();
  out->resize(pos + num_values * static_cast<size_t>(width));
  uint8_t* dst = out->data() + pos;
  auto store = [&](size_t i, uint64_t v) {
    if (width == 4) {
      StoreLE(dst + i * 4, static_cast<uint32_t>(v));
    } else {
      StoreLE(dst + i * 8, v);
    }
  };
  uint64_t value = static_cast<uint64_t>(ZigZagDecode(first_raw));
  if (num_values > 0) store(0, value);
  size_t done = num_values > 0 ? 1 : 0;
  std::vector<uint64_t> deltas(per_mini);
  // Blocks follow while deltas remain (total - 1 of them in all).
  size_t remaining_total = total > 0 ? total - 1 : 0;
  while (done < num_values) {
    uint64_t min_raw;
    if (!ReadVarint(&p, end, &min_raw)) {
      return Status::Corruption("DELTA_BINARY_PACKED: truncated block header");
    }
    uint64_t min_delta = static_cast<uint64_t>(ZigZagDecode(min_raw));
    if (static_cast<uint64_t>(end - p) < miniblocks) {
      return Status::Corruption("DELTA_BINARY_PACKED: truncated miniblock widths");
    }
    const uint8_t* widths = p;
    p += miniblocks;
    for (uint64_t m = 0; m < miniblocks && done < num_values && remaining_total > 0; ++m) {
      int bw = widths[m];
      if (bw > 64) return Status::Corruption("DELTA_BINARY_PACKED: bit width {}", bw);
      size_t bytes = per_mini * static_cast<size_t>(bw) / 8;
      if (bytes > static_cast<size_t>(end - p)) {
        return Status::Corruption("DELTA_BINARY_PACKED: miniblock runs past the end of the page");
      }
      UnpackBits(p, bw, per_mini, deltas.data());
      p += bytes;
      size_t k = std::min<size_t>({per_mini, num_values - done, remaining_total});
      for (size_t i = 0; i < k; ++i) {
        value += min_delta + deltas[i];
        store(done + i, value);
      }
      done += k;
      remaining_total -= std::min<size_t>(per_mini, remaining_total);
    }
  }
  if (consumed != nullptr) *consumed = static_cast<size_t>(p - begin);
  return Status::OK();
}

Status DecodeValues(Encoding encoding, std::string_view data, size_t n, const ValueBuffer* dict,
                    ValueBuffer* out) {
  switch (encoding) {
    case Encoding::kPlain: return DecodePlain(data, n, out);
    case Encoding::kPlainDictionary:
    case Encoding::kRleDictionary: return DecodeDictionary(data, n, dict, out);
    case Encoding::kRle:
      if (out->type != PhysicalType::kBoolean) {
        return Status::Corruption("RLE encoding for {} values", PhysicalTypeName(out->type));
      }
      return DecodeRleBoolean(data, n, out);
    case Encoding::kDeltaBinaryPacked:
      if (out->type != PhysicalType::kInt32 && out->type != PhysicalType::kInt64) {
        return Status::Corruption("DELTA_BINARY_PACKED for {} values", PhysicalTypeName(out->type));
      }
      return DecodeDeltaBinaryPacked(data, n, out->width, &out->fixed, nullptr);
    case Encoding::kDeltaLengthByteArray:
      if (!out->is_byte_array()) {
        return Status::Corruption("DELTA_LENGTH_BYTE_ARRAY for {} values",
                                  PhysicalTypeName(out->type));
      }
      return DecodeDeltaLengthByteArray(data, n, out, nullptr);
    case Encoding::kDeltaByteArray:
      if (!out->is_byte_array() && out->type != PhysicalType::kFixedLenByteArray) {
        return Status::Corruption("DELTA_BYTE_ARRAY for {} values", PhysicalTypeName(out->type));
      }
      return DecodeDeltaByteArray(data, n, out);
    case Encoding::kByteStreamSplit: return DecodeByteStreamSplit(data, n, out);
    default:
      return Status::NotImplemented("value encoding {} ({})", EncodingName(encoding),
                                    static_cast<int>(encoding));
  }
}

Status DecodeLevels(Encoding encoding, int bit_width, std::string_view data, size_t n,
                    bool length_prefixed, int16_t* out, size_t* consumed) {
  const auto* p = reinterpret_cast<const uint8_t*>(data.data());
  if (encoding == Encoding::kBitPacked) {
    // Deprecated BIT_PACKED levels: most significant bit first.
    size_t bytes = (n * static_cast<size_t>(bit_width) + 7) / 8;
    if (bytes > data.size()) return Status::Corruption("BIT_PACKED levels run past the page");
    for (size_t i = 0; i < n; ++i) {
      uint32_t v = 0;
      for (int b = 0; b < bit_width; ++b) {
        size_t bit = i * static_cast<size_t>(bit_width) + static_cast<size_t>(b);
        v = (v << 1) | ((p[bit / 8] >> (7 - bit % 8)) & 1);
      }
      out[i] = static_cast<int16_t>(v);
    }
    *consumed = bytes;
    return Status::OK();
  }
  if (encoding != Encoding::kRle) {
    return Status::NotImplemented("level encoding {}", EncodingName(encoding));
  }
  size_t len = data.size();
  size_t header = 0;
  if (length_prefixed) {
    if (data.size() < 4) return Status::Corruption("levels: missing length prefix");
    uint32_t l = LoadLE<uint32_t>(p);
    if (l > data.size() - 4) {
      return Status::Corruption("levels: length {} exceeds the page's {} bytes", l, data.size());
    }
    header = 4;
    len = l;
  }
  RleBitPackedDecoder dec(p + header, len, bit_width);
  RETURN_IF_ERROR_CTX(dec.Get(out, n), "levels");
  *consumed = header + len;
  return Status::OK();
}

}  // namespace sluice::parquet
