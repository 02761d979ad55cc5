#include "iceberg/scan.h"

#include <algorithm>
#include <set>
#include <unordered_set>

#include "columnar/column_ops.h"
#include "columnar/json_reader.h"
#include "columnar/single_value.h"
#include "common/endian.h"
#include "iceberg/deletion_vector.h"
#include "iceberg/scan_internal.h"
#include "iceberg/schema_json.h"
#include "io/remap_file_io.h"
#include "parquet/reader.h"

namespace sluice::iceberg {

namespace {

bool SamePartition(const DataFile& a, const DataFile& b) {
  return a.spec_id == b.spec_id && a.partition == b.partition;
}

bool FieldContains(const Field& f, int32_t id) {
  if (f.id == id) return true;
  for (const Field& c : f.type->fields()) {
    if (FieldContains(c, id)) return true;
  }
  return false;
}

std::string KeyOf(const std::vector<const Column*>& cols, int64_t row) {
  std::string key;
  for (const Column* c : cols) {
    if (c == nullptr || c->IsNull(row)) {
      key.push_back('\0');
      continue;
    }
    std::string v;
    AppendSingleValue(*c, row, &v);
    key.push_back('\1');
    AppendLE<uint32_t>(&key, static_cast<uint32_t>(v.size()));
    key += v;
  }
  return key;
}

}  // namespace

std::string RemapLocation(const std::string& location,
                          const std::vector<std::pair<std::string, std::string>>& remaps) {
  return ApplyRemap(location, remaps);
}

struct TableScan::Impl {
  FileIO* io = nullptr;
  std::shared_ptr<const TableMetadata> table;
  ScanOptions options;
  const Snapshot* snapshot = nullptr;
  Schema table_schema;                        // the snapshot's schema
  std::shared_ptr<const Schema> out_schema;   // projected
  std::shared_ptr<const Schema> read_schema;  // projected + filter columns
  ExprPtr filter;                             // bound
  std::vector<int32_t> read_ids;
  std::vector<parquet::MappedField> name_mapping;   // schema.name-mapping.default
  std::map<int32_t, std::string> initial_defaults;  // single-value bytes, top-level fields
  ScanStats stats;

  bool planned = false;
  Status plan_status;  // of the one planning (a failed plan fails every later call)
  std::vector<FileScanTask> tasks;
  size_t next_task = 0;
  // The file being read.
  std::unique_ptr<parquet::ParquetReader> reader;
  int next_row_group = 0;
  int64_t row_group_base = 0;
  const FileScanTask* task = nullptr;
  PositionSet deleted_positions;  // of the current file
  // Position delete files read, kept while tasks not yet opened use them.
  PositionDeleteCache delete_files;
  std::vector<std::vector<int32_t>> eq_ids;  // per equality delete set
  std::vector<std::unordered_set<std::string>> eq_keys;

  std::string Path(const std::string& p) const { return RemapLocation(p, options.remaps); }

  // Plans the snapshot's tasks in steps: the manifests the scan reads (and
  // each one's spec), whether a live entry of them is wanted, and the delete
  // files that apply to a data file.
  Status Plan();
  Result<std::vector<ManifestFile>> WantedManifests(std::vector<ManifestFile> manifests,
                                                    std::vector<const PartitionSpec*>* specs);
  bool Wanted(const ManifestEntry& e, const PartitionSpec& spec);
  // The delete files of `candidates` (internal::DeleteFileIndex's for the
  // file) that apply to `file`.
  Status MatchDeletes(const DataFile& file, const std::vector<const ManifestEntry*>& candidates,
                      FileScanTask* t) const;
  Status OpenTask(const FileScanTask& t);
  // deleted_positions of `t`'s file: its DV, or its position delete files
  // (from delete_files when another task read them).
  Status ReadTaskDeletes(const FileScanTask& t);
  Result<bool> ReadNext(Batch* out);
  // Appends the _row_id and _last_updated_sequence_number of the `selected`
  // rows of the current task's row group starting at position `base`, given
  // the file's stored columns of them (null when it has none).
  void AppendRowLineage(const Column* stored_id, const Column* stored_seq, int64_t base,
                        const std::vector<uint32_t>& selected, Batch* out) const;
};

Status TableScan::Impl::Plan() {
  planned = true;
  if (snapshot == nullptr) return Status::OK();
  ASSIGN_OR_RETURN(auto manifests,
                   ReadManifestList(*io, Path(snapshot->manifest_list), table->format_version));
  std::vector<const PartitionSpec*> specs;
  ASSIGN_OR_RETURN(std::vector<ManifestFile> wanted, WantedManifests(std::move(manifests), &specs));
  ManifestReadOptions read;
  read.column_stats = options.with_column_stats || filter != nullptr;
  read.live_only = true;
  ASSIGN_OR_RETURN(
      std::vector<std::vector<ManifestEntry>> entries,
      ReadManifests(*io, wanted, table->format_version, read, options.planning_threads));
  // (The entries stay where they were read; a task takes its data file.)
  std::vector<ManifestEntry*> data;
  std::vector<const ManifestEntry*> deletes;
  for (size_t mi = 0; mi < wanted.size(); ++mi) {
    for (ManifestEntry& e : entries[mi]) {
      if (!Wanted(e, *specs[mi])) continue;
      if (e.file.content == FileContent::kData) {
        data.push_back(&e);
      } else {
        deletes.push_back(&e);
      }
    }
  }
  const internal::DeleteFileIndex index(std::move(deletes), [&](const ManifestEntry& d) {
    const PartitionSpec* spec = table->spec_by_id(d.file.spec_id);
    return spec != nullptr && spec->unpartitioned();
  });
  tasks.reserve(data.size());
  for (ManifestEntry* e : data) {
    FileScanTask& t = tasks.emplace_back();  // (built in place)
    t.data_sequence_number = *e->sequence_number;
    RETURN_IF_ERROR(MatchDeletes(e->file, index.CandidatesFor(e->file), &t));
    t.file = std::move(e->file);
    delete_files.Use(t);
  }
  stats.files_scanned = static_cast<int>(tasks.size());
  return Status::OK();
}

Result<std::vector<ManifestFile>> TableScan::Impl::WantedManifests(
    std::vector<ManifestFile> manifests, std::vector<const PartitionSpec*>* specs) {
  std::vector<ManifestFile> wanted;
  for (ManifestFile& m : manifests) {
    ++stats.manifests_total;
    const PartitionSpec* spec = table->spec_by_id(m.partition_spec_id);
    if (spec == nullptr) {
      return Status::Corruption("manifest {} uses partition spec {}, which the table lacks",
                                m.manifest_path, m.partition_spec_id);
    }
    if (filter && m.content == ManifestContent::kData &&
        !ManifestMightMatch(*filter, *spec, table_schema, m.partitions)) {
      continue;
    }
    if (options.only_added &&
        (m.content != ManifestContent::kData || m.added_snapshot_id != snapshot->snapshot_id)) {
      continue;
    }
    ++stats.manifests_scanned;
    m.manifest_path = Path(m.manifest_path);
    wanted.push_back(std::move(m));
    specs->push_back(spec);
  }
  return wanted;
}

bool TableScan::Impl::Wanted(const ManifestEntry& e, const PartitionSpec& spec) {
  if (e.status == EntryStatus::kDeleted) return false;
  if (options.only_added &&
      (e.status != EntryStatus::kAdded || e.snapshot_id != snapshot->snapshot_id)) {
    return false;
  }
  if (e.file.content != FileContent::kData) return true;
  ++stats.files_total;
  if (!options.only_files.empty() && !options.only_files.count(e.file.file_path)) return false;
  return !filter || (PartitionMightMatch(*filter, spec, table_schema, e.file.partition) &&
                     FileMightMatch(*filter, e.file));
}

Status TableScan::Impl::MatchDeletes(const DataFile& file,
                                     const std::vector<const ManifestEntry*>& candidates,
                                     FileScanTask* t) const {
  // (Candidates by path, partition or a global spec: each is checked whole
  // here still, so that what applies does not rest on the index.)
  for (const ManifestEntry* d : candidates) {
    const DataFile& df = d->file;
    if (df.content == FileContent::kPositionDeletes) {
      if (*d->sequence_number < t->data_sequence_number) continue;
      if (df.content_offset) {  // a deletion vector
        if (df.referenced_data_file != file.file_path) continue;
        if (t->deletion_vector) {
          return Status::Corruption("data file {} has two deletion vectors", file.file_path);
        }
        t->deletion_vector = std::make_shared<const DataFile>(df);
        continue;
      }
      if (df.referenced_data_file) {
        if (*df.referenced_data_file != file.file_path) continue;
      } else if (!SamePartition(df, file)) {
        continue;
      }
      t->position_deletes.push_back(df);
    } else {
      if (*d->sequence_number <= t->data_sequence_number) continue;
      const PartitionSpec* ds = table->spec_by_id(df.spec_id);
      bool global = ds != nullptr && ds->unpartitioned();
      if (!global && !SamePartition(df, file)) continue;
      t->equality_deletes.push_back(df);
    }
  }
  return Status::OK();
}

Status TableScan::Impl::ReadTaskDeletes(const FileScanTask& t) {
  ASSIGN_OR_RETURN(deleted_positions, ReadDeletedPositions(*io, t, options.remaps, &delete_files));
  return Status::OK();
}

Status TableScan::Impl::OpenTask(const FileScanTask& t) {
  task = &t;
  deleted_positions = {};
  eq_ids.clear();
  eq_keys.clear();
  std::string data_path = t.file.file_path;
  RETURN_IF_ERROR(ReadTaskDeletes(t));
  for (const DataFile& d : t.equality_deletes) {
    ASSIGN_OR_RETURN(auto in, io->OpenInput(Path(d.file_path)));
    parquet::ReaderOptions ro;
    ro.field_ids = d.equality_ids;
    ASSIGN_OR_RETURN(auto r, parquet::ParquetReader::Open(std::move(in), ro));
    eq_ids.push_back(d.equality_ids);
    eq_keys.emplace_back();
    Batch b;
    while (true) {
      ASSIGN_OR_RETURN(bool more, r->Next(&b));
      if (!more) break;
      std::vector<const Column*> cols;
      for (int32_t id : d.equality_ids) cols.push_back(FindColumnById(b, id));
      for (int64_t i = 0; i < b.num_rows(); ++i) eq_keys.back().insert(KeyOf(cols, i));
    }
  }
  ASSIGN_OR_RETURN(auto in, io->OpenInput(Path(data_path)));
  parquet::ReaderOptions ro;
  ro.field_ids = read_ids;
  ro.name_mapping = name_mapping;
  for (const auto& ids : eq_ids) ro.field_ids.insert(ro.field_ids.end(), ids.begin(), ids.end());
  if (options.with_row_lineage) {  // (stored by a rewrite; most files lack them)
    ro.field_ids.push_back(kRowIdFieldId);
    ro.field_ids.push_back(kLastUpdatedSequenceNumberFieldId);
  }
  ASSIGN_OR_RETURN(reader, parquet::ParquetReader::Open(std::move(in), ro));
  next_row_group = 0;
  row_group_base = 0;
  return Status::OK();
}

void TableScan::Impl::AppendRowLineage(const Column* stored_id, const Column* stored_seq,
                                       int64_t base, const std::vector<uint32_t>& selected,
                                       Batch* out) const {
  Column id(DataType::Long()), seq(DataType::Long());
  id.Reserve(static_cast<int64_t>(selected.size()));
  seq.Reserve(static_cast<int64_t>(selected.size()));
  for (uint32_t r : selected) {
    if (stored_id != nullptr && stored_id->IsValid(r)) {
      id.Append<int64_t>(stored_id->Value<int64_t>(r));
    } else if (task->file.first_row_id) {
      id.Append<int64_t>(*task->file.first_row_id + base + r);
    } else {
      id.AppendNull();
    }
    seq.Append<int64_t>(stored_seq != nullptr && stored_seq->IsValid(r)
                            ? stored_seq->Value<int64_t>(r)
                            : task->data_sequence_number);
  }
  out->columns.push_back(std::move(id));
  out->columns.push_back(std::move(seq));
}

Result<bool> TableScan::Impl::ReadNext(Batch* out) {
  while (true) {
    if (options.limit >= 0 && stats.rows_returned >= options.limit) return false;
    if (!reader) {
      while (next_task < tasks.size() && options.read_task &&
             !options.read_task(tasks[next_task])) {
        delete_files.Skip(tasks[next_task++]);
      }
      if (next_task >= tasks.size()) return false;
      RETURN_IF_ERROR_CTX(OpenTask(tasks[next_task++]), "scan of {}",
                          tasks[next_task - 1].file.file_path);
    }
    if (next_row_group >= reader->num_row_groups()) {
      reader.reset();
      continue;
    }
    const int rg = next_row_group++;
    const int64_t base = row_group_base;
    row_group_base += reader->metadata().row_groups[rg].num_rows;
    Batch file_batch;
    RETURN_IF_ERROR_CTX(reader->ReadRowGroup(rg, &file_batch), "scan of {}", task->file.file_path);
    // The footer's row count: a projection of columns the file lacks reads no
    // column at all, yet the rows are there.
    const int64_t n = reader->metadata().row_groups[rg].num_rows;
    if (!file_batch.columns.empty() && file_batch.num_rows() != n) {
      return Status::Corruption("scan of {}: row group {} has {} rows, its footer says {}",
                                task->file.file_path, rg, file_batch.num_rows(), n);
    }
    stats.rows_read += n;

    // Deletes first: equality deletes compare the file's columns, which the
    // table-schema columns below are moved out of.
    std::vector<bool> keep(static_cast<size_t>(n), true);
    for (auto it = std::lower_bound(deleted_positions.begin(), deleted_positions.end(), base);
         it != deleted_positions.end() && *it < base + n; ++it) {
      keep[static_cast<size_t>(*it - base)] = false;
    }
    for (size_t s = 0; s < eq_ids.size(); ++s) {
      std::vector<const Column*> cols;
      for (int32_t id : eq_ids[s]) cols.push_back(FindColumnById(file_batch, id));
      for (int64_t i = 0; i < n; ++i) {
        if (keep[i] && eq_keys[s].count(KeyOf(cols, i))) keep[i] = false;
      }
    }

    // Table-schema columns (projection + filter columns).
    Batch rows;
    rows.schema = read_schema;
    const PartitionSpec* spec = table->spec_by_id(task->file.spec_id);
    // Every file column is found before any is moved out (finding one looks
    // inside the struct columns before it); a column asked for twice is
    // copied but the last time.
    std::vector<Column*> file_cols;
    for (const Field& f : read_schema->fields)
      file_cols.push_back(FindColumnById(file_batch, f.id));
    // (the lineage a file stores, found before any column is moved out too)
    const Column* stored_id =
        options.with_row_lineage ? FindColumnById(file_batch, kRowIdFieldId) : nullptr;
    const Column* stored_seq = options.with_row_lineage
                                   ? FindColumnById(file_batch, kLastUpdatedSequenceNumberFieldId)
                                   : nullptr;
    for (size_t j = 0; j < read_schema->fields.size(); ++j) {
      const Field& f = read_schema->fields[j];
      Column* fc = file_cols[j];
      const bool take = std::find(file_cols.begin() + static_cast<std::ptrdiff_t>(j) + 1,
                                  file_cols.end(), fc) == file_cols.end();
      std::optional<std::string> constant;
      if (auto it = initial_defaults.find(f.id); it != initial_defaults.end())
        constant = it->second;
      if (spec != nullptr) {
        for (size_t i = 0; i < spec->fields.size() && i < task->file.partition.size(); ++i) {
          if (spec->fields[i].source_id == f.id &&
              spec->fields[i].transform.kind == Transform::Kind::kIdentity) {
            constant = task->file.partition[i];
          }
        }
      }
      auto c = Reconcile(fc, f, n, constant, take);
      if (!c.ok()) return c.status().WithContextF("scan of {}", task->file.file_path);
      rows.columns.push_back(std::move(*c));
    }
    int64_t kept_before_filter = 0;
    for (bool k : keep) kept_before_filter += k;
    stats.rows_deleted += n - kept_before_filter;
    if (filter) {
      ASSIGN_OR_RETURN(auto match, EvaluateRows(*filter, rows));
      for (size_t i = 0; i < keep.size(); ++i) keep[i] = keep[i] && match[i];
    }
    std::vector<uint32_t> selected;
    for (size_t i = 0; i < keep.size(); ++i) {
      if (keep[i]) selected.push_back(static_cast<uint32_t>(i));
    }
    if (options.limit >= 0) {
      int64_t room = options.limit - stats.rows_returned;
      if (static_cast<int64_t>(selected.size()) > room) selected.resize(static_cast<size_t>(room));
    }
    if (selected.empty()) continue;
    out->schema = out_schema;
    out->columns.clear();
    bool all = selected.size() == static_cast<size_t>(n);
    const size_t projected = out_schema->fields.size() - (options.with_positions ? 2 : 0) -
                             (options.with_pos && !options.with_positions ? 1 : 0) -
                             (options.with_row_lineage ? 2 : 0);
    for (size_t i = 0; i < projected; ++i) {
      Column& c = rows.columns[i];  // the projection is the prefix of read_schema
      if (!all) KeepRows(&c, selected);
      out->columns.push_back(std::move(c));
    }
    if (options.with_positions) {
      Column file(DataType::String()), pos(DataType::Long());
      for (uint32_t r : selected) {
        file.AppendBytes(task->file.file_path);
        pos.Append<int64_t>(base + r);
      }
      out->columns.push_back(std::move(file));
      out->columns.push_back(std::move(pos));
    } else if (options.with_pos) {
      Column pos(DataType::Long());
      pos.Reserve(static_cast<int64_t>(selected.size()));
      for (uint32_t r : selected) pos.Append<int64_t>(base + r);
      out->columns.push_back(std::move(pos));
    }
    if (options.with_row_lineage) AppendRowLineage(stored_id, stored_seq, base, selected, out);
    stats.rows_returned += static_cast<int64_t>(selected.size());
    return true;
  }
}

TableScan::TableScan(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
TableScan::~TableScan() = default;

Result<std::unique_ptr<TableScan>> TableScan::Make(FileIO& io,
                                                   std::shared_ptr<const TableMetadata> table,
                                                   ScanOptions options) {
  auto impl = std::make_unique<Impl>();
  impl->io = &io;
  impl->options = std::move(options);
  const TableMetadata& md = *table;
  const ScanOptions& o = impl->options;
  if (o.snapshot_id) {
    impl->snapshot = md.snapshot_by_id(*o.snapshot_id);
    if (impl->snapshot == nullptr) return Status::NotFound("no snapshot {}", *o.snapshot_id);
  } else if (o.as_of_ms) {
    std::optional<int64_t> id;
    for (const auto& e : md.snapshot_log) {
      if (e.timestamp_ms <= *o.as_of_ms) id = e.snapshot_id;
    }
    if (!id && !md.snapshot_log.empty()) {
      return Status::NotFound(
          "no snapshot was current at {} ms: the table's history starts at {} ms (earlier "
          "snapshots never existed or have expired)",
          *o.as_of_ms, md.snapshot_log.front().timestamp_ms);
    }
    if (!id) return Status::NotFound("no snapshot was current at {} ms", *o.as_of_ms);
    impl->snapshot = md.snapshot_by_id(*id);
    if (impl->snapshot == nullptr) {
      return Status::NotFound("snapshot {} (current at that time) has expired", *id);
    }
  } else {
    impl->snapshot = md.current_snapshot();
  }
  const Schema* schema = md.current_schema();
  if ((o.snapshot_id || o.as_of_ms) && impl->snapshot && impl->snapshot->schema_id) {
    if (const Schema* s = md.schema_by_id(*impl->snapshot->schema_id)) schema = s;
  }
  impl->table_schema = *schema;
  for (const auto& [id, json] : schema->initial_defaults) {
    const Field* f = nullptr;
    for (const Field& top : schema->fields) {
      if (top.id == id) f = &top;
    }
    if (f == nullptr || f->type->is_nested()) continue;  // nested defaults: not yet
    auto v = DefaultValue(*f, json);
    if (!v.ok()) return v.status().WithContextF("initial-default of column {}", f->name);
    impl->initial_defaults[id] = std::move(*v);
  }
  if (auto it = md.properties.find("schema.name-mapping.default"); it != md.properties.end()) {
    auto mapping = NameMappingFromJson(it->second);
    if (!mapping.ok())
      return mapping.status().WithContext("table property schema.name-mapping.default");
    impl->name_mapping = std::move(*mapping);
  }

  auto out = std::make_shared<Schema>();
  if (o.columns.empty()) {
    out->fields = schema->fields;
  } else {
    for (const auto& name : o.columns) {
      const Field* f = schema->FindByName(name);
      if (f == nullptr) return Status::Invalid("no column named '{}'", name);
      out->fields.push_back(*f);
    }
  }
  auto read = std::make_shared<Schema>(*out);
  if (!o.filter.empty()) {
    ASSIGN_OR_RETURN(ExprPtr parsed, ParseFilter(o.filter));
    ASSIGN_OR_RETURN(impl->filter, Bind(parsed, *schema));
    std::vector<int32_t> ids;
    ReferencedFieldIds(*impl->filter, &ids);
    for (int32_t id : ids) {
      // Add the top-level field holding `id` if the projection lacks it.
      for (const Field& f : schema->fields) {
        if (!FieldContains(f, id)) continue;
        bool present = false;
        for (const Field& r : read->fields) present |= r.id == f.id;
        if (!present) read->fields.push_back(f);
      }
    }
  }
  for (const Field& f : read->fields) impl->read_ids.push_back(f.id);
  if (o.with_positions) {
    out->fields.push_back(Field{kFilePathFieldId, "_file", DataType::String(), true, ""});
    out->fields.push_back(Field{kPosFieldId, "_pos", DataType::Long(), true, ""});
  } else if (o.with_pos) {
    out->fields.push_back(Field{kPosFieldId, "_pos", DataType::Long(), true, ""});
  }
  if (o.with_row_lineage) {
    out->fields.push_back(Field{kRowIdFieldId, "_row_id", DataType::Long(), false, ""});
    out->fields.push_back(Field{kLastUpdatedSequenceNumberFieldId, "_last_updated_sequence_number",
                                DataType::Long(), false, ""});
  }
  impl->out_schema = out;
  impl->read_schema = read;
  impl->table = std::move(table);
  return std::unique_ptr<TableScan>(new TableScan(std::move(impl)));
}

const std::shared_ptr<const Schema>& TableScan::schema() const { return impl_->out_schema; }
const std::string& TableScan::current_file() const {
  static const std::string kNone;
  return impl_->task != nullptr ? impl_->task->file.file_path : kNone;
}

std::optional<int64_t> TableScan::snapshot_id() const {
  if (impl_->snapshot == nullptr) return std::nullopt;
  return impl_->snapshot->snapshot_id;
}

Status TableScan::Plan() {
  if (!impl_->planned) {
    impl_->plan_status = impl_->Plan();
    if (!impl_->plan_status.ok()) impl_->tasks.clear();
  }
  return impl_->plan_status;
}

const std::vector<FileScanTask>& TableScan::tasks() const { return impl_->tasks; }

Result<bool> TableScan::Next(Batch* out) {
  RETURN_IF_ERROR(Plan());
  return impl_->ReadNext(out);
}

const ScanStats& TableScan::stats() const { return impl_->stats; }

}  // namespace sluice::iceberg
