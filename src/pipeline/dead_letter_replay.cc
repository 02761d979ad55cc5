#include "pipeline/dead_letter_replay.h"

#include "catalog/row_delete.h"
#include "catalog/table.h"
#include "columnar/json_reader.h"
#include "iceberg/data_writer.h"
#include "iceberg/table_builder.h"

namespace sluice::pipeline {

using catalog::Table;

namespace {

Result<std::unique_ptr<iceberg::DataWriter>> WriterFor(FileIO& io, const Table& t) {
  ASSIGN_OR_RETURN(iceberg::DataWriterOptions o,
                   iceberg::DataWriterOptionsFromProperties(t.metadata().properties));
  return iceberg::DataWriter::Make(io, t.metadata(), std::move(o));
}

std::string Quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}

// One plan of the replay and its commit (ReplayDeadLetters re-plans on a
// conflict).
Result<ReplayResult> ReplayOnce(catalog::Catalog& catalog, FileIO& io, const PipelineOptions& bound,
                                const std::string& filter, bool dry_run) {
  const catalog::TableIdent dlq_ident = DeadLetterTable(bound.target);
  ASSIGN_OR_RETURN(auto target, Table::Load(catalog, io, bound.target));
  ASSIGN_OR_RETURN(auto dlq, Table::Load(catalog, io, dlq_ident));
  auto dlq_schema = std::make_shared<Schema>(*dlq->metadata().current_schema());
  std::vector<std::string> columns;
  for (const Field& f : dlq_schema->fields) columns.push_back(f.name);
  if (columns.size() != 8 || columns[0] != "payload") {
    return Status::Invalid("{} does not have the dead-letter table's columns",
                           dlq_ident.ToString());
  }
  std::string where = "pipeline = " + Quote(bound.name);
  if (!filter.empty()) where += " AND (" + filter + ")";

  // Decoded as the pipeline decodes (only the columns it reads).
  const DecodedColumns decoded(bound.source_schema, bound.read_columns);
  ASSIGN_OR_RETURN(auto decoder, JsonDecoder::Make(decoded.decoded()));
  Batch rows = Batch::Make(decoded.decoded());
  Batch failed = Batch::Make(dlq_schema);
  ReplayResult result;
  const int64_t now_us = iceberg::NowMillis() * 1000;
  // The dead letter behind each decoded row, in case the projection rejects it.
  struct Origin {
    std::string payload, source, partition;
    int64_t offset = 0, ingested_us = 0;
  };
  std::vector<Origin> origins;
  auto on_rows = [&](const Batch& b) -> Status {
    // The scan returns the requested columns in order, then _file and _pos.
    const Column& payload = b.columns[0];
    for (int64_t r = 0; r < b.num_rows(); ++r) {
      ++result.dead_letters;
      std::string_view text = payload.IsNull(r) ? std::string_view() : payload.GetBytes(r);
      Status st =
          payload.IsNull(r) ? Status::Invalid("no payload") : decoder->DecodeLine(text, 1, &rows);
      if (st.ok() && !text.empty()) {
        ++result.recovered;
        origins.push_back({std::string(text), std::string(b.columns[2].GetBytes(r)),
                           std::string(b.columns[3].GetBytes(r)), b.columns[4].Value<int64_t>(r),
                           b.columns[5].IsNull(r) ? 0 : b.columns[5].Value<int64_t>(r)});
        continue;
      }
      if (st.ok()) st = Status::Invalid("empty payload");
      ++result.still_failing;
      AppendDeadLetter(
          {text, &st, b.columns[2].GetBytes(r), b.columns[3].GetBytes(r),
           b.columns[4].Value<int64_t>(r),
           b.columns[5].IsNull(r) ? 0 : b.columns[5].Value<int64_t>(r), now_us, bound.name},
          &failed);
    }
    return Status::OK();
  };
  ASSIGN_OR_RETURN(catalog::PlannedDelete planned,
                   catalog::PlanDelete(*dlq, where, columns, on_rows));
  if (result.dead_letters == 0 || dry_run) {
    catalog::DiscardPlannedDelete(*dlq, planned);
    return result;
  }

  std::unique_ptr<iceberg::DataWriter> target_writer, dlq_writer;
  auto discard = [&](const Status& st) {
    if (target_writer) target_writer->Abort();
    if (dlq_writer) dlq_writer->Abort();
    catalog::DiscardPlannedDelete(*dlq, planned);
    return st.WithContextF("replaying dead letters of pipeline {}", bound.name);
  };
  std::vector<catalog::TableUpdate> updates;
  std::map<std::string, std::string> summary = {{"sluice.replay-of", bound.name}};
  if (rows.num_rows() > 0) {
    Batch projected = decoded.Widen(std::move(rows));
    if (bound.projection) {
      std::vector<sql::RejectedRow> rejected;
      auto p = bound.projection(std::move(projected), &rejected);
      if (!p.ok()) return discard(p.status());
      projected = std::move(*p);
      for (const sql::RejectedRow& r : rejected) {
        const Origin& o = origins[r.row];
        Status error = Status::Invalid("{}", r.error);
        --result.recovered;
        ++result.still_failing;
        AppendDeadLetter(
            {o.payload, &error, o.source, o.partition, o.offset, o.ingested_us, now_us, bound.name},
            &failed);
      }
    }
    if (projected.num_rows() > 0) {
      auto w = WriterFor(io, *target);
      if (!w.ok()) return discard(w.status());
      target_writer = std::move(*w);
      Status st = target_writer->Write(projected);
      if (!st.ok()) return discard(st);
      auto files = target_writer->Close();
      if (!files.ok()) return discard(files.status());
      catalog::TableUpdate u;
      u.table = target.get();
      u.update.add_data = std::move(*files);
      u.update.summary = summary;
      updates.push_back(std::move(u));
    }
  }
  catalog::TableUpdate d;
  d.table = dlq.get();
  d.update = planned.update;
  d.update.summary = summary;
  // A concurrent replay (or delete) of the same dead letters makes this one
  // fail instead of moving them twice.
  d.update.fail_on_new_deletes = true;
  if (failed.num_rows() > 0) {
    auto w = WriterFor(io, *dlq);
    if (!w.ok()) return discard(w.status());
    dlq_writer = std::move(*w);
    Status st = dlq_writer->Write(failed);
    if (!st.ok()) return discard(st);
    auto files = dlq_writer->Close();
    if (!files.ok()) return discard(files.status());
    d.update.add_data = std::move(*files);
  }
  updates.push_back(std::move(d));
  auto ids = Table::CommitAll(catalog, updates);
  if (!ids.ok()) {
    if (ids.status().code() == StatusCode::kCommitStateUnknown) return ids.status();
    return discard(ids.status());
  }
  if (updates.size() == 2) result.target_snapshot = (*ids)[0];  // the target's part
  return result;
}

}  // namespace

Result<ReplayResult> ReplayDeadLetters(catalog::Catalog& catalog, FileIO& io,
                                       const PipelineOptions& bound, const std::string& filter,
                                       bool dry_run) {
  if (bound.aggregate) {
    return Status::NotImplemented(
        "pipeline {} aggregates windows: its dead letters (late events, rows that failed) "
        "cannot be replayed into windows that were committed already; recompute those windows "
        "with a bounded run into a new table instead",
        bound.name);
  }
  if (bound.format != sources::ChangeFormat::kJson) {
    return Status::NotImplemented(
        "pipeline {} reads changes (FORMAT {}): a replayed change could undo a later one of its "
        "key; fix the cause and read the rows again from the database (docs/cdc.md)",
        bound.name, sources::ChangeFormatName(bound.format));
  }
  // A conflict means nothing was committed: a compaction rewrote a
  // dead-letter file the plan deletes from, or another replay moved some of
  // them first. Planned again, the dead letters still there are replayed
  // (those moved meanwhile are gone: none moves twice).
  // (With the budget and jittered backoff of a commit, as DeleteWhere.)
  const catalog::CommitOptions options;
  for (int plan = 1;; ++plan) {
    auto r = ReplayOnce(catalog, io, bound, filter, dry_run);
    if (r.ok() || r.status().code() != StatusCode::kConflict || plan >= options.max_attempts) {
      return r;
    }
    options.BackOff(plan);
  }
}

}  // namespace sluice::pipeline
