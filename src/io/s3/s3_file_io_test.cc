// S3FileIO and S3Client against a real S3-protocol server (s3rver, started by
// tests/with_s3.sh), directly and through a FaultProxy that throttles, fails
// and cuts connections. The suites skip when SLUICE_TEST_S3_ENDPOINT is unset;
// ctest's s3_server_test sets it.
#include "io/s3/s3_file_io.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <random>

#include "common/testing.h"
#include "io/file_io_contract.h"
#include "io/s3/fault_proxy.h"

namespace sluice::s3 {
namespace {

std::string Random(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>(rng());
  return s;
}

class S3ServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* endpoint = std::getenv("SLUICE_TEST_S3_ENDPOINT");
    if (endpoint == nullptr) GTEST_SKIP() << "SLUICE_TEST_S3_ENDPOINT not set (tests/with_s3.sh)";
    endpoint_ = endpoint;
    static std::atomic<int> counter{0};
    bucket_ = "t" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
    client_ = MakeClient(endpoint_);
    ASSERT_OK(client_->CreateBucket(bucket_));
    io_ = MakeS3FileIO(client_);
  }

  std::shared_ptr<S3Client> MakeClient(const std::string& endpoint, int max_attempts = 8,
                                       std::string key_id = "S3RVER") {
    S3Options o;
    o.endpoint = endpoint;
    o.path_style = true;
    o.credentials = {std::move(key_id), "S3RVER", ""};
    o.max_attempts = max_attempts;
    o.part_size = 5 << 20;
    o.connect_timeout_ms = 2000;
    o.request_timeout_ms = 20000;
    return std::make_shared<S3Client>(o, [this](int64_t ms) { sleeps_.push_back(ms); });
  }

  std::string P(const std::string& name) { return "s3://" + bucket_ + "/" + name; }

  std::string endpoint_;
  std::string bucket_;
  std::shared_ptr<S3Client> client_;
  std::unique_ptr<FileIO> io_;
  std::vector<int64_t> sleeps_;
};

// The FileIO contract on S3, one fresh bucket per test.
FileIOUnderTest S3UnderTest() {
  const char* endpoint = std::getenv("SLUICE_TEST_S3_ENDPOINT");
  if (endpoint == nullptr) return {};
  static std::atomic<int> counter{0};
  std::string bucket = "c" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
  S3Options o;
  o.endpoint = endpoint;
  o.path_style = true;
  o.credentials = {"S3RVER", "S3RVER", ""};
  auto client = std::make_shared<S3Client>(o);
  if (!client->CreateBucket(bucket).ok()) return {};
  return {MakeS3FileIO(client), "s3://" + bucket + "/", nullptr};
}
INSTANTIATE_TEST_SUITE_P(S3Server, FileIOContractTest,
                         ::testing::Values(FileIOFactory(S3UnderTest)));

TEST_F(S3ServerTest, AnAbortedFileLeavesNoObjectEvenAfterItsFirstPart) {
  {
    ASSERT_OK_AND_ASSIGN(auto out, io_->OpenOutput(P("big-partial")));
    ASSERT_OK(out->Append(Random(6 << 20, 1)));  // one part uploaded
    out->Abort();
  }
  {
    ASSERT_OK_AND_ASSIGN(auto out, io_->OpenOutput(P("big-unclosed")));
    ASSERT_OK(out->Append(Random(6 << 20, 2)));
  }
  ASSERT_OK_AND_ASSIGN(auto files, io_->List(P("")));
  EXPECT_TRUE(files.empty());
}

TEST_F(S3ServerTest, LargeFilesGoUpInPartsAndReadBackByRange) {
  std::string data = Random((12 << 20) + 12345, 7);
  int64_t before = client_->counters().requests.load();
  ASSERT_OK_AND_ASSIGN(auto out, io_->OpenOutput(P("big.bin")));
  std::mt19937_64 rng(3);
  for (size_t at = 0; at < data.size();) {
    size_t n = std::min<size_t>(data.size() - at, 1 + rng() % (3 << 20));
    ASSERT_OK(out->Append(std::string_view(data).substr(at, n)));
    at += n;
  }
  ASSERT_OK(out->Close());
  // Start, at least two parts, the free-name check, complete (a single PUT
  // would be two requests).
  EXPECT_GE(client_->counters().requests.load() - before, 5);
  ASSERT_OK_AND_ASSIGN(auto in, io_->OpenInput(P("big.bin")));
  ASSERT_EQ(in->size(), static_cast<int64_t>(data.size()));
  std::string got;
  ASSERT_OK(in->ReadAll(&got));
  EXPECT_TRUE(got == data);
  for (int i = 0; i < 20; ++i) {
    int64_t off = static_cast<int64_t>(rng() % data.size());
    int64_t len = static_cast<int64_t>(rng() % std::min<int64_t>(1 << 20, in->size() - off));
    ASSERT_OK(in->ReadAt(off, len, &got));
    ASSERT_TRUE(got == data.substr(off, len)) << off << "+" << len;
  }
}

TEST_F(S3ServerTest, ReadsInAFilesTailCostOneRequest) {
  std::string data = Random(200 << 10, 9);
  ASSERT_OK(io_->WriteFile(P("f.parquet"), data));
  ASSERT_OK_AND_ASSIGN(auto in, io_->OpenInput(P("f.parquet")));
  int64_t before = client_->counters().requests.load();
  std::string got;
  int64_t size = in->size();
  ASSERT_OK(in->ReadAt(size - 8, 8, &got));
  EXPECT_EQ(got, data.substr(size - 8));
  ASSERT_OK(in->ReadAt(size - 5000, 4992, &got));
  EXPECT_EQ(got, data.substr(size - 5000, 4992));
  EXPECT_EQ(client_->counters().requests.load() - before, 1);
  ASSERT_OK(in->ReadAt(10, 100, &got));
  EXPECT_EQ(got, data.substr(10, 100));
  EXPECT_EQ(client_->counters().requests.load() - before, 2);
}

TEST_F(S3ServerTest, ListingReadsEveryPage) {
  std::vector<std::string> want;
  for (int i = 0; i < 1010; ++i) {
    std::string key = fmt::format("many/f{:05d}", i);
    ASSERT_OK(client_->Put(bucket_, key, "x", false));
    want.push_back(P(key));
  }
  ASSERT_OK(client_->Put(bucket_, "other", "x", false));
  ASSERT_OK_AND_ASSIGN(auto files, io_->List(P("many/")));
  std::sort(files.begin(), files.end());
  EXPECT_EQ(files, want);
  std::vector<std::string> keys;
  for (int i = 0; i < 1000; ++i) keys.push_back(fmt::format("many/f{:05d}", i));
  ASSERT_OK_AND_ASSIGN(auto failed, client_->DeleteMany(bucket_, keys));
  EXPECT_TRUE(failed.empty());
  ASSERT_OK_AND_ASSIGN(files, io_->List(P("many/")));
  EXPECT_EQ(files.size(), 10u);
}

// (s3rver checks the access key but not SigV4 signatures; SigV4Test checks
// those against AWS's published example.)
TEST_F(S3ServerTest, UnknownCredentialsAreRefusedAtOnceWithS3sReason) {
  auto bad = MakeS3FileIO(MakeClient(endpoint_, 8, "NOBODY"));
  auto st = bad->WriteFile(P("x"), "1", /*overwrite=*/true);
  ASSERT_ERROR(st, StatusCode::kIOError, "403");
  EXPECT_NE(st.message().find("InvalidAccessKeyId"), std::string::npos) << st.ToString();
  EXPECT_FALSE(st.retryable());
  EXPECT_TRUE(sleeps_.empty());
}

TEST_F(S3ServerTest, ThrottlingServerErrorsResetsAndCutBodiesAreRetried) {
  FaultProxy proxy(endpoint_);
  auto client = MakeClient(proxy.endpoint());
  auto io = MakeS3FileIO(client);
  std::string data = Random(100000, 11);
  ASSERT_OK(io->WriteFile(P("r"), data));
  ASSERT_OK_AND_ASSIGN(auto in, io->OpenInput(P("r")));
  proxy.Fail({Fault::kSlowDown, Fault::kInternalError, Fault::kCutBody, Fault::kSlowDown,
              Fault::kCutBody});
  std::string got;
  ASSERT_OK(in->ReadAt(0, 50000, &got));
  EXPECT_TRUE(got == data.substr(0, 50000));
  EXPECT_EQ(proxy.faults(), 5);
  EXPECT_EQ(client->counters().retries.load(), 5);
  ASSERT_EQ(sleeps_.size(), 5u);
  // Full jitter under a cap that doubles from 50 ms.
  for (size_t i = 0; i < sleeps_.size(); ++i) EXPECT_LE(sleeps_[i], 50 << i);
  // A reset connection: curl itself reconnects once when a reused connection
  // died; a second reset in a row is ours to retry.
  proxy.Fail({Fault::kReset, Fault::kReset, Fault::kReset});
  ASSERT_OK(in->ReadAt(10, 60000, &got));
  EXPECT_TRUE(got == data.substr(10, 60000));
  EXPECT_EQ(proxy.faults(), 8);
  EXPECT_GE(client->counters().retries.load(), 6);
}

// AWS honours If-None-Match on a create; s3rver does not, so the proxy plays
// AWS's 412 for the retry of a write whose answer was cut.
TEST_F(S3ServerTest, ACreateWhoseAnswerWasLostIsRecognizedOnItsRetry) {
  FaultProxy proxy(endpoint_);
  auto io = MakeS3FileIO(MakeClient(proxy.endpoint()));
  std::string data = Random(3000, 5);
  proxy.Fail({Fault::kNone, Fault::kCutBody, Fault::kPreconditionFailed});  // HEAD, PUT, retry
  ASSERT_OK(io->WriteFile(P("lost-answer"), data));
  ASSERT_OK_AND_ASSIGN(std::string got, io_->ReadFile(P("lost-answer")));
  EXPECT_TRUE(got == data);
  // Another writer's object under the name: the 412 stands.
  ASSERT_OK(io_->WriteFile(P("taken"), "someone else's"));
  proxy.Fail({Fault::kNone, Fault::kPreconditionFailed});  // the check raced: HEAD said free
  ASSERT_ERROR(io->WriteFile(P("taken"), data), StatusCode::kAlreadyExists, "taken");
}

TEST_F(S3ServerTest, RetriesEndInARetryableErrorNamingTheCallAndObject) {
  FaultProxy proxy(endpoint_);
  auto io = MakeS3FileIO(MakeClient(proxy.endpoint(), /*max_attempts=*/3));
  proxy.Fail({Fault::kSlowDown, Fault::kSlowDown, Fault::kSlowDown});
  auto st = io->WriteFile(P("t/x"), "1", /*overwrite=*/true);
  ASSERT_ERROR(st, StatusCode::kIOError, "S3 PutObject s3://" + bucket_ + "/t/x");
  EXPECT_NE(st.message().find("SlowDown"), std::string::npos) << st.ToString();
  EXPECT_NE(st.message().find("after 3 attempts"), std::string::npos) << st.ToString();
  EXPECT_TRUE(st.retryable());
  ASSERT_OK_AND_ASSIGN(bool exists, io_->Exists(P("t/x")));
  EXPECT_FALSE(exists);
}

TEST_F(S3ServerTest, AWorkloadUnderRandomFaultsLosesAndCorruptsNothing) {
  FaultProxy proxy(endpoint_);
  proxy.SetRandom(0.2, 42);
  auto io = MakeS3FileIO(MakeClient(proxy.endpoint(), /*max_attempts=*/12));
  std::vector<std::string> want;
  for (int i = 0; i < 60; ++i) {
    std::string path = P(fmt::format("w/{:03d}", i));
    ASSERT_OK(io->WriteFile(path, Random(1000 + i * 997, i)));
    want.push_back(path);
  }
  ASSERT_OK_AND_ASSIGN(auto files, io->List(P("w/")));
  std::sort(files.begin(), files.end());
  EXPECT_EQ(files, want);
  for (int i = 0; i < 60; ++i) {
    ASSERT_OK_AND_ASSIGN(std::string got, io->ReadFile(want[i]));
    ASSERT_TRUE(got == Random(1000 + i * 997, i)) << want[i];
  }
  EXPECT_GT(proxy.faults(), 20);
}

TEST_F(S3ServerTest, TheStorageFileIOSendsS3PathsToS3AndTheRestToDisk) {
  auto io = MakeStorageFileIO();  // options from the environment with_s3.sh sets
  ASSERT_OK(io->WriteFile(P("via/storage"), "s3 bytes"));
  ASSERT_OK_AND_ASSIGN(std::string s, io_->ReadFile(P("via/storage")));
  EXPECT_EQ(s, "s3 bytes");
  auto dir =
      std::filesystem::temp_directory_path() / ("sluice_storage_" + std::to_string(::getpid()));
  ASSERT_OK(io->WriteFile((dir / "f").string(), "disk bytes"));
  ASSERT_OK_AND_ASSIGN(s, io->ReadFile("file://" + (dir / "f").string()));
  EXPECT_EQ(s, "disk bytes");
  std::filesystem::remove_all(dir);
  ASSERT_OK_AND_ASSIGN(s, io->ReadFile("s3a://" + bucket_ + "/via/storage"));
  EXPECT_EQ(s, "s3 bytes");
}

}  // namespace
}  // namespace sluice::s3
