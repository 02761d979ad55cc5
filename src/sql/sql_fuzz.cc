// libFuzzer target: the input is a SQL script. It is parsed; every pipeline's
// INSERT is bound against a fixed source and target schema and, when that
// succeeds, applied to a small batch of ordinary, extreme and NULL values: the
// expression evaluator must neither crash nor lose or duplicate a row. Build with -DSLUICE_FUZZ=ON
// (clang).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "columnar/sql_schema.h"
#include "sql/binder.h"
#include "sql/parser.h"

namespace {

// Binds a windowed aggregation (the watermark on ts) and, when it binds, runs
// three rows through its stages: WHERE and arguments, the window operator, the
// select list and HAVING. Nothing may crash; every row is accounted for.
void FuzzAggregation(const sluice::sql::InsertSelect& insert, const sluice::Schema& source,
                     const sluice::Schema& target) {
  using namespace sluice;
  auto plan = sql::BindAggregateInsert(insert, source, target, "ts", 1000);
  if (!plan.ok()) return;
  Batch rows = Batch::Make(plan->pre.source_schema);
  for (int64_t i = 0; i < 3; ++i) {
    rows.columns[0].Append<int64_t>(i == 1 ? INT64_MIN : i);
    i == 2 ? rows.columns[1].AppendNull() : rows.columns[1].Append<int32_t>(i == 1 ? INT32_MAX : 7);
    rows.columns[2].AppendBytes(i == 1 ? std::string_view("\xff%_", 3) : std::string_view("k"));
    rows.columns[3].Append<int64_t>(i == 1 ? INT64_MAX / 2 : i * 1000000);
    rows.columns[4].Append<int128_t>(i * 100);
    rows.columns[5].Append<int64_t>(i);  // $row
  }
  std::vector<sql::RejectedRow> rejected;
  auto input = sql::ApplyPlanKeepingSource(plan->pre, rows, &rejected);
  if (!input.ok()) return;
  if (input->num_rows() + static_cast<int64_t>(rejected.size()) > 3) __builtin_trap();
  auto window = operators::WindowAggregate::Make(plan->window);
  if (!window.ok()) return;
  input->columns.erase(input->columns.begin());
  std::vector<operators::LateRow> late;
  // Without a memory budget nothing spills, so Add cannot fail.
  if (!(*window)->Add(*input, std::vector<int64_t>(input->num_rows(), INT64_MIN), &late).ok()) {
    __builtin_trap();
  }
  std::vector<operators::FailedGroup> failed;
  auto closed = (*window)->Emit(INT64_MAX, &failed);
  if (!closed.ok()) return;
  std::vector<sql::RejectedRow> post_rejected;
  (void)sql::ApplyPlan(plan->post, std::move(*closed), &post_rejected);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sluice;
  static const Schema kSource =
      ParseColumnList("id BIGINT, user_id INT, kind STRING, ts TIMESTAMP, d DECIMAL(9,2)").value();
  static const Schema kTarget =
      ParseColumnList("id BIGINT, user_id BIGINT, kind STRING, ts TIMESTAMPTZ, d DECIMAL(12,2)")
          .value();
  auto script = sql::ParseScript(std::string_view(reinterpret_cast<const char*>(data), size));
  if (!script.ok()) return 0;
  for (const sql::Statement& stmt : script->statements) {
    const auto* pipeline = std::get_if<sql::CreatePipeline>(&stmt.body);
    if (pipeline == nullptr) continue;
    if (sql::IsAggregation(pipeline->insert)) {
      FuzzAggregation(pipeline->insert, kSource, kTarget);
      continue;
    }
    auto plan = sql::BindInsert(pipeline->insert, kSource, kTarget);
    if (!plan.ok()) continue;
    // Three rows: ordinary, extreme (overflow bait) and all NULL.
    Batch batch = Batch::Make(std::make_shared<Schema>(kSource));
    batch.columns[0].Append<int64_t>(1);
    batch.columns[0].Append<int64_t>(INT64_MIN);
    batch.columns[0].AppendNull();
    batch.columns[1].Append<int32_t>(7);
    batch.columns[1].Append<int32_t>(INT32_MAX);
    batch.columns[1].AppendNull();
    batch.columns[2].AppendBytes("k");
    batch.columns[2].AppendBytes(std::string_view("\xff\x00%_", 4));
    batch.columns[2].AppendNull();
    batch.columns[3].Append<int64_t>(5);
    batch.columns[3].Append<int64_t>(INT64_MAX);
    batch.columns[3].AppendNull();
    batch.columns[4].Append<int128_t>(123);
    batch.columns[4].Append<int128_t>(-999999999);
    batch.columns[4].AppendNull();
    std::vector<sql::RejectedRow> rejected;
    auto out = sql::ApplyPlan(*plan, std::move(batch), &rejected);
    if (!out.ok()) continue;  // not a property of the data: an unsupported combination
    // Every row is kept, filtered out or rejected, once.
    int64_t accounted = out->num_rows() + static_cast<int64_t>(rejected.size());
    if (accounted > 3 || (plan->filter == nullptr && accounted != 3)) __builtin_trap();
  }
  return 0;
}
