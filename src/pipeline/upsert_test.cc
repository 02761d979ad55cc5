// Pipelines into a primary-key table upsert: checked against a model (a map
// from key to the key's last row) after every checkpoint, through restarts,
// compactions, a user's DELETE and another engine's append of a key the
// table holds.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>

#include "catalog/row_delete.h"
#include "columnar/sql_schema.h"
#include "common/crc32c.h"
#include "common/endian.h"
#include "common/kill_point.h"
#include "common/testing.h"
#include "iceberg/data_writer.h"
#include "iceberg/scan.h"
#include "iceberg/table_builder.h"
#include "maintenance/compact.h"
#include "pipeline/test_util.h"
#include "state/state_property.h"

namespace sluice::pipeline {
namespace {

struct UpsertCase {
  int format_version;
  int parallelism;
  int64_t state_memory = 0;  // 0: the default (the index stays in memory)
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
    if (GetParam().state_memory > 0) o.state_memory = GetParam().state_memory;
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

  // 150 changes of random keys of 60 (about 55 of them changed; change
  // numbers from ++*n), checkpointed: the table must hold the model's rows.
  void CheckpointRandomChanges(Pipeline& p, std::mt19937_64& rng, int64_t* n) {
    std::vector<std::string> records;
    for (int i = 0; i < 150; ++i) {
      int64_t id = static_cast<int64_t>(rng() % 60);
      records.push_back(Change(id, ++*n));
      model_[id] = *n;
    }
    ASSERT_OK(log_->Append(records).status());
    Consume(p);
    ASSERT_OK(p.Checkpoint());
    ASSERT_EQ(Rows(users_), ModelRows());
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
    if (!p || round % 4 == 3) {
      // A restart reads the key index from its state files, and loads it
      // from the table when another writer changed keys since (round 3
      // follows a user's DELETE).
      p.reset();
      ASSERT_OK_AND_ASSIGN(p, Open(UserOptions()));
      EXPECT_EQ(p->stats().key_index_keys.load(), static_cast<int64_t>(model_.size()));
      EXPECT_EQ(p->stats().key_index_restores.load(), round > 0 ? 1 : 0);
      EXPECT_EQ(p->stats().key_index_loads.load(), round == 3 || round == 0 ? 1 : 0);
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
  // (A budget of a few dozen keys: the index spilled to its store.)
  if (GetParam().state_memory > 0) {
    EXPECT_GT(p->stats().key_index_spills.load(), 0);
  }
}

// One commit interval's changes stay in memory until its checkpoint: past
// their share of state.memory the checkpoint comes early, so a backlog of
// many keys (or many changes of a few hot keys) does not outgrow the budget,
// and the table ends the same. Once committed they count no more: a trickle
// of changes after waits for the commit interval again.
TEST_P(UpsertTest, PendingChangesPastTheirMemoryCheckpointEarly) {
  PipelineOptions o = UserOptions();
  o.state_memory = 128 << 10;  // pending changes up to 128 KiB: about 2,000 keys
  o.batch_rows = 512;
  o.poll_bytes = 32 << 10;  // a few hundred records a step
  ASSERT_OK_AND_ASSIGN(auto p, Open(o));
  int64_t n = 0;
  // All within the commit interval (a minute).
  auto consume = [&](int64_t changes, int64_t keys) {
    std::vector<std::string> records;
    for (int64_t i = 0; i < changes; ++i) {
      const int64_t id = i % keys;
      records.push_back(Change(id, ++n));
      model_[id] = n;
    }
    ASSERT_OK(log_->Append(records).status());
    Consume(*p);
  };
  consume(12000, 9000);  // many keys
  int64_t early = p->stats().key_index_early_checkpoints.load();
  EXPECT_GE(early, 3);
  EXPECT_EQ(p->stats().commits.load(), early) << "only the early checkpoints committed";
  consume(20000, 50);  // hot keys: each change supersedes a row written before
  EXPECT_GT(p->stats().key_index_early_checkpoints.load(), early);
  early = p->stats().key_index_early_checkpoints.load();
  EXPECT_EQ(p->stats().commits.load(), early);
  consume(20, 50);
  for (int i = 0; i < 5; ++i) ASSERT_OK(p->Step(0).status());
  EXPECT_EQ(p->stats().key_index_early_checkpoints.load(), early);
  EXPECT_EQ(p->stats().commits.load(), early) << "a trickle waits for the commit interval";
  ASSERT_OK(p->Checkpoint());
  EXPECT_EQ(Rows(users_), ModelRows());
  EXPECT_EQ(p->stats().key_index_keys.load(), 9000);
}

// A commit whose key index fails half-way to take its changes (a spill
// store's write failing): the commit stands, the index is loaded again from
// the table before the next checkpoint plans its deletes, every checkpoint
// leaves each key's last row once, and a restart reads the state files the
// later commits wrote.
TEST_P(UpsertTest, AKeyIndexThatFailsToTakeACommitIsLoadedAgainFromTheTable) {
  std::mt19937_64 rng(11);
  int64_t n = 0;
  auto checkpoint = [&](Pipeline& p) { CheckpointRandomChanges(p, rng, &n); };
  ASSERT_OK_AND_ASSIGN(auto p, Open(UserOptions()));
  checkpoint(*p);
  const int64_t loads = p->stats().key_index_loads.load();
  ArmFailPoint("key_index.commit", 25);  // the 25th key the next commit moves
  checkpoint(*p);
  ArmFailPoint("");
  EXPECT_EQ(p->stats().key_index_loads.load(), loads) << "not loaded until it is needed";
  checkpoint(*p);
  EXPECT_EQ(p->stats().key_index_loads.load(), loads + 1) << "the failed commit made it stale";
  checkpoint(*p);
  EXPECT_EQ(p->stats().key_index_loads.load(), loads + 1);
  EXPECT_EQ(p->stats().key_index_keys.load(), static_cast<int64_t>(model_.size()));
  p.reset();
  ASSERT_OK_AND_ASSIGN(p, Open(UserOptions()));
  EXPECT_EQ(p->stats().key_index_restores.load(), 1);
  EXPECT_EQ(p->stats().key_index_loads.load(), 0);
  checkpoint(*p);
}

// A clean stop keeps a spilled key index's store (the runtime calls
// KeepKeyIndex after the final checkpoint): the next run takes it as it is,
// reads no state file, and its changes delete the rows the store points at.
// A kept store is taken once: the run after one that was killed restores
// the index from the state files, as it does when the table's key index
// property is no longer the one the store was kept for, or when what was
// kept beside the store is unreadable. An index in memory keeps nothing.
TEST_P(UpsertTest, ACleanStopKeepsASpilledKeyIndexForTheNextRunOnly) {
  std::mt19937_64 rng(7);
  int64_t n = 0;
  auto checkpoint = [&](Pipeline& p) { CheckpointRandomChanges(p, rng, &n); };
  const bool spilled = GetParam().state_memory > 0;
  const std::string kept = Options().state_dir + "/keys-kept";
  auto reopen = [&](int64_t reopens, int64_t restores) -> std::unique_ptr<Pipeline> {
    auto p = Open(UserOptions());
    EXPECT_OK(p.status());
    if (!p.ok()) return nullptr;
    EXPECT_FALSE(std::filesystem::exists(kept)) << "taken once";
    EXPECT_EQ((*p)->stats().key_index_reopens.load(), reopens);
    EXPECT_EQ((*p)->stats().key_index_restores.load(), restores);
    EXPECT_EQ((*p)->stats().key_index_loads.load(), 0);
    EXPECT_EQ((*p)->stats().key_index_keys.load(), static_cast<int64_t>(model_.size()));
    return std::move(*p);
  };
  auto change = [&](Pipeline& p, int64_t id) {
    ASSERT_OK(log_->Append({Change(id, ++n)}).status());
    model_[id] = n;
    Consume(p);
    ASSERT_OK(p.Checkpoint());
  };
  ASSERT_OK_AND_ASSIGN(auto p, Open(UserOptions()));
  checkpoint(*p);
  checkpoint(*p);
  // Another engine's second row of a key: the index (loaded again) holds
  // both, and must still after the restart.
  const int64_t twice = model_.begin()->first;
  ForeignAppend(twice, ++n);
  change(*p, model_.rbegin()->first);
  p->KeepKeyIndex();
  EXPECT_EQ(std::filesystem::exists(kept), spilled);
  // (Once kept, the run cannot go on.)
  EXPECT_EQ(p->Checkpoint().code(), spilled ? StatusCode::kInternal : StatusCode::kOk);
  p.reset();
  p = reopen(spilled ? 1 : 0, spilled ? 0 : 1);
  ASSERT_NE(p, nullptr);
  change(*p, twice);  // deletes both rows
  ASSERT_EQ(Rows(users_), ModelRows());
  // A compaction is followed (the rows counted in each file were kept too).
  {
    ASSERT_OK_AND_ASSIGN(auto t, catalog::Table::Load(*catalog_, *io_, users_));
    maintenance::CompactOptions co;
    co.min_input_files = 1;
    ASSERT_OK(maintenance::CompactTable(*t, co).status());
  }
  change(*p, twice);
  EXPECT_EQ(p->stats().key_index_catchups.load(), 1);
  EXPECT_EQ(p->stats().key_index_loads.load(), 0);
  checkpoint(*p);  // (changes of keys only the store knows)
  p.reset();       // killed: nothing kept
  p = reopen(0, 1);
  ASSERT_NE(p, nullptr);
  checkpoint(*p);
  if (!spilled) return;

  // Kept, then the property is no longer the one it was kept for (here: a
  // field added by another commit).
  p->KeepKeyIndex();
  ASSERT_TRUE(std::filesystem::exists(kept));
  p.reset();
  {
    ASSERT_OK_AND_ASSIGN(auto t, catalog::Table::Load(*catalog_, *io_, users_));
    const std::string name = state::KeyIndexProperty(Options().name);
    ASSERT_OK_AND_ASSIGN(auto saved,
                         state::StateProperty::Decode(name, t->metadata().properties.at(name)));
    saved.watermark = "{}";
    catalog::SnapshotUpdate u;
    u.kind = catalog::ChangeKind::kRewriteFiles;
    u.set_properties[name] = saved.Encode();
    ASSERT_OK(t->Commit(u).status());
  }
  p = reopen(0, 1);
  ASSERT_NE(p, nullptr);
  checkpoint(*p);

  // Kept by an older sluice (format 1: its store compacted universally, and
  // may read values newer ones replaced, state/spill_store.cc): not taken.
  p->KeepKeyIndex();
  p.reset();
  {
    std::string bytes;
    {
      std::ifstream in(kept, std::ios::binary);
      bytes.assign(std::istreambuf_iterator<char>(in), {});
    }
    const size_t at = bytes.find("\"format\":2");
    ASSERT_NE(at, std::string::npos);
    bytes[at + 9] = '1';
    std::string crc;
    AppendLE<uint32_t>(&crc, Crc32c(std::string_view(bytes).substr(4)));
    bytes.replace(0, 4, crc);
    std::ofstream(kept, std::ios::binary | std::ios::trunc) << bytes;
  }
  p = reopen(0, 1);
  ASSERT_NE(p, nullptr);
  checkpoint(*p);

  // Kept, and what was kept beside the store is damaged.
  p->KeepKeyIndex();
  p.reset();
  {
    std::fstream f(kept, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(12);
    f.put('\x7f');
  }
  p = reopen(0, 1);
  ASSERT_NE(p, nullptr);
  checkpoint(*p);
}

TEST_P(UpsertTest, ACompactionThatWroteARowTheIndexDoesNotHaveMakesItLoadAgain) {
  // Another engine's "compaction" (a replace snapshot) that also wrote a row
  // none of its inputs held: key 7 once more. The rows it wrote are one more
  // than the index had in its inputs, so the next checkpoint loads the index
  // from the table instead of following (a spilled index, which moves keys
  // without reading its store, finds it by that count), and its change of
  // key 7 deletes both rows.
  ASSERT_OK_AND_ASSIGN(auto p, Open(UserOptions()));
  int64_t n = 0;
  std::vector<std::string> records;
  for (int64_t id = 0; id < 40; ++id) {
    records.push_back(Change(id, ++n));
    model_[id] = n;
  }
  ASSERT_OK(log_->Append(records).status());
  Consume(*p);
  ASSERT_OK(p->Checkpoint());
  ASSERT_OK_AND_ASSIGN(auto t, catalog::Table::Load(*catalog_, *io_, users_));
  auto md = std::make_shared<const iceberg::TableMetadata>(t->metadata());
  ASSERT_OK_AND_ASSIGN(auto scan, iceberg::TableScan::Make(*io_, md, {}));
  ASSERT_OK(scan->Plan());
  const std::vector<iceberg::FileScanTask>& tasks = scan->tasks();
  ASSERT_OK_AND_ASSIGN(auto w, iceberg::DataWriter::Make(*io_, t->metadata()));
  Batch b;
  while (true) {
    ASSERT_OK_AND_ASSIGN(bool more, scan->Next(&b));
    if (!more) break;
    ASSERT_OK(w->Write(b));
  }
  Batch extra = Batch::Make(std::make_shared<Schema>(*t->metadata().current_schema()));
  extra.columns[0].Append<int64_t>(7);
  extra.columns[1].Append<int64_t>(999);
  extra.columns[2].AppendBytes("k0");
  extra.columns[3].Append<int64_t>(1704103200000000);
  ASSERT_OK(w->Write(extra));
  catalog::SnapshotUpdate u;
  u.kind = catalog::ChangeKind::kRewriteFiles;
  ASSERT_OK_AND_ASSIGN(u.add_data, w->Close());
  for (const auto& task : tasks) u.remove_paths.push_back(task.file.file_path);
  u.remove_dangling_deletes = true;
  ASSERT_OK(t->Commit(u).status());
  const int64_t loads = p->stats().key_index_loads.load();
  const int64_t catchups = p->stats().key_index_catchups.load();
  ASSERT_OK(log_->Append({Change(7, ++n)}).status());
  model_[7] = n;
  Consume(*p);
  ASSERT_OK(p->Checkpoint());
  EXPECT_EQ(p->stats().key_index_loads.load(), loads + 1);
  EXPECT_EQ(p->stats().key_index_catchups.load(), catchups);
  ASSERT_EQ(Rows(users_), ModelRows());
}

// The key index's state files (docs/state.md "The key index"), as the
// property `sluice.keys.<pipeline>` names them.
std::vector<std::string> KeyStateFiles(catalog::Catalog& catalog, FileIO& io,
                                       const catalog::TableIdent& ident,
                                       const std::string& pipeline) {
  auto t = catalog::Table::Load(catalog, io, ident);
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  if (!t.ok()) return {};
  const auto& props = (*t)->metadata().properties;
  auto it = props.find("sluice.keys." + pipeline);
  if (it == props.end()) return {};
  return nlohmann::json::parse(it->second)["files"].get<std::vector<std::string>>();
}

TEST_P(UpsertTest, ARestartReadsTheKeyIndexFromItsStateFilesAndFollowsWhatHappenedSince) {
  std::mt19937_64 rng(7);
  int64_t n = 0;
  auto changes = [&](int count) {
    std::vector<std::string> records;
    for (int i = 0; i < count; ++i) {
      int64_t id = static_cast<int64_t>(rng() % 500);
      records.push_back(Change(id, ++n));
      model_[id] = n;
    }
    ASSERT_OK(log_->Append(records).status());
  };
  const std::string name = UserOptions().name;
  std::unique_ptr<Pipeline> p;
  ASSERT_OK_AND_ASSIGN(p, Open(UserOptions()));
  // 40 checkpoints of 1 to 20 changes each: a base, then deltas, a base
  // again once the deltas weigh as much; retired files are deleted.
  for (int checkpoint = 0; checkpoint < 40; ++checkpoint) {
    changes(checkpoint == 0 ? 400 : 1 + static_cast<int>(rng() % 20));
    Consume(*p);
    ASSERT_OK(p->Checkpoint());
  }
  std::vector<std::string> files = KeyStateFiles(*catalog_, *io_, users_, name);
  ASSERT_GE(files.size(), 2u);
  EXPECT_LE(files.size(), StateFileChain::kMaxDeltas + 1);
  EXPECT_NE(files[0].find("-keys-base.state"), std::string::npos) << files[0];
  EXPECT_NE(files[1].find("-keys-delta.state"), std::string::npos) << files[1];
  size_t on_disk = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(warehouse_)) {
    on_disk += e.path().filename().string().find("-keys-") != std::string::npos ? 1 : 0;
  }
  EXPECT_EQ(on_disk, files.size());

  // A restart reads the files: no scan of the table.
  p.reset();
  ASSERT_OK_AND_ASSIGN(p, Open(UserOptions()));
  EXPECT_EQ(p->stats().key_index_restores.load(), 1);
  EXPECT_EQ(p->stats().key_index_loads.load(), 0);
  EXPECT_EQ(p->stats().key_index_keys.load(), static_cast<int64_t>(model_.size()));
  changes(50);
  Consume(*p);
  ASSERT_OK(p->Checkpoint());
  ASSERT_EQ(Rows(users_), ModelRows());

  // A compaction while the pipeline is down: the restart follows it.
  p.reset();
  {
    ASSERT_OK_AND_ASSIGN(auto t, catalog::Table::Load(*catalog_, *io_, users_));
    maintenance::CompactOptions co;
    co.min_input_files = 1;
    ASSERT_OK(maintenance::CompactTable(*t, co).status());
  }
  ASSERT_OK_AND_ASSIGN(p, Open(UserOptions()));
  EXPECT_EQ(p->stats().key_index_restores.load(), 1);
  EXPECT_EQ(p->stats().key_index_catchups.load(), 1);
  EXPECT_EQ(p->stats().key_index_loads.load(), 0);
  changes(50);
  Consume(*p);
  ASSERT_OK(p->Checkpoint());
  ASSERT_EQ(Rows(users_), ModelRows());

  // Another engine's append while it is down: the index is loaded again.
  p.reset();
  ForeignAppend(model_.begin()->first, ++n);
  model_[model_.begin()->first] = n;
  ASSERT_OK_AND_ASSIGN(p, Open(UserOptions()));
  EXPECT_EQ(p->stats().key_index_restores.load(), 1);
  EXPECT_EQ(p->stats().key_index_loads.load(), 1);
  // (Two rows of that key now: its next change deletes both.)
  ASSERT_OK(log_->Append({Change(model_.begin()->first, ++n)}).status());
  model_[model_.begin()->first] = n;
  changes(50);
  Consume(*p);
  ASSERT_OK(p->Checkpoint());
  ASSERT_EQ(Rows(users_), ModelRows());

  // A damaged state file: the index is loaded from the table instead, and
  // the next checkpoint writes a base again.
  p.reset();
  files = KeyStateFiles(*catalog_, *io_, users_, name);
  ASSERT_FALSE(files.empty());
  {
    ASSERT_OK_AND_ASSIGN(auto out, local_->OpenOutput(files.back(), /*overwrite=*/true));
    ASSERT_OK(out->Append("not a key index"));
    ASSERT_OK(out->Close());
  }
  ASSERT_OK_AND_ASSIGN(p, Open(UserOptions()));
  EXPECT_EQ(p->stats().key_index_restores.load(), 0);
  EXPECT_EQ(p->stats().key_index_loads.load(), 1);
  changes(50);
  Consume(*p);
  ASSERT_OK(p->Checkpoint());
  ASSERT_EQ(Rows(users_), ModelRows());
  files = KeyStateFiles(*catalog_, *io_, users_, name);
  ASSERT_EQ(files.size(), 1u);
  EXPECT_NE(files[0].find("-keys-base.state"), std::string::npos) << files[0];
  p.reset();
  ASSERT_OK_AND_ASSIGN(p, Open(UserOptions()));
  EXPECT_EQ(p->stats().key_index_restores.load(), 1);
  EXPECT_EQ(p->stats().key_index_keys.load(), static_cast<int64_t>(model_.size()));

  // An index written for other key types (the key column was widened since)
  // or by another epoch than the checkpoint's is not read: loaded instead.
  for (const char* field : {"key", "epoch"}) {
    SCOPED_TRACE(field);
    changes(20);
    Consume(*p);
    ASSERT_OK(p->Checkpoint());
    p.reset();
    {
      ASSERT_OK_AND_ASSIGN(auto t, catalog::Table::Load(*catalog_, *io_, users_));
      ASSERT_OK(
          t->UpdateMetadata([&](const iceberg::TableMetadata& m) -> Result<iceberg::TableMetadata> {
            iceberg::TableMetadata out = m;
            auto j = nlohmann::json::parse(out.properties.at("sluice.keys." + name));
            j[field] = std::string(field) == "key" ? nlohmann::json("1:int") : nlohmann::json(99);
            out.properties["sluice.keys." + name] = j.dump();
            return out;
          }));
    }
    ASSERT_OK_AND_ASSIGN(p, Open(UserOptions()));
    EXPECT_EQ(p->stats().key_index_restores.load(), 0);
    EXPECT_EQ(p->stats().key_index_loads.load(), 1);
    changes(20);
    Consume(*p);
    ASSERT_OK(p->Checkpoint());
    ASSERT_EQ(Rows(users_), ModelRows());
  }
}

INSTANTIATE_TEST_SUITE_P(FormatsAndLanes, UpsertTest,
                         ::testing::Values(UpsertCase{2, 1}, UpsertCase{2, 2}, UpsertCase{3, 1},
                                           UpsertCase{3, 2}, UpsertCase{2, 1, 2048},
                                           UpsertCase{3, 2, 2048}),
                         [](const auto& info) {
                           return fmt::format("v{}_parallelism{}{}", info.param.format_version,
                                              info.param.parallelism,
                                              info.param.state_memory > 0 ? "_spilled" : "");
                         });

}  // namespace
}  // namespace sluice::pipeline
