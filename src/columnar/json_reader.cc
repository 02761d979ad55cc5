#include "columnar/json_reader.h"

#include <simdjson.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <unordered_map>
#include <vector>

#include "columnar/json_schema_tree.h"
#include "columnar/value_format.h"

namespace sluice {

namespace od = simdjson::ondemand;
using json_internal::CompileSchemaTree;
using json_internal::MembersSeen;
using json_internal::Node;

static_assert(JsonDecoder::kPadding >= simdjson::SIMDJSON_PADDING);

namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() &&
         (s.back() == ' ' || s.back() == '\t' || s.back() == '\r' || s.back() == '\n')) {
    s.remove_suffix(1);
  }
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) {
    s.remove_prefix(1);
  }
  return s;
}

bool IsBlank(std::string_view s) { return Trim(s).empty(); }

}  // namespace

namespace {

// One path step: a member name, or an element index when index >= 0.
struct PathSeg {
  std::string_view name;
  int64_t index = -1;
};

}  // namespace

// Cache lines of its own (the alignment pads it to whole lines): it is written
// for every value decoded, and the decoders of a pipeline's lanes, built one
// after the other, must not share a line that two threads use at once.
class alignas(64) JsonDecoder::Impl {
 public:
  explicit Impl(std::shared_ptr<const Schema> schema)
      : schema_(std::move(schema)), root_(CompileSchemaTree(schema_->fields)) {
    path_.reserve(16);
  }

  Status ReserveRecords(size_t record_bytes) {
    if (record_bytes <= parser_.capacity()) return Status::OK();
    if (auto e = parser_.allocate(record_bytes)) {
      return Status::Internal("JSON decoder: no parser for records of {} bytes: {}", record_bytes,
                              simdjson::error_message(e));
    }
    return Status::OK();
  }

  const std::shared_ptr<const Schema>& schema() const { return schema_; }

  Status DecodeLine(std::string_view line, int64_t line_no, Batch* batch, bool padded) {
    if (IsBlank(line)) return Status::OK();
    if (padded)
      return DecodePadded(line.data(), line.size(), line.size() + kPadding, line_no, batch);
    padded_.assign(line.data(), line.size());
    padded_.resize(line.size() + simdjson::SIMDJSON_PADDING);
    return DecodePadded(padded_.data(), line.size(), padded_.size(), line_no, batch);
  }

  Status DecodeLines(std::string_view buffer, int64_t first_line_no, Batch* batch,
                     const ErrorHandler& on_error, int64_t* rows_appended, bool padded,
                     int64_t* next_line_no) {
    int64_t rows_before = batch->num_rows();
    const char* base = buffer.data();
    size_t capacity = buffer.size() + kPadding;
    if (!padded) {
      padded_.assign(buffer.data(), buffer.size());
      padded_.resize(buffer.size() + simdjson::SIMDJSON_PADDING);
      base = padded_.data();
      capacity = padded_.size();
    }
    Status result;
    int64_t line_no = first_line_no;
    size_t pos = 0;
    while (pos < buffer.size()) {
      const void* nl = std::memchr(buffer.data() + pos, '\n', buffer.size() - pos);
      size_t end =
          nl ? static_cast<size_t>(static_cast<const char*>(nl) - buffer.data()) : buffer.size();
      size_t len = end - pos;
      if (len > 0 && buffer[pos + len - 1] == '\r') --len;
      std::string_view line = buffer.substr(pos, len);
      if (!IsBlank(line)) {
        Status st = DecodePadded(base + pos, len, capacity - pos, line_no, batch);
        if (!st.ok()) {
          if (!on_error) {
            result = st;
            break;
          }
          Status handled = on_error(line_no, line, st);
          if (!handled.ok()) {
            result = handled;
            break;
          }
        }
      }
      pos = end + 1;
      ++line_no;
    }
    if (rows_appended) *rows_appended = batch->num_rows() - rows_before;
    if (next_line_no) *next_line_no = line_no;
    return result;
  }

 private:
  Status DecodePadded(const char* data, size_t len, size_t capacity, int64_t line_no,
                      Batch* batch) {
    if (batch->columns.size() != root_->children.size()) {
      return Status::Invalid("JSON decoder: batch has {} columns, schema has {}",
                             batch->columns.size(), root_->children.size());
    }
    line_no_ = line_no;
    path_.clear();
    current_ = PathSeg();
    int64_t rows = batch->num_rows();
    Status st = DecodeRow(data, len, capacity, batch);
    if (!st.ok()) {
      for (Column& c : batch->columns) c.Truncate(rows);
    }
    return st;
  }

  Status DecodeRow(const char* data, size_t len, size_t capacity, Batch* batch) {
    od::document doc;
    if (auto e = parser_.iterate(data, len, capacity).get(doc)) return JsonError(e);
    od::object obj;
    if (auto e = doc.get_object().get(obj)) {
      if (e == simdjson::INCORRECT_TYPE)
        return Fail(StatusCode::kInvalidArgument, "not a JSON object");
      return JsonError(e);
    }
    RETURN_IF_ERROR(DecodeMembers(obj, *root_, [batch](int i) { return &batch->columns[i]; }));
    // current_location() fails only once the whole input has been consumed.
    if (!doc.current_location().error()) {
      return Fail(StatusCode::kInvalidArgument, "trailing content after the object");
    }
    return Status::OK();
  }

  template <typename GetColumn>
  Status DecodeMembers(od::object& obj, Node& node, GetColumn&& column) {
    MembersSeen seen(node);
    int hint = 0;
    for (auto field_result : obj) {
      // Used in place: copying the field out of the result costs a store-forwarding stall.
      if (auto e = field_result.error()) return JsonError(e);
      od::field& field = field_result.value_unsafe();
      int i = node.FindRaw(field.key(), hint);
      if (i < 0) {
        std::string_view key;
        if (auto e = field.unescaped_key().get(key)) return JsonError(e);
        i = node.Find(key, hint);
        if (i < 0) continue;
      }
      hint = i + 1;
      current_ = {node.names[i], -1};
      if (!seen.Mark(i)) return Fail(StatusCode::kInvalidArgument, "duplicate key");
      RETURN_IF_ERROR(DecodeValue(field.value(), *node.children[i], column(i)));
    }
    const int members = static_cast<int>(node.names.size());
    for (int i = seen.NextMissing(0, members); i < members; i = seen.NextMissing(i + 1, members)) {
      if (node.children[i]->required) {
        current_ = {node.names[i], -1};
        return Fail(StatusCode::kInvalidArgument, "required field is missing");
      }
      column(i)->AppendNull();
    }
    return Status::OK();
  }

  // A value for column `col`, of node `n`'s type: each type family's decoder
  // below takes the JSON types it accepts and fails on the others.
  Status DecodeValue(od::value& v, Node& n, Column* col) {
    od::json_type t;
    if (auto e = v.type().get(t)) return JsonError(e);
    if (t == od::json_type::null) return DecodeNull(v, n, col);
    switch (n.id) {
      case TypeId::kBoolean: return DecodeBool(v, t, col);
      case TypeId::kInt: return DecodeInt(v, t, col);
      case TypeId::kLong: {
        int64_t x;
        RETURN_IF_ERROR(GetInteger(v, t, "long", &x));
        col->Append<int64_t>(x);
        return Status::OK();
      }
      case TypeId::kFloat: return DecodeFloat(v, t, col);
      case TypeId::kDouble: return DecodeDouble(v, t, col);
      case TypeId::kDecimal: return DecodeDecimal(v, t, n, col);
      case TypeId::kDate: return DecodeDate(v, t, col);
      case TypeId::kTime: return DecodeTime(v, t, col);
      case TypeId::kTimestamp:
      case TypeId::kTimestampTz:
      case TypeId::kTimestampNs:
      case TypeId::kTimestampTzNs: return DecodeTimestamp(v, t, n, col);
      case TypeId::kString: return DecodeString(v, t, col);
      case TypeId::kBinary:
      case TypeId::kFixed:
      case TypeId::kUuid: return DecodeBytes(v, t, n, col);
      case TypeId::kStruct: return DecodeStruct(v, t, n, col);
      case TypeId::kList: return DecodeList(v, t, n, col);
      case TypeId::kMap: return DecodeMap(v, t, n, col);
    }
    return Status::Internal("unhandled type {}", n.type->ToString());
  }

  Status DecodeNull(od::value& v, Node& n, Column* col) {
    bool is_null = false;
    if (auto e = v.is_null().get(is_null)) return JsonError(e);
    if (!is_null) return JsonError(simdjson::N_ATOM_ERROR);
    if (n.required) return Fail(StatusCode::kInvalidArgument, "required field is null");
    col->AppendNull();
    return Status::OK();
  }

  Status DecodeBool(od::value& v, od::json_type t, Column* col) {
    if (t != od::json_type::boolean) return Mismatch(v, t, "a boolean");
    bool b;
    if (auto e = v.get_bool().get(b)) return JsonError(e);
    col->AppendBool(b);
    return Status::OK();
  }

  Status DecodeInt(od::value& v, od::json_type t, Column* col) {
    int64_t x;
    RETURN_IF_ERROR(GetInteger(v, t, "int", &x));
    if (x < std::numeric_limits<int32_t>::min() || x > std::numeric_limits<int32_t>::max()) {
      return Fail(StatusCode::kOutOfRange, fmt::format("{} is out of range for int", x));
    }
    col->Append<int32_t>(static_cast<int32_t>(x));
    return Status::OK();
  }

  Status DecodeDouble(od::value& v, od::json_type t, Column* col) {
    double d;
    if (t == od::json_type::string) {
      RETURN_IF_ERROR(GetSpecialFloat(v, "double", &d));
    } else if (t == od::json_type::number) {
      if (v.get_double().get(d)) {
        return Fail(StatusCode::kOutOfRange,
                    fmt::format("{} is out of range for double", Token(v)));
      }
    } else {
      return Mismatch(v, t, "a number");
    }
    col->Append<double>(d);
    return Status::OK();
  }

  Status DecodeDecimal(od::value& v, od::json_type t, Node& n, Column* col) {
    std::string_view text;
    if (t == od::json_type::number) {
      text = Token(v);
    } else if (t == od::json_type::string) {
      if (auto e = v.get_string().get(text)) return JsonError(e);
    } else {
      return Mismatch(v, t, "a decimal number or string");
    }
    auto r = ParseDecimal(text, n.type->precision(), n.type->scale());
    if (!r.ok()) {
      return Fail(r.status().code(),
                  fmt::format("{} for {}", r.status().message(), n.type->ToString()));
    }
    col->Append<int128_t>(*r);
    return Status::OK();
  }

  // A date: "YYYY-MM-DD", or days since the epoch.
  Status DecodeDate(od::value& v, od::json_type t, Column* col) {
    if (t == od::json_type::string) {
      std::string_view s;
      if (auto e = v.get_string().get(s)) return JsonError(e);
      return AppendParsed<int32_t>(ParseDate(s), col);
    }
    int64_t x;
    RETURN_IF_ERROR(GetInteger(v, t, "date", &x));
    if (x < std::numeric_limits<int32_t>::min() || x > std::numeric_limits<int32_t>::max()) {
      return Fail(StatusCode::kOutOfRange, fmt::format("{} is out of range for date", x));
    }
    col->Append<int32_t>(static_cast<int32_t>(x));
    return Status::OK();
  }

  // A time of day: "HH:MM[:SS[.ffffff]]", or µs since midnight.
  Status DecodeTime(od::value& v, od::json_type t, Column* col) {
    if (t == od::json_type::string) {
      std::string_view s;
      if (auto e = v.get_string().get(s)) return JsonError(e);
      return AppendParsed<int64_t>(ParseTime(s), col);
    }
    int64_t x;
    RETURN_IF_ERROR(GetInteger(v, t, "time", &x));
    if (x < 0 || x >= int64_t{86400} * 1000000) {
      return Fail(StatusCode::kOutOfRange, fmt::format("{} µs is out of range for time", x));
    }
    col->Append<int64_t>(x);
    return Status::OK();
  }

  // A timestamp: text (the common spellings read at fixed offsets), or µs
  // (ns) since the epoch.
  Status DecodeTimestamp(od::value& v, od::json_type t, Node& n, Column* col) {
    if (t == od::json_type::string) {
      std::string_view s;
      if (auto e = v.get_string().get(s)) return JsonError(e);
      bool ns = n.id == TypeId::kTimestampNs || n.id == TypeId::kTimestampTzNs;
      int64_t ts;
      if (FastTimestamp(s, ns, &ts)) {
        col->Append<int64_t>(ts);
        return Status::OK();
      }
      return AppendParsed<int64_t>(ParseTimestamp(s, ns), col);
    }
    int64_t x;
    RETURN_IF_ERROR(GetInteger(v, t, "timestamp", &x));
    col->Append<int64_t>(x);
    return Status::OK();
  }

  Status DecodeString(od::value& v, od::json_type t, Column* col) {
    if (t != od::json_type::string) return Mismatch(v, t, "a string");
    std::string_view s;
    if (auto e = v.get_string().get(s)) return JsonError(e);
    col->AppendBytes(s);
    return Status::OK();
  }

  Status DecodeStruct(od::value& v, od::json_type t, Node& n, Column* col) {
    if (t != od::json_type::object) return Mismatch(v, t, "an object");
    od::object obj;
    if (auto e = v.get_object().get(obj)) return JsonError(e);
    Enter();
    RETURN_IF_ERROR(DecodeMembers(obj, n, [col](int i) { return col->mutable_child(i); }));
    Leave();
    col->FinishNested();
    return Status::OK();
  }

  Status DecodeFloat(od::value& v, od::json_type t, Column* col) {
    float f;
    if (t == od::json_type::string) {
      double d;
      RETURN_IF_ERROR(GetSpecialFloat(v, "float", &d));
      f = static_cast<float>(d);
    } else if (t == od::json_type::number) {
      std::string_view text = Token(v);
      const char* end = text.data() + text.size();
      auto [ptr, ec] = std::from_chars(text.data(), end, f);
      if (ec == std::errc::result_out_of_range) {
        double d;
        if (v.get_double().get(d) || std::fabs(d) > std::numeric_limits<float>::max()) {
          return Fail(StatusCode::kOutOfRange, fmt::format("{} is out of range for float", text));
        }
        f = static_cast<float>(d);
      } else if (ec != std::errc() || ptr != end) {
        return Mismatch(v, t, "a number");
      }
    } else {
      return Mismatch(v, t, "a number");
    }
    col->Append<float>(f);
    return Status::OK();
  }

  Status DecodeBytes(od::value& v, od::json_type t, Node& n, Column* col) {
    const char* what = n.id == TypeId::kUuid ? "a uuid string" : "a hex string";
    if (t != od::json_type::string) return Mismatch(v, t, what);
    std::string_view s;
    if (auto e = v.get_string().get(s)) return JsonError(e);
    auto r = n.id == TypeId::kUuid ? ParseUuid(s) : ParseHex(s);
    if (!r.ok()) return Fail(r.status().code(), r.status().message());
    if (n.id == TypeId::kFixed && static_cast<int>(r->size()) != n.type->width()) {
      return Fail(StatusCode::kInvalidArgument,
                  fmt::format("{} bytes given for {}", r->size(), n.type->ToString()));
    }
    col->AppendBytes(*r);
    return Status::OK();
  }

  Status DecodeList(od::value& v, od::json_type t, Node& n, Column* col) {
    if (t != od::json_type::array) return Mismatch(v, t, "an array");
    od::array arr;
    if (auto e = v.get_array().get(arr)) return JsonError(e);
    Column* elements = col->mutable_child(0);
    int64_t i = 0;
    Enter();
    for (auto element : arr) {
      od::value ev;
      if (auto e = element.get(ev)) return JsonError(e);
      current_ = {{}, i++};
      RETURN_IF_ERROR(DecodeValue(ev, *n.children[0], elements));
    }
    Leave();
    col->FinishNested();
    return Status::OK();
  }

  Status DecodeMap(od::value& v, od::json_type t, Node& n, Column* col) {
    Column* keys = col->mutable_child(0);
    Column* values = col->mutable_child(1);
    int64_t i = 0;
    if (t == od::json_type::object) {
      if (n.children[0]->id != TypeId::kString) {
        return Fail(
            StatusCode::kInvalidArgument,
            fmt::format("{} needs an array of {{\"key\", \"value\"}} objects", n.type->ToString()));
      }
      od::object obj;
      if (auto e = v.get_object().get(obj)) return JsonError(e);
      Enter();
      for (auto entry : obj) {
        if (auto e = entry.error()) return JsonError(e);
        od::field& field = entry.value_unsafe();
        std::string_view key;
        if (auto e = field.unescaped_key().get(key)) return JsonError(e);
        keys->AppendBytes(key);
        current_ = {{}, i++};
        RETURN_IF_ERROR(DecodeValue(field.value(), *n.children[1], values));
      }
      Leave();
    } else if (t == od::json_type::array) {
      od::array arr;
      if (auto e = v.get_array().get(arr)) return JsonError(e);
      Enter();
      for (auto element : arr) {
        od::value ev;
        if (auto e = element.get(ev)) return JsonError(e);
        current_ = {{}, i++};
        Enter();
        RETURN_IF_ERROR(DecodeMapEntry(ev, n, keys, values));
        Leave();
      }
      Leave();
    } else {
      return Mismatch(v, t, "an object or an array of {\"key\", \"value\"} objects");
    }
    col->FinishNested();
    return Status::OK();
  }

  Status DecodeMapEntry(od::value& v, Node& n, Column* keys, Column* values) {
    od::json_type t;
    if (auto e = v.type().get(t)) return JsonError(e);
    if (t != od::json_type::object) return Mismatch(v, t, "a {\"key\", \"value\"} object");
    od::object obj;
    if (auto e = v.get_object().get(obj)) return JsonError(e);
    bool have_key = false, have_value = false;
    for (auto entry : obj) {
      if (auto e = entry.error()) return JsonError(e);
      od::field& field = entry.value_unsafe();
      std::string_view name;
      if (auto e = field.unescaped_key().get(name)) return JsonError(e);
      bool is_key = name == "key";
      if (!is_key && name != "value") continue;
      bool& have = is_key ? have_key : have_value;
      current_ = {is_key ? "key" : "value", -1};
      if (have) return Fail(StatusCode::kInvalidArgument, "duplicate key");
      have = true;
      RETURN_IF_ERROR(
          DecodeValue(field.value(), *n.children[is_key ? 0 : 1], is_key ? keys : values));
    }
    if (!have_key) {
      current_ = {"key", -1};
      return Fail(StatusCode::kInvalidArgument, "required field is missing");
    }
    if (!have_value) {
      if (n.children[1]->required) {
        current_ = {"value", -1};
        return Fail(StatusCode::kInvalidArgument, "required field is missing");
      }
      values->AppendNull();
    }
    return Status::OK();
  }

  Status GetInteger(od::value& v, od::json_type t, const char* type_name, int64_t* out) {
    if (t != od::json_type::number) return Mismatch(v, t, "an integer");
    if (v.get_int64().get(*out)) {
      std::string_view text = Token(v);
      if (text.find_first_of(".eE") != std::string_view::npos) {
        return Mismatch(v, t, "an integer");
      }
      return Fail(StatusCode::kOutOfRange,
                  fmt::format("{} is out of range for {}", text, type_name));
    }
    return Status::OK();
  }

  Status GetSpecialFloat(od::value& v, const char* type_name, double* out) {
    std::string_view s;
    if (auto e = v.get_string().get(s)) return JsonError(e);
    if (s == "NaN") {
      *out = std::numeric_limits<double>::quiet_NaN();
    } else if (s == "Infinity") {
      *out = std::numeric_limits<double>::infinity();
    } else if (s == "-Infinity") {
      *out = -std::numeric_limits<double>::infinity();
    } else {
      return Fail(StatusCode::kInvalidArgument,
                  fmt::format("expected a number for {}, got string \"{}\"", type_name, s));
    }
    return Status::OK();
  }

  template <typename T>
  Status AppendParsed(Result<T> r, Column* col) {
    if (!r.ok()) return Fail(r.status().code(), r.status().message());
    col->Append<T>(*r);
    return Status::OK();
  }

  static std::string_view Token(od::value& v) { return Trim(v.raw_json_token()); }

  Status Mismatch(od::value& v, od::json_type t, std::string_view expected) {
    std::string got;
    switch (t) {
      case od::json_type::object: got = "an object"; break;
      case od::json_type::array: got = "an array"; break;
      default: {
        std::string_view text = Token(v);
        if (text.size() > 64) {
          got = fmt::format("{}...", text.substr(0, 64));
        } else {
          got = std::string(text);
        }
      }
    }
    return Fail(StatusCode::kInvalidArgument, fmt::format("expected {}, got {}", expected, got));
  }

  Status JsonError(simdjson::error_code e) {
    return Fail(StatusCode::kInvalidArgument,
                fmt::format("invalid JSON: {}", simdjson::error_message(e)));
  }

  // Descends into the current value's members or elements, and back.
  void Enter() {
    path_.push_back(current_);
    current_ = PathSeg();
  }
  void Leave() {
    current_ = path_.back();
    path_.pop_back();
  }

  Status Fail(StatusCode code, std::string_view reason) {
    std::string msg = fmt::format("line {}: ", line_no_);
    std::vector<PathSeg> path = path_;
    if (!current_.name.empty() || current_.index >= 0) path.push_back(current_);
    bool first = true;
    for (const PathSeg& seg : path) {
      if (seg.index < 0 && seg.name.empty()) continue;
      if (first) msg += "field ";
      if (seg.index >= 0) {
        fmt::format_to(std::back_inserter(msg), "[{}]", seg.index);
      } else {
        if (!first) msg += '.';
        msg += seg.name;
      }
      first = false;
    }
    if (!first) msg += ": ";
    msg += reason;
    return Status(code, std::move(msg));
  }

  std::shared_ptr<const Schema> schema_;
  std::unique_ptr<Node> root_;
  od::parser parser_;
  std::string padded_;
  std::vector<PathSeg> path_;  // the containers enclosing the value being decoded
  PathSeg current_;            // the value being decoded
  int64_t line_no_ = 0;
};

Result<std::unique_ptr<JsonDecoder>> JsonDecoder::Make(std::shared_ptr<const Schema> schema) {
  if (schema == nullptr) return Status::Invalid("JSON decoder: no schema");
  return std::unique_ptr<JsonDecoder>(new JsonDecoder(std::make_unique<Impl>(std::move(schema))));
}

JsonDecoder::JsonDecoder(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
JsonDecoder::~JsonDecoder() = default;

Status JsonDecoder::ReserveRecords(size_t record_bytes) {
  return impl_->ReserveRecords(record_bytes);
}

const std::shared_ptr<const Schema>& JsonDecoder::schema() const { return impl_->schema(); }

Status JsonDecoder::DecodeLine(std::string_view line, int64_t line_no, Batch* batch, bool padded) {
  return impl_->DecodeLine(line, line_no, batch, padded);
}

Status JsonDecoder::DecodeLines(std::string_view buffer, int64_t first_line_no, Batch* batch,
                                const ErrorHandler& on_error, int64_t* rows_appended, bool padded,
                                int64_t* next_line_no) {
  return impl_->DecodeLines(buffer, first_line_no, batch, on_error, rows_appended, padded,
                            next_line_no);
}

}  // namespace sluice
