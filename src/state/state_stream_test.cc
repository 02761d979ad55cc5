// StateReader: records of any size across chunks; a short record at the end
// is a truncated file; a corrupt one is answered without reading further.
#include "state/state_stream.h"

#include <gtest/gtest.h>

#include <cstring>

#include "common/testing.h"

namespace sluice::state {
namespace {

// Records are a u32 length and that many bytes.
Status ParseRecord(std::string_view* in, std::string* out) {
  if (in->size() < 4) return StateReader::Short("record length");
  uint32_t n = 0;
  std::memcpy(&n, in->data(), 4);
  if (n == 0xFFFFFFFF) return Status::Corruption("a bad record");
  if (in->size() < 4 + n) return StateReader::Short("record body");
  out->assign(in->substr(4, n));
  in->remove_prefix(4 + n);
  return Status::OK();
}

std::string Record(const std::string& body) {
  uint32_t n = static_cast<uint32_t>(body.size());
  return std::string(reinterpret_cast<const char*>(&n), 4) + body;
}

TEST(StateStreamTest, RecordsOfAnySizeReadAcrossChunks) {
  std::string big(3 * StateReader::kChunk + 17, 'x');
  std::string file;
  StateWriter w([&file](std::string_view c) {
    file.append(c);
    return Status::OK();
  });
  for (const std::string& r : {std::string("a"), big, std::string("bc")}) {
    w.buffer()->append(Record(r));
    ASSERT_OK(w.MaybeFlush());
  }
  ASSERT_OK(w.Flush());
  EXPECT_EQ(w.written(), static_cast<int64_t>(file.size()));
  StateReader in = StateReader::Of(file);
  std::vector<std::string> got;
  while (!in.AtEnd()) {
    std::string r;
    ASSERT_OK(in.Next([&](std::string_view* v) { return ParseRecord(v, &r); }));
    got.push_back(r);
  }
  EXPECT_EQ(got, (std::vector<std::string>{"a", big, "bc"}));
}

TEST(StateStreamTest, AShortRecordAtTheEndIsATruncatedFile) {
  std::string file = Record("abcdef").substr(0, 7);
  StateReader in = StateReader::Of(file);
  std::string r;
  ASSERT_ERROR(in.Next([&](std::string_view* v) { return ParseRecord(v, &r); }),
               StatusCode::kCorruption, "truncated");
}

TEST(StateStreamTest, ACorruptRecordIsAnsweredWithoutReadingTheRest) {
  std::string file = std::string("\xFF\xFF\xFF\xFF", 4) + std::string(8 * StateReader::kChunk, 'x');
  int64_t read = 0;
  StateReader in(
      [&](int64_t offset, int64_t length, std::string* out) {
        read += length;
        out->assign(file.substr(static_cast<size_t>(offset), static_cast<size_t>(length)));
        return Status::OK();
      },
      static_cast<int64_t>(file.size()));
  std::string r;
  ASSERT_ERROR(in.Next([&](std::string_view* v) { return ParseRecord(v, &r); }),
               StatusCode::kCorruption, "a bad record");
  EXPECT_LE(read, StateReader::kChunk);
}

}  // namespace
}  // namespace sluice::state
