// The fixture of the compaction tests (compact_test.cc,
// compact_carry_test.cc): db.events (id, kind) partitioned by kind, with
// helpers to write, append and equality-delete rows through any Table
// handle (a second handle plays a concurrent writer).
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "maintenance/test_util.h"

namespace sluice::maintenance {

class CompactTest : public TableFixture {
 protected:
  // (Pages of 64 bytes: the tests' tiny files then have chunks large enough
  // for their pages to be copied as those of real files are, page_copy.h.)
  void SetUp() override {
    MakeTable("id BIGINT NOT NULL, kind STRING", "kind", "", 2,
              {{"write.parquet.page-size-bytes", "64"}});
  }

  // Live data files per partition path.
  std::map<std::string, int> FilesPerPartition() {
    EXPECT_TRUE(table_->Refresh().ok());
    std::map<std::string, int> out;
    auto live = table_->LiveFiles(*table_->metadata().current_snapshot_id);
    EXPECT_TRUE(live.ok());
    for (const auto& e : *live) {
      if (e.file.content == iceberg::FileContent::kData) ++out[*e.file.partition[0]];
    }
    return out;
  }

  using Rows = std::vector<std::pair<int64_t, std::string>>;  // (id, kind)

  // The files (one per kind) `rows` make in `t`, written but not committed.
  std::vector<iceberg::DataFile> WriteRows(catalog::Table& t, const Rows& rows) {
    Batch b = Batch::Make(std::make_shared<const Schema>(*t.metadata().current_schema()));
    for (const auto& [id, kind] : rows) {
      b.columns[0].Append<int64_t>(id);
      b.columns[1].AppendBytes(kind);
    }
    auto w = iceberg::DataWriter::Make(*io_, t.metadata());
    EXPECT_TRUE(w.ok()) << w.status().ToString();
    if (!w.ok()) return {};
    Status written = (*w)->Write(b);
    EXPECT_TRUE(written.ok()) << written.ToString();
    if (!written.ok()) return {};
    auto files = (*w)->Close();
    EXPECT_TRUE(files.ok()) << files.status().ToString();
    return files.ok() ? *files : std::vector<iceberg::DataFile>{};
  }

  // Commits through `t` an equality delete of `rows` by the id column (field
  // 1), as Flink writes them.
  void EqualityDelete(catalog::Table& t, const Rows& rows) {
    catalog::SnapshotUpdate u;
    u.kind = catalog::ChangeKind::kRowDelta;
    for (auto& f : WriteRows(t, rows)) {
      f.content = iceberg::FileContent::kEqualityDeletes;
      f.equality_ids = {1};
      u.add_deletes.push_back(f);
    }
    ASSERT_FALSE(u.add_deletes.empty());
    ASSERT_OK(t.Commit(u).status());
  }

  // Appends `rows` through `t` as one commit.
  void AppendVia(catalog::Table& t, const Rows& rows) {
    std::vector<iceberg::DataFile> files = WriteRows(t, rows);
    ASSERT_FALSE(files.empty());
    ASSERT_OK(t.Append(files).status());
  }

  // The live files' data sequence numbers, by path.
  std::map<std::string, int64_t> LiveSequences() {
    EXPECT_TRUE(table_->Refresh().ok());
    std::map<std::string, int64_t> out;
    auto live = table_->LiveFiles(*table_->metadata().current_snapshot_id);
    EXPECT_TRUE(live.ok());
    for (const auto& e : *live) out[e.file.file_path] = e.sequence_number.value_or(-1);
    return out;
  }

  // The table's small appends: 6 into kind=a, 2 into kind=b.
  void SmallAppends() {
    for (int i = 0; i < 6; ++i) Append(i * 10, i * 10 + 10, "a");
    Append(100, 110, "b");
    Append(110, 120, "b");
  }
};

}  // namespace sluice::maintenance
