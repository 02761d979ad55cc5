// Change sources into a primary-key table (FORMAT DEBEZIUM, FORMAT UPSERT):
// a random change stream of a database table (snapshot reads, inserts,
// updates, deletes, repeated keys, changes the producer sends again, events
// that do not fit) against a model of the mirror, checked after every
// checkpoint and across restarts, with the changelog of each checkpoint's
// snapshot against the model's diff.
#include <gtest/gtest.h>

#include <deque>
#include <fstream>
#include <map>
#include <optional>
#include <random>
#include <set>

#include "catalog/row_delete.h"
#include "columnar/json_writer.h"
#include "columnar/sql_schema.h"
#include "common/testing.h"
#include "iceberg/changelog.h"
#include "iceberg/schema_update.h"
#include "iceberg/table_builder.h"
#include "maintenance/compact.h"
#include "pipeline/bind.h"
#include "pipeline/test_util.h"
#include "sources/file_source.h"
#include "sql/parser.h"

namespace sluice::pipeline {
namespace {

// A source of scripted records with message keys and tombstones (as Kafka
// delivers them), one partition.
class ScriptedSource : public Source {
 public:
  struct Record {
    std::string key;
    std::optional<std::string> value;
  };
  explicit ScriptedSource(const std::vector<Record>* records) : records_(records) {}
  std::string Describe() const override { return "scripted"; }
  Status Seek(const Positions& positions) override {
    auto it = positions.find(kPartition);
    next_ = it == positions.end() ? 0 : it->second;
    return Status::OK();
  }
  Result<int64_t> Poll(int64_t, int,
                       const std::function<void(const SourceRecord&)>& sink) override {
    int64_t n = 0;
    for (; next_ < static_cast<int64_t>(records_->size()); ++next_, ++n) {
      const Record& r = (*records_)[next_];
      SourceRecord record{kPartition, next_, 1, r.value ? std::string_view(*r.value) : ""};
      record.key = r.key;
      record.has_value = r.value.has_value();
      sink(record);
    }
    return n;
  }
  Positions CurrentPositions() const override { return {{kPartition, next_}}; }
  Positions Lag() const override {
    return {{kPartition, static_cast<int64_t>(records_->size()) - next_}};
  }

 private:
  inline static const std::string kPartition = "0";
  const std::vector<Record>* records_;
  int64_t next_ = 0;
};

struct ChangeCase {
  int format_version;
  int parallelism;
};

class ChangeTest : public testing::PipelineFixture,
                   public ::testing::WithParamInterface<ChangeCase> {
 protected:
  void SetUp() override {
    PipelineFixture::SetUp();
    CreateKeyedTable(mirror_, "id BIGINT NOT NULL, name STRING NOT NULL, balance BIGINT", {"id"},
                     GetParam().format_version);
  }

  // The pipeline `sql` defines (a source `cdc` and a pipeline `mirror`).
  Result<PipelineOptions> Bind(const std::string& sql, const std::string& pipeline = "mirror") {
    ASSIGN_OR_RETURN(sql::Script script, sql::ParseScript(sql));
    ASSIGN_OR_RETURN(auto sources, SourcesOf(script));
    ASSIGN_OR_RETURN(const sql::CreatePipeline* p, FindPipeline(script, pipeline));
    ASSIGN_OR_RETURN(PipelineOptions o, BindPipeline(*catalog_, *io_, *p, sources));
    o.state_dir = (dir_ / "state" / pipeline).string();
    o.commit_interval_ms = 60'000;
    o.batch_rows = 64;
    o.parallelism = GetParam().parallelism;
    return o;
  }

  struct Row {
    std::string name;
    int64_t balance = 0;
    std::string region;
  };
  static std::string Image(int64_t id, const Row& r) {
    return fmt::format(R"({{"id": {}, "name": "{}", "balance": {}, "region": "{}"}})", id, r.name,
                       r.balance, r.region);
  }
  // What the mirror holds of the model (the pipeline keeps region <> 'eu').
  std::map<int64_t, std::string> Mirror() const {
    std::map<int64_t, std::string> out;
    for (const auto& [id, r] : db_) {
      if (r.region == "eu") continue;
      out[id] = fmt::format(R"({{"id":{},"name":"{}","balance":{}}})", id, r.name, r.balance);
    }
    return out;
  }
  std::vector<std::string> ModelRows() const {
    std::vector<std::string> out;
    for (const auto& [id, row] : Mirror()) out.push_back(row);
    std::sort(out.begin(), out.end());
    return out;
  }
  // The changes from mirror `before` to `after`, as "+I {row}" lines, sorted.
  static std::vector<std::string> Diff(const std::map<int64_t, std::string>& before,
                                       const std::map<int64_t, std::string>& after) {
    std::vector<std::string> out;
    for (const auto& [id, row] : before) {
      auto it = after.find(id);
      if (it == after.end()) {
        out.push_back("-D " + row);
      } else if (it->second != row) {
        out.push_back("-U " + row);
        out.push_back("+U " + it->second);
      }
    }
    for (const auto& [id, row] : after) {
      if (!before.count(id)) out.push_back("+I " + row);
    }
    std::sort(out.begin(), out.end());
    return out;
  }
  // The table's changelog after snapshot `from` (all when none), in order, as
  // Diff writes it.
  std::vector<std::string> Changelog(std::optional<int64_t> from, int* snapshots = nullptr) {
    std::vector<std::string> out;
    auto t = catalog::Table::Load(*catalog_, *io_, mirror_);
    EXPECT_TRUE(t.ok()) << t.status().ToString();
    if (!t.ok()) return out;
    iceberg::ChangelogOptions o;
    o.from_snapshot = from;
    auto md = std::make_shared<const iceberg::TableMetadata>((*t)->metadata());
    Status st = iceberg::ReadChangelog(*io_, md, o, [&](iceberg::SnapshotChanges&& c) {
      if (snapshots) ++*snapshots;
      for (int64_t r = 0; r < c.rows.num_rows(); ++r) {
        std::string row;
        AppendJsonRow(c.rows, r, &row);
        out.push_back(std::string(iceberg::ChangeKindText(c.kinds[r])) + " " + row);
      }
      return Status::OK();
    });
    EXPECT_TRUE(st.ok()) << st.ToString();
    return out;
  }
  static std::vector<std::string> Sorted(std::vector<std::string> v) {
    std::sort(v.begin(), v.end());
    return v;
  }
  std::optional<int64_t> CurrentSnapshot() {
    auto t = catalog::Table::Load(*catalog_, *io_, mirror_);
    return t.ok() ? (*t)->metadata().current_snapshot_id : std::nullopt;
  }

  catalog::TableIdent mirror_{{"lake"}, "customers"};
  catalog::TableIdent copy_{{"lake"}, "customers_copy"};
  std::map<int64_t, Row> db_;  // the database table the changes come from
};

// A second pipeline reads the mirror's changelog into a copy.
constexpr char kCopyScript[] = R"(
  CREATE SOURCE changes FROM TABLE lake.customers WITH (mode = 'changelog');
  CREATE PIPELINE copy AS INSERT INTO lake.customers_copy SELECT * FROM changes;
)";

constexpr char kDebeziumScript[] = R"(
  CREATE SOURCE cdc (id BIGINT, name STRING, balance BIGINT, region STRING)
    WITH (connector = 'http') FORMAT DEBEZIUM;
  CREATE PIPELINE mirror AS
    INSERT INTO lake.customers SELECT id, name, balance FROM cdc WHERE region <> 'eu';
)";

TEST_P(ChangeTest, ADebeziumMirrorEqualsTheDatabaseAfterEveryCheckpoint) {
  std::mt19937_64 rng(20261202 + GetParam().format_version * 10 + GetParam().parallelism);
  auto pick = [&](int n) { return static_cast<int>(rng() % n); };
  const char* regions[] = {"us", "eu", "apac"};
  // PostgreSQL's source.sequence: [last commit LSN, LSN]; the snapshot's
  // reads share one.
  using Position = std::pair<uint64_t, uint64_t>;
  uint64_t lsn = 1000, commit = 900;
  struct Sent {
    std::string text;
    Position position;
  };
  std::deque<Sent> sent;            // recent events: some are sent again
  std::optional<Position> applied;  // the highest position applied, as the pipeline keeps it
  int64_t dead = 0, resent = 0, skips = 0, deletes = 0, replayed = 0, applied_deletes = 0;
  auto next_position = [&](bool snapshot) {
    if (snapshot) return Position{900, 1000};
    Position p{commit, ++lsn};
    if (pick(3) == 0) commit = lsn;  // a transaction ends
    return p;
  };
  auto event = [&](const char* op, const std::string& before, const std::string& after, Position at,
                   bool snapshot) {
    std::string e =
        fmt::format(R"({{"before": {}, "after": {}, "source": {{"version": "2.5.0.Final", )"
                    R"("connector": "postgresql", "name": "pg", "snapshot": "{}", "db": "shop", )"
                    R"("sequence": "[\"{}\",\"{}\"]", "schema": "public", "table": "customers"}}, )"
                    R"("op": "{}", "ts_ms": 1700000000000}})",
                    before, after, snapshot ? "true" : "false", at.first, at.second, op);
    // Half the events come in the JSON converter's schema wrapper.
    if (pick(2) == 0)
      e = R"({"schema": {"type": "struct", "optional": false}, "payload": )" + e + "}";
    sent.push_back({e, at});
    if (sent.size() > 40) sent.pop_front();
    applied = applied ? std::max(*applied, at) : at;
    return e;
  };
  auto key_only = [](int64_t id) {
    // A delete's before with REPLICA IDENTITY DEFAULT: the key's columns.
    return fmt::format(R"({{"id": {}, "name": null, "balance": null, "region": null}})", id);
  };
  // The snapshot: every row read at one position.
  std::vector<std::string> records;
  for (int64_t id = 0; id < 40; ++id) {
    Row r{fmt::format("c{}", id), id * 10, regions[pick(3)]};
    db_[id] = r;
    records.push_back(event("r", "null", Image(id, r), next_position(true), true));
  }
  ASSERT_OK(log_->Append(records).status());

  ASSERT_OK_AND_ASSIGN(PipelineOptions options, Bind(kDebeziumScript));
  // The copy: the mirror's changelog, chained (FROM TABLE ... mode = 'changelog').
  CreateKeyedTable(copy_, "id BIGINT NOT NULL, name STRING NOT NULL, balance BIGINT", {"id"},
                   GetParam().format_version);
  ASSERT_OK_AND_ASSIGN(PipelineOptions copy_options, Bind(kCopyScript, "copy"));
  copy_options.poll_bytes = 2000;  // a few dozen changes a poll
  std::unique_ptr<Pipeline> copy;
  int64_t copy_changes = 0;  // records the copy's runs read
  auto open_copy = [&]() -> Status {
    ASSIGN_OR_RETURN(copy, OpenOnChangelog(copy_options, mirror_, "changes"));
    return Status::OK();
  };
  std::unique_ptr<Pipeline> p;
  std::map<int64_t, std::string> mirror_before;  // at the last checkpoint
  for (int round = 0; round < 10; ++round) {
    SCOPED_TRACE(fmt::format("round {}", round));
    if (!p || round % 4 == 3) {  // a restart: the log positions come back from the table
      if (p) {
        replayed += p->stats().changes_replayed.load();
        applied_deletes += p->stats().change_deletes.load();
      }
      p.reset();
      ASSERT_OK_AND_ASSIGN(p, Open(options));
    }
    if (round > 0) {
      records.clear();
      for (int i = 0; i < 120; ++i) {
        int64_t id = pick(60);
        auto it = db_.find(id);
        int what = pick(20);
        if (what == 0 && !sent.empty()) {  // the producer sends an earlier event again
          const Sent& again = sent[pick(static_cast<int>(sent.size()))];
          records.push_back(again.text);
          ++resent;
          // Skipped when below the position applied; else applied again
          // (the latest change, at its own position: the table is unchanged).
          if (applied && again.position < *applied) ++skips;
        } else if (what == 1) {  // does not fit: dead letters
          records.push_back(pick(2) == 0 ? R"({"op": "t", "before": null, "after": null})"
                                         : R"({"op": "c", "after": {"id": "x"}})");
          ++dead;
        } else if (what == 2) {  // a tombstone follows a delete: nothing changes
          records.push_back("null");
        } else if (it == db_.end()) {
          Row r{fmt::format("n{}", i), i, regions[pick(3)]};
          db_[id] = r;
          records.push_back(event("c", "null", Image(id, r), next_position(false), false));
        } else if (what < 6) {
          db_.erase(it);
          ++deletes;
          records.push_back(event("d", key_only(id), "null", next_position(false), false));
        } else if (int64_t to = 100 + pick(40); what == 6 && !db_.count(to)) {
          // An update of the key: a delete and a create at one position.
          Row r = it->second;
          db_.erase(it);
          db_[to] = r;
          Position at = next_position(false);
          records.push_back(event("d", Image(id, r), "null", at, false));
          records.push_back(event("c", "null", Image(to, r), at, false));
        } else {
          Row r = it->second;
          r.balance += 1 + pick(100);
          if (pick(4) == 0) r.region = regions[pick(3)];  // may leave or join the mirror
          records.push_back(
              event("u", Image(id, it->second), Image(id, r), next_position(false), false));
          it->second = r;
        }
      }
      ASSERT_OK(log_->Append(records).status());
    }
    std::optional<int64_t> before = CurrentSnapshot();
    if (round == 5) {  // a compaction: its snapshot changes no row
      ASSERT_OK_AND_ASSIGN(auto t, catalog::Table::Load(*catalog_, *io_, mirror_));
      maintenance::CompactOptions co;
      co.min_input_files = 1;
      ASSERT_OK(maintenance::CompactTable(*t, co).status());
    }
    Consume(*p);
    ASSERT_OK(p->Checkpoint());
    ASSERT_EQ(Rows(mirror_), ModelRows());
    // The changelog of the checkpoint's snapshots is the mirror's diff.
    std::map<int64_t, std::string> after = Mirror();
    int snapshots = 0;
    EXPECT_EQ(Sorted(Changelog(before, &snapshots)), Diff(mirror_before, after));
    EXPECT_EQ(snapshots, round == 5 ? 2 : 1);
    mirror_before = std::move(after);
    // The copy follows the changelog (restarted now and then: it resumes
    // at the snapshot and change it committed).
    if (!copy) ASSERT_OK(open_copy());
    if (round % 3 == 2) {  // a checkpoint inside a snapshot's changes, then a restart
      ASSERT_OK(copy->Step(0).status());
      ASSERT_OK(copy->Checkpoint());
      ASSERT_EQ(copy->committed_positions().size(), 1u);
      const auto& [at, offset] = *copy->committed_positions().begin();
      EXPECT_FALSE(std::string_view(at).ends_with(":end")) << at << " " << offset;
      EXPECT_GT(offset, 0);
      copy_changes += copy->stats().records_in.load();
      copy.reset();
      ASSERT_OK(open_copy());
    }
    for (int idle = 0, i = 0; idle < 2 && i < 1000; ++i) {
      ASSERT_OK_AND_ASSIGN(int64_t n, copy->Step(0));
      idle = n == 0 ? idle + 1 : 0;
    }
    ASSERT_OK(copy->Checkpoint());
    ASSERT_EQ(Rows(copy_), ModelRows());
  }
  // The copy was given every change once, across its restarts.
  copy_changes += copy->stats().records_in.load();
  EXPECT_EQ(copy_changes, static_cast<int64_t>(Changelog(std::nullopt).size()));
  // The whole changelog, applied in order to an empty table, gives the mirror.
  std::map<int64_t, std::string> replayed_mirror;
  for (const std::string& change : Changelog(std::nullopt)) {
    std::string row = change.substr(3);
    int64_t id = std::stoll(row.substr(row.find(':') + 1));
    if (change[0] == '+') {
      EXPECT_TRUE(change[1] == 'U' || !replayed_mirror.count(id)) << change;
      replayed_mirror[id] = row;
    } else {
      EXPECT_EQ(replayed_mirror[id], row) << change;
      replayed_mirror.erase(id);
    }
  }
  EXPECT_EQ(replayed_mirror, Mirror());
  EXPECT_EQ(Rows(DeadLetterTable(mirror_)).size(), static_cast<size_t>(dead));
  replayed += p->stats().changes_replayed.load();
  applied_deletes += p->stats().change_deletes.load();
  EXPECT_GT(skips, 0);
  EXPECT_EQ(replayed, skips) << resent << " events were sent again";
  EXPECT_GE(applied_deletes, deletes);  // (and the deletes of key updates)
}

constexpr char kUpsertScript[] = R"(
  CREATE SOURCE cdc (id BIGINT, name STRING, balance BIGINT)
    WITH (connector = 'kafka', brokers = 'x:9092', topic = 'customers') FORMAT UPSERT;
  CREATE PIPELINE mirror AS INSERT INTO lake.customers SELECT * FROM cdc;
)";

TEST_P(ChangeTest, AnUpsertStreamDeletesKeysByTombstonesAndDeletedMarkers) {
  ASSERT_OK_AND_ASSIGN(PipelineOptions options, Bind(kUpsertScript));
  std::vector<ScriptedSource::Record> records;
  std::map<int64_t, std::string> model;
  std::mt19937_64 rng(7 + GetParam().parallelism);
  auto row = [](int64_t id, int64_t n) {
    return fmt::format(R"({{"id":{},"name":"v{}","balance":{}}})", id, n, n);
  };
  std::unique_ptr<Pipeline> p;
  int64_t n = 0;
  for (int round = 0; round < 6; ++round) {
    SCOPED_TRACE(fmt::format("round {}", round));
    if (!p || round == 3) {
      p.reset();
      ASSERT_OK_AND_ASSIGN(
          p, Pipeline::Open(*catalog_, *io_, options, std::make_unique<ScriptedSource>(&records)));
    }
    for (int i = 0; i < 200; ++i) {
      int64_t id = static_cast<int64_t>(rng() % 50);
      std::string key = fmt::format(R"({{"id": {}}})", id);
      switch (rng() % 6) {
        case 0:  // a Kafka tombstone
          records.push_back({key, std::nullopt});
          model.erase(id);
          break;
        case 1:  // Debezium's flattened delete
          records.push_back(
              {key, fmt::format(R"({{"id": {}, "name": "gone", "__deleted": "true"}})", id)});
          model.erase(id);
          break;
        default:
          ++n;
          records.push_back({key, row(id, n)});
          model[id] = row(id, n);
      }
    }
    records.push_back({"", std::nullopt});  // a tombstone without a key: a dead letter
    Consume(*p);
    ASSERT_OK(p->Checkpoint());
    std::vector<std::string> want;
    for (const auto& [id, r] : model) want.push_back(r);
    std::sort(want.begin(), want.end());
    ASSERT_EQ(Rows(mirror_), want);
    if (round == 0) {
      // The first snapshot deleted the versions it replaced itself (keys
      // changed twice): its changelog is its rows, inserted.
      EXPECT_EQ(Sorted(Changelog(std::nullopt)), Diff({}, model));
    }
  }
  EXPECT_EQ(Rows(DeadLetterTable(mirror_)).size(), 6u);
}

TEST_P(ChangeTest, AFolderOfDebeziumFilesIsMirroredInFileOrder) {
  // Two files of a MySQL table's change events (the second written later).
  std::filesystem::path in = dir_ / "changes";
  std::filesystem::create_directories(in);
  auto source = [](int pos, const char* snapshot) {
    return fmt::format(R"({{"connector": "mysql", "snapshot": "{}", "file": "mysql-bin.000003", )"
                       R"("pos": {}, "row": 0}})",
                       snapshot, pos);
  };
  std::ofstream(in / "part-0001.jsonl")
      << R"({"before": null, "after": {"id": 1, "name": "ann", "balance": 10, "region": "us"}, "source": )"
      << source(100, "true") << R"(, "op": "r", "ts_ms": 1})"
      << "\n"
      << R"({"before": null, "after": {"id": 2, "name": "bob", "balance": 20, "region": "us"}, "source": )"
      << source(100, "last") << R"(, "op": "r", "ts_ms": 1})"
      << "\n"
      << R"({"schema": {"type": "struct"}, "payload": {"before": {"id": 1, "name": "ann", "balance": 10, "region": "us"}, )"
      << R"("after": {"id": 1, "name": "ann", "balance": 15, "region": "us"}, "source": )"
      << source(200, "false") << R"(, "op": "u", "ts_ms": 2}})"
      << "\n";
  std::ofstream(in / "part-0002.jsonl")
      << R"({"before": {"id": 2, "name": null, "balance": null, "region": null}, "after": null, "source": )"
      << source(300, "false") << R"(, "op": "d", "ts_ms": 3})"
      << "\n"
      << "null\n"
      << R"({"before": null, "after": {"id": 3, "name": "cy", "balance": 30, "region": "apac"}, "source": )"
      << source(400, "false") << R"(, "op": "c", "ts_ms": 4})"
      << "\n";
  ASSERT_OK_AND_ASSIGN(PipelineOptions options, Bind(kDebeziumScript));
  sources::FileSourceOptions fo;
  fo.dir = in.string();
  ASSERT_OK_AND_ASSIGN(auto files, sources::FileSource::Open(fo));
  ASSERT_OK_AND_ASSIGN(auto p, Pipeline::Open(*catalog_, *io_, options, std::move(files)));
  for (int i = 0; i < 20 && !p->source().Exhausted(); ++i) ASSERT_OK(p->Step(0).status());
  ASSERT_OK(p->Checkpoint());
  EXPECT_EQ(Rows(mirror_), (std::vector<std::string>{R"({"id":1,"name":"ann","balance":15})",
                                                     R"({"id":3,"name":"cy","balance":30})"}));
  EXPECT_EQ(p->stats().change_deletes.load(), 1);
}

TEST_P(ChangeTest, ChangeSourcesNeedAPrimaryKeyAndRefuseAggregates) {
  ASSERT_ERROR(Bind(R"(
    CREATE SOURCE cdc (id BIGINT NOT NULL, user_id BIGINT, kind STRING, ts TIMESTAMPTZ)
      WITH (connector = 'http') FORMAT DEBEZIUM;
    CREATE PIPELINE mirror AS INSERT INTO lake.events SELECT * FROM cdc;)")
                   .status(),
               StatusCode::kInvalidArgument, "table lake.events has no PRIMARY KEY");
  ASSERT_ERROR(Bind(R"(
    CREATE SOURCE cdc (id BIGINT, name STRING, balance BIGINT) WITH (connector = 'http')
      FORMAT UPSERT;
    CREATE PIPELINE mirror AS INSERT INTO lake.customers
      SELECT id, name, sum(balance) FROM cdc GROUP BY id, name;)")
                   .status(),
               StatusCode::kNotImplemented, "an aggregation over FORMAT UPSERT");
}

class ChangelogTest : public testing::PipelineFixture {};

TEST_F(ChangelogTest, ATableWithoutAKeyHasInsertsAndDeletesAndRangesAreChecked) {
  ASSERT_OK_AND_ASSIGN(auto p, Open(Options()));
  Produce(0, 30);
  Consume(*p);
  ASSERT_OK(p->Checkpoint());
  ASSERT_OK_AND_ASSIGN(auto t, catalog::Table::Load(*catalog_, *io_, target_));
  const int64_t first = *t->metadata().current_snapshot_id;
  ASSERT_OK(catalog::DeleteWhere(*t, "id < 4").status());
  ASSERT_OK(t->Refresh());
  auto md = std::make_shared<const iceberg::TableMetadata>(t->metadata());
  std::vector<std::pair<int64_t, std::string>> seen;  // snapshot, "kind id"
  auto collect = [&](iceberg::SnapshotChanges&& c) {
    for (int64_t r = 0; r < c.rows.num_rows(); ++r) {
      seen.emplace_back(c.snapshot_id, fmt::format("{} {}", iceberg::ChangeKindText(c.kinds[r]),
                                                   c.rows.columns[0].Value<int64_t>(r)));
    }
    return Status::OK();
  };
  ASSERT_OK(iceberg::ReadChangelog(*io_, md, {}, collect));
  ASSERT_EQ(seen.size(), 34u);
  std::multiset<std::string> deleted, inserted;
  for (const auto& [snapshot, change] : seen) {
    (snapshot == first ? inserted : deleted).insert(change);
  }
  EXPECT_EQ(inserted.size(), 30u);
  EXPECT_EQ(*inserted.begin(), "+I 0");
  EXPECT_EQ(deleted, (std::multiset<std::string>{"-D 0", "-D 1", "-D 2", "-D 3"}));
  // After the first snapshot: the deletes only.
  seen.clear();
  iceberg::ChangelogOptions after_first;
  after_first.from_snapshot = first;
  ASSERT_OK(iceberg::ReadChangelog(*io_, md, after_first, collect));
  EXPECT_EQ(seen.size(), 4u);
  // Up to the first: the inserts only.
  seen.clear();
  iceberg::ChangelogOptions up_to_first;
  up_to_first.to_snapshot = first;
  ASSERT_OK(iceberg::ReadChangelog(*io_, md, up_to_first, collect));
  EXPECT_EQ(seen.size(), 30u);
  // A range whose start is not an ancestor of its end, and unknown snapshots.
  iceberg::ChangelogOptions backwards;
  backwards.from_snapshot = *md->current_snapshot_id;
  backwards.to_snapshot = first;
  ASSERT_ERROR(iceberg::ReadChangelog(*io_, md, backwards, collect), StatusCode::kNotFound,
               "is not an ancestor of snapshot");
  iceberg::ChangelogOptions unknown;
  unknown.to_snapshot = 42;
  ASSERT_ERROR(iceberg::ReadChangelog(*io_, md, unknown, collect), StatusCode::kNotFound,
               "snapshot 42 is not in the table");
}

TEST_F(ChangelogTest, RowsOfOlderSchemasComeInTheCurrentOne) {
  ASSERT_OK_AND_ASSIGN(auto p, Open(Options()));
  Produce(0, 10);
  Consume(*p);
  ASSERT_OK(p->Checkpoint());
  p.reset();
  // A column added in front of nothing: the rows written before lack it.
  ASSERT_OK_AND_ASSIGN(auto t, catalog::Table::Load(*catalog_, *io_, target_));
  Field note;
  note.name = "note";
  note.type = DataType::String();
  ASSERT_OK(t->UpdateMetadata(
      [&](const iceberg::TableMetadata& base) { return iceberg::AddColumn(base, note); }));
  ASSERT_OK(catalog::DeleteWhere(*t, "id < 2").status());
  ASSERT_OK(t->Refresh());
  auto md = std::make_shared<const iceberg::TableMetadata>(t->metadata());
  std::vector<std::string> changes;
  ASSERT_OK(iceberg::ReadChangelog(*io_, md, {}, [&](iceberg::SnapshotChanges&& c) {
    EXPECT_EQ(c.rows.columns.size(), md->current_schema()->fields.size());
    for (int64_t r = 0; r < c.rows.num_rows(); ++r) {
      std::string row;
      AppendJsonRow(c.rows, r, &row);
      changes.push_back(std::string(iceberg::ChangeKindText(c.kinds[r])) + " " + row);
    }
    return Status::OK();
  }));
  ASSERT_EQ(changes.size(), 12u);
  for (const std::string& c : changes) EXPECT_NE(c.find(R"("note":null)"), std::string::npos) << c;
  EXPECT_EQ(std::count_if(changes.begin(), changes.end(),
                          [](const std::string& c) { return c.starts_with("-D"); }),
            2);
}

INSTANTIATE_TEST_SUITE_P(FormatsAndLanes, ChangeTest,
                         ::testing::Values(ChangeCase{2, 1}, ChangeCase{3, 2}),
                         [](const auto& info) {
                           return fmt::format("v{}_parallelism{}", info.param.format_version,
                                              info.param.parallelism);
                         });

}  // namespace
}  // namespace sluice::pipeline
