#include "iceberg/table_builder.h"

#include <algorithm>
#include <cctype>
#include <chrono>

#include "common/ascii.h"
#include "common/clock.h"
#include "common/uuid.h"

namespace sluice::iceberg {
namespace {

std::string Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return std::string(s);
}

// Splits on commas that are not inside parentheses.
std::vector<std::string> SplitTopLevel(std::string_view text) {
  std::vector<std::string> out;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    if (i == text.size() || (text[i] == ',' && depth == 0)) {
      out.push_back(Trim(text.substr(start, i - start)));
      start = i + 1;
    } else if (text[i] == '(') {
      ++depth;
    } else if (text[i] == ')') {
      --depth;
    }
  }
  return out;
}

}  // namespace

int64_t NowMillis() { return WallMillis(); }

Result<PartitionSpec> ParsePartitionSpec(std::string_view text, const Schema& schema,
                                         int32_t spec_id, int32_t first_field_id) {
  PartitionSpec spec;
  spec.spec_id = spec_id;
  if (Trim(text).empty()) return spec;
  int32_t next_id = first_field_id;
  for (const std::string& item : SplitTopLevel(text)) {
    auto bad = [&](std::string_view why) {
      return Status::Invalid("partition \"{}\": {}", item, why);
    };
    std::string fn = "identity", column, arg;
    size_t open = item.find('(');
    if (open == std::string::npos) {
      column = item;
    } else {
      if (item.back() != ')') return bad("expected ')' at the end");
      fn = AsciiLower(Trim(item.substr(0, open)));
      auto args = SplitTopLevel(std::string_view(item).substr(open + 1, item.size() - open - 2));
      if (fn == "bucket" || fn == "truncate") {
        if (args.size() != 2) return bad(fmt::format("{}(N, column) takes two arguments", fn));
        arg = args[0];
        column = args[1];
      } else {
        if (args.size() != 1) return bad(fmt::format("{}(column) takes one argument", fn));
        column = args[0];
      }
    }
    if (column.empty()) return bad("no column");
    const Field* source = schema.FindByPath(column);
    if (source == nullptr) return bad(fmt::format("no column named '{}'", column));
    std::string transform_text = fn;
    std::string suffix;
    if (fn == "bucket" || fn == "truncate") {
      transform_text = fmt::format("{}[{}]", fn, arg);
      suffix = fn == "bucket" ? "_bucket" : "_trunc";
    } else if (fn == "year" || fn == "month" || fn == "day" || fn == "hour") {
      suffix = "_" + fn;
    } else if (fn == "void") {
      suffix = "_null";
    } else if (fn != "identity") {
      return bad(
          fmt::format("unknown transform '{}' (identity, bucket, truncate, year, month, "
                      "day, hour, void)",
                      fn));
    }
    ASSIGN_OR_RETURN(Transform t, Transform::Parse(transform_text));
    RETURN_IF_ERROR_CTX(t.CheckSource(*source->type), "partition \"{}\"", item);
    std::string name = column;
    std::replace(name.begin(), name.end(), '.', '_');
    name += suffix;
    for (const auto& f : spec.fields) {
      if (f.name == name) return bad("duplicate partition field");
    }
    spec.fields.push_back(PartitionField{source->id, next_id++, name, t});
  }
  return spec;
}

Result<SortOrder> ParseSortOrder(std::string_view text, const Schema& schema, int32_t order_id) {
  SortOrder order;
  if (Trim(text).empty()) return order;  // order 0: unsorted
  order.order_id = order_id;
  for (const std::string& item : SplitTopLevel(text)) {
    std::vector<std::string> words;
    size_t start = 0;
    while (start < item.size()) {
      size_t end = item.find(' ', start);
      if (end == std::string::npos) end = item.size();
      if (end > start) words.push_back(item.substr(start, end - start));
      start = end + 1;
    }
    if (words.empty()) return Status::Invalid("sort order \"{}\": empty item", text);
    const Field* source = schema.FindByPath(words[0]);
    if (source == nullptr) {
      return Status::Invalid("sort order \"{}\": no column named '{}'", item, words[0]);
    }
    SortField f;
    f.source_id = source->id;
    f.transform = *Transform::Parse("identity");
    size_t i = 1;
    if (i < words.size() && (AsciiLower(words[i]) == "asc" || AsciiLower(words[i]) == "desc")) {
      f.descending = AsciiLower(words[i++]) == "desc";
    }
    f.nulls_first = !f.descending;  // SQL default: nulls first ascending, last descending
    if (i + 1 < words.size() && AsciiLower(words[i]) == "nulls") {
      std::string w = AsciiLower(words[i + 1]);
      if (w != "first" && w != "last") {
        return Status::Invalid("sort order \"{}\": expected NULLS FIRST or NULLS LAST", item);
      }
      f.nulls_first = w == "first";
      i += 2;
    }
    if (i != words.size()) {
      return Status::Invalid("sort order \"{}\": unexpected '{}'", item, words[i]);
    }
    order.fields.push_back(f);
  }
  return order;
}

Status ValidateIdentifierFields(const Schema& schema) {
  for (int32_t id : schema.identifier_field_ids) {
    const Field* f = schema.FindById(id);
    if (f == nullptr || !f->required || f->type->is_nested() || f->type->id() == TypeId::kFloat ||
        f->type->id() == TypeId::kDouble) {
      return Status::Invalid("identifier field {} must be a required primitive, not float/double",
                             id);
    }
  }
  return Status::OK();
}

Result<TableMetadata> NewTableMetadata(const Schema& schema, const PartitionSpec& spec,
                                       const SortOrder& order, const std::string& location,
                                       const NewTableOptions& options) {
  if (options.format_version < 2 || options.format_version > kMaxFormatVersion) {
    return Status::Invalid("format-version {} is not supported for new tables (2 or 3)",
                           options.format_version);
  }
  RETURN_IF_ERROR(ValidateIdentifierFields(schema));
  TableMetadata m;
  m.format_version = options.format_version;
  m.table_uuid = NewUuid();
  m.location = location;
  m.last_updated_ms = NowMillis();
  m.schemas = {schema};
  m.schemas[0].schema_id = 0;
  m.current_schema_id = 0;
  m.last_column_id = schema.HighestFieldId();
  m.partition_specs = {spec};
  m.partition_specs[0].spec_id = 0;
  m.default_spec_id = 0;
  m.last_partition_id = 999;
  for (const auto& f : spec.fields) m.last_partition_id = std::max(m.last_partition_id, f.field_id);
  m.sort_orders = {SortOrder{}};
  if (!order.fields.empty()) m.sort_orders.push_back(order);
  m.default_sort_order_id = order.fields.empty() ? 0 : order.order_id;
  m.properties = options.properties;
  m.properties.erase("format-version");  // a table property in DDL, not stored
  if (m.format_version >= 3) m.next_row_id = 0;
  return m;
}

Result<NewTableOptions> NewTableOptionsFromProperties(
    std::map<std::string, std::string> properties) {
  NewTableOptions o;
  if (auto it = properties.find("format-version"); it != properties.end()) {
    if (it->second != "2" && it->second != "3") {
      return Status::Invalid("format-version must be 2 or 3, not '{}'", it->second);
    }
    o.format_version = it->second[0] - '0';
  }
  o.properties = std::move(properties);
  return o;
}

}  // namespace sluice::iceberg
