#include "log/batch.h"

#include "common/crc32c.h"
#include "common/endian.h"
#include "common/testing.h"

namespace sluice::log {
namespace {

std::string Encode(const std::vector<std::string>& records, int64_t base = 7) {
  std::string out;
  EncodeBatch(base, 1234, 42, 9, records, &out);
  return out;
}

// Decodes a whole encoded batch the way recovery does.
Status DecodeAll(const std::string& bytes, BatchHeader* h, std::vector<std::string_view>* recs) {
  RETURN_IF_ERROR(DecodeBatchHeader(bytes, static_cast<int64_t>(bytes.size()), h));
  std::string_view all(bytes);
  std::string_view header = all.substr(0, h->header_length);
  std::string_view payload = all.substr(h->header_length, h->payload_length);
  RETURN_IF_ERROR(VerifyBatchCrc(*h, header, payload));
  return DecodeBatchRecords(*h, payload, recs);
}

TEST(BatchTest, RoundTrip) {
  std::vector<std::string> records = {"a", "", std::string(1000, 'x'), std::string("\0\1", 2)};
  std::string bytes = Encode(records);
  ASSERT_EQ(bytes.size(), static_cast<size_t>(kBatchHeaderSize) + 4 * 4 + 1 + 1000 + 2);
  BatchHeader h;
  std::vector<std::string_view> got;
  ASSERT_OK(DecodeAll(bytes, &h, &got));
  EXPECT_EQ(h.base_offset, 7);
  EXPECT_EQ(h.end_offset(), 11);
  EXPECT_EQ(h.timestamp_ms, 1234);
  EXPECT_EQ(h.producer_id, 42);
  EXPECT_EQ(h.sequence, 9);
  ASSERT_EQ(got.size(), records.size());
  for (size_t i = 0; i < records.size(); ++i) EXPECT_EQ(got[i], records[i]);
  // The layout documented in docs/log_format.md.
  EXPECT_EQ(bytes.substr(0, 4), "SLLG");
  EXPECT_EQ(LoadLE<int64_t>(bytes.data() + 16), 7);
  EXPECT_EQ(LoadLE<uint32_t>(bytes.data() + 12), Crc32c(std::string_view(bytes).substr(16)));
}

// Any single flipped bit anywhere in the batch is detected.
TEST(BatchTest, EveryBitFlipIsDetected) {
  std::string good = Encode({"hello", "world", "!"});
  for (size_t i = 0; i < good.size(); ++i) {
    for (int bit = 0; bit < 8; ++bit) {
      std::string bad = good;
      bad[i] = static_cast<char>(bad[i] ^ (1 << bit));
      BatchHeader h;
      std::vector<std::string_view> recs;
      Status s = DecodeAll(bad, &h, &recs);
      ASSERT_FALSE(s.ok()) << "flip of bit " << bit << " at byte " << i << " went unnoticed";
      EXPECT_EQ(s.code(), StatusCode::kCorruption) << s.ToString();
    }
  }
}

// Every prefix of a batch is a short batch, never a read past the bytes given.
TEST(BatchTest, EveryTruncationIsShort) {
  std::string good = Encode({"hello", "world"});
  for (size_t n = 0; n < good.size(); ++n) {
    BatchHeader h;
    Status s = DecodeBatchHeader(good.substr(0, n), static_cast<int64_t>(n), &h);
    ASSERT_FALSE(s.ok()) << n;
    EXPECT_EQ(s.code(), StatusCode::kCorruption);
    EXPECT_NE(s.message().find("short"), std::string::npos) << s.message();
  }
}

TEST(BatchTest, HugeDeclaredLengthIsBoundedByAvailableBytes) {
  std::string bytes = Encode({"x"});
  StoreLE<uint32_t>(bytes.data() + 8, 0xFFFFFFF0u);
  BatchHeader h;
  ASSERT_ERROR(DecodeBatchHeader(bytes, static_cast<int64_t>(bytes.size()), &h),
               StatusCode::kCorruption, "short batch");
}

TEST(BatchTest, BadVersionAndMagic) {
  std::string bytes = Encode({"x"});
  std::string v2 = bytes;
  StoreLE<uint16_t>(v2.data() + 6, 2);
  BatchHeader h;
  ASSERT_ERROR(DecodeBatchHeader(v2, static_cast<int64_t>(v2.size()), &h), StatusCode::kCorruption,
               "version 2");
  std::string zeros(bytes.size(), '\0');
  ASSERT_ERROR(DecodeBatchHeader(zeros, static_cast<int64_t>(zeros.size()), &h),
               StatusCode::kCorruption, "magic");
}

// A record length that disagrees with the payload is caught even with a valid CRC
// (a writer bug, not a torn write).
TEST(BatchTest, RecordFramingMustConsumePayload) {
  std::string bytes = Encode({"abc", "de"});
  StoreLE<uint32_t>(bytes.data() + kBatchHeaderSize, 4);  // first record claims 4 bytes
  StoreLE<uint32_t>(bytes.data() + 12, Crc32c(std::string_view(bytes).substr(16)));
  BatchHeader h;
  std::vector<std::string_view> recs;
  ASSERT_ERROR(DecodeAll(bytes, &h, &recs), StatusCode::kCorruption, "record 1 of 2");
  std::string trailing = Encode({"abc"});
  StoreLE<uint32_t>(trailing.data() + kBatchHeaderSize, 2);
  StoreLE<uint32_t>(trailing.data() + 12, Crc32c(std::string_view(trailing).substr(16)));
  ASSERT_ERROR(DecodeAll(trailing, &h, &recs), StatusCode::kCorruption, "trailing");
}

}  // namespace
}  // namespace sluice::log
