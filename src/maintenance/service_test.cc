// The maintenance service on a real table: what it reads of a table's health,
// the order it works in (counts first, the worst partition first, expiry and
// orphans by interval), a table whose policy does not parse resting without
// stopping the others, and its threads compacting a table while it is being
// appended to.
#include "maintenance/service.h"

#include <chrono>
#include <cmath>
#include <thread>

#include "catalog/row_delete.h"
#include "iceberg/table_builder.h"
#include "maintenance/compact.h"
#include "maintenance/files.h"
#include "maintenance/policy.h"
#include "maintenance/test_util.h"

namespace sluice::maintenance {
namespace {

// Records what the service reports.
class Recorder : public Observer {
 public:
  void OnAssessed(const std::string& table, const TableHealth& h, const Policy&) override {
    std::lock_guard<std::mutex> lock(mu);
    health[table] = h;
  }
  void OnCompacted(const std::string&, const CompactResult& r, double) override {
    std::lock_guard<std::mutex> lock(mu);
    for (const auto& p : r.partitions) compacted.push_back(p.partition);
  }
  void OnExpired(const std::string&, const ExpireResult& r, double) override {
    std::lock_guard<std::mutex> lock(mu);
    expired += static_cast<int64_t>(r.expired.size());
  }
  void OnOrphansRemoved(const std::string&, const OrphanResult&, double) override {
    std::lock_guard<std::mutex> lock(mu);
    ++orphan_runs;
  }
  void OnManifestsRewritten(const std::string&, const ManifestRewriteResult& r, double) override {
    std::lock_guard<std::mutex> lock(mu);
    if (r.snapshot_id) ++manifest_rewrites;
  }
  void OnFailed(const std::string& table, const std::string& step, const Status& st) override {
    std::lock_guard<std::mutex> lock(mu);
    failures.push_back(table + " " + step + ": " + st.ToString());
  }

  std::mutex mu;
  std::map<std::string, TableHealth> health;
  std::vector<std::string> compacted;
  int64_t expired = 0, orphan_runs = 0, manifest_rewrites = 0;
  std::vector<std::string> failures;
};

class ServiceTest : public TableFixture {
 protected:
  void SetUp() override { MakeTable("id BIGINT NOT NULL, kind STRING", "kind"); }

  void SetProperty(const std::string& key, const std::string& value) {
    ASSERT_OK(table_->UpdateMetadata(
        [&](const iceberg::TableMetadata& m) -> Result<iceberg::TableMetadata> {
          iceberg::TableMetadata next = m;
          next.properties[key] = value;
          return next;
        }));
  }

  std::unique_ptr<MaintenanceService> Service(ServiceOptions o = {}) {
    if (!o.clock) o.clock = [this] { return now_ms_; };
    return std::make_unique<MaintenanceService>(*catalog_, *io_,
                                                std::vector<catalog::TableIdent>{id_}, o, &rec_);
  }

  // The steps RunOne takes until nothing is due, as "step partition".
  std::vector<std::string> Drain(MaintenanceService& s) {
    std::vector<std::string> out;
    while (auto done = s.RunOne()) {
      std::string step = StepName(done->step);
      if (!done->partition.empty()) step += " " + done->partition;
      if (done->partitions > 1) step += fmt::format(" +{}", done->partitions - 1);
      out.push_back(step);
      if (out.size() > 50) break;  // a loop would be a bug
    }
    return out;
  }

  int64_t now_ms_ = iceberg::NowMillis();
  Recorder rec_;
};

TEST(TieredRunTest, MergesTheSmallestWhileEachFileIsAtMostTwiceTheSumBeforeIt) {
  auto run = [](std::vector<int64_t> sizes, int64_t min) {
    TieredWindow w = TieredRun(std::move(sizes), min);
    return std::make_pair(w.start, w.length);
  };
  using P = std::pair<size_t, size_t>;
  EXPECT_EQ(run({1, 1, 1, 1, 1}, 5), P(0, 5));
  EXPECT_EQ(run({1, 1, 1, 1}, 5).second, 0u) << "fewer than min_files";
  EXPECT_EQ(run({10, 1, 1, 1, 1}, 2), P(0, 4)) << "the 10 waits for 5 bytes after it";
  EXPECT_EQ(run({5, 1, 1, 1}, 2), P(0, 4)) << "3 bytes came after the 5";
  EXPECT_EQ(run({2, 3}, 2), P(0, 2)) << "fresh files of similar sizes";
  EXPECT_EQ(run({1, 10, 10, 10, 10, 10}, 5), P(1, 5)) << "a tiny file does not hold them back";
  EXPECT_EQ(run({1, 100}, 2).second, 0u);
  EXPECT_EQ(run({}, 2).second, 0u);
  EXPECT_EQ(run({4, 4}, 0), P(0, 2)) << "never a single file rewritten alone";
  // A larger factor lets a file join sooner.
  auto factored = [](std::vector<int64_t> sizes, int64_t min, int64_t factor) {
    return TieredRun(std::move(sizes), min, factor).length;
  };
  EXPECT_EQ(factored({1, 3}, 2, 2), 0u) << "3 is more than twice 1";
  EXPECT_EQ(factored({1, 3}, 2, 3), 2u);
  EXPECT_EQ(factored({1, 1, 10}, 2, 4), 2u) << "10 is more than 4 times 2";
  EXPECT_EQ(factored({1, 1, 10}, 2, 5), 3u);
  EXPECT_EQ(factored({1, 1, 3}, 2, 1), 2u) << "factor 1: a file no larger than the sum before it";
  EXPECT_EQ(factored({1, 1, 2}, 2, 1), 3u);
  EXPECT_EQ(factored({2, 2}, 2, 0), 2u) << "a factor under 1 counts as 1";
  EXPECT_EQ(factored({int64_t{1} << 61, int64_t{1} << 61}, 2, 8), 2u) << "no overflow";
  EXPECT_EQ(factored({0, 5}, 2, INT64_MAX), 0u) << "5 is more than any factor times 0";
  EXPECT_EQ(factored({1, INT64_MAX}, 2, INT64_MAX), 2u);
  EXPECT_EQ(factored({INT64_MAX, INT64_MAX, INT64_MAX}, 2, 2), 3u) << "the sum saturates";
}

TEST(TieringModelTest, EachByteIsRewrittenALogarithmicNumberOfTimesAndAPartitionKeepsFewFiles) {
  for (int64_t min : {2, 5}) {
    for (int64_t commits : {100, 3600, 20000}) {
      SCOPED_TRACE(fmt::format("min_files {}, {} commits", min, commits));
      const TieringOutlook o = ModelTiering(commits, 1000, int64_t{1} << 50, min);
      const double n = static_cast<double>(commits);
      EXPECT_LE(o.rewrites_per_byte, std::log(n) / std::log(1.5)) << "log1.5 of the growth";
      EXPECT_GE(o.rewrites_per_byte, 1.0) << "every byte was merged at least once";
      EXPECT_LE(o.max_files, static_cast<int64_t>(std::ceil(std::log2(n))) + min);
      EXPECT_LT(o.mean_files, static_cast<double>(o.max_files) + 1e-9);
      EXPECT_GE(o.mean_files, 1.0);
    }
  }
  // A larger factor keeps fewer files and rewrites more.
  const TieringOutlook two = ModelTiering(20000, 1000, int64_t{1} << 50, 2, 2);
  const TieringOutlook sixteen = ModelTiering(20000, 1000, int64_t{1} << 50, 2, 16);
  EXPECT_LT(sixteen.mean_files, two.mean_files - 1);
  EXPECT_GT(sixteen.rewrites_per_byte, 2 * two.rewrites_per_byte);
  // Files that reach the small-file size leave the tiers: rewriting stops
  // growing with the partition, and the partition is its large files (about
  // one per 64 commits) and a few tiers.
  const TieringOutlook capped = ModelTiering(20000, 1000, 64 * 1000, 5);
  EXPECT_LE(capped.rewrites_per_byte, std::log(64.0) / std::log(1.5) + 1);
  EXPECT_GE(capped.max_files, 20000 / 128) << "the large files stay";
  EXPECT_LE(capped.max_files, 20000 / 32);
  // A commit's file that is not small never joins the tiers.
  const TieringOutlook big = ModelTiering(100, 1000, 1000, 5);
  EXPECT_EQ(big.merges, 0);
  EXPECT_EQ(big.max_files, 100);
}

TEST_F(ServiceTest, AssessmentCountsFilesPerPartitionWorstFirst) {
  for (int i = 0; i < 3; ++i) Append(i * 10, i * 10 + 10, "a");
  for (int i = 0; i < 6; ++i) Append(100 + i * 10, 110 + i * 10, "b");
  ASSERT_OK_AND_ASSIGN(Policy p, PolicyOf(table_->metadata()));
  p.max_files_per_partition = 4;
  ASSERT_OK_AND_ASSIGN(TableHealth h, AssessTable(*table_, p));
  EXPECT_EQ(h.snapshots, 9);
  EXPECT_EQ(h.data_files, 9);
  EXPECT_EQ(h.small_files, 9);
  ASSERT_EQ(h.partitions.size(), 2u);
  EXPECT_EQ(h.partitions[0].partition, "kind=b");
  EXPECT_EQ(h.partitions[0].data_files, 6);
  EXPECT_GT(h.partitions[0].data_bytes, 0);
  EXPECT_EQ(h.partitions[0].debt_files, 5) << "6 small files fill 1 file of the target size";
  EXPECT_EQ(h.partitions[1].partition, "kind=a");
  EXPECT_EQ(h.max_partition_files, 6);
  EXPECT_EQ(h.partitions_over_slo, 1);
  EXPECT_EQ(h.debt_files, 5 + 2);
}

TEST_F(ServiceTest, WorksCountsFirstThenTheWorstPartitionThenExpiryAndOrphansByInterval) {
  for (int i = 0; i < 5; ++i) Append(i * 10, i * 10 + 10, "a");
  for (int i = 0; i < 7; ++i) Append(100 + i * 10, 110 + i * 10, "b");
  Append(200, 210, "c");
  SetProperty("history.expire.max-snapshot-age-ms", "0");  // every snapshot but the newest
  std::set<int64_t> ids = Ids();
  now_ms_ = iceberg::NowMillis() + 60000;  // the compactions' snapshots are older still
  auto s = Service();
  EXPECT_EQ(Drain(*s),
            (std::vector<std::string>{"assess", "expire", "compact kind=b +1", "assess"}))
      << "kind=b (7 files) first, kind=a (5) in the same unit, kind=c (1) not due";
  EXPECT_TRUE(rec_.failures.empty()) << rec_.failures[0];
  EXPECT_EQ(Ids(), ids) << "the same rows";
  const TableHealth& h = rec_.health[id_.ToString()];
  EXPECT_EQ(h.data_files, 3) << "one file per partition";
  EXPECT_EQ(rec_.expired, 13 - 1) << "the 13 appends but the newest (expiry goes first)";
  // Nothing is due until the clock moves: counts every assess interval,
  // expiry every minute, orphans 5 minutes after the start, then every hour.
  EXPECT_TRUE(Drain(*s).empty());
  now_ms_ += 5000;
  EXPECT_EQ(Drain(*s), (std::vector<std::string>{"assess"}));
  now_ms_ += 60'000;
  EXPECT_EQ(Drain(*s), (std::vector<std::string>{"assess", "expire"}))
      << "counts overdue by a whole interval go first";
  EXPECT_EQ(rec_.expired, 12 + 1) << "then the newest append (one compaction commit is current)";
  EXPECT_EQ(rec_.compacted, (std::vector<std::string>{"kind=b", "kind=a"}));
  EXPECT_EQ(rec_.orphan_runs, 0);
  now_ms_ += 3'600'000;
  EXPECT_EQ(Drain(*s), (std::vector<std::string>{"assess", "expire", "orphans"}));
}

class ServiceV3Test : public ServiceTest {
 protected:
  void SetUp() override { MakeTable("id BIGINT NOT NULL, kind STRING", "kind", "", 3); }
};

// A partition of one file, half of it deleted: due by its deleted fraction
// alone, rewritten once, and then nothing is due (no loop).
TEST_F(ServiceV3Test, AMostlyDeletedFileIsRewrittenOnceByTheService) {
  Append(0, 100, "a");
  Append(100, 200, "b");
  ASSERT_OK(catalog::DeleteWhere(*table_, "id < 50 OR id = 150").status());
  std::set<int64_t> ids = Ids();
  auto s = Service();
  EXPECT_EQ(Drain(*s), (std::vector<std::string>{"assess", "expire", "compact kind=a", "assess"}))
      << "kind=a: one small file (fewer than min-input-files), half of it deleted";
  EXPECT_TRUE(rec_.failures.empty()) << rec_.failures[0];
  EXPECT_EQ(Ids(), ids);
  const TableHealth& h = rec_.health[id_.ToString()];
  EXPECT_EQ(h.delete_files, 1) << "kind=b's deletion vector (1 row of 100) stays";
  EXPECT_TRUE(Drain(*s).empty());
}

TEST_F(ServiceTest, RewritesManifestsOnceAboveThePolicysCountThenCountsAgain) {
  for (int i = 0; i < 4; ++i) Append(i * 10, i * 10 + 10, "c" + std::to_string(i));
  SetProperty("sluice.maintenance.max-manifests", "3");
  auto s = Service();
  EXPECT_EQ(Drain(*s), (std::vector<std::string>{"assess", "expire", "manifests", "assess"}))
      << "4 appends, 4 manifests, 3 allowed; no partition is due for compaction";
  EXPECT_EQ(rec_.manifest_rewrites, 1);
  EXPECT_EQ(rec_.health[id_.ToString()].manifests, 1);
  EXPECT_EQ(rec_.health[id_.ToString()].data_files, 4);
}

TEST_F(ServiceTest, APolicyThatDoesNotParseIsReportedAndTheTableRests) {
  for (int i = 0; i < 5; ++i) Append(i * 10, i * 10 + 10, "a");
  SetProperty("sluice.maintenance.slo-action", "panic");
  auto s = Service();
  EXPECT_EQ(Drain(*s), (std::vector<std::string>{"assess"}));
  ASSERT_EQ(rec_.failures.size(), 1u);
  EXPECT_NE(rec_.failures[0].find("db.events assess"), std::string::npos) << rec_.failures[0];
  EXPECT_NE(rec_.failures[0].find("sluice.maintenance.slo-action"), std::string::npos);
  EXPECT_TRUE(Drain(*s).empty()) << "it rests until the next assessment";
  SetProperty("sluice.maintenance.slo-action", "log");
  now_ms_ += 5000;
  EXPECT_EQ(Drain(*s), (std::vector<std::string>{"assess", "expire", "compact kind=a", "assess"}));
}

// sluice.maintenance.tier-factor reaches both the assessment (what is due)
// and the compaction (what merges): a large file waits for the small ones
// after it to sum to half its size, or to 1/1000 of it with factor 1000.
TEST_F(ServiceTest, TheTierFactorLetsALargerFileJoinTheSmallOnesSooner) {
  Append(0, 20000, "a");
  Append(20000, 20010, "a");
  Append(20010, 20020, "a");
  ASSERT_OK_AND_ASSIGN(Policy p, PolicyOf(table_->metadata()));
  EXPECT_EQ(p.tier_factor, 2);
  p.min_input_files = 2;
  ASSERT_OK_AND_ASSIGN(TableHealth h, AssessTable(*table_, p));
  ASSERT_EQ(h.partitions.size(), 1u);
  EXPECT_EQ(h.partitions[0].due_files, 2) << "the two small files, not the large one";

  SetProperty("sluice.maintenance.tier-factor", "1000");
  SetProperty("sluice.maintenance.min-input-files", "2");
  ASSERT_OK_AND_ASSIGN(p, PolicyOf(table_->metadata()));
  EXPECT_EQ(p.tier_factor, 1000);
  ASSERT_OK_AND_ASSIGN(h, AssessTable(*table_, p));
  EXPECT_EQ(h.partitions[0].due_files, 3);
  CompactOptions o;
  o.tiered = true;
  ASSERT_OK_AND_ASSIGN(CompactResult r, CompactTable(*table_, o));
  ASSERT_EQ(r.partitions.size(), 1u);
  EXPECT_EQ(r.partitions[0].inputs.size(), 3u);
  EXPECT_EQ(r.partitions[0].rows, 20020);

  for (const char* bad : {"1", "1025", "99999999999999999999"}) {
    SetProperty("sluice.maintenance.tier-factor", bad);
    ASSERT_ERROR(PolicyOf(table_->metadata()).status(), StatusCode::kInvalidArgument,
                 "sluice.maintenance.tier-factor");
  }
}

TEST_F(ServiceTest, ADisabledTableIsAssessedButNotTouched) {
  for (int i = 0; i < 5; ++i) Append(i * 10, i * 10 + 10, "a");
  SetProperty("sluice.maintenance.enabled", "false");
  auto s = Service();
  EXPECT_EQ(Drain(*s), (std::vector<std::string>{"assess"}));
  EXPECT_EQ(rec_.health[id_.ToString()].data_files, 5);
}

TEST_F(ServiceTest, ItsThreadsCompactWhileATableIsAppendedTo) {
  SetProperty("sluice.maintenance.min-input-files", "2");
  ServiceOptions o;
  o.clock = [] { return iceberg::NowMillis(); };
  o.assess_interval_ms = 20;
  o.threads = 2;
  o.cpu_cores = 2;
  auto s = Service(o);
  s->Start();
  for (int i = 0; i < 20; ++i) Append(i * 10, i * 10 + 10, "a");
  // The service catches up: nothing is due any more (read from the table
  // itself: the service's last count may predate the last append), with
  // the partition's 20 files merged into a few of growing sizes.
  ASSERT_OK_AND_ASSIGN(Policy policy, PolicyOf(table_->metadata()));
  TableHealth h;
  for (int tries = 0; tries < 1000; ++tries) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    ASSERT_OK(table_->Refresh());
    ASSERT_OK_AND_ASSIGN(h, AssessTable(*table_, policy));
    if (h.partitions.size() == 1 && h.partitions[0].due_files == 0) break;
  }
  s->Stop();
  ASSERT_EQ(h.partitions.size(), 1u);
  EXPECT_EQ(h.partitions[0].due_files, 0);
  EXPECT_LE(h.data_files, 5) << "20 appends, merged by size tiers";
  EXPECT_FALSE(rec_.compacted.empty());
  EXPECT_TRUE(rec_.failures.empty()) << rec_.failures[0];
  std::set<int64_t> want;
  for (int64_t id = 0; id < 200; ++id) want.insert(id);
  EXPECT_EQ(Ids(), want);
}

}  // namespace
}  // namespace sluice::maintenance
