#include "sources/change_format.h"

#include <fmt/format.h>
#include <simdjson.h>

#include <charconv>
#include <cstring>

#include "sources/debezium_values.h"

namespace sluice::sources {

namespace od = simdjson::ondemand;

Result<ChangeFormat> ParseChangeFormat(std::string_view name) {
  if (name == "json") return ChangeFormat::kJson;
  if (name == "upsert") return ChangeFormat::kUpsert;
  if (name == "debezium") return ChangeFormat::kDebezium;
  return Status::Invalid("FORMAT {} is not known (JSON, UPSERT, DEBEZIUM)", name);
}

const char* ChangeFormatName(ChangeFormat format) {
  switch (format) {
    case ChangeFormat::kJson: return "JSON";
    case ChangeFormat::kUpsert: return "UPSERT";
    case ChangeFormat::kDebezium: return "DEBEZIUM";
    case ChangeFormat::kChangelog: return "CHANGELOG";
  }
  return "?";
}

bool ChangeReplayed(const std::string& applied, const std::string& position) {
  return !applied.empty() && !position.empty() && position < applied;
}

void AdvanceChangePosition(const std::string& position, std::string* applied) {
  if (position > *applied) *applied = position;
}

namespace {

// Without JSON's whitespace (space, tab, line feed, carriage return).
std::string_view Trim(std::string_view s) {
  size_t begin = s.find_first_not_of(" \t\n\r");
  if (begin == std::string_view::npos) return {};
  return s.substr(begin, s.find_last_not_of(" \t\n\r") - begin + 1);
}

// Position components: fixed-width decimal integers (so that byte order is
// numeric order) and strings, joined by '/'.
void AddInt(uint64_t v, std::string* out) {
  if (!out->empty()) out->push_back('/');
  fmt::format_to(std::back_inserter(*out), "{:020d}", v);
}
void AddString(std::string_view s, std::string* out) {
  if (!out->empty()) out->push_back('/');
  out->append(s);
}

// The top-level fields of a JSON object that a format looks at: their raw
// JSON text (empty when absent).
struct Fields {
  std::string_view before, after, op, source, schema, payload, deleted, change;
  int count = 0;  // fields in the object
};

Status Error(const simdjson::error_code e, const char* what) {
  return Status::Invalid("{}: {}", what, simdjson::error_message(e));
}

// The raw JSON text of a value (objects and arrays whole).
simdjson::error_code RawJson(od::value& v, std::string_view* out) {
  od::json_type t;
  if (auto e = v.type().get(t)) return e;
  if (t == od::json_type::object) {
    od::object o;
    if (auto e = v.get_object().get(o)) return e;
    return o.raw_json().get(*out);
  }
  if (t == od::json_type::array) {
    od::array a;
    if (auto e = v.get_array().get(a)) return e;
    return a.raw_json().get(*out);
  }
  *out = v.raw_json_token();
  return simdjson::SUCCESS;
}

// Reads the raw text of the fields named in Fields from the object at `json`
// (which has SIMDJSON_PADDING readable bytes after it).
Status ReadFields(od::parser& parser, std::string_view json, const char* what, Fields* f) {
  *f = Fields{};
  od::document doc;
  if (auto e = parser.iterate(json.data(), json.size(), json.size() + simdjson::SIMDJSON_PADDING)
                   .get(doc)) {
    return Error(e, what);
  }
  od::object obj;
  if (doc.get_object().get(obj) != simdjson::SUCCESS) {
    return Status::Invalid("{} is not a JSON object", what);
  }
  for (auto field : obj) {
    std::string_view key;
    if (auto e = field.unescaped_key().get(key)) return Error(e, what);
    od::value v;
    if (auto e = field.value().get(v)) return Error(e, what);
    std::string_view raw;
    if (auto e = RawJson(v, &raw)) return Error(e, what);
    raw = Trim(raw);
    ++f->count;
    if (key == "before") {
      f->before = raw;
    } else if (key == "after") {
      f->after = raw;
    } else if (key == "op") {
      f->op = raw;
    } else if (key == "source") {
      f->source = raw;
    } else if (key == "schema") {
      f->schema = raw;
    } else if (key == "payload") {
      f->payload = raw;
    } else if (key == "__deleted") {
      f->deleted = raw;
    } else if (key == "_change") {
      f->change = raw;
    }
  }
  // current_location() fails only once the whole input has been consumed.
  if (!doc.current_location().error()) {
    return Status::Invalid("{}: trailing content after the object", what);
  }
  return Status::OK();
}

bool IsObject(std::string_view raw) { return !raw.empty() && raw.front() == '{'; }
bool IsNull(std::string_view raw) { return raw.empty() || raw == "null"; }

// A JSON string's content (no escapes expected in the values read here).
Result<std::string_view> StringOf(std::string_view raw, const char* what) {
  if (raw.size() < 2 || raw.front() != '"' || raw.back() != '"' ||
      raw.find('\\') != std::string_view::npos) {
    return Status::Invalid("source.{} is {}, not a plain string", what, raw);
  }
  return raw.substr(1, raw.size() - 2);
}

Result<uint64_t> UintOf(std::string_view raw, const char* what) {
  uint64_t v = 0;
  auto [end, ec] = std::from_chars(raw.data(), raw.data() + raw.size(), v);
  if (ec != std::errc() || end != raw.data() + raw.size()) {
    return Status::Invalid("source.{} is {}, not a non-negative integer", what, raw);
  }
  return v;
}

// PostgreSQL's source.sequence: a string holding a JSON array of two LSNs
// (each a string of digits, or null).
Status AddSequence(std::string_view text, std::string* out) {
  text = Trim(text);
  if (text.size() < 2 || text.front() != '[' || text.back() != ']') {
    return Status::Invalid("source.sequence is '{}', not an array of LSNs", text);
  }
  text = text.substr(1, text.size() - 2);
  int parts = 0;
  while (true) {
    size_t comma = text.find(',');
    std::string_view item = Trim(text.substr(0, comma));
    if (item == "null") {
      AddInt(0, out);
    } else {
      if (item.size() >= 2 && item.front() == '"' && item.back() == '"') {
        item = item.substr(1, item.size() - 2);
      }
      ASSIGN_OR_RETURN(uint64_t lsn, UintOf(item, "sequence"));
      AddInt(lsn, out);
    }
    ++parts;
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  if (parts != 2) return Status::Invalid("source.sequence has {} LSNs, not 2", parts);
  return Status::OK();
}

}  // namespace

struct ChangeParser::Impl {
  od::parser parser;
  std::string value;  // the record's value, padded
  std::string key;    // its key, padded
  std::string sequence;
  DebeziumValues values;      // as the records' schemas name them
  DebeziumValues key_values;  // as the message keys' schemas name them

  static std::string_view Pad(std::string_view text, std::string* buffer) {
    buffer->assign(text);
    buffer->append(simdjson::SIMDJSON_PADDING, ' ');
    return std::string_view(buffer->data(), text.size());
  }

  // `json` (in a padded buffer) or, when it is a {"schema", "payload"}
  // wrapper, its payload; `f` gets the fields of what is returned.
  // A wrapper whose payload is null gives "null".
  // `schema` (when given) gets the wrapper's schema, or "" when unwrapped.
  Result<std::string_view> Unwrap(std::string_view json, const char* what, Fields* f,
                                  std::string_view* schema = nullptr) {
    json = Trim(json);  // the image starts with '{' (the padding stays behind it)
    RETURN_IF_ERROR(ReadFields(parser, json, what, f));
    if (schema != nullptr) *schema = {};
    if (f->count == 2 && !f->schema.empty() && f->payload == "null") return f->payload;
    if (f->count == 2 && !f->schema.empty() && IsObject(f->payload)) {
      if (schema != nullptr) *schema = f->schema;
      std::string_view payload = f->payload;
      RETURN_IF_ERROR(ReadFields(parser, payload, what, f));
      return payload;
    }
    return json;
  }

  // The message key as an object holding the key's columns.
  Result<std::string_view> KeyImage(std::string_view raw_key) {
    if (Trim(raw_key).empty()) {
      return Status::Invalid("a record without a value deletes its key, but it has no key");
    }
    Fields f;
    std::string_view schema;
    ASSIGN_OR_RETURN(std::string_view image,
                     Unwrap(Pad(raw_key, &key), "the record's key", &f, &schema));
    if (image == "null") return Status::Invalid("the record's key is null");
    return Decoded(schema, image, key_values, "the record key's schema");
  }

  // Reads source.* into the change's position and snapshot flag.
  Status ReadSource(std::string_view source, Change* out) {
    if (IsNull(source)) return Status::OK();
    if (!IsObject(source)) return Status::Invalid("source is {}, not an object", source);
    od::document doc;
    if (auto e =
            parser.iterate(source.data(), source.size(), source.size() + simdjson::SIMDJSON_PADDING)
                .get(doc)) {
      return Error(e, "source");
    }
    od::object obj;
    if (auto e = doc.get_object().get(obj)) return Error(e, "source");
    std::string_view file, pos, row, commit_lsn, change_lsn, serial;
    bool has_sequence = false;
    for (auto field : obj) {
      std::string_view k, raw;
      od::value v;
      if (auto e = field.unescaped_key().get(k)) return Error(e, "source");
      if (auto e = field.value().get(v)) return Error(e, "source");
      if (k == "sequence") {
        od::json_type t;
        if (auto e = v.type().get(t)) return Error(e, "source.sequence");
        if (t == od::json_type::string) {
          std::string_view s;
          if (auto e = v.get_string().get(s)) return Error(e, "source.sequence");
          sequence.assign(s);
          has_sequence = true;
          continue;
        }
      }
      if (auto e = RawJson(v, &raw)) return Error(e, "source");
      raw = Trim(raw);
      if (k == "file") file = raw;
      if (k == "pos") pos = raw;
      if (k == "row") row = raw;
      if (k == "commit_lsn") commit_lsn = raw;
      if (k == "change_lsn") change_lsn = raw;
      if (k == "event_serial_no") serial = raw;
      if (k == "snapshot") {
        out->snapshot = out->snapshot || (raw != "\"false\"" && raw != "false" && raw != "null");
      }
    }
    std::string& p = out->position;
    if (has_sequence) {
      RETURN_IF_ERROR(AddSequence(sequence, &p));
    } else if (!IsNull(file) && !IsNull(pos)) {
      ASSIGN_OR_RETURN(std::string_view name, StringOf(file, "file"));
      AddString(name, &p);
      ASSIGN_OR_RETURN(uint64_t at, UintOf(pos, "pos"));
      AddInt(at, &p);
      uint64_t r = 0;
      if (!IsNull(row)) {
        ASSIGN_OR_RETURN(r, UintOf(row, "row"));
      }
      AddInt(r, &p);
    } else if (!IsNull(commit_lsn)) {
      ASSIGN_OR_RETURN(std::string_view commit, StringOf(commit_lsn, "commit_lsn"));
      AddString(commit, &p);
      std::string_view change;
      if (!IsNull(change_lsn)) {
        ASSIGN_OR_RETURN(change, StringOf(change_lsn, "change_lsn"));
      }
      AddString(change, &p);
      uint64_t n = 0;
      if (!IsNull(serial)) {
        ASSIGN_OR_RETURN(n, UintOf(serial, "event_serial_no"));
      }
      AddInt(n, &p);
    }
    return Status::OK();
  }

  Status Debezium(std::optional<std::string_view> value, Change* out) {
    if (!value || Trim(*value) == "null" || Trim(*value).empty()) return Status::OK();  // tombstone
    Fields f;
    std::string_view schema;
    ASSIGN_OR_RETURN(std::string_view event,
                     Unwrap(Pad(*value, &this->value), "the change event", &f, &schema));
    if (event == "null") return Status::OK();  // a tombstone in the wrapper
    // Views into this->value: later parses of its parts keep them valid.
    Fields e = f;
    if (e.op.empty()) return Status::Invalid("the change event has no op");
    if (e.op == "\"c\"" || e.op == "\"r\"" || e.op == "\"u\"") {
      if (!IsObject(e.after)) {
        return Status::Invalid("op {} without an after image (after is {})", e.op,
                               e.after.empty() ? "missing" : e.after);
      }
      out->kind = Change::Kind::kUpsert;
      out->image = e.after;
      out->snapshot = e.op == "\"r\"";
    } else if (e.op == "\"d\"") {
      if (!IsObject(e.before)) {
        return Status::Invalid(
            "op \"d\" without a before image (before is {}; the database must log the key of "
            "deleted rows)",
            e.before.empty() ? "missing" : e.before);
      }
      out->kind = Change::Kind::kDelete;
      out->image = e.before;
    } else {
      return Status::Invalid("op {} is not a row change (c, r, u, d)", e.op);
    }
    Status st = ReadSource(e.source, out);
    if (st.ok()) {
      auto decoded = Decoded(schema, out->image, values, "the event's schema");
      if (decoded.ok()) out->image = *decoded;
      st = decoded.status();
    }
    if (!st.ok()) out->kind = Change::Kind::kNone;
    return st;
  }

  Status Changelog(std::optional<std::string_view> value, Change* out);

  Status Upsert(std::optional<std::string_view> value, std::string_view raw_key, Change* out) {
    if (!value || Trim(*value) == "null") {
      ASSIGN_OR_RETURN(out->image, KeyImage(raw_key));
      out->kind = Change::Kind::kDelete;
      return Status::OK();
    }
    Fields f;
    std::string_view schema;
    ASSIGN_OR_RETURN(std::string_view row,
                     Unwrap(Pad(*value, &this->value), "the record", &f, &schema));
    if (row == "null") {  // the wrapper's null payload: a tombstone
      ASSIGN_OR_RETURN(out->image, KeyImage(raw_key));
      out->kind = Change::Kind::kDelete;
      return Status::OK();
    }
    bool deleted = f.deleted == "true" || f.deleted == "\"true\"";
    if (!deleted && !f.deleted.empty() && f.deleted != "false" && f.deleted != "\"false\"" &&
        f.deleted != "null") {
      return Status::Invalid("__deleted is {}, not true or false", f.deleted);
    }
    out->kind = deleted ? Change::Kind::kDelete : Change::Kind::kUpsert;
    ASSIGN_OR_RETURN(out->image, Decoded(schema, row, values, "the event's schema"));
    return Status::OK();
  }

  // `image` with the values `schema` names as encodings converted by
  // `decoder` (debezium_values.h); unchanged without a schema.
  static Result<std::string_view> Decoded(std::string_view schema, std::string_view image,
                                          DebeziumValues& decoder, std::string_view what) {
    if (schema.empty()) return image;
    try {
      RETURN_IF_ERROR(decoder.Learn(schema));
      return decoder.Convert(image);
    } catch (const std::exception& e) {  // a schema value of the wrong JSON type
      return Status::Invalid("{}: {}", what, e.what());
    }
  }
};

Status ChangeParser::Impl::Changelog(std::optional<std::string_view> value, Change* out) {
  if (!value) return Status::Invalid("a changelog record without a value");
  Fields f;
  std::string_view row = Trim(Pad(*value, &this->value));
  RETURN_IF_ERROR(ReadFields(parser, row, "the changelog record", &f));
  if (f.change == "\"+I\"" || f.change == "\"+U\"") {
    out->kind = Change::Kind::kUpsert;
  } else if (f.change == "\"-D\"" || f.change == "\"-U\"") {
    // -U deletes the old row's key: a target keyed otherwise than the source
    // (SELECT email, ... into a table keyed by email) loses the old key; the
    // +U that follows upserts the new row.
    out->kind = Change::Kind::kDelete;
  } else {
    return Status::Invalid("_change is {}, not +I, -U, +U or -D",
                           f.change.empty() ? "missing" : f.change);
  }
  out->image = row;
  return Status::OK();
}

ChangeParser::ChangeParser(ChangeFormat format)
    : format_(format), impl_(std::make_unique<Impl>()) {}
ChangeParser::~ChangeParser() = default;

Status ChangeParser::Parse(std::optional<std::string_view> value, std::string_view key,
                           Change* out) {
  *out = Change{};
  switch (format_) {
    case ChangeFormat::kJson:
      if (!value) return Status::Invalid("a record without a value");
      out->kind = Change::Kind::kUpsert;
      out->image = *value;
      return Status::OK();
    case ChangeFormat::kUpsert: return impl_->Upsert(value, key, out);
    case ChangeFormat::kDebezium: return impl_->Debezium(value, out);
    case ChangeFormat::kChangelog: return impl_->Changelog(value, out);
  }
  return Status::Internal("unknown change format");
}

}  // namespace sluice::sources
