// Test helpers: gtest assertions for Status and Result<T>.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "common/status.h"

#define ASSERT_OK(expr)                                            \
  do {                                                             \
    ::sluice::Status _s = ::sluice::internal::GetStatus((expr));   \
    ASSERT_TRUE(_s.ok()) << #expr << " failed: " << _s.ToString(); \
  } while (false)

#define EXPECT_OK(expr)                                            \
  do {                                                             \
    ::sluice::Status _s = ::sluice::internal::GetStatus((expr));   \
    EXPECT_TRUE(_s.ok()) << #expr << " failed: " << _s.ToString(); \
  } while (false)

#define SLUICE_ASSERT_OK_AND_ASSIGN_IMPL(tmp, lhs, rexpr)                    \
  auto tmp = (rexpr);                                                        \
  ASSERT_TRUE(tmp.ok()) << #rexpr << " failed: " << tmp.status().ToString(); \
  lhs = std::move(tmp).value()

#define ASSERT_OK_AND_ASSIGN(lhs, rexpr) \
  SLUICE_ASSERT_OK_AND_ASSIGN_IMPL(SLUICE_CONCAT(_r_, __LINE__), lhs, rexpr)

// Asserts that `expr` fails with `code` and its message contains `substr`.
#define ASSERT_ERROR(expr, want_code, substr)                           \
  do {                                                                  \
    ::sluice::Status _s = ::sluice::internal::GetStatus((expr));        \
    ASSERT_FALSE(_s.ok()) << #expr << " unexpectedly succeeded";        \
    EXPECT_EQ(_s.code(), want_code) << _s.ToString();                   \
    EXPECT_NE(_s.message().find(substr), std::string::npos)             \
        << "message '" << _s.message() << "' lacks '" << substr << "'"; \
  } while (false)

namespace sluice::testing {

// The bytes of the file at `path` (a fixture), or "" when it cannot be read
// (the test's own checks then fail on the content).
inline std::string ReadFileBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A path in the temporary folder for `name`, unique to this process (a
// folder a test creates; the test removes it).
inline std::string TempPath(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("sluice-" + name + "-" + std::to_string(::getpid())))
      .string();
}

// Removes a folder a test made (with what it holds) when it goes out of
// scope, also when an assertion returns early: a folder that only holds the
// folders of what removes its own (the shards' spill stores).
class RemovedAtExit {
 public:
  explicit RemovedAtExit(std::string path) : path_(std::move(path)) {}
  ~RemovedAtExit() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  RemovedAtExit(const RemovedAtExit&) = delete;
  RemovedAtExit& operator=(const RemovedAtExit&) = delete;

 private:
  std::string path_;
};

}  // namespace sluice::testing
