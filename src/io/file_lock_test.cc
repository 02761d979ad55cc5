#include "io/file_lock.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>

#include "common/testing.h"

namespace sluice {
namespace {

class FileLockTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ =
        std::filesystem::temp_directory_path() / ("sluice_lock_test_" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Path() const { return (dir_ / "sub" / "LOCK").string(); }

  std::filesystem::path dir_;
};

TEST_F(FileLockTest, SecondAcquireFailsAtOnceNamingTheHolder) {
  ASSERT_OK_AND_ASSIGN(auto held, FileLock::Acquire(Path(), "log x"));
  auto second = FileLock::Acquire(Path(), "log x");
  ASSERT_ERROR(second, StatusCode::kConflict, "log x is in use by another process");
  EXPECT_FALSE(second.status().retryable());
  EXPECT_NE(second.status().message().find("pid " + std::to_string(::getpid())), std::string::npos)
      << second.status().ToString();
  EXPECT_NE(second.status().message().find(Path()), std::string::npos);
}

TEST_F(FileLockTest, ReleasedWhenDestroyed) {
  { ASSERT_OK_AND_ASSIGN(auto held, FileLock::Acquire(Path(), "log x")); }
  ASSERT_OK_AND_ASSIGN(auto again, FileLock::Acquire(Path(), "log x"));
  EXPECT_EQ(again->path(), Path());
}

// Another process holds the lock: refused with its pid; once it is killed (-9, no
// cleanup) the lock is free again.
TEST_F(FileLockTest, HolderKilledWithSigkillReleasesTheLock) {
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto held = FileLock::Acquire(Path(), "log x");
    char c = held.ok() ? 'y' : 'n';
    (void)!::write(ready[1], &c, 1);
    ::pause();
    ::_exit(0);
  }
  char c = 0;
  ASSERT_EQ(::read(ready[0], &c, 1), 1);
  ASSERT_EQ(c, 'y');
  auto refused = FileLock::Acquire(Path(), "log x");
  ASSERT_ERROR(refused, StatusCode::kConflict, "pid " + std::to_string(child) + " on host");
  ::kill(child, SIGKILL);
  int status = 0;
  ::waitpid(child, &status, 0);
  ::close(ready[0]);
  ::close(ready[1]);
  ASSERT_OK_AND_ASSIGN(auto mine, FileLock::Acquire(Path(), "log x"));
}

TEST_F(FileLockTest, DescriptionNamesPidHostAndCommand) {
  std::string d = LockHolderDescription();
  EXPECT_TRUE(d.starts_with("pid " + std::to_string(::getpid()) + " on host ")) << d;
  EXPECT_NE(d.find("io_test"), std::string::npos) << d;
  EXPECT_NE(d.find(" since 20"), std::string::npos) << d;
}

// A catalog URI with credentials on the command line must not end up in the
// world-readable lock file or in another process's error message.
TEST_F(FileLockTest, CredentialsAreMaskedInTheHolderDescription) {
  EXPECT_EQ(MaskCredentials("sluice --catalog postgresql://sluice:s3cret@db:5432/lake run x.sql"),
            "sluice --catalog postgresql://sluice:***@db:5432/lake run x.sql");
  EXPECT_EQ(MaskCredentials("--catalog 'host=db user=u password=hunter2 dbname=lake'"),
            "--catalog 'host=db user=u password=*** dbname=lake'");
  EXPECT_EQ(MaskCredentials("sluice run x.sql --listen 127.0.0.1:8080"),
            "sluice run x.sql --listen 127.0.0.1:8080");
}

}  // namespace
}  // namespace sluice
