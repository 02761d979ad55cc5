// GROUP BY without a window: each group is one row of a primary-key table,
// replaced at every checkpoint that changes the group. Checked against a model
// after every checkpoint, through restarts, with HAVING dropping groups.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>

#include "catalog/row_delete.h"
#include "common/testing.h"
#include "iceberg/table_builder.h"
#include "maintenance/expire.h"
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
  // With lanes, rounds of 3,000 orders in one batch, so that the lanes claim
  // runs of its records: each order must count once.
  const bool wide = GetParam().parallelism > 1;
  if (wide) options.batch_rows = 4096;
  std::unique_ptr<Pipeline> p;
  int64_t id = 0;
  for (int round = 0; round < 12; ++round) {
    SCOPED_TRACE(fmt::format("round {}", round));
    if (!p || round % 4 == 3) {  // a restart restores the groups from the state
      p.reset();
      ASSERT_OK_AND_ASSIGN(p, Open(options));
    }
    // 120 orders over 3 to 12 kinds (3,000 over 100 to 199), some filtered out
    // by WHERE.
    std::vector<std::string> records;
    std::set<std::string> touched;
    int kinds = wide ? 100 + static_cast<int>(rng() % 100) : 3 + static_cast<int>(rng() % 10);
    for (int i = 0; i < (wide ? 3000 : 120); ++i) {
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

// A mirror (a primary-key table: upserts and deletes) read as its changelog
// by an aggregate: every -U and -D takes its row back out of its group.
constexpr char kMirrorScript[] = R"(
  CREATE SOURCE changes_in (id BIGINT, region STRING, balance BIGINT)
    WITH (connector = 'http') FORMAT JSON;
  CREATE PIPELINE totals AS INSERT INTO lake.accounts SELECT * FROM changes_in;
)";
constexpr char kByRegionScript[] = R"(
  CREATE SOURCE accounts FROM TABLE lake.accounts WITH (mode = 'changelog');
  CREATE PIPELINE totals AS
    INSERT INTO lake.by_region
    SELECT region, sum(balance) AS total, min(balance) AS lo, max(balance) AS hi,
           count(DISTINCT balance) AS balances, avg(balance) AS mean
    FROM accounts WHERE balance <> 13 GROUP BY region;
)";

TEST_P(UpdatingAggregateTest, AnAggregateOverAChangelogRetractsUpdatedAndDeletedRows) {
  const catalog::TableIdent accounts{{"lake"}, "accounts"}, by_region{{"lake"}, "by_region"};
  CreateKeyedTable(accounts, "id BIGINT NOT NULL, region STRING NOT NULL, balance BIGINT", {"id"},
                   GetParam().format_version);
  CreateKeyedTable(by_region,
                   "region STRING NOT NULL, total BIGINT, lo BIGINT, hi BIGINT, balances BIGINT, "
                   "mean DOUBLE",
                   {"region"}, GetParam().format_version);
  ASSERT_OK_AND_ASSIGN(PipelineOptions mirror_options, Bind(kMirrorScript));
  mirror_options.target = accounts;
  ASSERT_OK_AND_ASSIGN(PipelineOptions agg_options, Bind(kByRegionScript));
  agg_options.state_dir = (dir_ / "state" / "by_region").string();
  agg_options.poll_bytes = 1500;  // a few dozen changes a poll
  auto open_agg = [&] { return OpenOnChangelog(agg_options, accounts, "accounts"); };
  std::mt19937_64 rng(20261204 + GetParam().format_version * 10 + GetParam().parallelism);
  std::map<int64_t, std::pair<std::string, int64_t>> db;  // id -> (region, balance)
  ASSERT_OK_AND_ASSIGN(auto mirror, Open(mirror_options));
  std::unique_ptr<Pipeline> agg;
  size_t most_regions = 0, last_regions = 0;
  for (int round = 0; round < 10; ++round) {
    SCOPED_TRACE(fmt::format("round {}", round));
    // Accounts open, move between regions and change balance (repeated ids).
    std::vector<std::string> records;
    for (int i = 0; i < 60; ++i) {
      int64_t id = static_cast<int64_t>(rng() % 40);
      std::string region = fmt::format("r{}", rng() % (round < 5 ? 5 : 3));
      int64_t balance = static_cast<int64_t>(rng() % 20);
      records.push_back(
          fmt::format(R"({{"id":{},"region":"{}","balance":{}}})", id, region, balance));
      db[id] = {region, balance};
    }
    ASSERT_OK(log_->Append(records).status());
    Consume(*mirror);
    ASSERT_OK(mirror->Checkpoint());
    if (round % 3 == 1) {  // a user closes some accounts: -D rows in the changelog
      ASSERT_OK_AND_ASSIGN(auto t, catalog::Table::Load(*catalog_, *io_, accounts));
      int64_t lo = static_cast<int64_t>(rng() % 36);
      ASSERT_OK(catalog::DeleteWhere(*t, fmt::format("id >= {} AND id < {}", lo, lo + 5)).status());
      std::erase_if(db, [lo](const auto& e) { return e.first >= lo && e.first < lo + 5; });
    }
    if (round == 2 && !agg) {
      // The mirror's first snapshots expire before the aggregate first starts:
      // it reads the oldest one left whole (every row a +I), then its changes.
      ASSERT_OK_AND_ASSIGN(auto t, catalog::Table::Load(*catalog_, *io_, accounts));
      maintenance::ExpireOptions eo;
      eo.now_ms = iceberg::NowMillis() + 1000;
      eo.older_than_ms = eo.now_ms;
      eo.retain_last = 1;
      ASSERT_OK_AND_ASSIGN(auto expired, maintenance::ExpireSnapshots(*t, eo));
      ASSERT_GT(expired.expired.size(), 0u);
    }
    if (round >= 2 && (!agg || round % 4 == 2)) {  // a restart restores groups and value counts
      agg.reset();
      ASSERT_OK_AND_ASSIGN(agg, open_agg());
    }
    if (!agg) continue;
    for (int idle = 0, i = 0; idle < 2 && i < 1000; ++i) {  // until it has read every change
      ASSERT_OK_AND_ASSIGN(int64_t n, agg->Step(0));
      idle = n == 0 ? idle + 1 : 0;
    }
    ASSERT_OK(agg->Checkpoint());
    // What the regions hold now (rows WHERE keeps; a region without any has no row).
    struct Region {
      int64_t total = 0, n = 0;
      std::multiset<int64_t> balances;
    };
    std::map<std::string, Region> regions;
    for (const auto& [id, row] : db) {
      if (row.second == 13) continue;
      Region& r = regions[row.first];
      r.total += row.second;
      ++r.n;
      r.balances.insert(row.second);
    }
    std::vector<std::string> want;
    for (const auto& [name, r] : regions) {
      std::set<int64_t> distinct(r.balances.begin(), r.balances.end());
      want.push_back(
          fmt::format(R"({{"region":"{}","total":{},"lo":{},"hi":{},"balances":{},"mean":{}}})",
                      name, r.total, *r.balances.begin(), *r.balances.rbegin(), distinct.size(),
                      fmt::format("{}", static_cast<double>(r.total) / static_cast<double>(r.n))));
    }
    std::sort(want.begin(), want.end());
    most_regions = std::max(most_regions, want.size());
    last_regions = want.size();
    std::vector<std::string> got = Rows(by_region);
    // (mean: compared as the JSON writer prints a double)
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) {
      auto cut = [](const std::string& row) { return row.substr(0, row.find(",\"mean\":")); };
      ASSERT_EQ(cut(got[i]), cut(want[i]));
      double mean = std::stod(got[i].substr(got[i].find("\"mean\":") + 7));
      double expected = std::stod(want[i].substr(want[i].find("\"mean\":") + 7));
      ASSERT_NEAR(mean, expected, 1e-9);
    }
  }
  EXPECT_GT(agg->stats().upsert_deletes.load(), 0);
  EXPECT_LT(last_regions, most_regions) << "regions must have emptied (their rows deleted)";
}

TEST_P(UpdatingAggregateTest, AGroupWithANullKeyNeverGetsARow) {
  ASSERT_OK_AND_ASSIGN(PipelineOptions options, Bind(kScript));
  ASSERT_OK_AND_ASSIGN(auto p, Open(options));
  // The NULL kind passes HAVING at first (its row cannot be written: a dead
  // letter), then fails it (no row to delete), as k1 does.
  ASSERT_OK(
      log_->Append({R"({"id":1,"kind":null,"amount":5})", R"({"id":2,"kind":"k1","amount":5})",
                    R"({"id":3,"kind":"k2","amount":5})"})
          .status());
  Consume(*p);
  ASSERT_OK(p->Checkpoint());
  EXPECT_EQ(Rows(totals_),
            (std::vector<std::string>{R"({"kind":"k1","n":1,"total":5,"top":5,"amounts":1})",
                                      R"({"kind":"k2","n":1,"total":5,"top":5,"amounts":1})"}));
  std::vector<std::string> dead = Rows(catalog::TableIdent{{"lake"}, "totals__dlq"});
  ASSERT_EQ(dead.size(), 1u);
  EXPECT_NE(dead[0].find("NOT NULL"), std::string::npos) << dead[0];
  ASSERT_OK(log_->Append({R"({"id":4,"kind":null,"amount":4000})",
                          R"({"id":5,"kind":"k1","amount":4000})"})
                .status());
  Consume(*p);
  ASSERT_OK(p->Checkpoint());
  EXPECT_EQ(Rows(totals_),
            (std::vector<std::string>{R"({"kind":"k2","n":1,"total":5,"top":5,"amounts":1})"}));
}

TEST_P(UpdatingAggregateTest, AggregatesThatCannotRetractAreRefused) {
  CreateKeyedTable({{"lake"}, "accounts"}, "id BIGINT NOT NULL, region STRING NOT NULL", {"id"},
                   GetParam().format_version);
  CreateKeyedTable({{"lake"}, "by_region"}, "region STRING NOT NULL, n BIGINT", {"region"},
                   GetParam().format_version);
  ASSERT_ERROR(Bind(R"(
    CREATE SOURCE accounts FROM TABLE lake.accounts WITH (mode = 'changelog');
    CREATE PIPELINE totals AS INSERT INTO lake.by_region
      SELECT region, approx_count_distinct(id) FROM accounts GROUP BY region;
  )")
                   .status(),
               StatusCode::kNotImplemented, "a HyperLogLog cannot take values back");
  ASSERT_ERROR(Bind(R"(
    CREATE SOURCE accounts FROM TABLE lake.accounts WITH (mode = 'changelog', start = 'latest');
    CREATE PIPELINE totals AS INSERT INTO lake.by_region
      SELECT region, count(*) FROM accounts GROUP BY region;
  )")
                   .status(),
               StatusCode::kInvalidArgument, "reads it from the start");
  ASSERT_ERROR(Bind(R"(
    CREATE SOURCE cdc (id BIGINT, region STRING) WITH (connector = 'http') FORMAT DEBEZIUM;
    CREATE PIPELINE totals AS INSERT INTO lake.by_region
      SELECT region, count(*) FROM cdc GROUP BY region;
  )")
                   .status(),
               StatusCode::kNotImplemented, "aggregate over its changelog");
}

INSTANTIATE_TEST_SUITE_P(FormatsAndLanes, UpdatingAggregateTest,
                         ::testing::Values(Case{2, 1}, Case{2, 2}, Case{3, 1}, Case{3, 2}),
                         [](const auto& info) {
                           return fmt::format("v{}_parallelism{}", info.param.format_version,
                                              info.param.parallelism);
                         });

}  // namespace
}  // namespace sluice::pipeline
