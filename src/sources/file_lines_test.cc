#include "sources/file_lines.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>
#include <thread>
#include <vector>

#include "common/testing.h"
#include "sources/file_source.h"
#include "sources/file_test_util.h"

namespace sluice::sources {
namespace {

namespace fs = std::filesystem;
using file_test::Append;
using file_test::Rec;

// `n` lines {"n": 00000} .. of 13 bytes each, line i at offset 13 * i.
std::string NumberedLines(int n) {
  std::string bytes;
  for (int i = 0; i < n; ++i) bytes += fmt::format("{{\"n\": {:05}}}\n", i);
  return bytes;
}

// Reads `batch`'s deferred ranges in parts of `part_bytes`, on `threads`
// threads that claim the parts (the pipeline's lanes do the same).
Status ReadDeferred(DeferredLines& lines, RawBatch& batch, int64_t part_bytes, int threads) {
  lines.Plan(batch, part_bytes);
  auto work = [&] {
    while (lines.ReadNext(batch)) {
    }
  };
  std::vector<std::thread> pool;
  for (int i = 1; i < threads; ++i) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  return lines.Finish(batch);
}

// The records of `batch` from `first` on, and a check of the batch's
// contract: each value is followed by its line end.
std::vector<Rec> RecordsOf(const RawBatch& batch, size_t first = 0) {
  std::vector<Rec> out;
  for (size_t i = first; i < batch.records.size(); ++i) {
    const RawRecord& r = batch.records[i];
    out.push_back(
        Rec{batch.partitions[r.origin.partition], r.origin.offset, std::string(batch.Value(i))});
    char after = batch.raw.data()[r.begin + r.size];
    EXPECT_TRUE(after == '\n' || after == '\r') << "record " << i << " " << out.back();
  }
  return out;
}

class FileLinesTest : public file_test::FolderTest {
 protected:
  FileLinesTest() : FolderTest("sluice_file_lines_") {}

  std::unique_ptr<FileSource> OpenSource() {
    FileSourceOptions o;
    o.dir = dir_.string();
    o.name = "files_in";
    o.scan_interval_ms = 0;
    auto s = FileSource::Open(o);
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    if (!s.ok()) return nullptr;
    return std::move(*s);
  }

  // Every record of the folder, polled with `budget` bytes a poll,
  // `polls_per_batch` polls into one batch (as a pipeline fills one); deferred
  // (and read in parts) or line by line.
  std::vector<Rec> Drain(FileSource& s, int64_t budget, bool defer, int64_t part_bytes, int threads,
                         int polls_per_batch = 1) {
    std::vector<Rec> all;
    DeferredLines lines;
    for (int batches = 0; batches < 100000; ++batches) {
      RawBatch batch;
      batch.defer_reads = defer;
      int64_t polled = 0;
      for (int i = 0; i < polls_per_batch; ++i) {
        auto n = s.PollInto(budget, 0, &batch);
        EXPECT_TRUE(n.ok()) << n.status().ToString();
        if (!n.ok()) return all;
        polled += *n;
      }
      if (polled == 0) return all;
      Status st = ReadDeferred(lines, batch, part_bytes, threads);
      EXPECT_TRUE(st.ok()) << st.ToString();
      EXPECT_TRUE(batch.deferred.empty());
      std::vector<Rec> got = RecordsOf(batch);
      all.insert(all.end(), got.begin(), got.end());
    }
    ADD_FAILURE() << "the folder never drained";
    return all;
  }
};

TEST(LineValueTest, StripsTheCarriageReturnAndAByteOrderMarkAtTheFileStartAndSkipsBlankLines) {
  auto value = [](std::string_view line, bool at_start) -> std::string {
    std::optional<LineValue> v = LineValueOf(line.data(), line.size(), at_start);
    return v ? std::string(line.substr(v->begin, v->end - v->begin)) : "<blank>";
  };
  EXPECT_EQ(value("{\"a\": 1}", false), "{\"a\": 1}");
  EXPECT_EQ(value("{\"a\": 1}\r", false), "{\"a\": 1}");
  EXPECT_EQ(value("\xEF\xBB\xBF{}", true), "{}");
  EXPECT_EQ(value("\xEF\xBB\xBF{}", false), "\xEF\xBB\xBF{}");  // only where a file starts
  EXPECT_EQ(value(" \t \r", false), "<blank>");
  EXPECT_EQ(value("", false), "<blank>");
  EXPECT_EQ(value("\xEF\xBB\xBF", true), "<blank>");
  EXPECT_EQ(value("  x ", false), "  x ");  // a value keeps its spaces
}

TEST_F(FileLinesTest, ADeferredPollReadInPartsHoldsWhatALineByLinePollReads) {
  std::mt19937_64 rng(20261207);
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<uint64_t>(n)); };
  for (int f = 0; f < 4; ++f) {
    std::string bytes = f == 1 ? "\xEF\xBB\xBF" : "";
    for (int i = 0; i < 3000; ++i) {
      const int kind = pick(60);
      if (kind < 5) {
        bytes += "\n";  // empty
      } else if (kind < 10) {
        bytes += " \t \r\n";  // blank, CRLF
      } else if (kind < 15) {
        bytes += "{\"crlf\": 1}\r\n";
      } else if (kind == 15) {  // longer than the source's look for a line end
        bytes += std::string(static_cast<size_t>(70000 + pick(5000)), 'x') + "\n";
      } else {
        bytes += fmt::format("{{\"n\": {}, \"pad\": \"{}\"}}\n", i,
                             std::string(static_cast<size_t>(pick(300)), 'p'));
      }
    }
    if (f == 3) bytes += "{\"partial\": ";  // a line still being written
    Append(dir_ / fmt::format("f{}.jsonl", f), bytes);
  }
  std::unique_ptr<FileSource> line_by_line = OpenSource();
  ASSERT_NE(line_by_line, nullptr);
  const std::vector<Rec> want = Drain(*line_by_line, 1 << 20, false, 0, 1);
  ASSERT_GT(want.size(), 9000u);
  // Budgets from a few lines to several files, parts from a few bytes (most
  // lines cross parts) to the default, on one thread and on three; a batch
  // of one poll or of three.
  for (int64_t budget : {int64_t{700}, int64_t{64} << 10, int64_t{4} << 20, int64_t{64} << 20}) {
    for (int64_t part_bytes : {int64_t{7}, int64_t{4096}, DeferredLines::kPartBytes}) {
      if (part_bytes == 7 && budget > (int64_t{64} << 10)) continue;  // (slow, and no news)
      SCOPED_TRACE(fmt::format("budget {} parts of {} bytes", budget, part_bytes));
      std::unique_ptr<FileSource> deferred = OpenSource();
      ASSERT_NE(deferred, nullptr);
      EXPECT_EQ(Drain(*deferred, budget, true, part_bytes, part_bytes == 7 ? 1 : 3), want);
      EXPECT_EQ(deferred->CurrentPositions(), line_by_line->CurrentPositions());
      // Polls into one batch: ranges, and lines read at once after them.
      if (budget > (int64_t{64} << 10)) continue;
      deferred = OpenSource();
      ASSERT_NE(deferred, nullptr);
      EXPECT_EQ(Drain(*deferred, budget, true, part_bytes, 2, 3), want);
    }
  }
  // The partial line, once completed, is read whole.
  Append(dir_ / "f3.jsonl", "true}\n");
  std::unique_ptr<FileSource> deferred = OpenSource();
  ASSERT_NE(deferred, nullptr);
  std::vector<Rec> all = Drain(*deferred, 1 << 20, true, 4096, 2);
  ASSERT_EQ(all.size(), want.size() + 1);
  EXPECT_EQ(all.back().value, "{\"partial\": true}");
}

TEST_F(FileLinesTest, ADeferredRangeEndsAtTheLastLineEndAndLeavesAPartialLineWaiting) {
  const std::string bytes = NumberedLines(10000);
  Append(dir_ / "a.jsonl", bytes + "{\"n\": ");
  std::unique_ptr<FileSource> s = OpenSource();
  ASSERT_NE(s, nullptr);
  RawBatch batch;
  batch.defer_reads = true;
  batch.Add("kafka-0", 7, 1, "copied", "", true);  // what the batch held before
  ASSERT_OK_AND_ASSIGN(int64_t n, s->PollInto(1 << 20, 0, &batch));
  EXPECT_EQ(n, 1);  // one range
  ASSERT_EQ(batch.deferred.size(), 1u);
  EXPECT_EQ(batch.deferred[0].offset, 0);
  EXPECT_EQ(batch.deferred[0].size, 130000);
  EXPECT_EQ(batch.DeferredBytes(), 130000);
  EXPECT_EQ(s->CurrentPositions().at("a.jsonl"), 130000);  // moved past it at once
  DeferredLines lines;
  ASSERT_OK(ReadDeferred(lines, batch, 4096, 2));
  std::vector<Rec> got = RecordsOf(batch, 1);
  ASSERT_EQ(got.size(), 10000u);
  EXPECT_EQ(got[9999], (Rec{"a.jsonl", 129987, "{\"n\": 09999}"}));
  EXPECT_EQ(batch.Value(0), "copied");
  // Nothing more until the line is completed.
  RawBatch next;
  next.defer_reads = true;
  ASSERT_OK_AND_ASSIGN(n, s->PollInto(1 << 20, 0, &next));
  EXPECT_EQ(n, 0);
  Append(dir_ / "a.jsonl", "3}\n");
  ASSERT_OK_AND_ASSIGN(n, s->PollInto(1 << 20, 0, &next));
  ASSERT_EQ(n, 1);  // (read at once: too few bytes to defer)
  EXPECT_TRUE(next.deferred.empty());
  EXPECT_EQ(RecordsOf(next), (std::vector<Rec>{{"a.jsonl", 130000, "{\"n\": 3}"}}));
}

TEST_F(FileLinesTest, ABudgetThatEndsMidFileLeavesItsRangeUnreadAndEndsThePoll) {
  const std::string bytes = NumberedLines(20000);
  Append(dir_ / "a.jsonl", bytes);
  Append(dir_ / "b.jsonl", bytes);
  std::unique_ptr<FileSource> s = OpenSource();
  ASSERT_NE(s, nullptr);
  RawBatch batch;
  batch.defer_reads = true;
  ASSERT_OK_AND_ASSIGN(int64_t n, s->PollInto(100000, 0, &batch));
  EXPECT_EQ(n, 1);
  // Nothing read yet: one range up to the last line end within the budget,
  // and b.jsonl not begun (a.jsonl's next line comes first).
  EXPECT_TRUE(batch.records.empty());
  ASSERT_EQ(batch.deferred.size(), 1u);
  EXPECT_EQ(batch.deferred[0].size, 99996);  // 7692 lines
  EXPECT_EQ(s->CurrentPositions(), (Positions{{"a.jsonl", 99996}, {"b.jsonl", 0}}));
  DeferredLines lines;
  ASSERT_OK(ReadDeferred(lines, batch, DeferredLines::kPartBytes, 1));
  std::vector<Rec> got = RecordsOf(batch);
  ASSERT_EQ(got.size(), 7692u);
  EXPECT_EQ(got.back(), (Rec{"a.jsonl", 99983, "{\"n\": 07691}"}));
}

TEST_F(FileLinesTest, LinesToBeReadOneByOneAfterARangeEndThePollAndWaitForTheNext) {
  const std::string bytes = NumberedLines(10000);
  Append(dir_ / "a.jsonl", bytes);                       // a range
  Append(dir_ / "b.jsonl", "{\"b\": 1}\n{\"b\": 2}\n");  // too short for one
  std::unique_ptr<FileSource> s = OpenSource();
  ASSERT_NE(s, nullptr);
  RawBatch batch;
  batch.defer_reads = true;
  ASSERT_OK_AND_ASSIGN(int64_t n, s->PollInto(1 << 20, 0, &batch));
  EXPECT_EQ(n, 1);
  EXPECT_TRUE(batch.lines_wait);  // b.jsonl's lines would have to follow the range
  EXPECT_TRUE(batch.records.empty());
  EXPECT_EQ(s->CurrentPositions(), (Positions{{"a.jsonl", 130000}, {"b.jsonl", 0}}));
  DeferredLines lines;
  ASSERT_OK(ReadDeferred(lines, batch, DeferredLines::kPartBytes, 2));
  EXPECT_EQ(batch.records.size(), 10000u);
  // The next batch takes b.jsonl line by line.
  batch.Clear();
  EXPECT_FALSE(batch.lines_wait);
  ASSERT_OK_AND_ASSIGN(n, s->PollInto(1 << 20, 0, &batch));
  EXPECT_EQ(n, 2);
  EXPECT_FALSE(batch.lines_wait);
  EXPECT_EQ(RecordsOf(batch),
            (std::vector<Rec>{{"b.jsonl", 0, "{\"b\": 1}"}, {"b.jsonl", 9, "{\"b\": 2}"}}));
}

TEST_F(FileLinesTest, AFileTruncatedOrRewrittenBeforeItsRangeIsReadIsAnErrorNamingIt) {
  const std::string bytes = NumberedLines(10000);
  for (bool truncate : {true, false}) {
    SCOPED_TRACE(truncate ? "truncated" : "rewritten");
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    Append(dir_ / "a.jsonl", bytes);
    std::unique_ptr<FileSource> s = OpenSource();
    ASSERT_NE(s, nullptr);
    RawBatch batch;
    batch.defer_reads = true;
    ASSERT_OK_AND_ASSIGN(int64_t n, s->PollInto(1 << 20, 0, &batch));
    ASSERT_EQ(n, 1);
    if (truncate) {
      fs::resize_file(dir_ / "a.jsonl", 50000);
    } else {
      // The same size, its line ends elsewhere.
      std::ofstream out(dir_ / "a.jsonl", std::ios::binary | std::ios::trunc);
      out << std::string(bytes.size(), 'y');
    }
    DeferredLines lines;
    Status st = ReadDeferred(lines, batch, 4096, 2);
    EXPECT_EQ(st.code(), StatusCode::kOutOfRange) << st.ToString();
    EXPECT_NE(st.message().find("a.jsonl"), std::string::npos) << st.ToString();
    EXPECT_NE(st.message().find("files_in"), std::string::npos) << st.ToString();
    EXPECT_TRUE(batch.deferred.empty());
  }
}

}  // namespace
}  // namespace sluice::sources
