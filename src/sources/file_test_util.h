// Helpers of the file source's tests: a record as the tests compare it, a
// folder per test, appends to a file.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <string>
#include <utility>

#include "common/testing.h"

namespace sluice::sources::file_test {

// A record: its file (partition), offset and value.
struct Rec {
  std::string file;
  int64_t offset;
  std::string value;
  bool operator==(const Rec& o) const {
    return file == o.file && offset == o.offset && value == o.value;
  }
};

inline std::ostream& operator<<(std::ostream& os, const Rec& r) {
  return os << r.file << "@" << r.offset << ":" << r.value.substr(0, 60);
}

// A folder name of the running test's own, under the temp folder.
inline std::filesystem::path TestDir(const std::string& prefix) {
  return std::filesystem::temp_directory_path() /
         (prefix + std::to_string(::getpid()) + "_" +
          ::testing::UnitTest::GetInstance()->current_test_info()->name());
}

inline void Append(const std::filesystem::path& file, const std::string& bytes) {
  std::ofstream out(file, std::ios::binary | std::ios::app);
  out << bytes;
  ASSERT_TRUE(out.good()) << file;
}

// A fixture with a folder of its own (dir_), fresh for each test and
// removed after it.
class FolderTest : public ::testing::Test {
 protected:
  explicit FolderTest(std::string prefix) : prefix_(std::move(prefix)) {}
  void SetUp() override {
    dir_ = TestDir(prefix_);
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::filesystem::path dir_;

 private:
  std::string prefix_;
};

}  // namespace sluice::sources::file_test
