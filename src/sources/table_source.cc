#include "sources/table_source.h"

#include <algorithm>
#include <charconv>
#include <thread>

#include "catalog/table.h"
#include "columnar/column_ops.h"
#include "columnar/json_writer.h"
#include "iceberg/scan.h"

namespace sluice::sources {
namespace {

using Clock = std::chrono::steady_clock;

// Changelog mode: the position of a snapshot whose changes were all
// delivered (resuming there needs no changelog of it: its parent may have
// expired since).
constexpr char kEnded[] = ":end";
// Changelog mode: the position of a snapshot being delivered whole (every row
// a +I: its parent has expired).
constexpr char kWhole[] = ":all";

}  // namespace

TableSource::TableSource(catalog::Catalog& catalog, FileIO& io, TableSourceOptions options)
    : catalog_(catalog), io_(io), options_(std::move(options)) {}

TableSource::~TableSource() = default;

Result<std::unique_ptr<TableSource>> TableSource::Open(catalog::Catalog& catalog, FileIO& io,
                                                       TableSourceOptions options) {
  std::unique_ptr<TableSource> source(new TableSource(catalog, io, std::move(options)));
  ASSIGN_OR_RETURN(auto table, catalog::Table::Load(catalog, io, source->options_.table));
  source->metadata_ = std::make_shared<const iceberg::TableMetadata>(table->metadata());
  if (source->options_.changelog) {
    for (const Field& f : source->metadata_->current_schema()->fields) {
      if (f.name == "_change") {
        return Status::Invalid(
            "table source {}: table {} has a column named _change, which a changelog record uses "
            "for the change's kind",
            source->options_.name, source->options_.table.ToString());
      }
    }
  }
  if (source->options_.bounded) source->end_ = source->metadata_->current_snapshot_id;
  return source;
}

bool TableSource::ParentExpired(int64_t snapshot_id) const {
  const iceberg::Snapshot* s = metadata_->snapshot_by_id(snapshot_id);
  return s != nullptr && s->parent_snapshot_id &&
         metadata_->snapshot_by_id(*s->parent_snapshot_id) == nullptr;
}

Result<iceberg::SnapshotChanges> TableSource::ChangesOf(int64_t snapshot_id, bool whole) {
  const iceberg::Snapshot* s = metadata_->snapshot_by_id(snapshot_id);
  if (whole) {
    // The table as of the snapshot, every row inserted.
    iceberg::SnapshotChanges out;
    out.snapshot_id = snapshot_id;
    out.operation = s == nullptr ? "" : s->operation();
    iceberg::ScanOptions so;
    so.snapshot_id = snapshot_id;
    ASSIGN_OR_RETURN(auto scan, iceberg::TableScan::Make(io_, metadata_, so));
    Batch batch;
    bool first = true;
    while (true) {
      ASSIGN_OR_RETURN(bool more, scan->Next(&batch));
      if (!more) break;
      if (first) {
        out.rows = Batch::Make(batch.schema);
        first = false;
      }
      AppendBatch(batch, &out.rows);
    }
    out.kinds.assign(static_cast<size_t>(out.rows.num_rows()), iceberg::ChangeKind::kInsert);
    return out;
  }
  iceberg::ChangelogOptions o;
  o.to_snapshot = snapshot_id;
  if (s != nullptr && s->parent_snapshot_id && metadata_->snapshot_by_id(*s->parent_snapshot_id)) {
    o.from_snapshot = s->parent_snapshot_id;
  }
  iceberg::SnapshotChanges out;
  RETURN_IF_ERROR_CTX(iceberg::ReadChangelog(io_, metadata_, o,
                                             [&](iceberg::SnapshotChanges&& c) {
                                               out = std::move(c);
                                               return Status::OK();
                                             }),
                      "table source {}", options_.name);
  return out;
}

Result<int64_t> TableSource::AddedRows(int64_t snapshot_id) {
  const iceberg::Snapshot* s = metadata_->snapshot_by_id(snapshot_id);
  if (s == nullptr) return int64_t{0};
  if (options_.changelog) {
    ASSIGN_OR_RETURN(iceberg::SnapshotChanges c, ChangesOf(snapshot_id));
    return static_cast<int64_t>(c.kinds.size());
  }
  if (auto it = s->summary.find("added-records"); it != s->summary.end()) {
    int64_t n = 0;
    auto [end, ec] = std::from_chars(it->second.data(), it->second.data() + it->second.size(), n);
    if (ec == std::errc() && end == it->second.data() + it->second.size()) return n;
  }
  iceberg::ScanOptions o;
  o.snapshot_id = snapshot_id;
  o.only_added = true;
  ASSIGN_OR_RETURN(auto scan, iceberg::TableScan::Make(io_, metadata_, o));
  RETURN_IF_ERROR(scan->Plan());
  int64_t n = 0;
  for (const auto& t : scan->tasks()) n += t.file.record_count;
  return n;
}

Status TableSource::Refresh() {
  last_refresh_ = Clock::now();
  if (!options_.bounded) {
    ASSIGN_OR_RETURN(auto table, catalog::Table::Load(catalog_, io_, options_.table));
    metadata_ = std::make_shared<const iceberg::TableMetadata>(table->metadata());
  }
  std::optional<int64_t> head = options_.bounded ? end_ : metadata_->current_snapshot_id;
  pending_.clear();
  if (!head) return Status::OK();
  bool found = snapshot_ == 0;
  for (const iceberg::Snapshot* s : metadata_->Ancestry(*head)) {
    if (s->snapshot_id == snapshot_) {
      found = true;
      break;
    }
    pending_.push_back(s->snapshot_id);
  }
  if (!found) {
    return Status::OutOfRange(
        "table source {}: snapshot {} (where this pipeline stopped reading) is no longer in the "
        "history of {}'s main branch (expired or rolled back): it cannot be resumed exactly-once",
        options_.name, snapshot_, options_.table.ToString());
  }
  std::reverse(pending_.begin(), pending_.end());
  return Status::OK();
}

Status TableSource::Seek(const Positions& positions) {
  scan_.reset();
  changes_.reset();
  skip_ = 0;
  if (positions.size() > 1) {
    return Status::Invalid("table source {}: {} positions, expected one snapshot", options_.name,
                           positions.size());
  }
  if (positions.empty()) {
    snapshot_ = 0;
    delivered_ = 0;
    snapshot_done_ = true;
    if (options_.start_latest && metadata_->current_snapshot_id) {
      snapshot_ = *metadata_->current_snapshot_id;
      // (changelog mode: the snapshot is done, its changes never computed)
      if (!options_.changelog) {
        ASSIGN_OR_RETURN(delivered_, AddedRows(snapshot_));
      }
    }
    return Refresh();
  }
  const auto& [name, offset] = *positions.begin();
  // Changelog mode: "<id>:end" is a snapshot whose changes were all
  // delivered, "<id>:all" one being delivered whole.
  std::string_view id_text = name;
  const bool ended = options_.changelog && id_text.ends_with(kEnded);
  if (ended) id_text.remove_suffix(std::string_view(kEnded).size());
  whole_ = options_.changelog && id_text.ends_with(kWhole);
  if (whole_) id_text.remove_suffix(std::string_view(kWhole).size());
  int64_t id = 0;
  auto [end, ec] = std::from_chars(id_text.data(), id_text.data() + id_text.size(), id);
  if (ec != std::errc() || end != id_text.data() + id_text.size() || offset < 0) {
    return Status::Invalid("table source {}: position '{}' = {} is not a snapshot id and a row",
                           options_.name, name, offset);
  }
  if (metadata_->snapshot_by_id(id) == nullptr) {
    return Status::OutOfRange(
        "table source {}: snapshot {} of table {} (where this pipeline stopped reading) has "
        "expired: it cannot be resumed exactly-once",
        options_.name, id, options_.table.ToString());
  }
  if (options_.changelog && !ended && !whole_ && ParentExpired(id)) {
    return Status::OutOfRange(
        "table source {}: the parent of snapshot {} of table {} has expired while this pipeline "
        "read the snapshot's changes: they cannot be computed again, so it cannot resume "
        "exactly-once (keep snapshots longer than a reader may lag)",
        options_.name, id, options_.table.ToString());
  }
  snapshot_ = id;
  delivered_ = offset;
  if (ended) {
    snapshot_done_ = true;
  } else if (options_.changelog) {
    snapshot_done_ = false;  // StartSnapshot below computes its changes (once)
  } else {
    ASSIGN_OR_RETURN(int64_t rows, AddedRows(id));
    snapshot_done_ = offset >= rows;
  }
  RETURN_IF_ERROR(Refresh());
  if (!snapshot_done_) {
    RETURN_IF_ERROR(StartSnapshot(id, offset));
    delivered_ = offset;
  }
  return Status::OK();
}

Status TableSource::StartSnapshot(int64_t snapshot_id, int64_t skip) {
  const iceberg::Snapshot* s = metadata_->snapshot_by_id(snapshot_id);
  snapshot_ = snapshot_id;
  delivered_ = 0;
  snapshot_done_ = true;
  std::string op = s == nullptr ? "" : s->operation();
  if (options_.changelog) {
    ASSIGN_OR_RETURN(changes_, ChangesOf(snapshot_id, whole_));
    skip_ = skip;
    snapshot_done_ = false;
    return Status::OK();
  }
  if (op == "overwrite") {
    return Status::NotImplemented(
        "table source {}: snapshot {} of {} overwrites rows; a table source reads appends only, "
        "unless WITH (mode = 'changelog')",
        options_.name, snapshot_id, options_.table.ToString());
  }
  if (op != "append" && !op.empty()) return Status::OK();  // replace, delete: no new rows
  iceberg::ScanOptions o;
  o.snapshot_id = snapshot_id;
  o.only_added = true;
  ASSIGN_OR_RETURN(scan_, iceberg::TableScan::Make(io_, metadata_, o));
  skip_ = skip;
  snapshot_done_ = false;
  return Status::OK();
}

Result<int64_t> TableSource::Poll(int64_t max_bytes, int timeout_ms,
                                  const std::function<void(const SourceRecord&)>& sink) {
  auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  int64_t delivered = 0, bytes = 0;
  std::string partition;
  while (bytes < max_bytes || bytes == 0) {
    if (changes_) {
      RETURN_IF_ERROR(DeliverChanges(max_bytes, sink, &delivered, &bytes));
      continue;
    }
    if (!scan_) {
      if (pending_.empty()) {
        if (options_.bounded) break;
        if (Clock::now() - last_refresh_ >=
            std::chrono::milliseconds(options_.refresh_interval_ms)) {
          RETURN_IF_ERROR(Refresh());
        }
        if (!pending_.empty()) continue;
        if (delivered > 0 || Clock::now() >= deadline) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        continue;
      }
      int64_t next = pending_.front();
      pending_.erase(pending_.begin());
      whole_ = options_.changelog && ParentExpired(next);
      RETURN_IF_ERROR(StartSnapshot(next, 0));
      continue;
    }
    Batch batch;
    ASSIGN_OR_RETURN(bool more, scan_->Next(&batch));
    if (!more) {
      scan_.reset();
      snapshot_done_ = true;
      continue;
    }
    const iceberg::Snapshot* s = metadata_->snapshot_by_id(snapshot_);
    int64_t ts = s == nullptr ? 0 : s->timestamp_ms;
    partition = std::to_string(snapshot_);
    for (int64_t r = 0; r < batch.num_rows(); ++r) {
      if (skip_ > 0) {
        --skip_;
        continue;
      }
      row_.clear();
      AppendJsonRow(batch, r, &row_);
      sink(SourceRecord{partition, delivered_, ts, row_});
      ++delivered_;
      ++delivered;
      bytes += static_cast<int64_t>(row_.size());
    }
  }
  return delivered;
}

Status TableSource::DeliverChanges(int64_t max_bytes,
                                   const std::function<void(const SourceRecord&)>& sink,
                                   int64_t* delivered, int64_t* bytes) {
  const iceberg::Snapshot* s = metadata_->snapshot_by_id(snapshot_);
  int64_t ts = s == nullptr ? 0 : s->timestamp_ms;
  std::string partition = std::to_string(snapshot_);
  const iceberg::SnapshotChanges& c = *changes_;
  int64_t n = static_cast<int64_t>(c.kinds.size());
  // A resume skips the changes delivered before (delivered_ counts them).
  int64_t i = skip_;
  skip_ = 0;
  delivered_ = i;
  for (; i < n && (*bytes < max_bytes || *bytes == 0); ++i) {
    row_ = fmt::format(R"({{"_change":"{}")", iceberg::ChangeKindText(c.kinds[i]));
    std::string fields;
    AppendJsonRow(c.rows, i, &fields);
    if (fields.size() > 2)
      row_ += "," + fields.substr(1);
    else
      row_ += "}";
    sink(SourceRecord{partition, delivered_, ts, row_});
    ++delivered_;
    ++*delivered;
    *bytes += static_cast<int64_t>(row_.size());
  }
  if (i >= n) {
    changes_.reset();
    snapshot_done_ = true;
  } else {
    skip_ = i;  // the next Poll goes on from here
  }
  return Status::OK();
}

Positions TableSource::CurrentPositions() const {
  if (snapshot_ == 0) return {};
  if (options_.changelog && snapshot_done_) {
    return {{std::to_string(snapshot_) + kEnded, delivered_}};
  }
  if (options_.changelog && whole_) return {{std::to_string(snapshot_) + kWhole, delivered_}};
  return {{std::to_string(snapshot_), delivered_}};
}

std::optional<Source::TableHold> TableSource::Hold() const {
  if (snapshot_ == 0) return std::nullopt;
  return TableHold{options_.table.ToString(), snapshot_};
}

Positions TableSource::Lag() const {
  int64_t pending = 0;
  for (int64_t id : pending_) {
    const iceberg::Snapshot* s = metadata_->snapshot_by_id(id);
    if (s == nullptr) continue;
    auto it = s->summary.find("added-records");
    if (it != s->summary.end()) pending += std::atoll(it->second.c_str());
  }
  return {{snapshot_ == 0 ? std::string("none") : std::to_string(snapshot_), pending}};
}

bool TableSource::Exhausted() const {
  return options_.bounded && !scan_ && !changes_ && pending_.empty();
}

}  // namespace sluice::sources
