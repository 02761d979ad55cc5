#include "pipeline/bind.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <vector>

#include "catalog/table.h"
#include "common/ascii.h"
#include "sources/connectors.h"
#include "sql/binder.h"

namespace sluice::pipeline {

using catalog::TableIdent;

namespace {

std::string NamePart(const sql::Identifier& id) {
  return id.quoted ? id.name : AsciiLower(id.name);
}

}  // namespace

std::string Where(const sql::SourcePos& pos) {
  return fmt::format("line {}, column {}", pos.line, pos.column);
}

Result<TableIdent> TableName(const sql::QualifiedName& q) {
  if (q.parts.size() < 2) {
    return Status::Invalid("{}: table {} needs a namespace (e.g. lake.{})", Where(q.pos()),
                           q.ToString(), q.ToString());
  }
  TableIdent t;
  for (size_t i = 0; i + 1 < q.parts.size(); ++i) t.ns.push_back(NamePart(q.parts[i]));
  t.name = NamePart(q.parts.back());
  for (const auto& n : t.ns)
    RETURN_IF_ERROR_CTX(catalog::ValidateNamePart(n, "namespace"), "{}", Where(q.pos()));
  RETURN_IF_ERROR_CTX(catalog::ValidateNamePart(t.name, "table"), "{}", Where(q.pos()));
  return t;
}

Result<std::string> SimpleName(const sql::QualifiedName& q, const char* what) {
  if (q.parts.size() != 1) {
    return Status::Invalid("{}: a {} name has one part, not {}", Where(q.pos()), what,
                           q.ToString());
  }
  std::string n = NamePart(q.parts[0]);
  RETURN_IF_ERROR_CTX(catalog::ValidateNamePart(n, what), "{}", Where(q.pos()));
  return n;
}

// Options a statement accepts; anything else is a typo the user must hear about.
Status CheckOptions(const sql::Options& o, const std::vector<std::string_view>& allowed,
                    const char* what) {
  for (const auto& item : o.items) {
    if (std::find(allowed.begin(), allowed.end(), item.key) != allowed.end()) continue;
    std::string list;
    for (auto a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
    return Status::Invalid("{}: unknown {} option '{}' (known: {})", Where(item.pos), what,
                           item.key, list);
  }
  return Status::OK();
}

constexpr double kMaxDurationMs = 7.0 * 24 * 3600e3;

namespace {

// "1.5 s" -> 1.5 and "s": the leading number (digits and '.'; -1 when there
// is none or it is not a number) and the unit after it, spaces skipped.
double SplitNumberAndUnit(const std::string& text, std::string* unit) {
  size_t i = 0;
  while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.')) {
    ++i;
  }
  std::string number = text.substr(0, i);
  *unit = text.substr(i);
  while (!unit->empty() && unit->front() == ' ') unit->erase(0, 1);
  char* end = nullptr;
  double v = number.empty() ? -1 : std::strtod(number.c_str(), &end);
  return number.empty() || end != number.c_str() + number.size() ? -1 : v;
}

}  // namespace

Result<int64_t> ParseDurationMs(const std::string& text) {
  std::string unit;
  double v = SplitNumberAndUnit(text, &unit);
  double scale = unit == "ms"                   ? 1
                 : unit == "s"                  ? 1e3
                 : unit == "m" || unit == "min" ? 60e3
                 : unit == "h"                  ? 3600e3
                                                : -1;
  if (scale < 0 || v <= 0 || !std::isfinite(v)) {
    return Status::Invalid("'{}' is not a duration (examples: '500ms', '1s', '15m', '1h')", text);
  }
  double ms = v * scale;
  if (ms < 1 || ms > kMaxDurationMs) {  // also before llround, which overflows
    return Status::Invalid("duration '{}' is out of range (1ms to 7 days, e.g. '168h')", text);
  }
  return std::llround(ms);
}

Result<int64_t> ParseByteSize(const std::string& text) {
  std::string unit;
  double v = SplitNumberAndUnit(text, &unit);
  unit = AsciiLower(unit);
  double scale = unit.empty() || unit == "b"    ? 1
                 : unit == "kib" || unit == "k" ? 1024.0
                 : unit == "mib" || unit == "m" ? 1024.0 * 1024
                 : unit == "gib" || unit == "g" ? 1024.0 * 1024 * 1024
                 : unit == "kb"                 ? 1e3
                 : unit == "mb"                 ? 1e6
                 : unit == "gb"                 ? 1e9
                                                : -1;
  if (scale < 0 || v <= 0 || !std::isfinite(v) || v * scale > 1e15) {
    return Status::Invalid("'{}' is not a size (examples: '64MiB', '1GiB', '500MB')", text);
  }
  return static_cast<int64_t>(v * scale);
}

std::string ConnectorOf(const sql::CreateSource& s) {
  if (s.from_table) return "table";
  const sql::Option* connector = s.options.Find("connector");
  return connector == nullptr ? "" : connector->value;
}

std::map<std::string, std::string> ConnectorOptions(const sql::CreateSource& s) {
  std::map<std::string, std::string> out = s.options.ToMap();
  if (s.from_table) {
    out["connector"] = "table";
    auto ident = TableName(*s.from_table);
    if (ident.ok()) out["table"] = ident->ToString();
  }
  return out;
}

Status CheckSource(const sql::CreateSource& s) {
  ASSIGN_OR_RETURN(std::string name, SimpleName(s.name, "source"));
  if (s.from_table) {
    RETURN_IF_ERROR(TableName(*s.from_table).status());
    RETURN_IF_ERROR(CheckOptions(s.options, {"start", "mode"}, "table source"));
    if (const sql::Option* start = s.options.Find("start");
        start && start->value != "earliest" && start->value != "latest") {
      return Status::Invalid("{}: table source {}: start is 'earliest' or 'latest', not '{}'",
                             Where(start->pos), name, start->value);
    }
    if (const sql::Option* mode = s.options.Find("mode");
        mode && mode->value != "append" && mode->value != "changelog") {
      return Status::Invalid(
          "{}: table source {}: mode is 'append' (the rows each snapshot appended) or "
          "'changelog' (every insert, update and delete), not '{}'",
          Where(mode->pos), name, mode->value);
    }
    return Status::OK();
  }
  const sql::Option* connector = s.options.Find("connector");
  if (connector == nullptr) {
    return Status::Invalid("{}: source {} needs WITH (connector = ...): {}, or FROM TABLE",
                           Where(s.name.pos()), name, sources::ConnectorNames());
  }
  if (auto format = sources::ParseChangeFormat(s.format); !format.ok()) {
    return format.status().WithContextF("{}: source {}", Where(s.name.pos()), name);
  }
  const sources::Connector* c = sources::FindConnector(connector->value);
  if (c == nullptr || c->name == "table") {
    return Status::Invalid("{}: unknown connector '{}' ({}; a table is read with FROM TABLE)",
                           Where(connector->pos), connector->value, sources::ConnectorNames());
  }
  std::string what = fmt::format("{} source", c->name);
  RETURN_IF_ERROR(CheckOptions(s.options, c->options, what.c_str()));
  for (std::string_view option : c->required) {
    if (s.options.Find(option) == nullptr) {
      return Status::Invalid("{}: {} source {} needs the option {}", Where(s.name.pos()),
                             connector->value, name, option);
    }
  }
  return Status::OK();
}

namespace {

// The schema the source's records are decoded with: the source's columns,
// made required where they feed a required target column, so that a record
// with a null there is dead-lettered alone instead of failing its batch.
Schema DecodeSchema(const sql::ProjectionPlan& plan) {
  Schema s = *plan.source_schema;
  // With a WHERE, a NULL there may belong to a row the filter drops: the
  // projection checks NOT NULL targets itself, row by row.
  if (plan.filter) return s;
  for (size_t i = 0; i < plan.columns.size(); ++i) {
    const sql::ProjectionColumn& c = plan.columns[i];
    if (c.kind == sql::ProjectionColumn::Kind::kSource && plan.target_schema->fields[i].required) {
      s.fields[c.source_index].required = true;
    }
  }
  return s;
}

// A change source's part of BindPipeline (FORMAT UPSERT, DEBEZIUM): the
// target's key, the plan of the upserted rows and the key plan.
Status BindChanges(const sql::CreatePipeline& p, const sql::CreateSource& source,
                   sources::ChangeFormat change_format, const Schema& target,
                   sql::ProjectionPlan plan, PipelineOptions* o) {
  o->format = change_format;
  const char* format = sources::ChangeFormatName(o->format);
  if (sql::IsAggregation(p.insert)) {
    return Status::NotImplemented(
        "{}: pipeline {}: an aggregation over FORMAT {}: it would have to take the old row of "
        "each update and delete back out of its group, and these records do not always carry "
        "it (UPSERT never; DEBEZIUM only under REPLICA IDENTITY FULL). Mirror the source into "
        "a primary-key table and aggregate over its changelog (FROM TABLE ... WITH (mode = "
        "'changelog'))",
        Where(p.name.pos()), o->name, format);
  }
  if (target.identifier_field_ids.empty()) {
    return Status::Invalid(
        "{}: pipeline {}: FORMAT {} changes rows by key, but table {} has no PRIMARY KEY",
        Where(p.insert.target.pos()), o->name, format, o->target.ToString());
  }
  // The key plan: the plan's columns of the target's key fields, in key
  // order, over the source's columns made optional (a delete's image may
  // hold only the key).
  Schema images = *plan.source_schema;
  for (Field& f : images.fields) f.required = false;
  images.identifier_field_ids.clear();
  auto image_schema = std::make_shared<const Schema>(std::move(images));
  sql::ProjectionPlan key_plan;
  key_plan.source_schema = image_schema;
  auto key_schema = std::make_shared<Schema>();
  for (int32_t id : target.identifier_field_ids) {
    for (size_t i = 0; i < target.fields.size(); ++i) {
      if (target.fields[i].id != id) continue;
      key_schema->fields.push_back(target.fields[i]);
      key_plan.columns.push_back(plan.columns[i]);
    }
  }
  if (key_plan.columns.size() != target.identifier_field_ids.size()) {
    return Status::NotImplemented(
        "{}: pipeline {}: table {} has a primary key field that is not "
        "a top-level column",
        Where(p.insert.target.pos()), o->name, o->target.ToString());
  }
  key_plan.target_schema = std::move(key_schema);
  // The files of a folder are one stream (their changes' positions compare
  // across files).
  o->one_watermark_partition = sources::FindConnector(ConnectorOf(source))->ordered;
  auto shared_plan = std::make_shared<const sql::ProjectionPlan>(std::move(plan));
  o->source_schema = std::make_shared<Schema>(DecodeSchema(*shared_plan));
  o->change_plan = std::move(shared_plan);
  o->key_plan = std::make_shared<const sql::ProjectionPlan>(std::move(key_plan));
  o->image_schema = std::move(image_schema);
  return Status::OK();
}

// The windowed part of BindPipeline: watermark, lateness, idleness, the plan
// (`over_changelog`: a table source's changelog, whose -U and -D rows retract).
Status BindAggregation(const sql::CreatePipeline& p, const sql::CreateSource& source,
                       const Schema& target, PipelineOptions* o, bool over_changelog = false) {
  std::string watermark_column;
  if (source.watermark) {
    ASSIGN_OR_RETURN(sql::WatermarkSpec wm, sql::SourceWatermark(source));
    watermark_column = wm.column;
    o->watermark_delay_us = wm.delay_us;
  }
  int64_t lateness_ms = 0;
  if (const sql::Option* l = p.options.Find("allowed_lateness")) {
    if (l->value != "0" && l->value != "0s") {
      auto ms = ParseDurationMs(l->value);
      if (!ms.ok()) return ms.status().WithContextF("{}: allowed_lateness", Where(l->pos));
      lateness_ms = *ms;
    }
  }
  if (const sql::Option* idle = source.options.Find("idle_timeout")) {
    auto ms = ParseDurationMs(idle->value);
    if (!ms.ok()) return ms.status().WithContextF("{}: idle_timeout", Where(idle->pos));
    o->idle_timeout_ms = *ms;
  }
  o->one_watermark_partition = sources::FindConnector(ConnectorOf(source))->ordered;
  ASSIGN_OR_RETURN(sql::AggregatePlan plan,
                   sql::BindAggregateInsert(p.insert, source.schema, target, watermark_column,
                                            lateness_ms * 1000, over_changelog));
  o->aggregate = std::make_shared<const sql::AggregatePlan>(std::move(plan));
  o->source_schema = std::make_shared<Schema>(source.schema);
  // Projection pushdown: the columns `pre` reads (its input is the source's
  // columns and then $row) and the event time.
  o->read_columns = sql::ColumnsRead(o->aggregate->pre);
  o->read_columns.resize(source.schema.fields.size());
  if (o->aggregate->time_column >= 0) o->read_columns[o->aggregate->time_column] = true;
  return Status::OK();
}

}  // namespace

Result<PipelineOptions> BindPipeline(catalog::Catalog& catalog, FileIO& io,
                                     const sql::CreatePipeline& p,
                                     const std::map<std::string, sql::CreateSource>& sources,
                                     const std::map<std::string, Schema>* planned) {
  PipelineOptions o;
  ASSIGN_OR_RETURN(o.name, SimpleName(p.name, "pipeline"));
  RETURN_IF_ERROR(CheckOptions(
      p.options, {"commit_interval", "delivery", "allowed_lateness", "parallelism", "state.memory"},
      "pipeline"));
  if (const sql::Option* d = p.options.Find("delivery"); d && d->value != "exactly-once") {
    return Status::Invalid(
        "{}: pipeline {}: delivery '{}' is not offered: sluice commits source offsets with the "
        "data they produced (exactly-once), never apart from it",
        Where(d->pos), o.name, d->value);
  }
  if (const sql::Option* ci = p.options.Find("commit_interval")) {
    auto ms = ParseDurationMs(ci->value);
    if (!ms.ok()) return ms.status().WithContextF("{}: commit_interval", Where(ci->pos));
    o.commit_interval_ms = *ms;
  }
  if (const sql::Option* par = p.options.Find("parallelism")) {
    char* end = nullptr;
    long n = std::strtol(par->value.c_str(), &end, 10);
    if (par->value.empty() || *end != '\0' || n < 1 || n > kMaxParallelism) {
      return Status::Invalid(
          "{}: pipeline {}: parallelism '{}' is not a number of threads from 1 to {}",
          Where(par->pos), o.name, par->value, kMaxParallelism);
    }
    o.parallelism = static_cast<int>(n);
  }
  if (const sql::Option* m = p.options.Find("state.memory")) {
    auto bytes = ParseByteSize(m->value);
    if (!bytes.ok() || *bytes < (1 << 20)) {
      return Status::Invalid(
          "{}: pipeline {}: state.memory '{}' is not a size of at least 1 MiB (like '256MiB', "
          "'1GiB')",
          Where(m->pos), o.name, m->value);
    }
    o.state_memory = *bytes;
  }
  ASSIGN_OR_RETURN(o.target, TableName(p.insert.target));
  ASSIGN_OR_RETURN(o.source_name, SimpleName(p.insert.source, "source"));
  auto src = sources.find(o.source_name);
  if (src == sources.end()) {
    return Status::Invalid("{}: unknown source {} (define it with CREATE SOURCE)",
                           Where(p.insert.source.pos()), o.source_name);
  }
  // A source FROM TABLE has the table's columns (the table exists, or the
  // script creates it).
  sql::CreateSource def = src->second;
  if (def.from_table) {
    ASSIGN_OR_RETURN(catalog::TableIdent upstream, TableName(*def.from_table));
    auto t = catalog::Table::Load(catalog, io, upstream);
    if (t.ok()) {
      def.schema = *(*t)->metadata().current_schema();
    } else if (t.status().code() == StatusCode::kNotFound && planned != nullptr &&
               planned->count(upstream.ToString())) {
      def.schema = planned->at(upstream.ToString());
    } else {
      return t.status().WithContextF("{}: source {} reads table {}", Where(def.name.pos()),
                                     o.source_name, upstream.ToString());
    }
    def.schema.identifier_field_ids.clear();
  }
  if (def.from_table) {
    ASSIGN_OR_RETURN(catalog::TableIdent upstream, TableName(*def.from_table));
    if (upstream.ToString() == o.target.ToString()) {
      return Status::Invalid(
          "{}: pipeline {} reads table {} (source {}) and writes it: it would "
          "read its own output forever",
          Where(p.name.pos()), o.name, upstream.ToString(), o.source_name);
    }
  }
  const Schema* target_schema = nullptr;
  auto table = catalog::Table::Load(catalog, io, o.target);
  if (table.ok()) {
    target_schema = (*table)->metadata().current_schema();
  } else if (table.status().code() == StatusCode::kNotFound && planned != nullptr &&
             planned->count(o.target.ToString())) {
    target_schema = &planned->at(o.target.ToString());
  } else {
    return table.status().WithContextF("{}: target table {}", Where(p.insert.target.pos()),
                                       o.target.ToString());
  }
  // A change source: FORMAT UPSERT / DEBEZIUM, or a table read as its changelog.
  std::optional<sources::ChangeFormat> changes;
  if (def.from_table) {
    const sql::Option* mode = def.options.Find("mode");
    if (mode != nullptr && mode->value == "changelog") changes = sources::ChangeFormat::kChangelog;
  } else if (def.format != "json") {
    ASSIGN_OR_RETURN(changes, sources::ParseChangeFormat(def.format));
  }
  if (changes == sources::ChangeFormat::kChangelog && sql::IsAggregation(p.insert)) {
    // An aggregate over a changelog retracts: it must have counted every row
    // a -U or -D takes back.
    if (const sql::Option* start = def.options.Find("start"); start && start->value != "earliest") {
      return Status::Invalid(
          "{}: pipeline {}: an aggregate over a changelog reads it from the start (start = "
          "'{}' would take back rows it never counted)",
          Where(start->pos), o.name, start->value);
    }
    RETURN_IF_ERROR(BindAggregation(p, def, *target_schema, &o, /*over_changelog=*/true));
    o.format = *changes;
    return o;
  }
  if (changes) {
    sql::ProjectionPlan plan;
    if (!sql::IsAggregation(p.insert)) {
      ASSIGN_OR_RETURN(plan, sql::BindInsert(p.insert, def.schema, *target_schema));
    }
    RETURN_IF_ERROR(BindChanges(p, def, *changes, *target_schema, std::move(plan), &o));
    return o;
  }
  if (sql::IsAggregation(p.insert)) {
    RETURN_IF_ERROR(BindAggregation(p, def, *target_schema, &o));
    return o;
  }
  ASSIGN_OR_RETURN(sql::ProjectionPlan plan, sql::BindInsert(p.insert, def.schema, *target_schema));
  auto shared_plan = std::make_shared<const sql::ProjectionPlan>(std::move(plan));
  o.source_schema = std::make_shared<Schema>(DecodeSchema(*shared_plan));
  // Projection pushdown: the columns the plan does not read are not decoded
  // (a rejected row's dead letter holds the record as it came, so nothing of
  // them is lost).
  o.read_columns = sql::ColumnsRead(*shared_plan);
  o.projection = [shared_plan](Batch&& rows, std::vector<sql::RejectedRow>* rejected) {
    return sql::ApplyPlan(*shared_plan, std::move(rows), rejected);
  };
  return o;
}

Result<std::map<std::string, sql::CreateSource>> SourcesOf(const sql::Script& script) {
  std::map<std::string, sql::CreateSource> out;
  for (const auto& st : script.statements) {
    if (const auto* s = std::get_if<sql::CreateSource>(&st.body)) {
      ASSIGN_OR_RETURN(std::string name, SimpleName(s->name, "source"));
      if (!out.emplace(name, *s).second) {
        return Status::Invalid("{}: source {} is defined twice", Where(s->name.pos()), name);
      }
    }
  }
  return out;
}

Result<const sql::CreatePipeline*> FindPipeline(const sql::Script& script,
                                                const std::string& name) {
  std::string known;
  for (const auto& st : script.statements) {
    if (const auto* p = std::get_if<sql::CreatePipeline>(&st.body)) {
      ASSIGN_OR_RETURN(std::string n, SimpleName(p->name, "pipeline"));
      if (n == name) return p;
      known += (known.empty() ? "" : ", ") + n;
    }
  }
  return Status::NotFound("no pipeline {} in the script (it defines: {})", name,
                          known.empty() ? "none" : known);
}

}  // namespace sluice::pipeline
