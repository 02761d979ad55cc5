// libFuzzer target: the input is a SQL script. It is parsed; every pipeline's
// INSERT is bound against a fixed source and target schema and, when that
// succeeds, applied to a small batch. Build with -DSLUICE_FUZZ=ON (clang).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "columnar/sql_schema.h"
#include "sql/binder.h"
#include "sql/parser.h"

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
    auto plan = sql::BindInsert(pipeline->insert, kSource, kTarget);
    if (!plan.ok()) continue;
    Batch batch = Batch::Make(std::make_shared<Schema>(kSource));
    batch.columns[0].Append<int64_t>(1);
    batch.columns[1].AppendNull();
    batch.columns[2].AppendBytes("k");
    batch.columns[3].Append<int64_t>(5);
    batch.columns[4].Append<int128_t>(123);
    auto out = sql::ApplyPlan(*plan, std::move(batch));
    if (out.ok() && out->num_rows() != 1) __builtin_trap();
  }
  return 0;
}
