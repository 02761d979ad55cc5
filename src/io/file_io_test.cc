#include "io/file_io.h"

#include <filesystem>

#include "common/testing.h"
#include "io/file_io_contract.h"
#include "io/remap_file_io.h"

namespace sluice {
namespace {

FileIOUnderTest LocalUnderTest() {
  static int counter = 0;
  auto dir = std::filesystem::temp_directory_path() /
             ("sluice_io_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
  std::filesystem::remove_all(dir);
  return {MakeLocalFileIO(), dir.string() + "/", [dir] { std::filesystem::remove_all(dir); }};
}

FileIOUnderTest MemoryUnderTest() { return {MakeMemoryFileIO(), "/mem/", nullptr}; }

INSTANTIATE_TEST_SUITE_P(Local, FileIOContractTest,
                         ::testing::Values(FileIOFactory(LocalUnderTest)));
INSTANTIATE_TEST_SUITE_P(Memory, FileIOContractTest,
                         ::testing::Values(FileIOFactory(MemoryUnderTest)));

TEST(LocalFileIOTest, FileUris) {
  auto io = MakeLocalFileIO();
  auto dir = std::filesystem::temp_directory_path() / ("sluice_uri_" + std::to_string(::getpid()));
  std::string path = (dir / "x.txt").string();
  ASSERT_OK(io->WriteFile("file://" + path, "via uri"));
  ASSERT_OK_AND_ASSIGN(std::string s, io->ReadFile(path));
  EXPECT_EQ(s, "via uri");
  ASSERT_OK_AND_ASSIGN(s, io->ReadFile("file:" + path));
  EXPECT_EQ(s, "via uri");
  ASSERT_OK_AND_ASSIGN(auto files, io->List("file://" + dir.string() + "/"));
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(files[0], "file://" + path);
  ASSERT_OK(io->Delete("file://" + path));
  std::filesystem::remove_all(dir);
}

TEST(RemapFileIOTest, APrefixHoldsWholePathComponentsInAnySpellingOfALocalPath) {
  const Remaps r = {{"file:///data/t", "/copy/t"}, {"s3://b/u/", "/copy/u/"}};
  EXPECT_EQ(ApplyRemap("file:///data/t/m/v1.json", r), "/copy/t/m/v1.json");
  EXPECT_EQ(ApplyRemap("/data/t/m/v1.json", r), "/copy/t/m/v1.json") << "a bare path";
  EXPECT_EQ(ApplyRemap("file:/data/t", r), "/copy/t");
  EXPECT_EQ(ApplyRemap("/data/t2/x", r), "/data/t2/x") << "a sibling is not under /data/t";
  EXPECT_EQ(ApplyRemap("s3://b/u/x", r), "/copy/u/x");
  EXPECT_EQ(UnapplyRemap("/copy/t/m/v1.json", r), "file:///data/t/m/v1.json");
  EXPECT_EQ(UnapplyRemap("/copy/t_copy/x", r), "/copy/t_copy/x");
}

TEST(RemapFileIOTest, ListingNamesFilesBackThroughTheRemapItsPrefixTookOnly) {
  auto base = MakeMemoryFileIO();
  auto io = MakeRemapFileIO(*base, {{"s3://b/t", "/copy/t"}});
  ASSERT_OK(base->WriteFile("/copy/t/a", "1"));
  ASSERT_OK(base->WriteFile("/copy/t2/b", "2"));
  ASSERT_OK_AND_ASSIGN(auto listed, io->List("/copy/t2"));
  EXPECT_EQ(listed, (std::vector<std::string>{"/copy/t2/b"})) << "no remap holds the prefix";
  ASSERT_OK_AND_ASSIGN(listed, io->List("s3://b/t"));
  EXPECT_EQ(listed, (std::vector<std::string>{"s3://b/t/a"}));
}

TEST(RemapFileIOTest, ReachesFilesUnderTheirOtherNamesAndHandsBackTheFirst) {
  auto base = MakeMemoryFileIO();
  auto io = MakeRemapFileIO(*base, {{"s3://bucket/t", "/copy/t"}});
  ASSERT_OK(io->WriteFile("s3://bucket/t/data/a.parquet", "abc"));
  ASSERT_OK_AND_ASSIGN(bool there, base->Exists("/copy/t/data/a.parquet"));
  EXPECT_TRUE(there) << "written under the other name";
  ASSERT_OK_AND_ASSIGN(auto in, io->OpenInput("s3://bucket/t/data/a.parquet"));
  EXPECT_EQ(in->path(), "s3://bucket/t/data/a.parquet");
  std::string data;
  ASSERT_OK(in->ReadAll(&data));
  EXPECT_EQ(data, "abc");
  ASSERT_OK_AND_ASSIGN(auto out, io->OpenOutput("s3://bucket/t/b"));
  EXPECT_EQ(out->path(), "s3://bucket/t/b");
  out->Abort();
  ASSERT_OK_AND_ASSIGN(auto listed, io->List("s3://bucket/t/"));
  EXPECT_EQ(listed, (std::vector<std::string>{"s3://bucket/t/data/a.parquet"}));
  ASSERT_OK_AND_ASSIGN(auto status, io->ListStatus("s3://bucket/t/data"));
  ASSERT_EQ(status.size(), 1u);
  EXPECT_EQ(status[0].path, "s3://bucket/t/data/a.parquet");
  ASSERT_OK(base->WriteFile("/elsewhere/x", "y"));
  ASSERT_OK_AND_ASSIGN(there, io->Exists("/elsewhere/x"));
  EXPECT_TRUE(there) << "a path no remap matches passes unchanged";
  ASSERT_OK(io->Delete("s3://bucket/t/data/a.parquet"));
  ASSERT_OK_AND_ASSIGN(there, base->Exists("/copy/t/data/a.parquet"));
  EXPECT_FALSE(there);
}

}  // namespace
}  // namespace sluice
