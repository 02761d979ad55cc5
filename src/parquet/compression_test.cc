#include "parquet/compression.h"

#include <gtest/gtest.h>

#include <random>

#include "common/testing.h"

namespace sluice::parquet {
namespace {

std::string SampleData() {
  std::string s;
  std::mt19937 rng(7);
  for (int i = 0; i < 20000; ++i) {
    s += "row-" + std::to_string(i % 97) + ";";
    s.push_back(static_cast<char>(rng() & 0xff));
  }
  return s;
}

class CodecTest : public ::testing::TestWithParam<CompressionCodec> {};

TEST_P(CodecTest, RoundTripsAndChecksSize) {
  CompressionCodec codec = GetParam();
  const std::string input = SampleData();
  std::string compressed = "prefix";
  ASSERT_OK(Compress(codec, 0, input, &compressed));
  ASSERT_EQ(compressed.substr(0, 6), "prefix");  // appends
  std::string_view body = std::string_view(compressed).substr(6);
  if (codec != CompressionCodec::kUncompressed) {
    EXPECT_LT(body.size(), input.size());
  }
  std::string out;
  ASSERT_OK(Decompress(codec, body, input.size(), &out));
  EXPECT_EQ(out, input);
  // A header lying about the size (either way) is corruption, not a crash.
  ASSERT_ERROR(Decompress(codec, body, input.size() + 1, &out), StatusCode::kCorruption, "");
  ASSERT_ERROR(Decompress(codec, body, input.size() - 1, &out), StatusCode::kCorruption, "");
  ASSERT_ERROR(Decompress(codec, body, size_t{1} << 40, &out), StatusCode::kCorruption, "");
  // Truncated or garbled input.
  if (codec != CompressionCodec::kUncompressed) {
    ASSERT_ERROR(Decompress(codec, body.substr(0, body.size() / 2), input.size(), &out),
                 StatusCode::kCorruption, "");
    std::string garbled(body);
    for (size_t i = 0; i < garbled.size(); i += 3) garbled[i] = static_cast<char>(~garbled[i]);
    EXPECT_FALSE(Decompress(codec, garbled, input.size(), &out).ok());
  }
  // Empty input.
  std::string empty;
  ASSERT_OK(Compress(codec, 0, "", &empty));
  ASSERT_OK(Decompress(codec, empty, 0, &out));
  EXPECT_TRUE(out.empty());
}

INSTANTIATE_TEST_SUITE_P(AllCodecs, CodecTest,
                         ::testing::Values(CompressionCodec::kUncompressed,
                                           CompressionCodec::kSnappy, CompressionCodec::kGzip,
                                           CompressionCodec::kZstd, CompressionCodec::kLz4Raw));

TEST(CompressionTest, GzipFramingAndZlibFramingBothRead) {
  const std::string input = SampleData();
  std::string gz;
  ASSERT_OK(Compress(CompressionCodec::kGzip, 6, input, &gz));
  EXPECT_EQ(static_cast<uint8_t>(gz[0]), 0x1f);  // gzip magic
  EXPECT_EQ(static_cast<uint8_t>(gz[1]), 0x8b);
}

TEST(CompressionTest, HadoopLz4FramingAndRawFallback) {
  const std::string input = SampleData();
  std::string raw;
  ASSERT_OK(Compress(CompressionCodec::kLz4Raw, 0, input, &raw));
  // Two Hadoop frames: [BE raw size][BE compressed size][block] each.
  std::string half1 = input.substr(0, 30000), half2 = input.substr(30000);
  std::string framed;
  for (const std::string& part : {half1, half2}) {
    std::string block;
    ASSERT_OK(Compress(CompressionCodec::kLz4Raw, 0, part, &block));
    for (uint32_t v : {static_cast<uint32_t>(part.size()), static_cast<uint32_t>(block.size())}) {
      for (int shift = 24; shift >= 0; shift -= 8) framed.push_back(static_cast<char>(v >> shift));
    }
    framed += block;
  }
  std::string out;
  ASSERT_OK(Decompress(CompressionCodec::kLz4, framed, input.size(), &out));
  EXPECT_EQ(out, input);
  ASSERT_OK(Decompress(CompressionCodec::kLz4, raw, input.size(), &out));
  EXPECT_EQ(out, input);
}

TEST(CompressionTest, ParsesCodecNames) {
  ASSERT_OK_AND_ASSIGN(CompressionCodec c, ParseCodecName("ZSTD"));
  EXPECT_EQ(c, CompressionCodec::kZstd);
  ASSERT_OK_AND_ASSIGN(c, ParseCodecName("lz4_raw"));
  EXPECT_EQ(c, CompressionCodec::kLz4Raw);
  ASSERT_ERROR(ParseCodecName("brotli"), StatusCode::kInvalidArgument, "brotli");
  std::string out;
  ASSERT_ERROR(Decompress(CompressionCodec::kBrotli, "x", 1, &out), StatusCode::kNotImplemented,
               "BROTLI");
}

}  // namespace
}  // namespace sluice::parquet
