// A change source's lanes (FORMAT UPSERT, FORMAT DEBEZIUM; docs/cdc.md):
// each record is parsed into a change, its image decoded, the upserted rows
// projected and written, and every change's key recorded in source order for
// the key index (pipeline_upsert.cc applies them and plans the deletes).
#include <numeric>

#include "columnar/column_ops.h"
#include "columnar/json_reader.h"
#include "iceberg/table_builder.h"
#include "operators/primary_key_index.h"
#include "pipeline/pipeline.h"

namespace sluice::pipeline {

Status Pipeline::StartChanges(const std::optional<CommittedCheckpoint>& committed) {
  if (options_.format == sources::ChangeFormat::kJson) return Status::OK();
  if (options_.aggregate) {  // a changelog into an aggregate: its rows add and retract
    for (Lane& lane : lanes_)
      lane.parser = std::make_unique<sources::ChangeParser>(options_.format);
    return Status::OK();
  }
  if (!keys_ || !options_.change_plan || !options_.key_plan || !options_.image_schema) {
    return Status::Invalid("FORMAT {} changes rows by key: table {} needs a PRIMARY KEY",
                           sources::ChangeFormatName(options_.format), options_.target.ToString());
  }
  for (Lane& lane : lanes_) {
    lane.parser = std::make_unique<sources::ChangeParser>(options_.format);
    ASSIGN_OR_RETURN(lane.image_decoder, JsonDecoder::Make(options_.image_schema));
    RETURN_IF_ERROR(lane.image_decoder->ReserveRecords(kLaneRecordBytes));
  }
  if (committed) change_positions_ = committed->change_positions;
  return Status::OK();
}

Status Pipeline::AddKeyChange(Lane& lane, const Batch& keys, const std::vector<int>& key_columns,
                              int64_t key_row, int64_t written_row, const RowOrigin& origin,
                              sources::Change&& change) {
  if (!operators::AppendKey(keys, key_columns, key_row, &lane.keys)) {
    // The projection and the key plan refuse nulls in key columns.
    return Status::Internal("pipeline {}: a change with a null primary key column", options_.name);
  }
  lane.key_ends.push_back(static_cast<uint32_t>(lane.keys.size()));
  lane.changes.push_back({written_row, origin.partition, std::move(change.position)});
  return Status::OK();
}

Status Pipeline::RunChangeLane(Lane& lane, size_t begin, size_t end) {
  lane.rows = Batch::Make(options_.source_schema);
  lane.images = Batch::Make(options_.image_schema);
  lane.origins.clear();
  lane.changes.clear();
  lane.keys.clear();
  lane.key_ends.clear();
  const std::vector<std::string>& partitions = flushing_.partitions;
  auto record_text = [&](size_t i) {
    // A tombstone's dead letter shows its key.
    return flushing_.records[i].has_value ? flushing_.Value(i) : flushing_.Key(i);
  };
  auto dead_letter = [&](size_t record, const Status& error) {
    const RowOrigin& o = flushing_.records[record].origin;
    AppendDeadLetter({record_text(record), &error, source_description_, partitions[o.partition],
                      o.offset, o.timestamp_ms * 1000, iceberg::NowMillis() * 1000, options_.name},
                     &lane.dead);
  };

  // 1. Parse each record and decode its image: an upsert's into lane.rows,
  //    a delete's into lane.images.
  struct Decoded {
    bool del;
    int64_t row;  // of lane.rows or lane.images
    size_t record;
    sources::Change change;
  };
  std::vector<Decoded> decoded;
  std::vector<size_t> row_record, image_record;  // the record of each row, of each image
  for (size_t i = begin; i < end; ++i) {
    const RawRecord& r = flushing_.records[i];
    std::string_view value = flushing_.Value(i);
    std::string_view key = flushing_.Key(i);
    sources::Change change;
    Status st = lane.parser->Parse(
        r.has_value ? std::optional<std::string_view>(value) : std::nullopt, key, &change);
    if (st.ok() && change.kind == sources::Change::Kind::kNone) continue;
    if (st.ok()) {
      bool del = change.kind == sources::Change::Kind::kDelete;
      Batch& into = del ? lane.images : lane.rows;
      int64_t row = into.num_rows();
      st = (del ? lane.image_decoder : lane.decoder)
               ->DecodeLine(change.image, r.origin.offset, &into);
      if (st.ok() && into.num_rows() == row) st = Status::Invalid("the change has an empty row");
      if (st.ok()) {
        (del ? image_record : row_record).push_back(i);
        if (!del) lane.origins.push_back(r.origin);
        decoded.push_back({del, row, i, std::move(change)});
        continue;
      }
    }
    dead_letter(i, st);
  }

  // 2. The upserted rows onto the table; those the WHERE drops leave it (their
  //    keys are deleted); failed rows are dead letters.
  const sql::ProjectionPlan& plan = *options_.change_plan;
  const sql::ProjectionPlan& key_plan = *options_.key_plan;
  int64_t n = lane.rows.num_rows();
  std::vector<sql::RejectedRow> rejected;
  std::vector<int64_t> kept;
  Batch out;
  if (plan.filter) {
    ASSIGN_OR_RETURN(out, sql::ApplyPlanKeepingSource(plan, lane.rows, &rejected, &kept));
  } else {
    ASSIGN_OR_RETURN(out, sql::ApplyPlan(plan, std::move(lane.rows), &rejected, &kept));
  }
  std::vector<int64_t> written_of(n, -1), dropped_key_of(n, -1);
  std::vector<uint8_t> failed(n, 0);
  for (size_t j = 0; j < kept.size(); ++j) written_of[kept[j]] = static_cast<int64_t>(j);
  for (const sql::RejectedRow& r : rejected) {
    failed[r.row] = 1;
    dead_letter(row_record[r.row], Status::Invalid("{}", r.error));
  }
  Batch dropped_keys;
  if (plan.filter) {
    std::vector<uint32_t> take;
    for (int64_t r = 0; r < n; ++r) {
      if (written_of[r] < 0 && !failed[r]) take.push_back(static_cast<uint32_t>(r));
    }
    if (!take.empty()) {
      std::vector<sql::RejectedRow> no_key;
      std::vector<int64_t> with_key;
      ASSIGN_OR_RETURN(dropped_keys,
                       sql::ApplyPlan(key_plan, TakeRows(lane.rows, take), &no_key, &with_key));
      for (size_t j = 0; j < with_key.size(); ++j) {
        dropped_key_of[take[with_key[j]]] = static_cast<int64_t>(j);
      }
      for (const sql::RejectedRow& r : no_key) {
        dead_letter(row_record[take[r.row]],
                    Status::Invalid("the row leaves the table (WHERE), but its key: {}", r.error));
      }
    }
  }
  //    The deletes' keys.
  int64_t images = lane.images.num_rows();
  std::vector<sql::RejectedRow> no_key;
  std::vector<int64_t> with_key;
  ASSIGN_OR_RETURN(Batch delete_keys,
                   sql::ApplyPlan(key_plan, std::move(lane.images), &no_key, &with_key));
  std::vector<int64_t> delete_key_of(images, -1);
  for (size_t j = 0; j < with_key.size(); ++j) {
    delete_key_of[with_key[j]] = static_cast<int64_t>(j);
  }
  for (const sql::RejectedRow& r : no_key) {
    dead_letter(image_record[r.row], Status::Invalid("the delete's key: {}", r.error));
  }

  // 3. Write, then record every change's key in source order.
  RETURN_IF_ERROR_CTX(lane.writer->Write(out, &lane.placements), "writing to {}",
                      options_.target.ToString());
  lane.file_paths = lane.writer->FilePaths();
  lane.written += out.num_rows();
  std::vector<int> key_order(key_columns_.size());
  std::iota(key_order.begin(), key_order.end(), 0);
  for (Decoded& d : decoded) {
    const RowOrigin& origin = flushing_.records[d.record].origin;
    if (d.del) {
      int64_t k = delete_key_of[d.row];
      if (k >= 0) {
        RETURN_IF_ERROR(
            AddKeyChange(lane, delete_keys, key_order, k, -1, origin, std::move(d.change)));
      }
    } else if (int64_t w = written_of[d.row]; w >= 0) {
      RETURN_IF_ERROR(AddKeyChange(lane, out, key_columns_, w, w, origin, std::move(d.change)));
    } else if (int64_t k = dropped_key_of[d.row]; k >= 0) {
      RETURN_IF_ERROR(
          AddKeyChange(lane, dropped_keys, key_order, k, -1, origin, std::move(d.change)));
    }
  }
  return Status::OK();
}

}  // namespace sluice::pipeline
