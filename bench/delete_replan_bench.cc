// A row delete racing compactions (a benchmark, not a test). A table of
// PARTITIONS partitions of FILES files of ROWS rows each; `DELETE WHERE v = 7`
// (one row in 10,007, as a delete of one user's rows; no file pruned by its
// statistics, so every file is read) loses ROUNDS times to a compaction of the
// first partition, committed between the delete's plan and its commit (as
// the maintenance service's may). Prints the CPU time of the delete's first
// round (plan of the whole table, failed commit) and of each later one (plan
// again, failed commit), with the data files each round read, against a plan
// of the whole table again: what each later round cost before a delete kept
// what its last plan found (catalog/row_delete.h).
//
//   build/bench/delete_replan_bench [PARTITIONS=50] [FILES=10] [ROWS=10000] [ROUNDS=3]
#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "bench_util.h"
#include "catalog/row_delete.h"
#include "catalog/table.h"
#include "columnar/sql_schema.h"
#include "iceberg/data_writer.h"
#include "iceberg/table_builder.h"
#include "io/fault_injection_file_io.h"
#include "maintenance/compact.h"

namespace {

using namespace sluice;
using bench::ThreadCpuMs;

std::string Kind(int p) { return fmt::format("p{:03d}", p); }

// One commit of `rows` rows in each of `partitions` partitions (a file each),
// ids from `*next_id`.
Status AppendRound(catalog::Table& t, FileIO& io, int partitions, int64_t rows, int64_t* next_id) {
  Batch b = Batch::Make(std::make_shared<const Schema>(*t.metadata().current_schema()));
  for (int p = 0; p < partitions; ++p) {
    for (int64_t r = 0; r < rows; ++r, ++*next_id) {
      b.columns[0].Append<int64_t>(*next_id);
      b.columns[1].AppendBytes(Kind(p));
      b.columns[2].Append<int64_t>(*next_id % 10007);
    }
  }
  ASSIGN_OR_RETURN(auto w, iceberg::DataWriter::Make(io, t.metadata()));
  RETURN_IF_ERROR(w->Write(b));
  ASSIGN_OR_RETURN(auto files, w->Close());
  return t.Append(files).status();
}

int Run(int partitions, int files, int64_t rows, int rounds) {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("sluice_delete_bench_" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  auto fail = [&](const Status& st) {
    std::fprintf(stderr, "%s\n", st.ToString().c_str());
    fs::remove_all(dir);
    return 1;
  };
  auto io = MakeLocalFileIO();
  auto cat = catalog::OpenCatalog((dir / "catalog.db").string());
  if (!cat.ok()) return fail(cat.status());
  if (Status st = (*cat)->CreateNamespace({"b"}, {}); !st.ok()) return fail(st);
  catalog::TableIdent id{{"b"}, "events"};
  auto schema = ParseColumnList("id BIGINT NOT NULL, kind STRING, v BIGINT");
  if (!schema.ok()) return fail(schema.status());
  auto spec = iceberg::ParsePartitionSpec("kind", *schema);
  if (!spec.ok()) return fail(spec.status());
  auto md = iceberg::NewTableMetadata(*schema, *spec, iceberg::SortOrder{},
                                      catalog::DefaultTableLocation(dir.string(), id), {});
  if (!md.ok()) return fail(md.status());
  auto table = catalog::Table::Create(**cat, *io, id, *md);
  if (!table.ok()) return fail(table.status());
  int64_t next_id = 0;
  for (int f = 0; f < files; ++f) {
    if (Status st = AppendRound(**table, *io, partitions, rows, &next_id); !st.ok()) {
      return fail(st);
    }
  }

  // The deleting writer: its storage calls back as it creates its first
  // delete file (its plan done, its commit next), and a compaction of the
  // first partition (after one more small file there) commits then.
  FaultInjectingFileIO hooked(io.get());
  auto deleter = catalog::Table::Load(**cat, hooked, id);
  if (!deleter.ok()) return fail(deleter.status());
  std::vector<double> round_ms;
  double mark = ThreadCpuMs();
  Status hook_status;
  hooked.BeforeEach(FileOp::kOpenOutput, [&](std::string_view path) {
    bool first = path.ends_with("-deletes.parquet") && path.find("/00000-") != path.npos;
    if (!first || static_cast<int>(round_ms.size()) == rounds) return;
    round_ms.push_back(ThreadCpuMs() - mark);
    int64_t extra = next_id;
    Status st = AppendRound(**table, *io, 1, 100, &extra);
    next_id = extra;
    maintenance::CompactOptions o;
    o.all_files = true;
    o.partitions = {{0, {Kind(0)}}};
    if (st.ok()) st = maintenance::CompactTable(**table, o).status();
    if (!st.ok() && hook_status.ok()) hook_status = st;
    mark = ThreadCpuMs();
  });
  catalog::CommitOptions commit;
  commit.max_attempts = rounds + 2;
  commit.min_backoff_ms = commit.max_backoff_ms = 1;
  auto deleted = catalog::DeleteWhere(**deleter, "v = 7", commit);
  const double last_ms = ThreadCpuMs() - mark;
  hooked.BeforeEach(FileOp::kOpenOutput, nullptr);
  if (!hook_status.ok()) return fail(hook_status);
  if (!deleted.ok()) return fail(deleted.status());

  // The whole table planned again, as every round after a conflict did before.
  if (Status st = (*table)->Refresh(); !st.ok()) return fail(st);
  const double full_start = ThreadCpuMs();
  auto full = catalog::PlanDelete(**table, "v = 8");
  const double full_ms = ThreadCpuMs() - full_start;
  if (!full.ok()) return fail(full.status());
  catalog::DiscardPlannedDelete(**table, *full);

  std::printf(
      "table: %d partitions x %d files x %lld rows; DELETE WHERE v = 7 (1 row in 10,007): %lld "
      "rows\n",
      partitions, files, static_cast<long long>(rows),
      static_cast<long long>(deleted->rows_deleted));
  std::printf("plans: %d, data files read: %lld (the first plan %d)\n", deleted->plans,
              static_cast<long long>(deleted->files_read), partitions * files);
  double later = 0;
  for (size_t i = 0; i < round_ms.size(); ++i) {
    std::printf("round %zu (%s, commit lost to a compaction): %.1f ms CPU\n", i + 1,
                i == 0 ? "plan of the table" : "plan again", round_ms[i]);
    if (i > 0) later += round_ms[i];
  }
  std::printf("round %zu (plan again, commit): %.1f ms CPU\n", round_ms.size() + 1, last_ms);
  later += last_ms;
  const double mean_later = later / static_cast<double>(round_ms.size());
  std::printf("a plan of the whole table again: %.1f ms CPU\n", full_ms);
  std::printf("a later round against planning the table again: %.1f ms vs %.1f ms (%.1fx less)\n",
              mean_later, full_ms, full_ms / mean_later);
  fs::remove_all(dir);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  int partitions = argc > 1 ? std::atoi(argv[1]) : 50;
  int files = argc > 2 ? std::atoi(argv[2]) : 10;
  int64_t rows = argc > 3 ? std::atoll(argv[3]) : 10000;
  int rounds = argc > 4 ? std::atoi(argv[4]) : 3;
  if (partitions < 1 || files < 1 || rows < 100 || rounds < 1) {
    std::fprintf(stderr,
                 "usage: delete_replan_bench [PARTITIONS>=1] [FILES>=1] [ROWS>=100] [ROUNDS>=1]\n");
    return 2;
  }
  return Run(partitions, files, rows, rounds);
}
