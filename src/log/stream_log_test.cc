#include "log/stream_log.h"

#include "common/testing.h"
#include "log/test_util.h"

namespace sluice::log {
namespace {

using testing::ReadAll;
using testing::Records;
using testing::ScratchDir;
using testing::SegmentFiles;

LogOptions SmallSegments() {
  LogOptions o;
  o.segment_bytes = 1024;
  o.index_interval_bytes = 200;
  return o;
}

TEST(StreamLogTest, AppendReadAcrossSegmentRolls) {
  ScratchDir dir;
  ASSERT_OK_AND_ASSIGN(auto log, StreamLog::Open(dir.path(), SmallSegments()));
  EXPECT_EQ(log->next_offset(), 0);
  std::vector<std::string> expected;
  for (int b = 0; b < 60; ++b) {
    auto records = Records("b" + std::to_string(b), 1 + b % 4);
    ASSERT_OK_AND_ASSIGN(AppendResult r, log->Append(records));
    EXPECT_EQ(r.first_offset, static_cast<int64_t>(expected.size()));
    EXPECT_EQ(r.last_offset, r.first_offset + static_cast<int64_t>(records.size()) - 1);
    EXPECT_FALSE(r.duplicate);
    expected.insert(expected.end(), records.begin(), records.end());
  }
  EXPECT_EQ(log->next_offset(), static_cast<int64_t>(expected.size()));
  auto files = SegmentFiles(dir.path());
  ASSERT_GT(files.size(), 3u);
  EXPECT_EQ(files.size(), log->segment_count());
  EXPECT_NE(files[0].first.find("/00000000000000000000.log"), std::string::npos);
  for (size_t i = 0; i + 1 < files.size(); ++i) EXPECT_LE(files[i].second, 1024) << files[i].first;

  ASSERT_OK_AND_ASSIGN(auto all, ReadAll(*log, 30));
  ASSERT_EQ(all.size(), expected.size());
  for (size_t i = 0; i < all.size(); ++i) {
    EXPECT_EQ(all[i].offset, static_cast<int64_t>(i));
    EXPECT_EQ(all[i].value, expected[i]);
  }
  // From the middle of a batch in a middle segment, one record at a time and in bulk.
  for (int64_t start : std::vector<int64_t>{1, 57, 88, static_cast<int64_t>(expected.size()) - 1}) {
    ASSERT_OK_AND_ASSIGN(ReadResult one, log->Read(start, 1));
    ASSERT_EQ(one.records.size(), 1u) << start;
    EXPECT_EQ(one.records[0].offset, start);
    EXPECT_EQ(one.records[0].value, expected[start]);
    EXPECT_EQ(one.next_offset, start + 1);
    ASSERT_OK_AND_ASSIGN(ReadResult many, log->Read(start, 1 << 20));
    ASSERT_FALSE(many.records.empty());
    for (const auto& rec : many.records) EXPECT_EQ(rec.value, expected[rec.offset]);
    EXPECT_EQ(many.next_offset, many.records.back().offset + 1);
  }
}

TEST(StreamLogTest, ReadBounds) {
  ScratchDir dir;
  ASSERT_OK_AND_ASSIGN(auto log, StreamLog::Open(dir.path()));
  ASSERT_OK_AND_ASSIGN(ReadResult empty, log->Read(0, 100));
  EXPECT_TRUE(empty.records.empty());
  EXPECT_EQ(empty.next_offset, 0);
  ASSERT_OK(log->Append(Records("r", 3)));
  ASSERT_OK_AND_ASSIGN(ReadResult at_end, log->Read(3, 100));
  EXPECT_TRUE(at_end.records.empty());
  ASSERT_ERROR(log->Read(4, 100), StatusCode::kOutOfRange, "offset 4");
  ASSERT_ERROR(log->Read(-1, 100), StatusCode::kOutOfRange, "offset -1");
  ASSERT_ERROR(log->Append(std::vector<std::string>{}), StatusCode::kInvalidArgument,
               "empty batch");
  ASSERT_ERROR(log->Append({"x"}, IdempotencyKey{-1, 0}), StatusCode::kInvalidArgument, "producer");
  LogOptions tiny;
  tiny.max_batch_bytes = 10;
  ASSERT_OK_AND_ASSIGN(auto small, StreamLog::Open(dir.Sub("small"), tiny));
  ASSERT_ERROR(small->Append({std::string(20, 'x')}), StatusCode::kInvalidArgument,
               "max_batch_bytes");
  LogOptions bad;
  bad.segment_bytes = 0;
  ASSERT_ERROR(StreamLog::Open(dir.Sub("bad"), bad), StatusCode::kInvalidArgument, "positive");
}

TEST(StreamLogTest, ReopenKeepsContentsAndContinuesOffsets) {
  ScratchDir dir;
  std::vector<std::string> expected;
  for (int round = 0; round < 3; ++round) {
    ASSERT_OK_AND_ASSIGN(auto log, StreamLog::Open(dir.path(), SmallSegments()));
    EXPECT_EQ(log->next_offset(), static_cast<int64_t>(expected.size()));
    ASSERT_OK_AND_ASSIGN(auto before, ReadAll(*log));
    ASSERT_EQ(before.size(), expected.size());
    for (size_t i = 0; i < before.size(); ++i) EXPECT_EQ(before[i].value, expected[i]);
    for (int b = 0; b < 20; ++b) {
      auto records = Records("round" + std::to_string(round) + "b" + std::to_string(b), 3);
      ASSERT_OK_AND_ASSIGN(AppendResult r, log->Append(records));
      EXPECT_EQ(r.first_offset, static_cast<int64_t>(expected.size()));
      expected.insert(expected.end(), records.begin(), records.end());
    }
    ASSERT_OK(log->Close());
    ASSERT_ERROR(log->Append({"late"}), StatusCode::kInvalidArgument, "after Close");
  }
}

// Two writers of one log would overwrite each other's acknowledged records: the
// second open is refused, naming the holder, until the first log is gone.
TEST(StreamLogTest, SecondOpenOfAnOpenLogIsRefusedNamingTheHolder) {
  ScratchDir dir;
  ASSERT_OK_AND_ASSIGN(auto first, StreamLog::Open(dir.path()));
  ASSERT_OK(first->Append({"kept"}).status());
  auto second = StreamLog::Open(dir.path());
  ASSERT_ERROR(second, StatusCode::kConflict, "is in use by another process (pid ");
  EXPECT_NE(second.status().message().find(dir.path()), std::string::npos);
  ASSERT_OK(first->Append({"still mine"}).status());
  first.reset();
  ASSERT_OK_AND_ASSIGN(auto reopened, StreamLog::Open(dir.path()));
  ASSERT_OK_AND_ASSIGN(auto all, ReadAll(*reopened));
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[1].value, "still mine");
}

TEST(StreamLogTest, IdempotentRetryIsAcknowledgedNotAppended) {
  ScratchDir dir;
  {
    ASSERT_OK_AND_ASSIGN(auto log, StreamLog::Open(dir.path()));
    ASSERT_OK(log->Append({"other"}));
    ASSERT_OK_AND_ASSIGN(AppendResult first, log->Append({"a", "b"}, IdempotencyKey{7, 1}));
    EXPECT_EQ(first.first_offset, 1);
    EXPECT_EQ(first.last_offset, 2);
    EXPECT_FALSE(first.duplicate);
    ASSERT_OK_AND_ASSIGN(AppendResult again, log->Append({"a", "b"}, IdempotencyKey{7, 1}));
    EXPECT_TRUE(again.duplicate);
    EXPECT_EQ(again.first_offset, 1);
    EXPECT_EQ(again.last_offset, 2);
    EXPECT_EQ(log->next_offset(), 3);
    // Another producer with the same sequence is a different batch.
    ASSERT_OK_AND_ASSIGN(AppendResult p8, log->Append({"c"}, IdempotencyKey{8, 1}));
    EXPECT_FALSE(p8.duplicate);
    EXPECT_EQ(p8.first_offset, 3);
    ASSERT_OK_AND_ASSIGN(AppendResult next, log->Append({"d"}, IdempotencyKey{7, 2}));
    EXPECT_EQ(next.first_offset, 4);
  }
  ASSERT_OK_AND_ASSIGN(auto log, StreamLog::Open(dir.path()));
  ASSERT_OK_AND_ASSIGN(AppendResult after, log->Append({"a", "b"}, IdempotencyKey{7, 1}));
  EXPECT_TRUE(after.duplicate);
  EXPECT_EQ(after.first_offset, 1);
  ASSERT_OK_AND_ASSIGN(AppendResult after2, log->Append({"d"}, IdempotencyKey{7, 2}));
  EXPECT_TRUE(after2.duplicate);
  EXPECT_EQ(after2.first_offset, 4);
  EXPECT_EQ(log->next_offset(), 5);
  ASSERT_OK_AND_ASSIGN(auto all, ReadAll(*log));
  ASSERT_EQ(all.size(), 5u);
  EXPECT_EQ(all[1].value, "a");
  EXPECT_EQ(all[4].value, "d");
}

TEST(StreamLogTest, IdempotencyWindowIsBounded) {
  ScratchDir dir;
  LogOptions o;
  o.max_producers = 2;
  ASSERT_OK_AND_ASSIGN(auto log, StreamLog::Open(dir.path(), o));
  for (int64_t seq = 0; seq < 8; ++seq) ASSERT_OK(log->Append({"x"}, IdempotencyKey{1, seq}));
  // The last few sequences are remembered, older ones are refused, not re-appended.
  ASSERT_OK_AND_ASSIGN(AppendResult recent, log->Append({"x"}, IdempotencyKey{1, 4}));
  EXPECT_TRUE(recent.duplicate);
  EXPECT_EQ(recent.first_offset, 4);
  ASSERT_ERROR(log->Append({"x"}, IdempotencyKey{1, 0}), StatusCode::kOutOfRange, "sequence 0");
  // Producers 2 and 3 push producer 1 (least recent) out of the table.
  ASSERT_OK(log->Append({"y"}, IdempotencyKey{2, 0}));
  ASSERT_OK(log->Append({"z"}, IdempotencyKey{3, 0}));
  ASSERT_OK_AND_ASSIGN(AppendResult forgotten, log->Append({"x"}, IdempotencyKey{1, 7}));
  EXPECT_FALSE(forgotten.duplicate);
}

TEST(StreamLogTest, RetentionDeletesOnlyWholeOlderSegments) {
  ScratchDir dir;
  ASSERT_OK_AND_ASSIGN(auto log, StreamLog::Open(dir.path(), SmallSegments()));
  for (int b = 0; b < 40; ++b) ASSERT_OK(log->Append(Records("r" + std::to_string(b), 5)));
  auto files = SegmentFiles(dir.path());
  ASSERT_GE(files.size(), 4u);
  // Base offsets from the names: segment 2 starts at base2.
  int64_t base1 = std::stoll(files[1].first.substr(files[1].first.size() - 24, 20));
  int64_t base2 = std::stoll(files[2].first.substr(files[2].first.size() - 24, 20));
  ASSERT_OK_AND_ASSIGN(int none, log->DeleteSegmentsBefore(base1 - 1));
  EXPECT_EQ(none, 0);
  ASSERT_OK_AND_ASSIGN(int removed, log->DeleteSegmentsBefore(base2 + 1));  // inside segment 2
  EXPECT_EQ(removed, 2);
  EXPECT_EQ(log->start_offset(), base2);
  EXPECT_EQ(SegmentFiles(dir.path()).size(), files.size() - 2);
  ASSERT_ERROR(log->Read(base2 - 1, 100), StatusCode::kOutOfRange, "retained range");
  ASSERT_OK_AND_ASSIGN(ReadResult r, log->Read(base2, 1));
  EXPECT_EQ(r.records[0].offset, base2);
  // Everything committed: all but the active segment go; the log still appends.
  ASSERT_OK_AND_ASSIGN(int rest, log->DeleteSegmentsBefore(log->next_offset()));
  EXPECT_EQ(rest, static_cast<int>(files.size()) - 3);
  EXPECT_EQ(log->segment_count(), 1u);
  int64_t end = log->next_offset();
  ASSERT_OK_AND_ASSIGN(AppendResult more, log->Append({"after"}));
  EXPECT_EQ(more.first_offset, end);
  log.reset();
  ASSERT_OK_AND_ASSIGN(auto reopened, StreamLog::Open(dir.path(), SmallSegments()));
  EXPECT_EQ(reopened->next_offset(), end + 1);
  ASSERT_OK_AND_ASSIGN(auto tail, ReadAll(*reopened));
  EXPECT_EQ(tail.back().value, "after");
}

}  // namespace
}  // namespace sluice::log
