#include "maintenance/compact.h"

#include <algorithm>
#include <limits>
#include <map>
#include <set>

#include "columnar/column_ops.h"
#include "common/kill_point.h"
#include "iceberg/data_writer.h"
#include "iceberg/scan.h"
#include "maintenance/compact_carry.h"
#include "maintenance/compact_pages.h"
#include "maintenance/files.h"
#include "maintenance/policy.h"

namespace sluice::maintenance {

using internal::CarryNewDeletes;
using internal::InputFact;
using internal::InputFacts;
using internal::KeepsReadSequence;
using internal::PagesCopyable;
using internal::RecordOrigin;
using internal::Run;
using internal::Staged;
using internal::WriteCopyingPages;

namespace {

struct Group {
  int32_t spec_id = 0;
  iceberg::PartitionValues partition;
  // The small files, and the other files with deletes.
  std::vector<const iceberg::FileScanTask*> small, with_deletes;
  // The files (small or not) with the delete ratio of their rows deleted.
  std::vector<const iceberg::FileScanTask*> mostly_deleted;
};

bool HasDeletes(const iceberg::FileScanTask& t) {
  return t.deletion_vector || !t.position_deletes.empty() || !t.equality_deletes.empty();
}

// The input file's index a compaction gives rows while it sorts them (not a
// column of any file).
constexpr int32_t kInputIndexFieldId = -1;

// Inserts, as `rows` column n (before the scan's _pos), the index of their
// input `file` in staged->input_index (an int a row: a sort run mixes
// inputs); `schema` is the scan's with that column.
void IndexInput(Batch* rows, size_t n, const std::string& file,
                const std::shared_ptr<const Schema>& schema, Staged* staged) {
  auto [it, fresh] =
      staged->input_index.try_emplace(file, static_cast<int32_t>(staged->input_index.size()));
  if (fresh) staged->origins.emplace_back();
  Column index(DataType::Int());
  index.Reserve(rows->num_rows());
  for (int64_t r = 0; r < rows->num_rows(); ++r) index.Append<int32_t>(it->second);
  rows->columns.insert(rows->columns.begin() + static_cast<std::ptrdiff_t>(n), std::move(index));
  rows->schema = schema;
}

// Writes `rows` (the table's n columns, the input's index and _pos, then on
// a v3 table the row lineage's) with `w`, as rows of `schema` (the table's
// columns and the lineage's), and records where each input row went
// (`first_output`: w's first file's index in staged->output_paths).
Status WriteTracked(iceberg::DataWriter& w, const std::shared_ptr<const Schema>& schema, size_t n,
                    int32_t first_output, Batch rows, Staged* staged) {
  const Column input = std::move(rows.columns[n]);
  const Column pos = std::move(rows.columns[n + 1]);
  rows.columns.erase(rows.columns.begin() + static_cast<std::ptrdiff_t>(n),
                     rows.columns.begin() + static_cast<std::ptrdiff_t>(n + 2));
  rows.schema = schema;
  std::vector<iceberg::RowPlacement> placed;
  RETURN_IF_ERROR(w.Write(rows, &placed));
  for (int64_t r = 0; r < rows.num_rows(); ++r) {
    const iceberg::RowPlacement& p = placed[static_cast<size_t>(r)];
    RecordOrigin(&staged->origins[static_cast<size_t>(input.Value<int32_t>(r))],
                 pos.Value<int64_t>(r), first_output + p.file, p.pos);
  }
  return Status::OK();
}

// The table's default sort order, or null when it has none (or no fields).
const iceberg::SortOrder* SortOrderOf(const iceberg::TableMetadata& md) {
  for (const iceberg::SortOrder& o : md.sort_orders) {
    if (o.order_id == md.default_sort_order_id && !o.fields.empty()) return &o;
  }
  return nullptr;
}

// `rows` in `order` (its key columns computed by the order's transforms).
Result<Batch> SortBatch(const Batch& rows, const iceberg::SortOrder& order) {
  std::vector<Column> derived;  // transformed keys (reserved: SortKey points into it)
  derived.reserve(order.fields.size());
  std::vector<SortKey> keys;
  for (const iceberg::SortField& f : order.fields) {
    const Column* source = FindColumnById(rows, f.source_id);
    if (source == nullptr) {
      return Status::Invalid("sort order field {} is not in the table's schema", f.source_id);
    }
    if (f.transform.kind != iceberg::Transform::Kind::kIdentity) {
      ASSIGN_OR_RETURN(Column c, f.transform.Apply(*source));
      derived.push_back(std::move(c));
      source = &derived.back();
    }
    keys.push_back({source, f.descending, f.nulls_first});
  }
  return TakeRows(rows, SortedRows(keys, rows.num_rows()));
}

// The rows of `batches`, one after the other, as one batch.
Batch Concat(const std::vector<Batch>& batches) {
  Batch out = Batch::Make(batches.front().schema);
  for (const Batch& b : batches) AppendBatch(b, &out);
  return out;
}

// Writes the rows of `files` (their deletes applied) with a new writer, in
// `order` when set (all of them read first: a sort run), else as they come;
// records where each row went (Staged::origins).
Status WriteRun(catalog::Table& table, const std::shared_ptr<const iceberg::TableMetadata>& md,
                const iceberg::DataWriterOptions& wo, const iceberg::SortOrder* order,
                const std::vector<std::string>& files, Staged* staged) {
  iceberg::ScanOptions so;
  so.only_files.insert(files.begin(), files.end());
  so.with_pos = true;
  // Format v3: each row keeps its _row_id and _last_updated_sequence_number,
  // stored in the new files (the spec's rule for rows moved between files).
  so.with_row_lineage = md->format_version >= 3;
  iceberg::DataWriterOptions file_options = wo;
  file_options.row_lineage = so.with_row_lineage;
  ASSIGN_OR_RETURN(auto scan, iceberg::TableScan::Make(table.io(), md, so));
  ASSIGN_OR_RETURN(auto writer, iceberg::DataWriter::Make(table.io(), *md, file_options));
  iceberg::DataWriter& w = *writer;
  staged->writers.push_back(std::move(writer));  // aborted with the rest on a failure
  const size_t n = md->current_schema()->fields.size();
  auto written = std::make_shared<Schema>(*md->current_schema());   // what w writes
  for (size_t i = n + 1; i < scan->schema()->fields.size(); ++i) {  // (the lineage's)
    written->fields.push_back(scan->schema()->fields[i]);
  }
  const std::shared_ptr<const Schema> schema = std::move(written);
  auto indexed = std::make_shared<Schema>(*scan->schema());  // with the input's index
  indexed->fields.insert(indexed->fields.begin() + static_cast<std::ptrdiff_t>(n),
                         Field{kInputIndexFieldId, "_input", DataType::Int(), false, ""});
  const auto first_output = static_cast<int32_t>(staged->output_paths.size());
  std::vector<Batch> run;
  Batch b;
  while (true) {
    ASSIGN_OR_RETURN(bool more, scan->Next(&b));
    if (!more) break;
    staged->plan->rows += b.num_rows();
    IndexInput(&b, n, scan->current_file(), indexed, staged);
    if (order != nullptr) {
      run.push_back(std::move(b));
    } else {
      RETURN_IF_ERROR(WriteTracked(w, schema, n, first_output, std::move(b), staged));
    }
    b = Batch();
  }
  if (order != nullptr && !run.empty()) {
    // (at most two copies of the run at a time: the batches read, joined,
    // then sorted)
    if (run.size() > 1) {
      Batch joined = Concat(run);
      run.clear();
      run.push_back(std::move(joined));
    }
    ASSIGN_OR_RETURN(Batch sorted, SortBatch(run[0], *order));
    run.clear();
    constexpr int64_t kSlice = 65536;  // rows per Write: the writer rolls files between them
    for (int64_t begin = 0; begin < sorted.num_rows(); begin += kSlice) {
      std::vector<uint32_t> rows;
      for (int64_t r = begin; r < std::min(sorted.num_rows(), begin + kSlice); ++r) {
        rows.push_back(static_cast<uint32_t>(r));
      }
      RETURN_IF_ERROR(WriteTracked(w, schema, n, first_output, TakeRows(sorted, rows), staged));
    }
  }
  const std::vector<std::string> paths = w.FilePaths();
  ASSIGN_OR_RETURN(auto added, w.Close());
  staged->output_paths.insert(staged->output_paths.end(), paths.begin(), paths.end());
  for (iceberg::DataFile& f : added) {
    if (order != nullptr) f.sort_order_id = order->order_id;
    staged->added.push_back(std::move(f));
  }
  return Status::OK();
}

// Rewrites `plan`'s inputs (their deletes applied) into new files: in sort
// runs of at most `run_bytes` of input when the table has a sort order (each
// run sorted on its own, into its own files), else in one pass.
Result<Staged> WritePartition(catalog::Table& table,
                              const std::shared_ptr<const iceberg::TableMetadata>& md,
                              const iceberg::DataWriterOptions& wo, int64_t run_bytes,
                              const InputFacts& inputs, PartitionCompaction* plan) {
  if (plan->inputs.empty()) {  // an empty only_files would read the whole table
    return Status::Internal("compaction of partition '{}' planned no input file", plan->partition);
  }
  Staged staged;
  staged.plan = plan;
  const iceberg::SortOrder* order = SortOrderOf(*md);
  if (PagesCopyable(*md, order, *plan)) {
    auto copied = WriteCopyingPages(table, md, wo, inputs, &staged);
    if (!copied.ok()) {
      staged.Abort();
      return copied.status();
    }
    if (*copied) return staged;
  }
  std::vector<std::vector<std::string>> runs(1);
  int64_t bytes = 0;
  for (const std::string& path : plan->inputs) {
    auto it = inputs.find(path);
    const int64_t size = it == inputs.end() ? 0 : it->second.size;
    if (order != nullptr && !runs.back().empty() && bytes + size > run_bytes) {
      runs.emplace_back();
      bytes = 0;
    }
    runs.back().push_back(path);
    bytes += size;
  }
  for (const auto& files : runs) {
    if (Status st = WriteRun(table, md, wo, order, files, &staged); !st.ok()) {
      staged.Abort();
      return st;
    }
  }
  return staged;
}

// Deletes files a compaction wrote but did not commit.
void DropFiles(catalog::Table& table, const std::vector<iceberg::DataFile>& files) {
  std::set<std::string> paths;
  for (const iceberg::DataFile& f : files) paths.insert(f.file_path);
  for (const std::string& p : paths) (void)table.io().Delete(p);
}

// Commits `group`'s new files in place of their inputs, in one `replace`
// snapshot. On a conflict (a delete arrived or an input went since the plan)
// the change is carried onto the new files (CarryNewDeletes) and the commit
// tried again; when it cannot be, a group of several commits each partition
// alone, so that only the ones that cannot are skipped (plan->skipped, their
// new files removed).
Status CommitGroup(catalog::Table& table, const iceberg::TableMetadata& md,
                   const CompactOptions& options, const catalog::CommitOptions& commit,
                   const std::vector<Staged*>& group, CompactResult* result) {
  catalog::SnapshotUpdate u;
  u.kind = catalog::ChangeKind::kRewriteFiles;
  for (const Staged* s : group) {
    u.add_data.insert(u.add_data.end(), s->added.begin(), s->added.end());
    u.remove_paths.insert(u.remove_paths.end(), s->plan->inputs.begin(), s->plan->inputs.end());
  }
  u.fail_on_new_deletes = true;
  // The delete files of the rewritten files go, once nothing else is left for them.
  u.remove_dangling_deletes = true;
  u.base_snapshot_id = md.current_snapshot_id;
  if (KeepsReadSequence(md, group)) u.data_sequence_number = md.current_snapshot()->sequence_number;
  u.summary["sluice.maintenance"] = "compact";
  if (options.before_commit) options.before_commit();
  KillPoint("maintenance.compact.before_commit");
  auto snap = table.Commit(u, commit);
  int64_t carried_rows = 0;
  bool carried = true;
  for (int carry = 0; carry < options.max_carries && carried && !snap.ok() &&
                      snap.status().code() == StatusCode::kConflict;
       ++carry) {
    DropFiles(table, u.add_deletes);  // the last carry's: not committed
    u.add_deletes.clear();
    auto c = CarryNewDeletes(table, group, &u, &carried_rows);
    if (!c.ok()) {
      for (Staged* s : group) s->Abort();
      return c.status();
    }
    carried = *c;
    if (!carried) break;
    u.summary["sluice.carried-deletes"] = std::to_string(carried_rows);
    if (options.before_commit) options.before_commit();
    KillPoint("maintenance.compact.before_commit");  // (the carried deletes written too)
    snap = table.Commit(u, commit);
  }
  if (!snap.ok() && snap.status().code() == StatusCode::kCommitStateUnknown) return snap.status();
  if (!snap.ok()) DropFiles(table, u.add_deletes);
  if (!snap.ok() && snap.status().code() == StatusCode::kConflict && group.size() > 1) {
    for (size_t i = 0; i < group.size(); ++i) {
      Status st = CommitGroup(table, md, options, commit, {group[i]}, result);
      if (!st.ok()) {  // the ones not tried yet were in no commit: their files go
        for (size_t j = i + 1; j < group.size(); ++j) group[j]->Abort();
        return st;
      }
    }
    return Status::OK();
  }
  if (!snap.ok()) {
    for (Staged* s : group) s->Abort();  // the new files go
    if (snap.status().code() != StatusCode::kConflict) return snap.status();
    group[0]->plan->skipped = snap.status().message();
    ++result->conflicts;
    return Status::OK();
  }
  ++result->commits;
  result->carried_deletes += carried_rows;
  for (Staged* s : group) {
    PartitionCompaction& plan = *s->plan;
    plan.outputs = static_cast<int64_t>(s->added.size());
    for (const auto& f : s->added) plan.output_bytes += f.file_size_in_bytes;
    result->bytes_read += plan.input_bytes;
    result->bytes_written += plan.output_bytes;
    result->bytes_copied += plan.copied_bytes;
  }
  return Status::OK();
}

using Groups = std::map<std::pair<int32_t, iceberg::PartitionValues>, Group>;

// The partitions due, the worst (most inputs) first, each with the inputs it
// rewrites (small, then with_deletes; no file twice): every small file and
// every file with deletes, or, tiered, the smallest small files TieredRun
// selects and the files past the delete ratio. A partition is due with
// `min_files` small files to merge (tiered: a TieredRun window), or one file
// past the delete ratio.
std::vector<const Group*> DuePartitions(Groups& groups, int64_t min_files, bool tiered,
                                        int64_t tier_factor) {
  std::vector<const Group*> due;
  for (auto& [key, g] : groups) {
    bool merge = static_cast<int64_t>(g.small.size()) >= std::max<int64_t>(1, min_files);
    if (tiered) {
      std::stable_sort(g.small.begin(), g.small.end(), [](const auto* a, const auto* b) {
        return a->file.file_size_in_bytes < b->file.file_size_in_bytes;
      });
      std::vector<int64_t> sizes;
      for (const auto* t : g.small) sizes.push_back(t->file.file_size_in_bytes);
      TieredWindow w = TieredRun(std::move(sizes), min_files, tier_factor);
      g.small = std::vector<const iceberg::FileScanTask*>(
          g.small.begin() + static_cast<std::ptrdiff_t>(w.start),
          g.small.begin() + static_cast<std::ptrdiff_t>(w.start + w.length));
      merge = w.length > 0;
      // The files past the ratio that the window does not hold.
      g.with_deletes.clear();
      for (const iceberg::FileScanTask* t : g.mostly_deleted) {
        if (std::find(g.small.begin(), g.small.end(), t) == g.small.end()) {
          g.with_deletes.push_back(t);
        }
      }
    }
    // Due for a file's deletes alone, untiered, its small files (fewer than
    // min_files) are rewritten with it. (Never a partition with nothing to
    // read: no input files would mean the whole table to the scan; a file past
    // the ratio is in small or with_deletes.)
    if (merge || !g.mostly_deleted.empty()) due.push_back(&g);
  }
  std::stable_sort(due.begin(), due.end(), [](const Group* a, const Group* b) {
    return a->small.size() + a->with_deletes.size() > b->small.size() + b->with_deletes.size();
  });
  return due;
}

// Rewrites the planned partitions and commits them in groups of
// partitions_per_commit: a crash loses at most one group's work, and a
// large table never needs one giant commit.
Status RewriteInGroups(catalog::Table& table,
                       const std::shared_ptr<const iceberg::TableMetadata>& md,
                       const iceberg::DataWriterOptions& wo, const InputFacts& inputs,
                       int64_t run_bytes, const CompactOptions& options,
                       const catalog::CommitOptions& commit, CompactResult* result) {
  const size_t per_commit =
      static_cast<size_t>(std::max<int64_t>(1, options.partitions_per_commit));
  std::vector<Staged> staged;
  auto abort_staged = [&] {
    for (Staged& s : staged) s.Abort();
  };
  for (size_t i = 0; i < result->partitions.size(); ++i) {
    PartitionCompaction& plan = result->partitions[i];
    auto s = WritePartition(table, md, wo, run_bytes, inputs, &plan);
    if (!s.ok()) {
      abort_staged();
      return s.status().WithContextF("compacting partition '{}' of {}", plan.partition,
                                     table.ident().ToString());
    }
    staged.push_back(std::move(*s));
    if (staged.size() < per_commit && i + 1 < result->partitions.size()) continue;
    std::vector<Staged*> group;
    for (Staged& g : staged) group.push_back(&g);
    const std::string first = staged[0].plan->partition;
    Status st = CommitGroup(table, *md, options, commit, group, result);
    const size_t n = staged.size();
    staged.clear();  // committed or aborted (kept only when the commit state is unknown)
    if (!st.ok()) {
      return st.WithContextF("compacting {} partitions of {} (from '{}')", n,
                             table.ident().ToString(), first);
    }
  }
  return Status::OK();
}

}  // namespace

Result<CompactResult> CompactTable(catalog::Table& table, const CompactOptions& options,
                                   const catalog::CommitOptions& commit) {
  RETURN_IF_ERROR(table.Refresh());
  CompactResult result;
  auto md = std::make_shared<const iceberg::TableMetadata>(table.metadata());
  if (!md->current_snapshot_id) return result;
  ASSIGN_OR_RETURN(iceberg::DataWriterOptions wo,
                   iceberg::DataWriterOptionsFromProperties(md->properties));
  if (options.target_file_bytes) wo.target_file_bytes = *options.target_file_bytes;
  wo.file_name_prefix = "compact-";  // an operator (and the crash tests) can tell them
  ASSIGN_OR_RETURN(Policy policy, PolicyOf(*md));
  int64_t small = policy.small_file_bytes;
  if (options.target_file_bytes && !md->properties.count("sluice.maintenance.small-file-bytes")) {
    small = wo.target_file_bytes / 4;  // a quarter of the target given
  }
  if (options.small_file_bytes) small = *options.small_file_bytes;
  int64_t min_files = options.min_input_files.value_or(policy.min_input_files);
  const double delete_ratio = options.delete_ratio.value_or(policy.delete_ratio);
  if (options.all_files) {  // every file counts as small, one makes a partition due
    small = std::numeric_limits<int64_t>::max();
    min_files = 1;
  }

  // Plan: the current snapshot's data files by partition.
  ASSIGN_OR_RETURN(auto scan, iceberg::TableScan::Make(table.io(), md, {}));
  RETURN_IF_ERROR(scan->Plan());
  const std::vector<iceberg::FileScanTask>& tasks = scan->tasks();
  Groups groups;
  InputFacts inputs;  // sizes for sort runs, NaN-free columns for page copies
  for (const iceberg::FileScanTask& t : tasks) {
    InputFact& fact = inputs[t.file.file_path];
    fact.size = t.file.file_size_in_bytes;
    for (const auto& [id, nans] : t.file.nan_value_counts) {
      if (nans == 0) fact.nan_free.insert(id);
    }
    Group& g = groups[{t.file.spec_id, t.file.partition}];
    g.spec_id = t.file.spec_id;
    g.partition = t.file.partition;
    ++result.data_files;
    if (t.file.file_size_in_bytes < small) {
      g.small.push_back(&t);
      ++result.small_files;
    } else if (HasDeletes(t)) {
      g.with_deletes.push_back(&t);
    }
    if (HasDeletes(t) && DeletedFraction(DeletedRows(t), t.file) >= delete_ratio) {
      g.mostly_deleted.push_back(&t);
    }
  }
  result.partitions_seen = static_cast<int64_t>(groups.size());
  const std::vector<const Group*> due =
      DuePartitions(groups, min_files, options.tiered, policy.tier_factor);
  const Schema* schema = md->current_schema();
  for (const Group* g : due) {
    PartitionCompaction plan;
    plan.spec_id = g->spec_id;
    if (const iceberg::PartitionSpec* spec = md->spec_by_id(g->spec_id)) {
      ASSIGN_OR_RETURN(TypePtr type, iceberg::PartitionType(*spec, *schema));
      plan.partition = iceberg::PartitionPath(*spec, type, g->partition);
    }
    if (!options.partitions.empty() && !options.partitions.count({g->spec_id, g->partition})) {
      continue;
    }
    if (options.max_partitions > 0 &&
        static_cast<int64_t>(result.partitions.size()) >= options.max_partitions) {
      break;
    }
    plan.values = g->partition;
    for (const auto* list : {&g->small, &g->with_deletes}) {
      for (const iceberg::FileScanTask* t : *list) {
        plan.inputs.push_back(t->file.file_path);
        plan.input_bytes += t->file.file_size_in_bytes;
        plan.inputs_have_deletes = plan.inputs_have_deletes || HasDeletes(*t);
      }
    }
    result.partitions.push_back(std::move(plan));
  }
  // Sort runs of at least twice the small-file size: each run's output is
  // then no small file again (but the last run's), so a sorted partition's
  // compaction converges instead of rewriting runs forever.
  int64_t run_bytes = options.sort_run_bytes;
  if (!options.all_files) {
    run_bytes = std::max(run_bytes, small > std::numeric_limits<int64_t>::max() / 2
                                        ? std::numeric_limits<int64_t>::max()
                                        : 2 * small);
  }
  if (!options.dry_run) {
    RETURN_IF_ERROR(RewriteInGroups(table, md, wo, inputs, run_bytes, options, commit, &result));
  }
  return result;
}

}  // namespace sluice::maintenance
