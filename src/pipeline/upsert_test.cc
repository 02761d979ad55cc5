// Pipelines into a primary-key table upsert: checked against a model (a map
// from key to the key's last row) after every checkpoint, through restarts,
// compactions, a user's DELETE and another engine's append of a key the
// table holds.
#include <gtest/gtest.h>

#include <map>
#include <random>

#include "catalog/row_delete.h"
#include "columnar/sql_schema.h"
#include "common/testing.h"
#include "iceberg/data_writer.h"
#include "iceberg/table_builder.h"
#include "maintenance/compact.h"
#include "pipeline/test_util.h"

namespace sluice::pipeline {
namespace {

struct UpsertCase {
  int format_version;
  int parallelism;
};

class UpsertTest : public testing::PipelineFixture,
                   public ::testing::WithParamInterface<UpsertCase> {
 protected:
  void SetUp() override {
    PipelineFixture::SetUp();
    CreateKeyedTable(users_, "id BIGINT NOT NULL, user_id BIGINT, kind STRING, ts TIMESTAMPTZ",
                     {"id"}, GetParam().format_version);
  }

  PipelineOptions UserOptions() {
    PipelineOptions o = Options();
    o.target = users_;
    o.parallelism = GetParam().parallelism;
    return o;
  }

  // The record of one change: key `id`, the change's number as user_id.
  static std::string Change(int64_t id, int64_t n) {
    return fmt::format(R"({{"id":{},"user_id":{},"kind":"k{}","ts":"2024-01-01T10:00:00Z"}})", id,
                       n, n % 3);
  }
  // The row a change leaves, as TableRows prints it.
  static std::string Row(int64_t id, int64_t n) {
    return fmt::format(
        R"({{"id":{},"user_id":{},"kind":"k{}","ts":"2024-01-01T10:00:00.000000+00:00"}})", id, n,
        n % 3);
  }
  std::vector<std::string> ModelRows() const {
    std::vector<std::string> out;
    for (const auto& [id, n] : model_) out.push_back(Row(id, n));
    std::sort(out.begin(), out.end());
    return out;
  }

  // Another engine appends a row for `id` (a key the table may hold).
  void ForeignAppend(int64_t id, int64_t n) {
    ASSERT_OK_AND_ASSIGN(auto t, catalog::Table::Load(*catalog_, *io_, users_));
    ASSERT_OK_AND_ASSIGN(auto w, iceberg::DataWriter::Make(*io_, t->metadata()));
    Batch b = Batch::Make(std::make_shared<Schema>(*t->metadata().current_schema()));
    b.columns[0].Append<int64_t>(id);
    b.columns[1].Append<int64_t>(n);
    b.columns[2].AppendBytes(fmt::format("k{}", n % 3));
    b.columns[3].Append<int64_t>(1704103200000000);  // 2024-01-01T10:00:00Z
    ASSERT_OK(w->Write(b));
    ASSERT_OK_AND_ASSIGN(auto files, w->Close());
    catalog::SnapshotUpdate u;
    u.add_data = std::move(files);
    ASSERT_OK(t->Commit(u).status());
  }

  catalog::TableIdent users_{{"lake"}, "users"};
  std::map<int64_t, int64_t> model_;  // id -> the number of its last change
};

TEST_P(UpsertTest, TheTableHoldsEachKeysLastRowAfterEveryCheckpoint) {
  std::mt19937_64 rng(20261202);
  int64_t n = 0;
  std::unique_ptr<Pipeline> p;
  for (int round = 0; round < 12; ++round) {
    SCOPED_TRACE(fmt::format("round {}", round));
    if (!p || round % 4 == 3) {  // a restart loads the key index from the table
      p.reset();
      ASSERT_OK_AND_ASSIGN(p, Open(UserOptions()));
      EXPECT_EQ(p->stats().key_index_keys.load(), static_cast<int64_t>(model_.size()));
    }
    // 150 changes over 60 keys: repeated keys within one checkpoint and
    // across checkpoints.
    std::vector<std::string> records;
    for (int i = 0; i < 150; ++i) {
      int64_t id = static_cast<int64_t>(rng() % 60);
      records.push_back(Change(id, ++n));
      model_[id] = n;
    }
    ASSERT_OK(log_->Append(records).status());
    Consume(*p);
    ASSERT_OK(p->Checkpoint());
    ASSERT_EQ(Rows(users_), ModelRows());
    EXPECT_EQ(p->stats().key_index_keys.load(), static_cast<int64_t>(model_.size()));

    // Other writers between checkpoints: the index must follow them.
    ASSERT_OK_AND_ASSIGN(auto t, catalog::Table::Load(*catalog_, *io_, users_));
    if (round % 3 == 1) {  // a compaction moves every row
      maintenance::CompactOptions co;
      co.min_input_files = 1;
      ASSERT_OK(maintenance::CompactTable(*t, co).status());
      // The next checkpoint follows it (the keys' rows moved) without loading
      // the index again, and replaces rows in the compacted files.
      int64_t loads = p->stats().key_index_loads.load();
      int64_t catchups = p->stats().key_index_catchups.load();
      int64_t id = model_.begin()->first;
      ASSERT_OK(log_->Append({Change(id, ++n)}).status());
      model_[id] = n;
      Consume(*p);
      ASSERT_OK(p->Checkpoint());
      EXPECT_EQ(p->stats().key_index_loads.load(), loads);
      EXPECT_EQ(p->stats().key_index_catchups.load(), catchups + 1);
    } else if (round % 3 == 2) {  // a user's DELETE of a few keys
      ASSERT_OK(catalog::DeleteWhere(*t, "id < 5").status());
      for (int64_t id = 0; id < 5; ++id) model_.erase(id);
    } else if (round == 3) {  // another engine writes a key the table holds
      int64_t id = model_.begin()->first;
      ForeignAppend(id, ++n);
      // Two rows for the key now; the pipeline's next change of it deletes both.
      ASSERT_OK(log_->Append({Change(id, ++n)}).status());
      model_[id] = n;
      Consume(*p);
      ASSERT_OK(p->Checkpoint());
    }
    ASSERT_EQ(Rows(users_), ModelRows());
  }
  EXPECT_GT(p->stats().upsert_deletes.load(), 0);
  EXPECT_GT(p->stats().key_index_loads.load(), 0);
}

INSTANTIATE_TEST_SUITE_P(FormatsAndLanes, UpsertTest,
                         ::testing::Values(UpsertCase{2, 1}, UpsertCase{2, 2}, UpsertCase{3, 1},
                                           UpsertCase{3, 2}),
                         [](const auto& info) {
                           return fmt::format("v{}_parallelism{}", info.param.format_version,
                                              info.param.parallelism);
                         });

}  // namespace
}  // namespace sluice::pipeline
