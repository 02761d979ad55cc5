#include "pipeline/checkpoint.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "common/testing.h"
#include "iceberg/table_builder.h"
#include "pipeline/journal.h"

namespace sluice::pipeline {
namespace {

namespace fs = std::filesystem;

TEST(Offsets, RoundTripAndMalformed) {
  SourceOffsets o = {{"events_in", {{"0", 42}, {"1", 7}}}, {"other", {{"a.jsonl", 0}}}};
  ASSERT_OK_AND_ASSIGN(SourceOffsets back, DecodeOffsets(EncodeOffsets(o)));
  EXPECT_EQ(back, o);
  ASSERT_ERROR(DecodeOffsets("[1]"), StatusCode::kCorruption, "not a JSON object");
  ASSERT_ERROR(DecodeOffsets(R"({"s":{"0":-1}})"), StatusCode::kCorruption, "offset of s/0");
  ASSERT_ERROR(DecodeOffsets(R"({"s":{"0":"3"}})"), StatusCode::kCorruption, "offset of s/0");
  ASSERT_ERROR(DecodeOffsets(R"({"s":5})"), StatusCode::kCorruption, "source s");
  ASSERT_ERROR(DecodeOffsets("{"), StatusCode::kCorruption, "not a JSON object");
}

iceberg::Snapshot Snap(int64_t id, std::optional<int64_t> parent,
                       std::map<std::string, std::string> summary) {
  iceberg::Snapshot s;
  s.snapshot_id = id;
  s.parent_snapshot_id = parent;
  s.sequence_number = id;
  s.summary = std::move(summary);
  s.summary["operation"] = "append";
  return s;
}

std::map<std::string, std::string> Ck(const std::string& pipeline, int epoch, int checkpoint,
                                      int offset) {
  return {{kSummaryPipeline, pipeline},
          {kSummaryEpoch, std::to_string(epoch)},
          {kSummaryCheckpoint, std::to_string(checkpoint)},
          {kSummaryOffsets, EncodeOffsets({{"src", {{"0", offset}}}})}};
}

// The newest checkpoint of the pipeline in main's ancestry wins, past
// snapshots of other writers; snapshots off the ancestry are ignored.
TEST(FindCheckpoint, NewestOfThePipelineInTheAncestry) {
  iceberg::TableMetadata md;
  md.snapshots.push_back(Snap(1, std::nullopt, Ck("p", 1, 1, 10)));
  md.snapshots.push_back(Snap(2, 1, Ck("q", 1, 5, 99)));
  md.snapshots.push_back(Snap(3, 2, Ck("p", 2, 2, 20)));
  md.snapshots.push_back(Snap(4, 3, {}));                 // a compaction on top
  md.snapshots.push_back(Snap(5, 3, Ck("p", 3, 3, 30)));  // a branch off main
  md.current_snapshot_id = 4;
  ASSERT_OK_AND_ASSIGN(auto c, FindCheckpoint(md, "p"));
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->snapshot_id, 3);
  EXPECT_EQ(c->epoch, 2);
  EXPECT_EQ(c->checkpoint, 2);
  EXPECT_EQ(c->offsets.at("src").at("0"), 20);
  ASSERT_OK_AND_ASSIGN(auto q, FindCheckpoint(md, "q"));
  ASSERT_TRUE(q.has_value());
  EXPECT_EQ(q.value().checkpoint, 5);
  ASSERT_OK_AND_ASSIGN(auto none, FindCheckpoint(md, "r"));
  EXPECT_FALSE(none.has_value());

  md.snapshots[2].summary[kSummaryCheckpoint] = "two";
  ASSERT_ERROR(FindCheckpoint(md, "p"), StatusCode::kCorruption, "snapshot 3 of pipeline p");
  md.snapshots[2].summary.erase(kSummaryCheckpoint);
  ASSERT_ERROR(FindCheckpoint(md, "p"), StatusCode::kCorruption, "no sluice.checkpoint");
}

// Without the pipeline's snapshots in the ancestry, the checkpoint property
// answers; the ancestry wins when both exist.
TEST(FindCheckpoint, FallsBackToTheTableProperty) {
  iceberg::TableMetadata md;
  md.properties[CheckpointProperty("p")] =
      EncodeCheckpointProperty(4, 9, {{"src", {{"0", 90}, {"1", 7}}}});
  ASSERT_OK_AND_ASSIGN(auto c, FindCheckpoint(md, "p"));
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c.value().epoch, 4);
  EXPECT_EQ(c.value().checkpoint, 9);
  EXPECT_EQ(c.value().offsets.at("src").at("1"), 7);
  md.snapshots.push_back(Snap(1, std::nullopt, Ck("p", 3, 8, 80)));
  md.current_snapshot_id = 1;
  ASSERT_OK_AND_ASSIGN(auto a, FindCheckpoint(md, "p"));
  EXPECT_EQ(a.value().checkpoint, 8);
  md.current_snapshot_id.reset();
  md.properties[CheckpointProperty("p")] = R"({"epoch":1})";
  ASSERT_ERROR(FindCheckpoint(md, "p"), StatusCode::kCorruption, "sluice.checkpoint.p");
}

TEST(Epoch, FromTableProperty) {
  iceberg::TableMetadata md;
  ASSERT_OK_AND_ASSIGN(int64_t e0, CurrentEpoch(md, "p"));
  EXPECT_EQ(e0, 0);
  md.properties[EpochProperty("p")] = "7";
  ASSERT_OK_AND_ASSIGN(int64_t e7, CurrentEpoch(md, "p"));
  EXPECT_EQ(e7, 7);
  md.properties[EpochProperty("p")] = "x";
  ASSERT_ERROR(CurrentEpoch(md, "p"), StatusCode::kCorruption, "sluice.epoch.p");
}

TEST(StagedJournal, RecordsSurviveReopenTornTailIgnoredClear) {
  fs::path dir = fs::temp_directory_path() / ("sluice_journal_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  std::string path = (dir / "state" / "staged.journal").string();
  {
    ASSERT_OK_AND_ASSIGN(auto j, StagedJournal::Open(path));
    EXPECT_TRUE(j->entries().empty());
    ASSERT_OK(j->Record(2, 3, "file:///w/t/data/a.parquet"));
    ASSERT_OK(j->Record(2, 4, "/w/t/data/with space.parquet"));
  }
  {
    std::ofstream(path, std::ios::app) << "5 /w/t/data/tor";  // a crash mid-record
  }
  {
    ASSERT_OK_AND_ASSIGN(auto j, StagedJournal::Open(path));
    ASSERT_EQ(j->entries().size(), 2u);
    EXPECT_EQ(j->entries()[0].checkpoint, 3);
    EXPECT_EQ(j->entries()[0].epoch, 2);
    EXPECT_EQ(j->entries()[0].path, "file:///w/t/data/a.parquet");
    EXPECT_EQ(j->entries()[1].path, "/w/t/data/with space.parquet");
    ASSERT_OK(j->Clear());
    ASSERT_ERROR(j->Record(2, 6, "a\nb"), StatusCode::kInvalidArgument, "newline");
  }
  {
    ASSERT_OK_AND_ASSIGN(auto j, StagedJournal::Open(path));
    EXPECT_TRUE(j->entries().empty());
  }
  {
    // The first format (no epoch) still reads, with epoch 0.
    std::ofstream(path, std::ios::trunc) << "7 /w/t/data/old.parquet\n";
    ASSERT_OK_AND_ASSIGN(auto j, StagedJournal::Open(path));
    ASSERT_EQ(j->entries().size(), 1u);
    EXPECT_EQ(j->entries()[0].epoch, 0);
    EXPECT_EQ(j->entries()[0].checkpoint, 7);
  }
  {
    std::ofstream(path, std::ios::trunc) << "garbage\n";
    ASSERT_ERROR(StagedJournal::Open(path), StatusCode::kCorruption, "line 1");
  }
  fs::remove_all(dir);
}

// A checkpoint that commits in the background leaves the next one's files in
// the journal: clearing the committed one keeps them, durably.
TEST(StagedJournal, ClearThroughACheckpointKeepsTheLaterOnesEntries) {
  fs::path dir = fs::temp_directory_path() / ("sluice_journal_ct_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  std::string path = (dir / "staged.journal").string();
  {
    ASSERT_OK_AND_ASSIGN(auto j, StagedJournal::Open(path));
    ASSERT_OK(j->Record(3, 4, "/w/t/data/a.parquet"));
    ASSERT_OK(j->Record(3, 5, "/w/t/data/b.parquet"));
    ASSERT_OK(j->Record(3, 4, "/w/t/data/c.parquet"));  // a late file of checkpoint 4
    ASSERT_OK(j->ClearThrough(4));
    ASSERT_EQ(j->entries().size(), 1u);
    EXPECT_EQ(j->entries()[0].path, "/w/t/data/b.parquet");
    ASSERT_OK(j->Record(3, 6, "/w/t/data/d.parquet"));  // appended to the rewritten file
    ASSERT_OK(j->ClearThrough(3));                      // nothing that old: unchanged
    EXPECT_EQ(j->entries().size(), 2u);
  }
  {
    ASSERT_OK_AND_ASSIGN(auto j, StagedJournal::Open(path));
    ASSERT_EQ(j->entries().size(), 2u);
    EXPECT_EQ(j->entries()[0].checkpoint, 5);
    EXPECT_EQ(j->entries()[1].path, "/w/t/data/d.parquet");
    EXPECT_EQ(j->entries()[1].epoch, 3);
    ASSERT_OK(j->ClearThrough(6));
    EXPECT_TRUE(j->entries().empty());
  }
  {
    ASSERT_OK_AND_ASSIGN(auto j, StagedJournal::Open(path));
    EXPECT_TRUE(j->entries().empty());
  }
  EXPECT_FALSE(fs::exists(path + ".new"));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace sluice::pipeline
