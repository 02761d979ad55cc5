#include "iceberg/deletion_vector.h"

#include <zlib.h>

#include <random>

#include "columnar/value_format.h"
#include "common/testing.h"

namespace sluice::iceberg {
namespace {

TEST(DeletionVectorTest, ReferenceExample) {
  // {0, 5}: the worked example of the reference digest (44 bytes).
  std::string blob = SerializeDeletionVector({0, 5});
  std::string hex;
  AppendHex(blob, &hex);
  EXPECT_EQ(hex,
            "00000024d1d339640100000000000000000000003a3000000100000000000100100000000000"
            "0500"
            "86d2574a");
  ASSERT_OK_AND_ASSIGN(auto back, DeserializeDeletionVector(blob));
  EXPECT_EQ(back, (PositionSet{0, 5}));
}

TEST(DeletionVectorTest, RoundTripArrayBitsetAndHighBuckets) {
  std::mt19937_64 rng(3);
  std::vector<int64_t> drawn;
  for (int i = 0; i < 10000; ++i) drawn.push_back(static_cast<int64_t>(rng() % 70000));  // bitset
  for (int i = 0; i < 100; ++i)
    drawn.push_back((int64_t{5} << 32) + static_cast<int64_t>(rng() % 1000000));
  const PositionSet positions(drawn);
  ASSERT_OK_AND_ASSIGN(auto back, DeserializeDeletionVector(SerializeDeletionVector(positions)));
  EXPECT_EQ(back, positions);
  ASSERT_OK_AND_ASSIGN(back, DeserializeDeletionVector(SerializeDeletionVector({})));
  EXPECT_TRUE(back.empty());
}

TEST(DeletionVectorTest, CorruptBlobs) {
  std::string blob = SerializeDeletionVector({1, 2, 3});
  std::string bad = blob;
  bad[10] ^= 1;
  ASSERT_ERROR(DeserializeDeletionVector(bad), StatusCode::kCorruption, "CRC");
  ASSERT_ERROR(DeserializeDeletionVector(blob.substr(0, 20)), StatusCode::kCorruption, "length");
  bad = blob;
  bad[4] = 0;
  ASSERT_ERROR(DeserializeDeletionVector(bad), StatusCode::kCorruption, "magic");
  for (size_t n = 0; n < blob.size(); ++n) {
    EXPECT_FALSE(DeserializeDeletionVector(blob.substr(0, n)).ok());
  }
}

TEST(DeletionVectorTest, PositionsOutOfOrderAreCorrupt) {
  // {1, 2, 3} with its last two values swapped and the CRC made right: the
  // bitmap says 1, 3, 2.
  std::string blob = SerializeDeletionVector({1, 2, 3});
  const size_t crc_at = blob.size() - 4;
  std::swap(blob[crc_at - 4], blob[crc_at - 2]);
  std::swap(blob[crc_at - 3], blob[crc_at - 1]);
  const uint32_t crc =
      static_cast<uint32_t>(crc32(0, reinterpret_cast<const Bytef*>(blob.data() + 4), crc_at - 4));
  for (int i = 0; i < 4; ++i) blob[crc_at + i] = static_cast<char>(crc >> (24 - 8 * i));
  ASSERT_ERROR(DeserializeDeletionVector(blob), StatusCode::kCorruption, "position 2 out of order");
}

TEST(DeletionVectorTest, PuffinFile) {
  auto io = MakeMemoryFileIO();
  DataFile a, b;
  a.file_path = "/t/data/a.parquet";
  b.file_path = "/t/data/b.parquet";
  ASSERT_OK_AND_ASSIGN(auto entries,
                       WriteDeletionVectors(*io, "/t/data/dv.puffin", {{a, {1, 2}}, {b, {7}}}));
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].content_offset, 4);
  EXPECT_EQ(entries[1].referenced_data_file, b.file_path);
  ASSERT_OK_AND_ASSIGN(auto dv, ReadDeletionVector(*io, "/t/data/dv.puffin", entries[1]));
  EXPECT_EQ(dv, (PositionSet{7}));
  ASSERT_OK_AND_ASSIGN(std::string file, io->ReadFile("/t/data/dv.puffin"));
  EXPECT_EQ(file.substr(0, 4), "PFA1");
  EXPECT_EQ(file.substr(file.size() - 4), "PFA1");
  EXPECT_NE(file.find("\"referenced-data-file\":\"/t/data/a.parquet\""), std::string::npos);
  entries[0].record_count = 5;
  ASSERT_ERROR(ReadDeletionVector(*io, "/t/data/dv.puffin", entries[0]), StatusCode::kCorruption,
               "cardinality");
}

}  // namespace
}  // namespace sluice::iceberg
