#include "parquet/thrift_compact.h"

#include <cstring>

#include "common/endian.h"

namespace sluice::parquet::thrift {

std::string_view CTypeName(CType t) {
  switch (t) {
    case CType::kStop: return "stop";
    case CType::kBoolTrue:
    case CType::kBoolFalse: return "bool";
    case CType::kByte: return "byte";
    case CType::kI16: return "i16";
    case CType::kI32: return "i32";
    case CType::kI64: return "i64";
    case CType::kDouble: return "double";
    case CType::kBinary: return "binary";
    case CType::kList: return "list";
    case CType::kSet: return "set";
    case CType::kMap: return "map";
    case CType::kStruct: return "struct";
  }
  return "invalid";
}

// ---------------------------------------------------------------- writer

void CompactWriter::StructBegin() {
  last_id_stack_.push_back(last_id_);
  last_id_ = 0;
}

void CompactWriter::StructEnd() {
  out_->push_back(0);
  last_id_ = last_id_stack_.empty() ? 0 : last_id_stack_.back();
  if (!last_id_stack_.empty()) last_id_stack_.pop_back();
}

void CompactWriter::FieldHeader(int16_t id, CType type) {
  int delta = id - last_id_;
  if (delta > 0 && delta <= 15) {
    out_->push_back(static_cast<char>((delta << 4) | static_cast<int>(type)));
  } else {
    out_->push_back(static_cast<char>(type));
    AppendVarint(out_, ZigZagEncode(id));
  }
  last_id_ = id;
}

void CompactWriter::FieldBool(int16_t id, bool v) {
  FieldHeader(id, v ? CType::kBoolTrue : CType::kBoolFalse);
}
void CompactWriter::FieldI8(int16_t id, int8_t v) {
  FieldHeader(id, CType::kByte);
  out_->push_back(static_cast<char>(v));
}
void CompactWriter::FieldI16(int16_t id, int16_t v) {
  FieldHeader(id, CType::kI16);
  AppendVarint(out_, ZigZagEncode(v));
}
void CompactWriter::FieldI32(int16_t id, int32_t v) {
  FieldHeader(id, CType::kI32);
  AppendVarint(out_, ZigZagEncode(v));
}
void CompactWriter::FieldI64(int16_t id, int64_t v) {
  FieldHeader(id, CType::kI64);
  AppendVarint(out_, ZigZagEncode(v));
}
void CompactWriter::FieldDouble(int16_t id, double v) {
  FieldHeader(id, CType::kDouble);
  AppendLE(out_, v);
}
void CompactWriter::FieldBinary(int16_t id, std::string_view v) {
  FieldHeader(id, CType::kBinary);
  ElemBinary(v);
}
void CompactWriter::FieldStructBegin(int16_t id) {
  FieldHeader(id, CType::kStruct);
  StructBegin();
}
void CompactWriter::FieldListBegin(int16_t id, CType elem, int32_t size) {
  FieldHeader(id, CType::kList);
  ListBegin(elem, size);
}

void CompactWriter::ListBegin(CType elem, int32_t size) {
  if (size < 15) {
    out_->push_back(static_cast<char>((size << 4) | static_cast<int>(elem)));
  } else {
    out_->push_back(static_cast<char>(0xf0 | static_cast<int>(elem)));
    AppendVarint(out_, static_cast<uint32_t>(size));
  }
}
void CompactWriter::ElemBool(bool v) { out_->push_back(v ? 1 : 2); }
void CompactWriter::ElemI32(int32_t v) { AppendVarint(out_, ZigZagEncode(v)); }
void CompactWriter::ElemI64(int64_t v) { AppendVarint(out_, ZigZagEncode(v)); }
void CompactWriter::ElemBinary(std::string_view v) {
  AppendVarint(out_, v.size());
  out_->append(v);
}

// ---------------------------------------------------------------- reader

Status CompactReader::Truncated(const char* what) const {
  return Status::Corruption("thrift: truncated {} at offset {}", what, position());
}

Status CompactReader::Expect(CType got, CType want) const {
  if (got == want) return Status::OK();
  return Status::Corruption("thrift: field of type {} where {} was expected (offset {})",
                            CTypeName(got), CTypeName(want), position());
}

Status CompactReader::ReadVarint64(uint64_t* v) {
  if (!ReadVarint(&p_, end_, v)) return Truncated("varint");
  return Status::OK();
}

Status CompactReader::StructBegin() {
  if (++depth_ > kMaxDepth) {
    return Status::Corruption("thrift: structs nested deeper than {} (offset {})", kMaxDepth,
                              position());
  }
  last_id_stack_.push_back(last_id_);
  last_id_ = 0;
  return Status::OK();
}

void CompactReader::StructEnd() {
  --depth_;
  if (!last_id_stack_.empty()) {
    last_id_ = last_id_stack_.back();
    last_id_stack_.pop_back();
  }
}

Status CompactReader::ReadFieldHeader(CType* type, int16_t* id) {
  if (p_ >= end_) return Truncated("field header");
  uint8_t b = *p_++;
  uint8_t t = b & 0x0f;
  if (t > static_cast<uint8_t>(CType::kStruct)) {
    return Status::Corruption("thrift: invalid field type {} at offset {}", t, position() - 1);
  }
  *type = static_cast<CType>(t);
  if (*type == CType::kStop) {
    *id = 0;
    return Status::OK();
  }
  int delta = b >> 4;
  if (delta != 0) {
    *id = static_cast<int16_t>(last_id_ + delta);
  } else {
    uint64_t raw;
    RETURN_IF_ERROR(ReadVarint64(&raw));
    int64_t v = ZigZagDecode(raw);
    if (v < INT16_MIN || v > INT16_MAX) {
      return Status::Corruption("thrift: field id {} out of range at offset {}", v, position());
    }
    *id = static_cast<int16_t>(v);
  }
  last_id_ = *id;
  return Status::OK();
}

Status CompactReader::ReadBool(CType type, bool* v) {
  if (type == CType::kBoolTrue || type == CType::kBoolFalse) {
    *v = type == CType::kBoolTrue;
    return Status::OK();
  }
  return Expect(type, CType::kBoolTrue);
}

Status CompactReader::ReadElemBool(bool* v) {
  if (p_ >= end_) return Truncated("bool");
  *v = *p_++ == 1;
  return Status::OK();
}

Status CompactReader::ReadI8(CType type, int8_t* v) {
  RETURN_IF_ERROR(Expect(type, CType::kByte));
  if (p_ >= end_) return Truncated("byte");
  *v = static_cast<int8_t>(*p_++);
  return Status::OK();
}

Status CompactReader::ReadI16(CType type, int16_t* v) {
  RETURN_IF_ERROR(Expect(type, CType::kI16));
  uint64_t raw;
  RETURN_IF_ERROR(ReadVarint64(&raw));
  int64_t x = ZigZagDecode(raw);
  if (x < INT16_MIN || x > INT16_MAX) {
    return Status::Corruption("thrift: i16 value {} out of range at offset {}", x, position());
  }
  *v = static_cast<int16_t>(x);
  return Status::OK();
}

Status CompactReader::ReadI32(CType type, int32_t* v) {
  RETURN_IF_ERROR(Expect(type, CType::kI32));
  uint64_t raw;
  RETURN_IF_ERROR(ReadVarint64(&raw));
  int64_t x = ZigZagDecode(raw);
  if (x < INT32_MIN || x > INT32_MAX) {
    return Status::Corruption("thrift: i32 value {} out of range at offset {}", x, position());
  }
  *v = static_cast<int32_t>(x);
  return Status::OK();
}

Status CompactReader::ReadI64(CType type, int64_t* v) {
  RETURN_IF_ERROR(Expect(type, CType::kI64));
  uint64_t raw;
  RETURN_IF_ERROR(ReadVarint64(&raw));
  *v = ZigZagDecode(raw);
  return Status::OK();
}

Status CompactReader::ReadDouble(CType type, double* v) {
  RETURN_IF_ERROR(Expect(type, CType::kDouble));
  if (end_ - p_ < 8) return Truncated("double");
  *v = LoadLE<double>(p_);
  p_ += 8;
  return Status::OK();
}

Status CompactReader::ReadBinary(CType type, std::string* v) {
  RETURN_IF_ERROR(Expect(type, CType::kBinary));
  uint64_t len;
  RETURN_IF_ERROR(ReadVarint64(&len));
  if (len > static_cast<uint64_t>(end_ - p_)) {
    return Status::Corruption("thrift: binary of {} bytes runs past the end at offset {}", len,
                              position());
  }
  v->assign(reinterpret_cast<const char*>(p_), len);
  p_ += len;
  return Status::OK();
}

Status CompactReader::ReadListHeader(CType type, CType* elem, int32_t* size) {
  if (type != CType::kList && type != CType::kSet) RETURN_IF_ERROR(Expect(type, CType::kList));
  if (p_ >= end_) return Truncated("list header");
  uint8_t b = *p_++;
  uint8_t t = b & 0x0f;
  if (t == 0 || t > static_cast<uint8_t>(CType::kStruct)) {
    return Status::Corruption("thrift: invalid list element type {} at offset {}", t,
                              position() - 1);
  }
  *elem = static_cast<CType>(t);
  uint64_t n = b >> 4;
  if (n == 15) RETURN_IF_ERROR(ReadVarint64(&n));
  // Every element takes at least one byte, so a larger size cannot be valid.
  if (n > static_cast<uint64_t>(end_ - p_)) {
    return Status::Corruption("thrift: list of {} elements exceeds the remaining {} bytes", n,
                              end_ - p_);
  }
  *size = static_cast<int32_t>(n);
  return Status::OK();
}

Status CompactReader::Skip(CType type) {
  switch (type) {
    case CType::kBoolTrue:
    case CType::kBoolFalse: return Status::OK();
    case CType::kByte: {
      int8_t v;
      return ReadI8(type, &v);
    }
    case CType::kI16:
    case CType::kI32:
    case CType::kI64: {
      uint64_t v;
      return ReadVarint64(&v);
    }
    case CType::kDouble:
      if (end_ - p_ < 8) return Truncated("double");
      p_ += 8;
      return Status::OK();
    case CType::kBinary: {
      uint64_t len;
      RETURN_IF_ERROR(ReadVarint64(&len));
      if (len > static_cast<uint64_t>(end_ - p_)) return Truncated("binary");
      p_ += len;
      return Status::OK();
    }
    case CType::kList:
    case CType::kSet: {
      CType elem;
      int32_t n;
      RETURN_IF_ERROR(ReadListHeader(type, &elem, &n));
      if (++depth_ > kMaxDepth) return Status::Corruption("thrift: nesting too deep");
      for (int32_t i = 0; i < n; ++i) {
        if (elem == CType::kBoolTrue || elem == CType::kBoolFalse) {
          bool b;
          RETURN_IF_ERROR(ReadElemBool(&b));
        } else {
          RETURN_IF_ERROR(Skip(elem));
        }
      }
      --depth_;
      return Status::OK();
    }
    case CType::kMap: {
      uint64_t n;
      RETURN_IF_ERROR(ReadVarint64(&n));
      if (n == 0) return Status::OK();
      if (p_ >= end_) return Truncated("map header");
      uint8_t kv = *p_++;
      CType k = static_cast<CType>(kv >> 4), v = static_cast<CType>(kv & 0x0f);
      if ((kv >> 4) == 0 || (kv >> 4) > 12 || (kv & 0x0f) == 0 || (kv & 0x0f) > 12) {
        return Status::Corruption("thrift: invalid map types at offset {}", position() - 1);
      }
      if (n > static_cast<uint64_t>(end_ - p_)) return Truncated("map");
      if (++depth_ > kMaxDepth) return Status::Corruption("thrift: nesting too deep");
      for (uint64_t i = 0; i < n; ++i) {
        for (CType t : {k, v}) {
          if (t == CType::kBoolTrue || t == CType::kBoolFalse) {
            bool b;
            RETURN_IF_ERROR(ReadElemBool(&b));
          } else {
            RETURN_IF_ERROR(Skip(t));
          }
        }
      }
      --depth_;
      return Status::OK();
    }
    case CType::kStruct: {
      RETURN_IF_ERROR(StructBegin());
      while (true) {
        CType t;
        int16_t id;
        RETURN_IF_ERROR(ReadFieldHeader(&t, &id));
        if (t == CType::kStop) break;
        RETURN_IF_ERROR(Skip(t));
      }
      StructEnd();
      return Status::OK();
    }
    case CType::kStop: break;
  }
  return Status::Corruption("thrift: cannot skip a value of type {} at offset {}",
                            static_cast<int>(type), position());
}

}  // namespace sluice::parquet::thrift
