#include "avro/encoder.h"

#include "avro/iceberg_schema.h"
#include "columnar/value_format.h"
#include "common/endian.h"

namespace sluice::avro {

namespace {

Status Mismatch(const std::string& path, const AvroNode& n, const DataType& t) {
  return Status::Invalid("avro schema {}: Avro {}{} cannot hold Iceberg {}", path,
                         AvroTypeName(n.type),
                         n.logical_type.empty() ? "" : " (" + n.logical_type + ")", t.ToString());
}

Result<EncodeNode> Plan(const AvroNode& n, const DataType& t, const std::string& path);

Status PlanRecord(const AvroNode& n, const std::vector<Field>& fields, const std::string& path,
                  EncodeNode* e) {
  e->op = EncodeOp::kRecord;
  std::vector<bool> used(fields.size(), false);
  for (const AvroField& af : n.fields) {
    int col = -1;
    for (size_t i = 0; i < fields.size(); ++i) {
      if (af.field_id ? fields[i].id == *af.field_id : fields[i].name == af.name) {
        col = static_cast<int>(i);
        break;
      }
    }
    std::string fpath = path.empty() ? af.name : path + "." + af.name;
    if (col < 0) {
      if (af.type->NullBranch() < 0) {
        return Status::Invalid("avro schema {}: required Avro field has no Iceberg column", fpath);
      }
      EncodeNode null_node;
      null_node.name = af.name;
      null_node.null_branch = static_cast<int8_t>(af.type->NullBranch());
      e->children.push_back(std::move(null_node));
    } else {
      used[col] = true;
      ASSIGN_OR_RETURN(EncodeNode c, Plan(*af.type, *fields[col].type, fpath));
      c.name = af.name;
      e->children.push_back(std::move(c));
    }
    e->columns.push_back(col);
  }
  for (size_t i = 0; i < fields.size(); ++i) {
    if (!used[i]) {
      return Status::Invalid("avro schema {}: Iceberg field {} (id {}) has no Avro field", path,
                             fields[i].name, fields[i].id);
    }
  }
  return Status::OK();
}

Status PlanValue(const AvroNode& n, const DataType& t, const std::string& path, EncodeNode* e) {
  AvroType a = n.type;
  switch (t.id()) {
    case TypeId::kBoolean:
      if (a != AvroType::kBoolean) break;
      e->op = EncodeOp::kBool;
      return Status::OK();
    case TypeId::kInt:
    case TypeId::kDate:
      if (a == AvroType::kInt) {
        e->op = EncodeOp::kInt;
        return Status::OK();
      }
      if (a == AvroType::kLong && t.id() == TypeId::kInt) {
        e->op = EncodeOp::kIntToLong;
        return Status::OK();
      }
      break;
    case TypeId::kLong:
    case TypeId::kTime:
    case TypeId::kTimestamp:
    case TypeId::kTimestampTz:
    case TypeId::kTimestampNs:
    case TypeId::kTimestampTzNs:
      if (a != AvroType::kLong) break;
      if (n.logical_type.find("millis") != std::string::npos) break;
      e->op = EncodeOp::kLong;
      return Status::OK();
    case TypeId::kFloat:
      if (a != AvroType::kFloat && a != AvroType::kDouble) break;
      e->op = a == AvroType::kFloat ? EncodeOp::kFloat : EncodeOp::kFloatToDouble;
      return Status::OK();
    case TypeId::kDouble:
      if (a != AvroType::kDouble) break;
      e->op = EncodeOp::kDouble;
      return Status::OK();
    case TypeId::kString:
    case TypeId::kBinary:
    case TypeId::kFixed:
      if (a == AvroType::kString || a == AvroType::kBytes) {
        if (!n.logical_type.empty()) break;
        e->op = EncodeOp::kBytes;
        return Status::OK();
      }
      if (a == AvroType::kFixed && t.id() != TypeId::kString && n.logical_type.empty()) {
        if (t.id() == TypeId::kFixed && t.width() != n.size) break;
        e->op = EncodeOp::kFixed;
        e->size = n.size;
        return Status::OK();
      }
      break;
    case TypeId::kUuid:
      if (a == AvroType::kFixed && n.size == 16) {
        e->op = EncodeOp::kFixed;
        e->size = 16;
        return Status::OK();
      }
      if (a == AvroType::kString) {
        e->op = EncodeOp::kUuidString;
        return Status::OK();
      }
      break;
    case TypeId::kDecimal:
      if (n.logical_type != "decimal" || n.scale != t.scale() || n.precision < t.precision()) break;
      if (a == AvroType::kFixed && n.size <= 16) {
        e->op = EncodeOp::kDecimalFixed;
        e->size = n.size;
        return Status::OK();
      }
      if (a == AvroType::kBytes) {
        e->op = EncodeOp::kDecimalBytes;
        return Status::OK();
      }
      break;
    case TypeId::kStruct:
      if (a != AvroType::kRecord) break;
      return PlanRecord(n, t.fields(), path, e);
    case TypeId::kList: {
      if (a != AvroType::kArray || IsKeyValueArray(n)) break;
      e->op = EncodeOp::kArray;
      ASSIGN_OR_RETURN(EncodeNode c, Plan(*n.items, *t.fields()[0].type, path + ".element"));
      e->children.push_back(std::move(c));
      return Status::OK();
    }
    case TypeId::kMap: {
      const DataType& kt = *t.fields()[0].type;
      const DataType& vt = *t.fields()[1].type;
      if (a == AvroType::kMap && kt.id() == TypeId::kString) {
        e->op = EncodeOp::kMap;
        ASSIGN_OR_RETURN(EncodeNode c, Plan(*n.values, vt, path + ".value"));
        e->children.push_back(std::move(c));
        return Status::OK();
      }
      if (a == AvroType::kArray && IsKeyValueArray(n)) {
        e->op = EncodeOp::kKeyValueArray;
        ASSIGN_OR_RETURN(EncodeNode k, Plan(*n.items->fields[0].type, kt, path + ".key"));
        ASSIGN_OR_RETURN(EncodeNode v, Plan(*n.items->fields[1].type, vt, path + ".value"));
        e->children.push_back(std::move(k));
        e->children.push_back(std::move(v));
        return Status::OK();
      }
      break;
    }
  }
  return Mismatch(path, n, t);
}

Result<EncodeNode> Plan(const AvroNode& n, const DataType& t, const std::string& path) {
  EncodeNode e;
  const AvroNode* value = &n;
  if (n.type == AvroType::kUnion) {
    value = nullptr;
    for (size_t i = 0; i < n.branches.size(); ++i) {
      if (n.branches[i]->type == AvroType::kNull) {
        if (e.null_branch < 0) e.null_branch = static_cast<int8_t>(i);
      } else if (value == nullptr) {
        value = n.branches[i].get();
        e.value_branch = static_cast<int8_t>(i);
      } else {
        return Status::NotImplemented(
            "avro schema {}: union with more than one non-null branch is not supported", path);
      }
    }
    if (value == nullptr) return Status::Invalid("avro schema {}: union of only null", path);
    if (n.branches.size() > 100) return Status::NotImplemented("avro schema {}: union", path);
  }
  RETURN_IF_ERROR(PlanValue(*value, t, path, &e));
  return e;
}

// Same physical Column layout (type ids and nesting; names and ids may differ).
bool SameLayout(const DataType& a, const DataType& b) {
  if (a.id() != b.id() || a.scale() != b.scale() || a.fields().size() != b.fields().size()) {
    return false;
  }
  for (size_t i = 0; i < a.fields().size(); ++i) {
    if (!SameLayout(*a.fields()[i].type, *b.fields()[i].type)) return false;
  }
  return true;
}

class Sink {
 public:
  explicit Sink(std::string* out) : out_(out) {}

  // `column(i)` returns the Iceberg column of struct member i.
  template <typename ColumnOf>
  bool Record(const EncodeNode& d, const ColumnOf& column, int64_t row) {
    for (size_t j = 0; j < d.children.size(); ++j) {
      int c = d.columns[j];
      if (!Value(d.children[j], c < 0 ? nullptr : column(c), row)) return false;
    }
    return true;
  }
  std::string error;

 private:
  void Long(int64_t v) { AppendVarint(out_, ZigZagEncode(v)); }
  bool Fail(const EncodeNode& d, int64_t row, std::string what) {
    error = fmt::format("field {}: row {}: {}", d.name, row, what);
    return false;
  }

  bool Value(const EncodeNode& d, const Column* col, int64_t row) {
    if (col == nullptr || col->IsNull(row)) {
      if (d.null_branch < 0) return Fail(d, row, "null in a field that is not nullable");
      Long(d.null_branch);
      return true;
    }
    if (d.value_branch >= 0) Long(d.value_branch);
    return Plain(d, *col, row);
  }

  bool Plain(const EncodeNode& d, const Column& c, int64_t row) {
    switch (d.op) {
      case EncodeOp::kNull: return Fail(d, row, "no column");
      case EncodeOp::kBool: out_->push_back(c.GetBool(row) ? 1 : 0); return true;
      case EncodeOp::kInt:
      case EncodeOp::kIntToLong: Long(c.Value<int32_t>(row)); return true;
      case EncodeOp::kLong: Long(c.Value<int64_t>(row)); return true;
      case EncodeOp::kFloat: AppendLE<float>(out_, c.Value<float>(row)); return true;
      case EncodeOp::kFloatToDouble:
        AppendLE<double>(out_, static_cast<double>(c.Value<float>(row)));
        return true;
      case EncodeOp::kDouble: AppendLE<double>(out_, c.Value<double>(row)); return true;
      case EncodeOp::kBytes: {
        std::string_view b = c.GetBytes(row);
        Long(static_cast<int64_t>(b.size()));
        out_->append(b);
        return true;
      }
      case EncodeOp::kFixed: {
        std::string_view b = c.GetBytes(row);
        if (b.size() != static_cast<size_t>(d.size)) {
          return Fail(d, row, fmt::format("{} bytes for a fixed of {}", b.size(), d.size));
        }
        out_->append(b);
        return true;
      }
      case EncodeOp::kUuidString: {
        std::string_view b = c.GetBytes(row);
        if (b.size() != 16) return Fail(d, row, "uuid is not 16 bytes");
        std::string text;
        AppendUuid(b, &text);
        Long(static_cast<int64_t>(text.size()));
        out_->append(text);
        return true;
      }
      case EncodeOp::kDecimalFixed:
      case EncodeOp::kDecimalBytes: {
        int128_t v = c.Value<int128_t>(row);
        int n = d.size;
        if (d.op == EncodeOp::kDecimalBytes) {
          n = 1;
          while (n < 16 && (v >> (8 * n - 1)) != 0 && (v >> (8 * n - 1)) != -1) ++n;
          Long(n);
        } else if (n < 16 && (v >> (8 * n - 1)) != 0 && (v >> (8 * n - 1)) != -1) {
          error = fmt::format("field {}: row {}: decimal does not fit {} bytes", d.name, row, n);
          out_of_range = true;
          return false;
        }
        auto u = static_cast<unsigned __int128>(v);
        for (int i = n - 1; i >= 0; --i) out_->push_back(static_cast<char>(u >> (8 * i)));
        return true;
      }
      case EncodeOp::kRecord:
        return Record(
            d, [&c](int i) { return &c.child(i); }, row);
      case EncodeOp::kArray:
      case EncodeOp::kMap:
      case EncodeOp::kKeyValueArray: {
        uint32_t begin = c.ListBegin(row), end = c.ListEnd(row);
        if (end > begin) {
          Long(end - begin);
          for (uint32_t i = begin; i < end; ++i) {
            if (d.op == EncodeOp::kArray) {
              if (!Value(d.children[0], &c.child(0), i)) return false;
            } else if (d.op == EncodeOp::kMap) {
              std::string_view k = c.child(0).GetBytes(i);
              Long(static_cast<int64_t>(k.size()));
              out_->append(k);
              if (!Value(d.children[0], &c.child(1), i)) return false;
            } else {
              if (!Value(d.children[0], &c.child(0), i) || !Value(d.children[1], &c.child(1), i)) {
                return false;
              }
            }
          }
        }
        Long(0);
        return true;
      }
    }
    return Fail(d, row, "unknown encode step");
  }

  std::string* out_;

 public:
  bool out_of_range = false;
};

}  // namespace

Result<std::unique_ptr<RecordEncoder>> RecordEncoder::Make(const AvroNode& record,
                                                           const Schema& schema) {
  if (record.type != AvroType::kRecord) {
    return Status::Invalid("avro schema: top-level type must be a record, not {}",
                           AvroTypeName(record.type));
  }
  auto enc = std::unique_ptr<RecordEncoder>(new RecordEncoder());
  RETURN_IF_ERROR(PlanRecord(record, schema.fields, "", &enc->root_));
  for (const Field& f : schema.fields) enc->types_.push_back(f.type);
  return enc;
}

Status RecordEncoder::Encode(const Batch& batch, int64_t begin, int64_t end,
                             std::string* out) const {
  if (batch.columns.size() != types_.size()) {
    return Status::Invalid("avro encode: batch has {} columns, the schema {}", batch.columns.size(),
                           types_.size());
  }
  for (size_t i = 0; i < types_.size(); ++i) {
    if (!SameLayout(*batch.columns[i].type(), *types_[i])) {
      return Status::Invalid("avro encode: column {} is {}, the schema says {}", i,
                             batch.columns[i].type()->ToString(), types_[i]->ToString());
    }
  }
  auto column = [&batch](int i) { return &batch.columns[i]; };
  Sink sink(out);
  for (int64_t row = begin; row < end; ++row) {
    if (!sink.Record(root_, column, row)) {
      if (sink.out_of_range) return Status::OutOfRange("avro encode: {}", sink.error);
      return Status::Invalid("avro encode: {}", sink.error);
    }
  }
  return Status::OK();
}

}  // namespace sluice::avro
