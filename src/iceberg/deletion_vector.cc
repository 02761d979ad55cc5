#include "iceberg/deletion_vector.h"

#include <zlib.h>

#include <map>
#include <nlohmann/json.hpp>

#include "common/endian.h"

namespace sluice::iceberg {

namespace {

constexpr uint32_t kCookieNoRun = 12346;
constexpr uint32_t kCookieRun = 12347;
const char kDvMagic[4] = {'\xD1', '\xD3', '\x39', '\x64'};
const char kPuffinMagic[4] = {'P', 'F', 'A', '1'};

void AppendBE32(std::string* out, uint32_t v) {
  for (int s = 24; s >= 0; s -= 8) out->push_back(static_cast<char>(v >> s));
}
uint32_t LoadBE32(const char* p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v = v << 8 | static_cast<uint8_t>(p[i]);
  return v;
}

// A 32-bit Roaring bitmap of the low halves.
void AppendRoaring32(const std::vector<uint32_t>& values, std::string* out) {
  std::map<uint16_t, std::vector<uint16_t>> containers;
  for (uint32_t v : values) containers[static_cast<uint16_t>(v >> 16)].push_back(v & 0xffff);
  size_t start = out->size();
  AppendLE<uint32_t>(out, kCookieNoRun);
  AppendLE<uint32_t>(out, static_cast<uint32_t>(containers.size()));
  for (const auto& [key, vals] : containers) {
    AppendLE<uint16_t>(out, key);
    AppendLE<uint16_t>(out, static_cast<uint16_t>(vals.size() - 1));
  }
  size_t offsets_at = out->size();
  out->append(containers.size() * 4, '\0');
  size_t i = 0;
  for (const auto& [key, vals] : containers) {
    StoreLE<uint32_t>(out->data() + offsets_at + 4 * i++,
                      static_cast<uint32_t>(out->size() - start));
    if (vals.size() <= 4096) {
      for (uint16_t v : vals) AppendLE<uint16_t>(out, v);
    } else {
      uint64_t words[1024] = {};
      for (uint16_t v : vals) words[v >> 6] |= uint64_t{1} << (v & 63);
      for (uint64_t w : words) AppendLE<uint64_t>(out, w);
    }
  }
}

class Reader {
 public:
  Reader(std::string_view s) : s_(s) {}
  bool Need(size_t n) const { return pos_ + n <= s_.size(); }
  template <typename T>
  Result<T> Get() {
    if (!Need(sizeof(T)))
      return Status::Corruption("deletion vector is truncated at byte {}", pos_);
    T v = LoadLE<T>(s_.data() + pos_);
    pos_ += sizeof(T);
    return v;
  }
  size_t pos() const { return pos_; }
  void Seek(size_t p) { pos_ = p; }
  size_t size() const { return s_.size(); }

 private:
  std::string_view s_;
  size_t pos_ = 0;
};

Status ReadRoaring32(Reader& r, uint64_t high, std::vector<int64_t>* out) {
  size_t start = r.pos();
  ASSIGN_OR_RETURN(uint32_t cookie, r.Get<uint32_t>());
  uint32_t n;
  std::vector<bool> is_run;
  bool has_offsets;
  if ((cookie & 0xffff) == kCookieRun) {
    n = (cookie >> 16) + 1;
    std::vector<uint8_t> flags((n + 7) / 8);
    for (auto& f : flags) {
      ASSIGN_OR_RETURN(f, r.Get<uint8_t>());
    }
    for (uint32_t i = 0; i < n; ++i) is_run.push_back(flags[i / 8] >> (i % 8) & 1);
    has_offsets = n >= 4;
  } else if (cookie == kCookieNoRun) {
    ASSIGN_OR_RETURN(n, r.Get<uint32_t>());
    if (n > 65536) return Status::Corruption("deletion vector: {} containers", n);
    is_run.assign(n, false);
    has_offsets = true;
  } else {
    return Status::Corruption("deletion vector: bad Roaring cookie {}", cookie);
  }
  if (n > 65536) return Status::Corruption("deletion vector: {} containers", n);
  std::vector<uint16_t> keys(n);
  std::vector<uint32_t> cards(n);
  for (uint32_t i = 0; i < n; ++i) {
    ASSIGN_OR_RETURN(keys[i], r.Get<uint16_t>());
    ASSIGN_OR_RETURN(uint16_t c, r.Get<uint16_t>());
    cards[i] = uint32_t{c} + 1;
  }
  std::vector<uint32_t> offsets;
  if (has_offsets) {
    for (uint32_t i = 0; i < n; ++i) {
      ASSIGN_OR_RETURN(uint32_t o, r.Get<uint32_t>());
      offsets.push_back(o);
    }
  }
  for (uint32_t i = 0; i < n; ++i) {
    if (has_offsets) {
      if (start + offsets[i] > r.size()) return Status::Corruption("deletion vector: bad offset");
      r.Seek(start + offsets[i]);
    }
    const int64_t base = static_cast<int64_t>(high << 32 | uint64_t{keys[i]} << 16);
    // Keys, values and runs ascend, so the positions do: one out of order
    // (or repeated, or negative) is a corrupt bitmap, refused at once rather
    // than expanded (overlapping runs could otherwise claim billions).
    auto add = [&](int64_t position) -> Status {
      if (position < 0 || (!out->empty() && position <= out->back())) {
        return Status::Corruption("deletion vector: position {} out of order", position);
      }
      out->push_back(position);
      return Status::OK();
    };
    if (is_run[i]) {
      ASSIGN_OR_RETURN(uint16_t runs, r.Get<uint16_t>());
      for (uint16_t k = 0; k < runs; ++k) {
        ASSIGN_OR_RETURN(uint16_t first, r.Get<uint16_t>());
        ASSIGN_OR_RETURN(uint16_t len, r.Get<uint16_t>());
        for (uint32_t v = first; v <= uint32_t{first} + len && v <= 0xffff; ++v) {
          RETURN_IF_ERROR(add(base + v));
        }
      }
    } else if (cards[i] <= 4096) {
      for (uint32_t k = 0; k < cards[i]; ++k) {
        ASSIGN_OR_RETURN(uint16_t v, r.Get<uint16_t>());
        RETURN_IF_ERROR(add(base + v));
      }
    } else {
      for (int w = 0; w < 1024; ++w) {
        ASSIGN_OR_RETURN(uint64_t word, r.Get<uint64_t>());
        for (int b = 0; b < 64; ++b) {
          if (word >> b & 1) RETURN_IF_ERROR(add(base + w * 64 + b));
        }
      }
    }
  }
  return Status::OK();
}

}  // namespace

std::string SerializeDeletionVector(const PositionSet& positions) {
  std::map<uint32_t, std::vector<uint32_t>> buckets;
  for (int64_t p : positions) {
    buckets[static_cast<uint32_t>(static_cast<uint64_t>(p) >> 32)].push_back(
        static_cast<uint32_t>(p));
  }
  std::string body(kDvMagic, 4);
  AppendLE<uint64_t>(&body, buckets.size());
  for (const auto& [key, values] : buckets) {
    AppendLE<uint32_t>(&body, key);
    AppendRoaring32(values, &body);
  }
  std::string out;
  AppendBE32(&out, static_cast<uint32_t>(body.size()));
  out += body;
  AppendBE32(&out, static_cast<uint32_t>(
                       crc32(0, reinterpret_cast<const Bytef*>(body.data()), body.size())));
  return out;
}

Result<PositionSet> DeserializeDeletionVector(std::string_view blob) {
  if (blob.size() < 12) return Status::Corruption("deletion vector of {} bytes", blob.size());
  uint32_t len = LoadBE32(blob.data());
  if (len != blob.size() - 8) {
    return Status::Corruption("deletion vector length {} does not match its blob ({} bytes)", len,
                              blob.size());
  }
  std::string_view body = blob.substr(4, len);
  if (body.substr(0, 4) != std::string_view(kDvMagic, 4)) {
    return Status::Corruption("deletion vector: bad magic");
  }
  uint32_t crc = LoadBE32(blob.data() + 4 + len);
  if (crc != static_cast<uint32_t>(crc32(0, reinterpret_cast<const Bytef*>(body.data()), len))) {
    return Status::Corruption("deletion vector: CRC mismatch");
  }
  Reader r(body.substr(4));
  ASSIGN_OR_RETURN(uint64_t buckets, r.Get<uint64_t>());
  if (buckets > r.size()) return Status::Corruption("deletion vector: {} buckets", buckets);
  std::vector<int64_t> out;
  for (uint64_t i = 0; i < buckets; ++i) {
    ASSIGN_OR_RETURN(uint32_t key, r.Get<uint32_t>());
    RETURN_IF_ERROR(ReadRoaring32(r, key, &out));
  }
  return PositionSet(std::move(out));  // (sorted, checked above: one pass)
}

Result<PositionSet> ReadDeletionVector(FileIO& io, const std::string& puffin_path,
                                       const DataFile& entry) {
  if (!entry.content_offset || !entry.content_size_in_bytes) {
    return Status::Corruption("DV entry for {} lacks content_offset/content_size_in_bytes",
                              entry.referenced_data_file.value_or("?"));
  }
  ASSIGN_OR_RETURN(auto in, io.OpenInput(puffin_path));
  std::string blob;
  RETURN_IF_ERROR(in->ReadAt(*entry.content_offset, *entry.content_size_in_bytes, &blob));
  auto dv = DeserializeDeletionVector(blob);
  if (!dv.ok()) return dv.status().WithContextF("{}", puffin_path);
  if (static_cast<int64_t>(dv->size()) != entry.record_count) {
    return Status::Corruption("{}: DV cardinality {} != record_count {}", puffin_path, dv->size(),
                              entry.record_count);
  }
  return dv;
}

Result<std::vector<DataFile>> WriteDeletionVectors(
    FileIO& io, const std::string& path,
    const std::vector<std::pair<DataFile, PositionSet>>& vectors) {
  std::string file(kPuffinMagic, 4);
  nlohmann::ordered_json blobs = nlohmann::ordered_json::array();
  std::vector<DataFile> out;
  for (const auto& [data, positions] : vectors) {
    std::string blob = SerializeDeletionVector(positions);
    DataFile d;
    d.content = FileContent::kPositionDeletes;
    d.file_format = "puffin";
    d.file_path = path;
    d.spec_id = data.spec_id;
    d.partition = data.partition;
    d.record_count = static_cast<int64_t>(positions.size());
    d.referenced_data_file = data.file_path;
    d.content_offset = static_cast<int64_t>(file.size());
    d.content_size_in_bytes = static_cast<int64_t>(blob.size());
    blobs.push_back({{"type", "deletion-vector-v1"},
                     {"fields", {2147483645}},
                     {"snapshot-id", -1},
                     {"sequence-number", -1},
                     {"offset", *d.content_offset},
                     {"length", *d.content_size_in_bytes},
                     {"properties",
                      {{"referenced-data-file", data.file_path},
                       {"cardinality", std::to_string(positions.size())}}}});
    file += blob;
    out.push_back(std::move(d));
  }
  nlohmann::ordered_json footer = {{"blobs", blobs},
                                   {"properties", {{"created-by", "sluice version 0.1.0"}}}};
  std::string payload = footer.dump();
  file.append(kPuffinMagic, 4);
  file += payload;
  AppendLE<uint32_t>(&file, static_cast<uint32_t>(payload.size()));
  AppendLE<uint32_t>(&file, 0);  // flags: uncompressed
  file.append(kPuffinMagic, 4);
  RETURN_IF_ERROR(io.WriteFile(path, file));
  for (auto& d : out) d.file_size_in_bytes = static_cast<int64_t>(file.size());
  return out;
}

}  // namespace sluice::iceberg
