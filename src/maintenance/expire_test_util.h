// Test helpers of the expiry tests (expire_test.cc, expire_concurrent_test.cc):
// a table of one BIGINT column and what its snapshots reach on disk.
#pragma once

#include <filesystem>
#include <string>

#include "iceberg/manifest.h"
#include "maintenance/compact.h"
#include "maintenance/expire.h"
#include "maintenance/test_util.h"

namespace sluice::maintenance {

// A path as the table names it ("file:///..." or "/...") on disk.
inline std::string OnDisk(const std::string& p) {
  return p.rfind("file://", 0) == 0 ? p.substr(7) : p;
}

// `sluice table rewrite`: every file, whatever its size.
inline CompactOptions RewriteAll() {
  CompactOptions o;
  o.all_files = true;
  return o;
}

class ExpireTest : public TableFixture {
 protected:
  void SetUp() override { MakeTable("id BIGINT NOT NULL", ""); }

  int64_t Newest() { return table_->metadata().snapshots.back().timestamp_ms; }
  // Options under which every snapshot so far is past its age (now and the
  // cutoff just after the newest): only what must stay stays.
  ExpireOptions EverythingOld() {
    ExpireOptions o;
    o.now_ms = o.older_than_ms.emplace(Newest() + 1);
    return o;
  }

  // Six snapshots: four appends of ten ids, their rewrite into one file, and
  // an append of ids 40 to 49.
  void AppendsRewrittenThenOneMore() {
    for (int64_t i = 0; i < 4; ++i) AppendIds(i * 10, i * 10 + 10);
    ASSERT_OK(CompactTable(*table_, RewriteAll()));  // the four files become one
    AppendIds(40, 50);
  }

  // Every manifest list, manifest and live file of every snapshot is on disk.
  void ExpectEverythingTheSnapshotsReachExists() {
    ASSERT_OK(table_->Refresh());
    const int v = table_->metadata().format_version;
    for (const iceberg::Snapshot& s : table_->metadata().snapshots) {
      EXPECT_TRUE(std::filesystem::exists(OnDisk(s.manifest_list))) << s.manifest_list;
      ASSERT_OK_AND_ASSIGN(auto manifests, iceberg::ReadManifestList(*io_, s.manifest_list, v));
      for (const iceberg::ManifestFile& mf : manifests) {
        EXPECT_TRUE(std::filesystem::exists(OnDisk(mf.manifest_path))) << mf.manifest_path;
        ASSERT_OK_AND_ASSIGN(auto entries, iceberg::ReadManifest(*io_, mf, v));
        for (const iceberg::ManifestEntry& e : entries) {
          if (e.status == iceberg::EntryStatus::kDeleted) continue;
          EXPECT_TRUE(std::filesystem::exists(OnDisk(e.file.file_path))) << e.file.file_path;
        }
      }
    }
  }
};

}  // namespace sluice::maintenance
