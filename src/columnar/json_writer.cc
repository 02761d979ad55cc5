#include "columnar/json_writer.h"

#include "columnar/value_format.h"

namespace sluice {

void AppendJsonString(std::string_view s, std::string* out) {
  static const char kHex[] = "0123456789abcdef";
  out->push_back('"');
  size_t run = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c != '"' && c != '\\') continue;
    out->append(s.data() + run, i - run);
    run = i + 1;
    switch (c) {
      case '"': out->append("\\\""); break;
      case '\\': out->append("\\\\"); break;
      case '\n': out->append("\\n"); break;
      case '\r': out->append("\\r"); break;
      case '\t': out->append("\\t"); break;
      default:
        out->append("\\u00");
        out->push_back(kHex[c >> 4]);
        out->push_back(kHex[c & 15]);
    }
  }
  out->append(s.data() + run, s.size() - run);
  out->push_back('"');
}

namespace {

void AppendQuoted(std::string* out, void (*fn)(int64_t, std::string*), int64_t v) {
  out->push_back('"');
  fn(v, out);
  out->push_back('"');
}

void AppendFloatingJson(double v, bool is_float, std::string* out) {
  bool finite = v == v && v - v == 0;
  if (!finite) out->push_back('"');
  if (is_float) {
    AppendFloat(static_cast<float>(v), out);
  } else {
    AppendDouble(v, out);
  }
  if (!finite) out->push_back('"');
}

}  // namespace

void AppendJsonValue(const Column& c, int64_t row, std::string* out) {
  if (c.IsNull(row)) {
    out->append("null");
    return;
  }
  const DataType& t = *c.type();
  switch (t.id()) {
    case TypeId::kBoolean: out->append(c.GetBool(row) ? "true" : "false"); return;
    case TypeId::kInt: out->append(std::to_string(c.Value<int32_t>(row))); return;
    case TypeId::kLong: out->append(std::to_string(c.Value<int64_t>(row))); return;
    case TypeId::kFloat: AppendFloatingJson(c.Value<float>(row), true, out); return;
    case TypeId::kDouble: AppendFloatingJson(c.Value<double>(row), false, out); return;
    case TypeId::kDecimal:
      out->push_back('"');
      AppendDecimal(c.Value<int128_t>(row), t.scale(), out);
      out->push_back('"');
      return;
    case TypeId::kDate:
      out->push_back('"');
      AppendDate(c.Value<int32_t>(row), out);
      out->push_back('"');
      return;
    case TypeId::kTime: AppendQuoted(out, AppendTime, c.Value<int64_t>(row)); return;
    case TypeId::kTimestamp:
    case TypeId::kTimestampTz:
    case TypeId::kTimestampNs:
    case TypeId::kTimestampTzNs: {
      bool ns = t.id() == TypeId::kTimestampNs || t.id() == TypeId::kTimestampTzNs;
      bool tz = t.id() == TypeId::kTimestampTz || t.id() == TypeId::kTimestampTzNs;
      out->push_back('"');
      AppendTimestamp(c.Value<int64_t>(row), ns, tz, out);
      out->push_back('"');
      return;
    }
    case TypeId::kString: AppendJsonString(c.GetBytes(row), out); return;
    case TypeId::kUuid:
      out->push_back('"');
      AppendUuid(c.GetBytes(row), out);
      out->push_back('"');
      return;
    case TypeId::kFixed:
    case TypeId::kBinary:
      out->push_back('"');
      AppendHex(c.GetBytes(row), out);
      out->push_back('"');
      return;
    case TypeId::kStruct: {
      out->push_back('{');
      for (int i = 0; i < c.num_children(); ++i) {
        if (i) out->push_back(',');
        AppendJsonString(t.fields()[i].name, out);
        out->push_back(':');
        AppendJsonValue(c.child(i), row, out);
      }
      out->push_back('}');
      return;
    }
    case TypeId::kList: {
      out->push_back('[');
      for (uint32_t i = c.ListBegin(row); i < c.ListEnd(row); ++i) {
        if (i != c.ListBegin(row)) out->push_back(',');
        AppendJsonValue(c.child(0), i, out);
      }
      out->push_back(']');
      return;
    }
    case TypeId::kMap: {
      bool string_keys = t.fields()[0].type->id() == TypeId::kString;
      out->push_back(string_keys ? '{' : '[');
      for (uint32_t i = c.ListBegin(row); i < c.ListEnd(row); ++i) {
        if (i != c.ListBegin(row)) out->push_back(',');
        if (string_keys) {
          AppendJsonString(c.child(0).GetBytes(i), out);
          out->push_back(':');
          AppendJsonValue(c.child(1), i, out);
        } else {
          out->append("{\"key\":");
          AppendJsonValue(c.child(0), i, out);
          out->append(",\"value\":");
          AppendJsonValue(c.child(1), i, out);
          out->push_back('}');
        }
      }
      out->push_back(string_keys ? '}' : ']');
      return;
    }
  }
}

void AppendJsonRow(const Batch& batch, int64_t row, std::string* out) {
  out->push_back('{');
  for (size_t i = 0; i < batch.columns.size(); ++i) {
    if (i) out->push_back(',');
    AppendJsonString(batch.schema->fields[i].name, out);
    out->push_back(':');
    AppendJsonValue(batch.columns[i], row, out);
  }
  out->push_back('}');
}

}  // namespace sluice
