// GROUP BY without a window: each group is one row of a primary-key table,
// replaced at every checkpoint that changes the group. Checked against a model
// after every checkpoint, through restarts, with HAVING dropping groups.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>

#include "common/testing.h"
#include "pipeline/bind.h"
#include "pipeline/test_util.h"
#include "sql/parser.h"

namespace sluice::pipeline {
namespace {

struct Case {
  int format_version;
  int parallelism;
};

constexpr char kScript[] = R"(
  CREATE SOURCE orders (id BIGINT, kind STRING, amount INT) WITH (connector = 'http') FORMAT JSON;
  CREATE PIPELINE totals AS
    INSERT INTO lake.totals
    SELECT kind, count(*), sum(amount) AS total, max(amount) AS top,
           count(DISTINCT amount) AS amounts
    FROM orders WHERE amount >= 0
    GROUP BY kind HAVING sum(amount) < 3000;
)";

class UpdatingAggregateTest : public testing::PipelineFixture,
                              public ::testing::WithParamInterface<Case> {
 protected:
  void SetUp() override {
    PipelineFixture::SetUp();
    CreateKeyedTable(totals_,
                     "kind STRING NOT NULL, n BIGINT NOT NULL, total BIGINT, top INT, "
                     "amounts BIGINT",
                     {"kind"}, GetParam().format_version);
  }

  Result<PipelineOptions> Bind(const std::string& sql) {
    ASSIGN_OR_RETURN(sql::Script script, sql::ParseScript(sql));
    ASSIGN_OR_RETURN(auto sources, SourcesOf(script));
    ASSIGN_OR_RETURN(const sql::CreatePipeline* p, FindPipeline(script, "totals"));
    ASSIGN_OR_RETURN(PipelineOptions o, BindPipeline(*catalog_, *io_, *p, sources));
    o.state_dir = (dir_ / "state" / "totals").string();
    o.commit_interval_ms = 60'000;
    o.batch_rows = 64;
    o.parallelism = GetParam().parallelism;
    return o;
  }

  struct Group {
    int64_t n = 0, total = 0, top = 0;
    std::set<int64_t> amounts;
  };
  // The rows the table must hold: the groups HAVING keeps.
  std::vector<std::string> ModelRows() const {
    std::vector<std::string> out;
    for (const auto& [kind, g] : model_) {
      if (g.total >= 3000) continue;
      out.push_back(fmt::format(R"({{"kind":"{}","n":{},"total":{},"top":{},"amounts":{}}})", kind,
                                g.n, g.total, g.top, g.amounts.size()));
    }
    std::sort(out.begin(), out.end());
    return out;
  }

  catalog::TableIdent totals_{{"lake"}, "totals"};
  std::map<std::string, Group> model_;
};

TEST_P(UpdatingAggregateTest, EachGroupsRowHoldsItsRunningValuesAfterEveryCheckpoint) {
  std::mt19937_64 rng(20261203 + GetParam().format_version * 10 + GetParam().parallelism);
  ASSERT_OK_AND_ASSIGN(PipelineOptions options, Bind(kScript));
  std::unique_ptr<Pipeline> p;
  int64_t id = 0;
  for (int round = 0; round < 12; ++round) {
    SCOPED_TRACE(fmt::format("round {}", round));
    if (!p || round % 4 == 3) {  // a restart restores the groups from the state
      p.reset();
      ASSERT_OK_AND_ASSIGN(p, Open(options));
    }
    // 120 orders over 3 to 12 kinds, some filtered out by WHERE.
    std::vector<std::string> records;
    std::set<std::string> touched;
    int kinds = 3 + static_cast<int>(rng() % 10);
    for (int i = 0; i < 120; ++i) {
      std::string kind = fmt::format("k{}", rng() % static_cast<uint64_t>(kinds));
      int64_t amount = static_cast<int64_t>(rng() % 40) - 5;
      records.push_back(fmt::format(R"({{"id":{},"kind":"{}","amount":{}}})", ++id, kind, amount));
      if (amount < 0) continue;
      Group& g = model_[kind];
      g.top = g.n == 0 ? amount : std::max(g.top, amount);
      ++g.n;
      g.total += amount;
      g.amounts.insert(amount);
      touched.insert(kind);
    }
    ASSERT_OK(log_->Append(records).status());
    Consume(*p);
    ASSERT_OK(p->Checkpoint());
    ASSERT_EQ(Rows(totals_), ModelRows());
    // The checkpoint wrote the rows of exactly the groups it changed (those
    // HAVING keeps).
    ASSERT_OK_AND_ASSIGN(auto t, catalog::Table::Load(*catalog_, *io_, totals_));
    const iceberg::Snapshot* s = t->metadata().current_snapshot();
    ASSERT_NE(s, nullptr);
    int64_t kept = 0;
    for (const std::string& kind : touched) kept += model_[kind].total < 3000 ? 1 : 0;
    auto added = s->summary.find("added-records");
    EXPECT_EQ(added == s->summary.end() ? 0 : std::stoll(added->second), kept);
  }
  EXPECT_GT(p->stats().upsert_deletes.load(), 0);
  bool dropped = false;
  for (const auto& [kind, g] : model_) dropped = dropped || g.total >= 3000;
  EXPECT_TRUE(dropped) << "HAVING must have dropped a group (its row deleted)";
}

TEST_P(UpdatingAggregateTest, ARestartAfterALostCheckpointCountsEachOrderOnce) {
  ASSERT_OK_AND_ASSIGN(PipelineOptions options, Bind(kScript));
  std::vector<std::string> records;
  for (int i = 0; i < 50; ++i) {
    records.push_back(fmt::format(R"({{"id":{},"kind":"k{}","amount":{}}})", i, i % 2, i));
  }
  ASSERT_OK(log_->Append(records).status());
  {
    ASSERT_OK_AND_ASSIGN(auto p, Open(options));
    Consume(*p);
    ASSERT_OK(p->Checkpoint());
    // More orders, read but never committed (the process dies).
    ASSERT_OK(log_->Append({R"({"id":50,"kind":"k0","amount":1000})"}).status());
    Consume(*p);
  }
  ASSERT_OK_AND_ASSIGN(auto p, Open(options));
  Consume(*p);
  ASSERT_OK(p->Checkpoint());
  // k0: the even amounts 0..48 and 1000; k1: the odd ones 1..49.
  EXPECT_EQ(Rows(totals_), (std::vector<std::string>{
                               R"({"kind":"k0","n":26,"total":1600,"top":1000,"amounts":26})",
                               R"({"kind":"k1","n":25,"total":625,"top":49,"amounts":25})"}));
}

TEST_P(UpdatingAggregateTest, ATableNotKeyedByTheGroupsIsRefused) {
  CreateKeyedTable({{"lake"}, "by_n"}, "kind STRING NOT NULL, n BIGINT NOT NULL", {"n"},
                   GetParam().format_version);
  ASSERT_ERROR(Bind(R"(
    CREATE SOURCE orders (id BIGINT, kind STRING, amount INT) WITH (connector = 'http') FORMAT JSON;
    CREATE PIPELINE totals AS INSERT INTO lake.by_n SELECT kind, count(*) FROM orders GROUP BY kind;
  )")
                   .status(),
               StatusCode::kInvalidArgument, "needs PRIMARY KEY (kind)");
  ASSERT_ERROR(Bind(R"(
    CREATE SOURCE orders (id BIGINT, kind STRING, amount INT) WITH (connector = 'http') FORMAT JSON;
    CREATE PIPELINE totals AS INSERT INTO lake.totals
      SELECT kind, count(*), window_start FROM orders GROUP BY kind;
  )")
                   .status(),
               StatusCode::kInvalidArgument, "no window");
  ASSERT_ERROR(Bind(R"(
    CREATE SOURCE orders (id BIGINT, kind STRING, amount INT) WITH (connector = 'http') FORMAT JSON;
    CREATE PIPELINE totals AS INSERT INTO lake.totals SELECT 'all', count(*) FROM orders
      HAVING count(*) > 0;
  )")
                   .status(),
               StatusCode::kInvalidArgument, "needs GROUP BY");
}

INSTANTIATE_TEST_SUITE_P(FormatsAndLanes, UpdatingAggregateTest,
                         ::testing::Values(Case{2, 1}, Case{2, 2}, Case{3, 1}, Case{3, 2}),
                         [](const auto& info) {
                           return fmt::format("v{}_parallelism{}", info.param.format_version,
                                              info.param.parallelism);
                         });

}  // namespace
}  // namespace sluice::pipeline
