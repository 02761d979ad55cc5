#include "sources/file_source.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <vector>

#include "columnar/sql_schema.h"
#include "common/testing.h"
#include "sources/file_test_util.h"

namespace sluice::sources {
namespace {

namespace fs = std::filesystem;
using file_test::Append;
using file_test::Rec;

int64_t Sum(const Positions& p) {
  int64_t s = 0;
  for (const auto& [name, n] : p) s += n;
  return s;
}

class FileSourceTest : public file_test::FolderTest {
 protected:
  FileSourceTest() : FolderTest("sluice_file_source_") {}

  FileSourceOptions Options() {
    FileSourceOptions o;
    o.dir = dir_.string();
    o.name = "files_in";
    o.scan_interval_ms = 20;
    return o;
  }
  Result<std::unique_ptr<FileSource>> Open() { return FileSource::Open(Options()); }

  // Polls once; records are copied out of the sink.
  static std::vector<Rec> PollOnce(FileSource& s, int64_t max_bytes = 1 << 20, int timeout = 0) {
    std::vector<Rec> out;
    auto n = s.Poll(max_bytes, timeout, [&](const SourceRecord& r) {
      out.push_back(Rec{r.partition, r.offset, std::string(r.value)});
    });
    EXPECT_TRUE(n.ok()) << n.status().ToString();
    EXPECT_EQ(n.ValueOr(-1), static_cast<int64_t>(out.size()));
    return out;
  }
  // Polls until a poll returns nothing.
  static std::vector<Rec> Drain(FileSource& s, int64_t max_bytes = 1 << 20) {
    std::vector<Rec> all;
    while (true) {
      std::vector<Rec> got = PollOnce(s, max_bytes, 0);
      if (got.empty()) return all;
      all.insert(all.end(), got.begin(), got.end());
    }
  }

  // Writes lines (each + "\n") to `file`; returns the records they should
  // become, offsets counted here from the bytes written.
  std::vector<Rec> WriteLines(const std::string& file, const std::vector<std::string>& lines) {
    std::vector<Rec> want;
    int64_t offset = fs::exists(dir_ / file) ? static_cast<int64_t>(fs::file_size(dir_ / file)) : 0;
    std::string bytes;
    for (const auto& l : lines) {
      want.push_back(Rec{file, offset, l});
      bytes += l + "\n";
      offset += static_cast<int64_t>(l.size()) + 1;
    }
    Append(dir_ / file, bytes);
    return want;
  }
};

TEST_F(FileSourceTest, ReadsMatchingFilesInNameOrder) {
  auto b = WriteLines("2024-01-02.jsonl", {R"({"id":3})", R"({"id":4})"});
  auto a = WriteLines("2024-01-01.jsonl", {R"({"id":1})", R"({"id":2})"});
  WriteLines("notes.txt", {"not a record"});
  WriteLines(".hidden.jsonl", {"being written"});
  fs::create_directories(dir_ / "sub.jsonl");
  ASSERT_OK_AND_ASSIGN(auto s, Open());
  EXPECT_EQ(s->Describe(), "file:" + dir_.string());
  std::vector<Rec> want = a;
  want.insert(want.end(), b.begin(), b.end());
  EXPECT_EQ(Drain(*s), want);
  Positions end{
      {"2024-01-01.jsonl", static_cast<int64_t>(fs::file_size(dir_ / "2024-01-01.jsonl"))},
      {"2024-01-02.jsonl", static_cast<int64_t>(fs::file_size(dir_ / "2024-01-02.jsonl"))}};
  EXPECT_EQ(s->CurrentPositions(), end);
}

TEST_F(FileSourceTest, OpenMissingFolderIsNotFound) {
  FileSourceOptions o = Options();
  o.dir = (dir_ / "nope").string();
  ASSERT_ERROR(FileSource::Open(o), StatusCode::kNotFound, (dir_ / "nope").string());
  o = Options();
  o.max_line_bytes = 0;
  ASSERT_ERROR(FileSource::Open(o), StatusCode::kInvalidArgument, "max_line_bytes");
}

TEST_F(FileSourceTest, PartialLastLineWaitsUntilCompleted) {
  auto first = WriteLines("a.jsonl", {R"({"id":1})"});
  Append(dir_ / "a.jsonl", R"({"id":)");
  ASSERT_OK_AND_ASSIGN(auto s, Open());
  EXPECT_EQ(Drain(*s), first);
  EXPECT_TRUE(PollOnce(*s, 1 << 20, 50).empty());  // rescans: still partial
  const int64_t second_line = static_cast<int64_t>(first[0].value.size()) + 1;
  EXPECT_EQ(s->CurrentPositions().at("a.jsonl"), second_line);
  EXPECT_EQ(s->Lag().at("a.jsonl"), 6);
  Append(dir_ / "a.jsonl", "2}\r\n");
  std::vector<Rec> got = PollOnce(*s, 1 << 20, 2000);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0], (Rec{"a.jsonl", second_line, R"({"id":2})"}));
  EXPECT_EQ(s->Lag().at("a.jsonl"), 0);
}

TEST_F(FileSourceTest, PartialLineDoesNotBlockLaterFilesAndAppendsAreRead) {
  auto a = WriteLines("a.jsonl", {"a0"});
  Append(dir_ / "a.jsonl", "a1 still being wri");
  auto b = WriteLines("b.jsonl", {"b0"});
  ASSERT_OK_AND_ASSIGN(auto s, Open());
  std::vector<Rec> want{a[0], b[0]};
  EXPECT_EQ(Drain(*s), want);
  Append(dir_ / "a.jsonl", "tten\n");
  auto b1 = WriteLines("b.jsonl", {"b1"});
  std::vector<Rec> got;
  for (int i = 0; i < 100 && got.size() < 2; ++i) {
    auto r = PollOnce(*s, 1 << 20, 100);
    got.insert(got.end(), r.begin(), r.end());
  }
  want = {Rec{"a.jsonl", 3, "a1 still being written"}, b1[0]};
  EXPECT_EQ(got, want);
}

TEST_F(FileSourceTest, CrlfAndBlankLines) {
  Append(dir_ / "a.jsonl", "one\r\n\r\n\n  \t\r\ntwo\nthree\r\n");
  ASSERT_OK_AND_ASSIGN(auto s, Open());
  std::vector<Rec> want{{"a.jsonl", 0, "one"}, {"a.jsonl", 13, "two"}, {"a.jsonl", 17, "three"}};
  EXPECT_EQ(Drain(*s), want);
  EXPECT_EQ(s->CurrentPositions().at("a.jsonl"), 24);
}

TEST_F(FileSourceTest, Utf8ByteOrderMarkStartingAFileIsDropped) {
  Append(dir_ / "a.jsonl", "\xEF\xBB\xBF{\"id\":1}\n\xEF\xBB\xBF{}\n");
  ASSERT_OK_AND_ASSIGN(auto s, Open());
  // Only at offset 0: elsewhere the bytes are the record's (and dead-lettered).
  std::vector<Rec> want{{"a.jsonl", 0, R"({"id":1})"}, {"a.jsonl", 12, "\xEF\xBB\xBF{}"}};
  EXPECT_EQ(Drain(*s), want);
}

TEST_F(FileSourceTest, SeekToSavedPositionsContinuesExactly) {
  std::vector<Rec> all;
  for (std::string f : {"a.jsonl", "b.jsonl", "c.jsonl"}) {
    std::vector<std::string> lines;
    for (int i = 0; i < 40; ++i) lines.push_back(fmt::format(R"({{"file":"{}","i":{}}})", f, i));
    auto w = WriteLines(f, lines);
    all.insert(all.end(), w.begin(), w.end());
  }
  // Stop after every few polls (small max_bytes: positions land mid-file),
  // resume a fresh source from the saved positions, and compare.
  for (int stop_after : {1, 7, 13, 40}) {
    SCOPED_TRACE(stop_after);
    ASSERT_OK_AND_ASSIGN(auto s, Open());
    ASSERT_OK(s->Seek({}));
    std::vector<Rec> got;
    for (int i = 0; i < stop_after; ++i) {
      auto r = PollOnce(*s, 100);
      got.insert(got.end(), r.begin(), r.end());
    }
    Positions saved = s->CurrentPositions();
    ASSERT_OK_AND_ASSIGN(auto resumed, Open());
    ASSERT_OK(resumed->Seek(saved));
    EXPECT_EQ(resumed->CurrentPositions(), saved);
    auto rest = Drain(*resumed, 100);
    got.insert(got.end(), rest.begin(), rest.end());
    EXPECT_EQ(got, all);
  }
}

TEST_F(FileSourceTest, FilesNotNamedBySeekStartAtZero) {
  auto a = WriteLines("a.jsonl", {"a0", "a1"});
  auto b = WriteLines("b.jsonl", {"b0", "b1"});
  ASSERT_OK_AND_ASSIGN(auto s, Open());
  ASSERT_OK(s->Seek({{"a.jsonl", 3}}));
  std::vector<Rec> want{a[1], b[0], b[1]};
  EXPECT_EQ(Drain(*s), want);
}

TEST_F(FileSourceTest, NewFileAppearingLaterIsRead) {
  auto a = WriteLines("2024-01-01.jsonl", {"a0"});
  ASSERT_OK_AND_ASSIGN(auto s, Open());
  EXPECT_EQ(Drain(*s), a);
  EXPECT_TRUE(PollOnce(*s, 1 << 20, 30).empty());
  auto b = WriteLines("2024-01-02.jsonl", {"b0", "b1"});
  std::vector<Rec> got;
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (got.size() < 2 && std::chrono::steady_clock::now() < until) {
    auto r = PollOnce(*s, 1 << 20, 500);
    got.insert(got.end(), r.begin(), r.end());
  }
  EXPECT_EQ(got, b);
  EXPECT_EQ(s->CurrentPositions().size(), 2u);
  EXPECT_EQ(s->CurrentPositions().at("2024-01-02.jsonl"), 6);
}

// A bounded run's end: the poll that finds nothing left lists the folder at
// once (a file that came meanwhile is read), and the one after reports the
// end without waiting out the scan interval or its own timeout.
TEST_F(FileSourceTest, ABoundedSourceLooksAgainAtOnceAndEndsWithoutWaiting) {
  auto a = WriteLines("2024-01-01.jsonl", {"a0"});
  FileSourceOptions o = Options();
  o.scan_interval_ms = 600'000;  // never, within this test, for a source that waits for it
  o.bounded = true;
  ASSERT_OK_AND_ASSIGN(auto bounded, FileSource::Open(o));
  o.bounded = false;
  ASSERT_OK_AND_ASSIGN(auto streaming, FileSource::Open(o));
  EXPECT_EQ(PollOnce(*bounded), a);
  EXPECT_EQ(PollOnce(*streaming), a);
  auto b = WriteLines("2024-01-02.jsonl", {"b0"});
  EXPECT_EQ(PollOnce(*bounded), b);
  EXPECT_TRUE(PollOnce(*streaming).empty());  // the interval has not passed
  EXPECT_FALSE(bounded->Exhausted());
  auto started = std::chrono::steady_clock::now();
  EXPECT_TRUE(PollOnce(*bounded, 1 << 20, 60'000).empty());
  EXPECT_TRUE(bounded->Exhausted());
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(30));
  EXPECT_FALSE(streaming->Exhausted());
}

TEST_F(FileSourceTest, SeekErrorsNameTheFile) {
  WriteLines("a.jsonl", {"a0", "a1"});  // 6 bytes
  ASSERT_OK_AND_ASSIGN(auto s, Open());
  ASSERT_ERROR(s->Seek({{"a.jsonl", 7}}), StatusCode::kOutOfRange, "a.jsonl");
  ASSERT_ERROR(s->Seek({{"gone.jsonl", 0}}), StatusCode::kOutOfRange, "gone.jsonl");
  ASSERT_ERROR(s->Seek({{"a.jsonl", 2}}), StatusCode::kOutOfRange, "not at a line start");
  ASSERT_ERROR(s->Seek({{"../a.jsonl", 0}}), StatusCode::kInvalidArgument, "../a.jsonl");
  ASSERT_ERROR(s->Seek({{"a.jsonl", -1}}), StatusCode::kOutOfRange, "a.jsonl");
  ASSERT_OK(s->Seek({{"a.jsonl", 6}}));  // the end is a valid position
  EXPECT_TRUE(Drain(*s).empty());
}

TEST_F(FileSourceTest, TruncatedOrDeletedFileStopsThePoll) {
  WriteLines("a.jsonl", {"a0", "a1"});
  WriteLines("b.jsonl", {"b0"});
  ASSERT_OK_AND_ASSIGN(auto s, Open());
  Drain(*s);
  fs::resize_file(dir_ / "a.jsonl", 3);
  auto r = s->Poll(1 << 20, 100, [](const SourceRecord&) {});
  ASSERT_ERROR(r, StatusCode::kOutOfRange, "a.jsonl");
  ASSERT_OK_AND_ASSIGN(auto s2, Open());
  Drain(*s2);
  fs::remove(dir_ / "b.jsonl");
  ASSERT_ERROR(s2->Poll(1 << 20, 100, [](const SourceRecord&) {}), StatusCode::kOutOfRange,
               "b.jsonl");
}

TEST_F(FileSourceTest, LagDecreasesToZero) {
  std::vector<std::string> lines;
  for (int i = 0; i < 100; ++i) lines.push_back(fmt::format(R"({{"i":{}}})", i));
  WriteLines("a.jsonl", lines);
  WriteLines("b.jsonl", lines);
  int64_t total = 2 * static_cast<int64_t>(fs::file_size(dir_ / "a.jsonl"));
  ASSERT_OK_AND_ASSIGN(auto s, Open());
  EXPECT_EQ(Sum(s->Lag()), total);
  int64_t previous = total;
  int polls = 0;
  while (Sum(s->Lag()) > 0) {
    ASSERT_FALSE(PollOnce(*s, 64).empty());
    int64_t lag = Sum(s->Lag());
    EXPECT_LT(lag, previous);
    EXPECT_EQ(lag, total - Sum(s->CurrentPositions()));
    previous = lag;
    ASSERT_LT(++polls, 1000);
  }
  EXPECT_GT(polls, 10);  // max_bytes bounded each poll
}

TEST_F(FileSourceTest, LinesLongerThan16MiBAreDeliveredWhole) {
  std::string big(17 << 20, 'x');
  big.front() = '{';
  auto want = WriteLines("a.jsonl", {"small", big, "after"});
  ASSERT_OK_AND_ASSIGN(auto s, Open());
  std::vector<Rec> got = Drain(*s, 10);  // max_bytes below one line: one record per poll
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[1].offset, 6);
  EXPECT_EQ(got[1].value.size(), big.size());
  EXPECT_TRUE(got[1].value == big);
  EXPECT_EQ(got[2], want[2]);
  // Beyond max_line_bytes: an error, not an allocation without bound.
  FileSourceOptions o = Options();
  o.max_line_bytes = 1 << 20;
  ASSERT_OK_AND_ASSIGN(auto capped, FileSource::Open(o));
  EXPECT_EQ(PollOnce(*capped).size(), 1u);
  ASSERT_ERROR(capped->Poll(1 << 20, 0, [](const SourceRecord&) {}), StatusCode::kOutOfRange,
               "line at offset 6 of file");
}

TEST_F(FileSourceTest, PollIntoAppendsTheLinesWhereTheyLieAfterWhatTheBatchHolds) {
  std::vector<std::string> lines;
  for (int i = 0; i < 300; ++i) lines.push_back(fmt::format("{{\"n\": {}}}", i));
  auto want = WriteLines("a.jsonl", lines);
  Append(dir_ / "b.jsonl", "{\"crlf\": 1}\r\n\r\n{\"crlf\": 2}\r\n{\"partial\": ");
  ASSERT_OK_AND_ASSIGN(auto s, Open());
  RawBatch batch;
  batch.Add("kafka-0", 7, 1, "copied", "key", true);
  // Budgets of about 100 bytes: each poll stops mid-file, and drops the
  // bytes it read past its last line.
  std::vector<Rec> got;
  for (int polls = 0;; ++polls) {
    ASSERT_LT(polls, 1000);
    size_t first = batch.records.size();
    ASSERT_OK_AND_ASSIGN(int64_t n, s->PollInto(100, 0, &batch));
    ASSERT_EQ(static_cast<size_t>(n), batch.records.size() - first);
    if (n == 0) break;
    for (size_t i = first; i < batch.records.size(); ++i) {
      const RawRecord& r = batch.records[i];
      got.push_back(
          Rec{batch.partitions[r.origin.partition], r.origin.offset, std::string(batch.Value(i))});
      EXPECT_EQ(r.key_size, 0u);
      char after = batch.raw.data()[r.begin + r.size];
      EXPECT_TRUE(after == '\n' || after == '\r') << "record " << i;
    }
    // Nothing past the last line's end: the next poll's bytes follow it.
    const RawRecord& last = batch.records.back();
    size_t end = last.begin + last.size;
    EXPECT_EQ(batch.raw.size(), end + (batch.raw.data()[end] == '\r' ? 2 : 1));
  }
  want.push_back(Rec{"b.jsonl", 0, "{\"crlf\": 1}"});
  want.push_back(Rec{"b.jsonl", 15, "{\"crlf\": 2}"});
  EXPECT_EQ(got, want);
  EXPECT_EQ(batch.Value(0), "copied");
  EXPECT_EQ(batch.Key(0), "key");
  EXPECT_EQ(batch.partitions, (std::vector<std::string>{"kafka-0", "a.jsonl", "b.jsonl"}));
  // The partial line waits; once completed, it is read whole.
  Append(dir_ / "b.jsonl", "true}\n");
  size_t first = batch.records.size();
  ASSERT_OK_AND_ASSIGN(int64_t n, s->PollInto(100, 2000, &batch));  // once it rescans
  ASSERT_EQ(n, 1);
  EXPECT_EQ(batch.records[first].origin.offset, 28);
  EXPECT_EQ(batch.Value(first), "{\"partial\": true}");
}

TEST_F(FileSourceTest, ARunOfBlankLinesIsNotKeptInTheBatch) {
  std::string blanks;
  for (int i = 0; i < 100000; ++i) blanks += "  \n";  // 300 KB, no budget spent on them
  Append(dir_ / "a.jsonl", "{\"n\": 1}\n" + blanks + "{\"n\": 2}\n" + blanks);
  ASSERT_OK_AND_ASSIGN(auto s, Open());
  RawBatch batch;
  ASSERT_OK_AND_ASSIGN(int64_t n, s->PollInto(1 << 20, 0, &batch));
  ASSERT_EQ(n, 2);
  EXPECT_EQ(batch.Value(0), "{\"n\": 1}");
  EXPECT_EQ(batch.Value(1), "{\"n\": 2}");
  EXPECT_EQ(batch.records[1].origin.offset, 9 + 300000);
  EXPECT_EQ(s->CurrentPositions().at("a.jsonl"), 9 + 300000 + 9 + 300000);
  // The blank runs were dropped as they were read, the last one whole.
  EXPECT_LT(batch.raw.size(), size_t{100} << 10);
  EXPECT_EQ(batch.raw.size(), batch.records[1].begin + batch.records[1].size + 1);
}

// The real Pipeline over a FileSource: a checkpoint stores byte offsets per
// file; a run that dies without a checkpoint is replayed by the next, which
// resumes mid-file and picks up a new file: every event exactly once.
}  // namespace
}  // namespace sluice::sources
