#include "io/file_io.h"

#include <filesystem>

#include "common/testing.h"
#include "io/remap_file_io.h"

namespace sluice {
namespace {

class FileIOTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    local_ = GetParam();
    if (local_) {
      dir_ =
          std::filesystem::temp_directory_path() / ("sluice_io_test_" + std::to_string(::getpid()));
      std::filesystem::remove_all(dir_);
      io_ = MakeLocalFileIO();
    } else {
      dir_ = "/mem";
      io_ = MakeMemoryFileIO();
    }
  }
  void TearDown() override {
    if (local_) std::filesystem::remove_all(dir_);
  }
  std::string P(const std::string& name) { return (dir_ / name).string(); }

  bool local_ = false;
  std::filesystem::path dir_;
  std::unique_ptr<FileIO> io_;
};

TEST_P(FileIOTest, WriteReadList) {
  ASSERT_OK(io_->WriteFile(P("a/b.txt"), "hello world"));
  ASSERT_OK_AND_ASSIGN(auto in, io_->OpenInput(P("a/b.txt")));
  EXPECT_EQ(in->size(), 11);
  std::string part;
  ASSERT_OK(in->ReadAt(6, 5, &part));
  EXPECT_EQ(part, "world");
  ASSERT_ERROR(in->ReadAt(8, 5, &part), StatusCode::kCorruption, "past its end");
  ASSERT_OK_AND_ASSIGN(auto files, io_->List(P("a/")));
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(files[0], P("a/b.txt"));
}

TEST_P(FileIOTest, CreateNeverReplaces) {
  ASSERT_OK(io_->WriteFile(P("x"), "one"));
  ASSERT_ERROR(io_->WriteFile(P("x"), "two"), StatusCode::kAlreadyExists, "already exists");
  ASSERT_OK(io_->WriteFile(P("x"), "three", /*overwrite=*/true));
  ASSERT_OK_AND_ASSIGN(std::string s, io_->ReadFile(P("x")));
  EXPECT_EQ(s, "three");
}

TEST_P(FileIOTest, UnclosedOutputLeavesNothing) {
  {
    ASSERT_OK_AND_ASSIGN(auto out, io_->OpenOutput(P("partial")));
    ASSERT_OK(out->Append("abc"));
    EXPECT_EQ(out->position(), 3);
  }
  ASSERT_OK_AND_ASSIGN(bool exists, io_->Exists(P("partial")));
  EXPECT_FALSE(exists);
  ASSERT_OK_AND_ASSIGN(auto files, io_->List(P("")));
  EXPECT_TRUE(files.empty());
}

TEST_P(FileIOTest, MissingFileIsNotFound) {
  ASSERT_ERROR(io_->OpenInput(P("nope")), StatusCode::kNotFound, "nope");
  ASSERT_ERROR(io_->Delete(P("nope")), StatusCode::kNotFound, "nope");
}

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

INSTANTIATE_TEST_SUITE_P(LocalAndMemory, FileIOTest, ::testing::Bool());

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
