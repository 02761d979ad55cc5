// The FileIO contract (io/file_io.h) as a test suite every implementation runs:
// a test binary instantiates FileIOContractTest with a factory per FileIO, e.g.
//
//   INSTANTIATE_TEST_SUITE_P(Local, FileIOContractTest,
//                            ::testing::Values(FileIOFactory(MakeLocalUnderTest)));
//
// A factory returns a FileIO and an empty root folder ("…/") for one test, or a
// null io to skip (a server the environment does not offer).
#pragma once

#include <algorithm>
#include <functional>
#include <memory>
#include <string>

#include "common/testing.h"
#include "io/file_io.h"

namespace sluice {

struct FileIOUnderTest {
  std::unique_ptr<FileIO> io;  // null: skip
  std::string root;            // ends with '/'
  std::function<void()> cleanup;
};
using FileIOFactory = std::function<FileIOUnderTest()>;

class FileIOContractTest : public ::testing::TestWithParam<FileIOFactory> {
 protected:
  void SetUp() override {
    under_ = GetParam()();
    if (!under_.io) GTEST_SKIP() << "this FileIO is not available here";
    io_ = under_.io.get();
  }
  void TearDown() override {
    if (under_.cleanup) under_.cleanup();
  }
  std::string P(const std::string& name) const { return under_.root + name; }

  FileIOUnderTest under_;
  FileIO* io_ = nullptr;
};

TEST_P(FileIOContractTest, WrittenFilesReadBackWholeAndByRangeAndListUnderTheirPrefix) {
  ASSERT_OK(io_->WriteFile(P("a/b.txt"), "hello world"));
  ASSERT_OK(io_->WriteFile(P("a/c d+e.txt"), "spaces and plus"));
  ASSERT_OK(io_->WriteFile(P("ab/other"), "not under a/"));
  ASSERT_OK_AND_ASSIGN(auto in, io_->OpenInput(P("a/b.txt")));
  EXPECT_EQ(in->size(), 11);
  std::string part;
  ASSERT_OK(in->ReadAt(6, 5, &part));
  EXPECT_EQ(part, "world");
  ASSERT_OK(in->ReadAt(11, 0, &part));
  EXPECT_EQ(part, "");
  ASSERT_ERROR(in->ReadAt(8, 5, &part), StatusCode::kCorruption, "past its end");
  ASSERT_OK_AND_ASSIGN(std::string whole, io_->ReadFile(P("a/c d+e.txt")));
  EXPECT_EQ(whole, "spaces and plus");
  ASSERT_OK_AND_ASSIGN(auto files, io_->ListStatus(P("a/")));
  std::sort(files.begin(), files.end(), [](auto& x, auto& y) { return x.path < y.path; });
  ASSERT_EQ(files.size(), 2u);
  EXPECT_EQ(files[0].path, P("a/b.txt"));
  EXPECT_EQ(files[1].path, P("a/c d+e.txt"));
  if (files[0].size >= 0) {
    EXPECT_EQ(files[0].size, 11);
  }
  ASSERT_OK_AND_ASSIGN(bool exists, io_->Exists(P("a/b.txt")));
  EXPECT_TRUE(exists);
  ASSERT_OK_AND_ASSIGN(exists, io_->Exists(P("a/nope")));
  EXPECT_FALSE(exists);
}

TEST_P(FileIOContractTest, CreateNeverReplacesButOverwriteDoes) {
  ASSERT_OK(io_->WriteFile(P("x"), "one"));
  ASSERT_ERROR(io_->WriteFile(P("x"), "two"), StatusCode::kAlreadyExists, "already exists");
  ASSERT_OK(io_->WriteFile(P("x"), "three", /*overwrite=*/true));
  ASSERT_OK_AND_ASSIGN(std::string s, io_->ReadFile(P("x")));
  EXPECT_EQ(s, "three");
}

TEST_P(FileIOContractTest, AnUnclosedOrAbortedFileLeavesNothing) {
  {
    ASSERT_OK_AND_ASSIGN(auto out, io_->OpenOutput(P("partial")));
    ASSERT_OK(out->Append("abc"));
    EXPECT_EQ(out->position(), 3);
  }
  {
    ASSERT_OK_AND_ASSIGN(auto out, io_->OpenOutput(P("aborted")));
    ASSERT_OK(out->Append("abc"));
    out->Abort();
  }
  ASSERT_OK_AND_ASSIGN(bool exists, io_->Exists(P("partial")));
  EXPECT_FALSE(exists);
  ASSERT_OK_AND_ASSIGN(auto files, io_->List(P("")));
  EXPECT_TRUE(files.empty());
}

TEST_P(FileIOContractTest, MissingFilesAreNotFound) {
  ASSERT_ERROR(io_->OpenInput(P("nope")), StatusCode::kNotFound, "nope");
  ASSERT_ERROR(io_->Delete(P("nope")), StatusCode::kNotFound, "nope");
  ASSERT_OK(io_->WriteFile(P("yes"), "1"));
  ASSERT_OK(io_->Delete(P("yes")));
  ASSERT_ERROR(io_->ReadFile(P("yes")), StatusCode::kNotFound, "yes");
}

TEST_P(FileIOContractTest, DeleteAllRemovesEveryFileAndCountsMissingOnesAsGone) {
  std::vector<std::string> paths;
  for (int i = 0; i < 5; ++i) {
    paths.push_back(P("d/f" + std::to_string(i)));
    ASSERT_OK(io_->WriteFile(paths.back(), "x"));
  }
  ASSERT_OK(io_->WriteFile(P("d/kept"), "x"));
  paths.push_back(P("d/never-written"));
  EXPECT_TRUE(io_->DeleteAll(paths).empty());
  ASSERT_OK_AND_ASSIGN(auto files, io_->List(P("d/")));
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(files[0], P("d/kept"));
  EXPECT_TRUE(io_->DeleteAll({}).empty());
}

}  // namespace sluice
