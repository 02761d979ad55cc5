#include "pipeline/dead_letter.h"

#include <cctype>
#include <utility>

#include "catalog/table.h"
#include "columnar/sql_schema.h"
#include "iceberg/table_builder.h"

namespace sluice::pipeline {

using catalog::Table;
using catalog::TableIdent;

namespace {

// The decoder names the line it was given; a dead letter has its offset in
// its own column, so the "line N: " prefix is dropped from its error.
std::string DeadLetterError(const Status& st) {
  // Only the decoder's "line N: " goes; a SQL position ("line 3, column 17: ",
  // from an expression of the pipeline) stays.
  std::string m = st.message();
  if (m.rfind("line ", 0) == 0) {
    size_t digits = 5;
    while (digits < m.size() && std::isdigit(static_cast<unsigned char>(m[digits]))) ++digits;
    if (digits > 5 && m.compare(digits, 2, ": ") == 0) m = m.substr(digits + 2);
  }
  return m;
}

}  // namespace

void AppendDeadLetter(const DeadLetter& d, Batch* batch) {
  auto& c = batch->columns;
  c[0].AppendBytes(d.payload);
  c[1].AppendBytes(DeadLetterError(*d.error));
  c[2].AppendBytes(d.source);
  c[3].AppendBytes(d.partition);
  c[4].Append<int64_t>(d.offset);
  c[5].Append<int64_t>(d.ingested_us);
  c[6].Append<int64_t>(d.failed_us);
  c[7].AppendBytes(d.pipeline);
}

TableIdent DeadLetterTable(const TableIdent& table) {
  return TableIdent{table.ns, table.name + "__dlq"};
}

Schema DeadLetterSchema() {
  auto s = ParseColumnList(
      "payload STRING, error STRING NOT NULL, source STRING NOT NULL, "
      "`partition` STRING NOT NULL, `offset` BIGINT NOT NULL, ingested_at TIMESTAMPTZ, "
      "failed_at TIMESTAMPTZ NOT NULL, pipeline STRING NOT NULL");
  return std::move(*s);  // a constant column list: parsing cannot fail (tested)
}

Status EnsureDeadLetterTable(catalog::Catalog& catalog, FileIO& io, const std::string& warehouse,
                             const TableIdent& table) {
  TableIdent dlq = DeadLetterTable(table);
  auto loc = catalog.LoadTable(dlq);
  if (loc.ok()) return Status::OK();
  if (loc.status().code() != StatusCode::kNotFound) return loc.status();
  Schema schema = DeadLetterSchema();
  ASSIGN_OR_RETURN(iceberg::PartitionSpec spec,
                   iceberg::ParsePartitionSpec("day(failed_at)", schema));
  ASSIGN_OR_RETURN(iceberg::TableMetadata md,
                   iceberg::NewTableMetadata(schema, spec, iceberg::SortOrder{},
                                             catalog::DefaultTableLocation(warehouse, dlq),
                                             iceberg::NewTableOptions{}));
  auto created = Table::Create(catalog, io, dlq, md);
  if (!created.ok() && created.status().code() != StatusCode::kAlreadyExists) {
    return created.status().WithContextF("dead-letter table {}", dlq.ToString());
  }
  return Status::OK();
}

}  // namespace sluice::pipeline
