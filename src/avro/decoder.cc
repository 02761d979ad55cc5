#include "avro/decoder.h"

#include <algorithm>

#include "avro/iceberg_schema.h"
#include "columnar/value_format.h"
#include "common/endian.h"

namespace sluice::avro {

namespace {

// Items of zero encoded size (e.g. empty records) cost no input bytes; cap how
// many one Decode() call may produce so a tiny input cannot demand huge output.
constexpr int64_t kMaxZeroSizeItems = int64_t{1} << 20;

// `skip`: the field ids whose fields are read past (RecordDecoder::Make).
using SkipIds = std::vector<int32_t>;

Result<DecodeNode> Compile(const AvroNode& n, const std::string& name, const SkipIds& skip,
                           int depth);

Status CompileValue(const AvroNode& n, DecodeNode* d, const SkipIds& skip, int depth) {
  const std::string& lt = n.logical_type;
  switch (n.type) {
    case AvroType::kBoolean:
      d->op = DecodeOp::kBool;
      d->min_bytes = 1;
      return Status::OK();
    case AvroType::kInt:
      d->op = lt == "time-millis" ? DecodeOp::kIntMillisToMicros : DecodeOp::kInt32;
      d->min_bytes = 1;
      return Status::OK();
    case AvroType::kLong:
      d->op = (lt == "timestamp-millis" || lt == "local-timestamp-millis")
                  ? DecodeOp::kLongMillisToMicros
                  : DecodeOp::kInt64;
      d->min_bytes = 1;
      return Status::OK();
    case AvroType::kFloat:
      d->op = DecodeOp::kFloat;
      d->min_bytes = 4;
      return Status::OK();
    case AvroType::kDouble:
      d->op = DecodeOp::kDouble;
      d->min_bytes = 8;
      return Status::OK();
    case AvroType::kBytes:
      d->op = lt == "decimal" ? DecodeOp::kDecimalBytes : DecodeOp::kBytes;
      d->min_bytes = 1;
      return Status::OK();
    case AvroType::kString:
      d->op = lt == "uuid" ? DecodeOp::kUuidString : DecodeOp::kBytes;
      d->min_bytes = 1;
      return Status::OK();
    case AvroType::kFixed:
      d->op = lt == "decimal" ? DecodeOp::kDecimalFixed : DecodeOp::kFixed;
      d->size = n.size;
      d->min_bytes = n.size;
      return Status::OK();
    case AvroType::kEnum:
      d->op = DecodeOp::kEnum;
      d->symbols = n.symbols;
      d->min_bytes = 1;
      return Status::OK();
    case AvroType::kRecord:
      d->op = DecodeOp::kRecord;
      for (const AvroField& f : n.fields) {
        ASSIGN_OR_RETURN(DecodeNode c, Compile(*f.type, f.name, skip, depth + 1));
        c.skip = f.field_id && std::find(skip.begin(), skip.end(), *f.field_id) != skip.end();
        d->min_bytes = std::min<int64_t>(d->min_bytes + c.min_bytes, INT32_MAX);
        d->children.push_back(std::move(c));
      }
      return Status::OK();
    case AvroType::kArray:
      d->min_bytes = 1;
      if (IsKeyValueArray(n)) {
        d->op = DecodeOp::kKeyValueArray;
        for (const AvroField& f : n.items->fields) {
          ASSIGN_OR_RETURN(DecodeNode c, Compile(*f.type, f.name, skip, depth + 1));
          d->children.push_back(std::move(c));
        }
      } else {
        d->op = DecodeOp::kArray;
        ASSIGN_OR_RETURN(DecodeNode c, Compile(*n.items, "element", skip, depth + 1));
        d->children.push_back(std::move(c));
      }
      return Status::OK();
    case AvroType::kMap: {
      d->op = DecodeOp::kMap;
      d->min_bytes = 1;
      ASSIGN_OR_RETURN(DecodeNode c, Compile(*n.values, "value", skip, depth + 1));
      d->children.push_back(std::move(c));
      return Status::OK();
    }
    default:
      return Status::NotImplemented("avro: cannot decode a value of type {}", AvroTypeName(n.type));
  }
}

Result<DecodeNode> Compile(const AvroNode& n, const std::string& name, const SkipIds& skip,
                           int depth) {
  DecodeNode d;
  d.name = name;
  if (depth > 200) return Status::NotImplemented("avro: schema nested too deeply");
  const AvroNode* value = &n;
  if (n.type == AvroType::kUnion) {
    if (n.branches.size() > 2) {
      return Status::NotImplemented("avro: field '{}': union with {} branches is not supported",
                                    name, n.branches.size());
    }
    d.union_branches = static_cast<int8_t>(n.branches.size());
    value = nullptr;
    for (size_t i = 0; i < n.branches.size(); ++i) {
      if (n.branches[i]->type == AvroType::kNull) {
        d.null_branch = static_cast<int8_t>(i);
      } else if (value == nullptr) {
        value = n.branches[i].get();
      } else {
        return Status::NotImplemented(
            "avro: field '{}': union with more than one non-null branch is not supported", name);
      }
    }
    if (value == nullptr) {
      return Status::NotImplemented("avro: field '{}': union of only null", name);
    }
  }
  Status st = CompileValue(*value, &d, skip, depth);
  if (!st.ok()) return st;
  if (d.union_branches) d.min_bytes = 1;
  return d;
}

class Cursor {
 public:
  Cursor(std::string_view block, size_t pos)
      : begin_(reinterpret_cast<const uint8_t*>(block.data())),
        p_(begin_ + pos),
        end_(begin_ + block.size()) {}

  bool Records(const DecodeNode& root, int64_t count, Batch* batch, int64_t first_record) {
    for (int64_t r = 0; r < count; ++r) {
      for (size_t i = 0; i < root.children.size(); ++i) {
        if (!Value(root.children[i], &batch->columns[i])) {
          error_ = fmt::format("record {}: {}", first_record + r, error_);
          return false;
        }
      }
    }
    return true;
  }

  const std::string& error() const { return error_; }
  size_t position() const { return static_cast<size_t>(p_ - begin_); }

 private:
  bool Fail(std::string_view what) {
    error_ = fmt::format("byte {}: {}", p_ - begin_, what);
    return false;
  }
  size_t Left() const { return static_cast<size_t>(end_ - p_); }

  bool Long(int64_t* v) {
    if (p_ < end_ && *p_ < 0x80) {
      *v = ZigZagDecode(*p_++);
      return true;
    }
    uint64_t u;
    if (!ReadVarint(&p_, end_, &u)) return Fail("truncated or overlong varint");
    *v = ZigZagDecode(u);
    return true;
  }
  bool Int(int32_t* v) {
    const uint8_t* start = p_;
    int64_t l;
    if (!Long(&l)) return false;
    if (l < INT32_MIN || l > INT32_MAX) {
      p_ = start;  // report where the value begins
      return Fail(fmt::format("int out of range: {}", l));
    }
    *v = static_cast<int32_t>(l);
    return true;
  }
  bool Length(int64_t* len) {
    if (!Long(len)) return false;
    if (*len < 0 || static_cast<uint64_t>(*len) > Left()) {
      return Fail(fmt::format("length {} exceeds the {} bytes left", *len, Left()));
    }
    return true;
  }
  bool Raw(size_t n, const uint8_t** out) {
    if (n > Left()) return Fail(fmt::format("{} bytes needed, {} left", n, Left()));
    *out = p_;
    p_ += n;
    return true;
  }
  bool Decimal(const uint8_t* b, size_t n, Column* col) {
    if (n > 16) return Fail(fmt::format("decimal of {} bytes exceeds 16", n));
    unsigned __int128 u = 0;
    for (size_t i = 0; i < n; ++i) u = (u << 8) | b[i];
    if (n > 0 && n < 16 && (b[0] & 0x80)) u |= ~static_cast<unsigned __int128>(0) << (8 * n);
    col->Append<int128_t>(static_cast<int128_t>(u));
    return true;
  }
  // Reads an array/map block header; *n items follow (0 ends the sequence)
  // in *bytes bytes when the header says (a negative count), else -1.
  bool BlockCount(int64_t item_min_bytes, int64_t* n, int64_t* bytes = nullptr) {
    if (bytes != nullptr) *bytes = -1;
    if (!Long(n)) return false;
    if (*n < 0) {
      if (*n == INT64_MIN) return Fail("bad block count");
      *n = -*n;
      int64_t size;
      if (!Length(&size)) return false;
      if (bytes != nullptr) *bytes = size;
    }
    if (item_min_bytes > 0) {
      if (static_cast<uint64_t>(*n) > Left() / static_cast<uint64_t>(item_min_bytes)) {
        return Fail(fmt::format("block of {} items exceeds the {} bytes left", *n, Left()));
      }
    } else {
      zero_size_items_ += *n;
      if (*n > kMaxZeroSizeItems || zero_size_items_ > kMaxZeroSizeItems) {
        return Fail(fmt::format("block of {} empty items is implausible", *n));
      }
    }
    return true;
  }

  bool Value(const DecodeNode& d, Column* col) {
    if (d.skip) {
      if (!Skip(d)) return Named(d);
      col->AppendNull();
      return true;
    }
    if (d.union_branches) {
      int64_t branch;
      if (!Long(&branch)) return Named(d);
      if (branch < 0 || branch >= d.union_branches) {
        Fail(fmt::format("union branch {} out of range", branch));
        return Named(d);
      }
      if (branch == d.null_branch) {
        col->AppendNull();
        return true;
      }
    }
    if (!Plain(d, col)) return Named(d);
    return true;
  }
  // Reads past a value (its union branch first), checking only that its
  // lengths and counts fit the bytes left.
  bool Skip(const DecodeNode& d) {
    if (d.union_branches) {
      int64_t branch;
      if (!Long(&branch)) return false;
      if (branch < 0 || branch >= d.union_branches) {
        return Fail(fmt::format("union branch {} out of range", branch));
      }
      if (branch == d.null_branch) return true;
    }
    const uint8_t* b;
    int64_t v;
    switch (d.op) {
      case DecodeOp::kBool: return Raw(1, &b);
      case DecodeOp::kInt32:
      case DecodeOp::kInt64:
      case DecodeOp::kIntMillisToMicros:
      case DecodeOp::kLongMillisToMicros:
      case DecodeOp::kEnum: return Long(&v);
      case DecodeOp::kFloat: return Raw(4, &b);
      case DecodeOp::kDouble: return Raw(8, &b);
      case DecodeOp::kBytes:
      case DecodeOp::kUuidString:
      case DecodeOp::kDecimalBytes: return Length(&v) && Raw(static_cast<size_t>(v), &b);
      case DecodeOp::kFixed:
      case DecodeOp::kDecimalFixed: return Raw(static_cast<size_t>(d.size), &b);
      case DecodeOp::kRecord:
        for (const DecodeNode& c : d.children) {
          if (!Skip(c)) return false;
        }
        return true;
      case DecodeOp::kArray:
      case DecodeOp::kMap:
      case DecodeOp::kKeyValueArray: return SkipBlocks(d);
    }
    return Fail("unknown decode step");
  }
  // The blocks of an array or map: a block whose header gives its size in
  // bytes is skipped whole.
  bool SkipBlocks(const DecodeNode& d) {
    int64_t item_min_bytes = 0;
    for (const DecodeNode& c : d.children) item_min_bytes += c.min_bytes;
    if (d.op == DecodeOp::kMap) item_min_bytes += 1;  // a key costs at least one byte
    for (;;) {
      int64_t n, bytes;
      if (!BlockCount(item_min_bytes, &n, &bytes)) return false;
      if (n == 0) return true;
      if (bytes >= 0) {
        p_ += bytes;  // (Length checked it against the bytes left)
        continue;
      }
      for (int64_t i = 0; i < n; ++i) {
        if (d.op == DecodeOp::kMap) {
          int64_t len;
          const uint8_t* b;
          if (!Length(&len) || !Raw(static_cast<size_t>(len), &b)) return false;
        }
        for (const DecodeNode& c : d.children) {
          if (!Skip(c)) return false;
        }
      }
    }
  }
  bool Named(const DecodeNode& d) {
    error_ = fmt::format("{}: {}", d.name, error_);
    return false;
  }

  bool Plain(const DecodeNode& d, Column* col) {
    switch (d.op) {
      case DecodeOp::kBool: {
        if (p_ >= end_) return Fail("truncated boolean");
        col->AppendBool(*p_++ != 0);
        return true;
      }
      case DecodeOp::kInt32: {
        int32_t v;
        if (!Int(&v)) return false;
        col->Append<int32_t>(v);
        return true;
      }
      case DecodeOp::kInt64: {
        int64_t v;
        if (!Long(&v)) return false;
        col->Append<int64_t>(v);
        return true;
      }
      case DecodeOp::kIntMillisToMicros: {
        int32_t v;
        if (!Int(&v)) return false;
        col->Append<int64_t>(int64_t{v} * 1000);
        return true;
      }
      case DecodeOp::kLongMillisToMicros: {
        int64_t v;
        if (!Long(&v)) return false;
        if (v > INT64_MAX / 1000 || v < INT64_MIN / 1000) return Fail("timestamp-millis overflow");
        col->Append<int64_t>(v * 1000);
        return true;
      }
      case DecodeOp::kFloat: {
        const uint8_t* b;
        if (!Raw(4, &b)) return false;
        col->Append<float>(LoadLE<float>(b));
        return true;
      }
      case DecodeOp::kDouble: {
        const uint8_t* b;
        if (!Raw(8, &b)) return false;
        col->Append<double>(LoadLE<double>(b));
        return true;
      }
      case DecodeOp::kBytes: {
        int64_t len;
        if (!Length(&len)) return false;
        col->AppendBytes(std::string_view(reinterpret_cast<const char*>(p_), len));
        p_ += len;
        return true;
      }
      case DecodeOp::kFixed: {
        const uint8_t* b;
        if (!Raw(d.size, &b)) return false;
        col->AppendBytes(std::string_view(reinterpret_cast<const char*>(b), d.size));
        return true;
      }
      case DecodeOp::kEnum: {
        int32_t i;
        if (!Int(&i)) return false;
        if (i < 0 || static_cast<size_t>(i) >= d.symbols.size()) {
          return Fail(fmt::format("enum index {} out of range", i));
        }
        col->AppendBytes(d.symbols[i]);
        return true;
      }
      case DecodeOp::kUuidString: {
        int64_t len;
        if (!Length(&len)) return false;
        std::string_view text(reinterpret_cast<const char*>(p_), len);
        auto bytes = ParseUuid(text);
        if (!bytes.ok()) return Fail("bad uuid text");
        p_ += len;
        col->AppendBytes(*bytes);
        return true;
      }
      case DecodeOp::kDecimalFixed: {
        const uint8_t* b;
        if (!Raw(d.size, &b)) return false;
        return Decimal(b, d.size, col);
      }
      case DecodeOp::kDecimalBytes: {
        int64_t len;
        const uint8_t* b;
        if (!Length(&len) || !Raw(len, &b)) return false;
        return Decimal(b, len, col);
      }
      case DecodeOp::kRecord:
        for (size_t i = 0; i < d.children.size(); ++i) {
          if (!Value(d.children[i], col->mutable_child(static_cast<int>(i)))) return false;
        }
        col->FinishNested();
        return true;
      case DecodeOp::kArray: {
        const DecodeNode& item = d.children[0];
        Column* items = col->mutable_child(0);
        for (;;) {
          int64_t n;
          if (!BlockCount(item.min_bytes, &n)) return false;
          if (n == 0) break;
          for (int64_t i = 0; i < n; ++i) {
            if (!Value(item, items)) return false;
          }
        }
        col->FinishNested();
        return true;
      }
      case DecodeOp::kMap: {
        const DecodeNode& value = d.children[0];
        Column* keys = col->mutable_child(0);
        Column* values = col->mutable_child(1);
        int64_t entry_min_bytes = 1 + value.min_bytes;  // a key costs at least one byte
        for (;;) {
          int64_t n;
          if (!BlockCount(entry_min_bytes, &n)) return false;
          if (n == 0) break;
          for (int64_t i = 0; i < n; ++i) {
            int64_t len;
            if (!Length(&len)) return false;
            keys->AppendBytes(std::string_view(reinterpret_cast<const char*>(p_), len));
            p_ += len;
            if (!Value(value, values)) return false;
          }
        }
        col->FinishNested();
        return true;
      }
      case DecodeOp::kKeyValueArray: {
        Column* keys = col->mutable_child(0);
        Column* values = col->mutable_child(1);
        int64_t entry_min_bytes = d.children[0].min_bytes + d.children[1].min_bytes;
        for (;;) {
          int64_t n;
          if (!BlockCount(entry_min_bytes, &n)) return false;
          if (n == 0) break;
          for (int64_t i = 0; i < n; ++i) {
            if (!Value(d.children[0], keys) || !Value(d.children[1], values)) return false;
          }
        }
        col->FinishNested();
        return true;
      }
    }
    return Fail("unknown decode step");
  }

  const uint8_t* begin_;
  const uint8_t* p_;
  const uint8_t* end_;
  int64_t zero_size_items_ = 0;
  std::string error_;
};

}  // namespace

Result<std::unique_ptr<RecordDecoder>> RecordDecoder::Make(
    const AvroNode& record, const std::vector<int32_t>& skip_field_ids) {
  if (record.type != AvroType::kRecord) {
    return Status::NotImplemented("avro: top-level type is {}, sluice reads only records",
                                  AvroTypeName(record.type));
  }
  auto decoder = std::unique_ptr<RecordDecoder>(new RecordDecoder());
  ASSIGN_OR_RETURN(decoder->root_, Compile(record, record.name, skip_field_ids, 0));
  return decoder;
}

Status RecordDecoder::Decode(std::string_view block, size_t* pos, int64_t count,
                             int64_t first_record, Batch* batch) const {
  if (batch->columns.size() != root_.children.size()) {
    return Status::Internal("avro: batch has {} columns, record has {} fields",
                            batch->columns.size(), root_.children.size());
  }
  if (*pos > block.size()) return Status::Internal("avro: decode position past the block");
  Cursor cursor(block, *pos);
  if (!cursor.Records(root_, count, batch, first_record)) {
    return Status::Corruption("{}", cursor.error());
  }
  *pos = cursor.position();
  return Status::OK();
}

}  // namespace sluice::avro
