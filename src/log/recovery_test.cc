// Recovery: torn tails of the last segment are cut off exactly; damage elsewhere
// is kCorruption naming the file and byte offset.
#include <filesystem>
#include <fstream>

#include "common/testing.h"
#include "log/batch.h"
#include "log/stream_log.h"
#include "log/test_util.h"

namespace sluice::log {
namespace {

using testing::ReadAll;
using testing::Records;
using testing::ScratchDir;
using testing::SegmentFiles;

void AppendBytes(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::app);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

void FlipByte(const std::string& path, int64_t pos) {
  std::fstream f(path, std::ios::binary | std::ios::in | std::ios::out);
  f.seekg(pos);
  char c;
  f.get(c);
  f.seekp(pos);
  f.put(static_cast<char>(c ^ 0x40));
}

struct Damage {
  const char* name;
  // Damages the last segment `path` (`good_size` bytes of valid batches followed by
  // one more valid batch `last`) and returns how many bytes recovery must keep.
  int64_t (*apply)(const std::string& path, int64_t good_size, const std::string& last);
};

const Damage kDamages[] = {
    {"garbage",
     [](const std::string& path, int64_t good, const std::string& last) {
       AppendBytes(path, last);
       AppendBytes(path, "not a batch at all, just noise....................................");
       return good + static_cast<int64_t>(last.size());
     }},
    {"half batch",
     [](const std::string& path, int64_t good, const std::string& last) {
       AppendBytes(path, last.substr(0, last.size() / 2));
       return good;
     }},
    {"half header",
     [](const std::string& path, int64_t good, const std::string& last) {
       AppendBytes(path, last.substr(0, 20));
       return good;
     }},
    {"flipped payload byte",
     [](const std::string& path, int64_t good, const std::string& last) {
       AppendBytes(path, last);
       FlipByte(path, good + static_cast<int64_t>(last.size()) - 3);
       return good;
     }},
    {"flipped header byte",
     [](const std::string& path, int64_t good, const std::string& last) {
       AppendBytes(path, last);
       FlipByte(path, good + 30);
       return good;
     }},
    {"zero fill",
     [](const std::string& path, int64_t good, const std::string& last) {
       AppendBytes(path, std::string(4096, '\0'));
       return good;
     }},
};

TEST(RecoveryTest, TornTailIsTruncatedExactly) {
  for (const Damage& damage : kDamages) {
    SCOPED_TRACE(damage.name);
    ScratchDir dir;
    std::vector<std::string> expected;
    {
      ASSERT_OK_AND_ASSIGN(auto log, StreamLog::Open(dir.path()));
      for (int b = 0; b < 5; ++b) {
        auto records = Records("b" + std::to_string(b), 3);
        ASSERT_OK(log->Append(records));
        expected.insert(expected.end(), records.begin(), records.end());
      }
    }
    auto files = SegmentFiles(dir.path());
    ASSERT_EQ(files.size(), 1u);
    // A valid batch the way the log would have written it next.
    std::string last;
    EncodeBatch(static_cast<int64_t>(expected.size()), 1, kNoProducer, -1, {"l0", "l1"}, &last);
    int64_t keep = damage.apply(files[0].first, files[0].second, last);
    bool last_survives = keep > files[0].second;
    if (last_survives) expected.insert(expected.end(), {"l0", "l1"});

    ASSERT_OK_AND_ASSIGN(auto log, StreamLog::Open(dir.path()));
    EXPECT_EQ(std::filesystem::file_size(files[0].first), static_cast<uint64_t>(keep));
    EXPECT_EQ(log->next_offset(), static_cast<int64_t>(expected.size()));
    ASSERT_OK_AND_ASSIGN(AppendResult r, log->Append({"new"}));
    EXPECT_EQ(r.first_offset, static_cast<int64_t>(expected.size()));
    expected.push_back("new");
    log.reset();
    ASSERT_OK_AND_ASSIGN(auto again, StreamLog::Open(dir.path()));
    ASSERT_OK_AND_ASSIGN(auto all, ReadAll(*again));
    ASSERT_EQ(all.size(), expected.size());
    for (size_t i = 0; i < all.size(); ++i) EXPECT_EQ(all[i].value, expected[i]);
  }
}

LogOptions Small() {
  LogOptions o;
  o.segment_bytes = 512;
  return o;
}

TEST(RecoveryTest, DamageInOlderSegmentIsCorruption) {
  ScratchDir dir;
  {
    ASSERT_OK_AND_ASSIGN(auto log, StreamLog::Open(dir.path(), Small()));
    for (int b = 0; b < 20; ++b) ASSERT_OK(log->Append(Records("b" + std::to_string(b), 4)));
  }
  auto files = SegmentFiles(dir.path());
  ASSERT_GE(files.size(), 3u);
  // The second batch of the second segment.
  std::string batch;
  EncodeBatch(0, 0, kNoProducer, -1, Records("b0", 4), &batch);  // same size as every batch
  int64_t pos = static_cast<int64_t>(batch.size());
  FlipByte(files[1].first, pos + kBatchHeaderSize + 2);
  auto size_before = std::filesystem::file_size(files[1].first);
  ASSERT_ERROR(
      StreamLog::Open(dir.path(), Small()), StatusCode::kCorruption,
      fmt::format("log segment {}: batch at byte {}: batch CRC mismatch", files[1].first, pos));
  EXPECT_EQ(std::filesystem::file_size(files[1].first), size_before);  // nothing dropped
  // A torn tail in an older segment (half of its last batch gone) is corruption too.
  FlipByte(files[1].first, pos + kBatchHeaderSize + 2);
  std::filesystem::resize_file(files[0].first, files[0].second - 5);
  ASSERT_ERROR(StreamLog::Open(dir.path(), Small()), StatusCode::kCorruption, files[0].first);
}

TEST(RecoveryTest, MissingSegmentIsAGap) {
  ScratchDir dir;
  {
    ASSERT_OK_AND_ASSIGN(auto log, StreamLog::Open(dir.path(), Small()));
    for (int b = 0; b < 20; ++b) ASSERT_OK(log->Append(Records("b" + std::to_string(b), 4)));
  }
  auto files = SegmentFiles(dir.path());
  ASSERT_GE(files.size(), 3u);
  std::filesystem::remove(files[1].first);
  ASSERT_ERROR(StreamLog::Open(dir.path(), Small()), StatusCode::kCorruption,
               "but the one before ends at");
}

TEST(RecoveryTest, ValidBatchWithWrongOffsetIsCorruptionNotTail) {
  ScratchDir dir;
  {
    ASSERT_OK_AND_ASSIGN(auto log, StreamLog::Open(dir.path()));
    ASSERT_OK(log->Append({"a", "b"}));
  }
  auto files = SegmentFiles(dir.path());
  std::string stray;
  EncodeBatch(100, 1, kNoProducer, -1, {"z"}, &stray);
  AppendBytes(files[0].first, stray);
  ASSERT_ERROR(StreamLog::Open(dir.path()), StatusCode::kCorruption, "base offset 100, expected 2");
}

}  // namespace
}  // namespace sluice::log
