#include "io/s3/s3_options.h"

#include <filesystem>
#include <fstream>
#include <map>

#include "common/testing.h"

namespace sluice::s3 {
namespace {

class S3OptionsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("sluice_s3_options_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_ / ".aws");
    vars_["HOME"] = dir_.string();
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  void Write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / ".aws" / name) << text;
  }
  Getenv Env() {
    return [this](std::string_view name) -> std::optional<std::string> {
      auto it = vars_.find(std::string(name));
      if (it == vars_.end()) return std::nullopt;
      return it->second;
    };
  }

  std::filesystem::path dir_;
  std::map<std::string, std::string> vars_;
};

TEST_F(S3OptionsTest, EnvironmentVariablesComeFirst) {
  Write("credentials", "[default]\naws_access_key_id = FILE\naws_secret_access_key = FS\n");
  vars_["AWS_ACCESS_KEY_ID"] = "ENV";
  vars_["AWS_SECRET_ACCESS_KEY"] = "ES";
  vars_["AWS_SESSION_TOKEN"] = "TOK";
  vars_["AWS_DEFAULT_REGION"] = "eu-west-1";
  ASSERT_OK_AND_ASSIGN(S3Options o, OptionsFromEnvironment(Env()));
  EXPECT_EQ(o.credentials.access_key_id, "ENV");
  EXPECT_EQ(o.credentials.secret_access_key, "ES");
  EXPECT_EQ(o.credentials.session_token, "TOK");
  EXPECT_EQ(o.region, "eu-west-1");
  EXPECT_TRUE(o.endpoint.empty());
  EXPECT_FALSE(o.path_style);
  EXPECT_EQ(o.BucketUrl("b"), "https://b.s3.eu-west-1.amazonaws.com");
}

TEST_F(S3OptionsTest, TheProfileComesFromTheSharedFiles) {
  Write("credentials",
        "# comment\n[default]\naws_access_key_id = D\naws_secret_access_key = DS\n"
        "[prod]\naws_access_key_id = P\naws_secret_access_key = PS\n");
  Write("config",
        "[default]\nregion = us-west-2\n[profile prod]\nregion = ap-south-1\n"
        "s3 =\n  endpoint_url = http://minio:9000/\n  addressing_style = path\n");
  ASSERT_OK_AND_ASSIGN(S3Options d, OptionsFromEnvironment(Env()));
  EXPECT_EQ(d.credentials.access_key_id, "D");
  EXPECT_EQ(d.region, "us-west-2");
  vars_["AWS_PROFILE"] = "prod";
  ASSERT_OK_AND_ASSIGN(S3Options p, OptionsFromEnvironment(Env()));
  EXPECT_EQ(p.credentials.access_key_id, "P");
  EXPECT_EQ(p.credentials.secret_access_key, "PS");
  EXPECT_EQ(p.region, "ap-south-1");
  EXPECT_EQ(p.endpoint, "http://minio:9000");
  EXPECT_TRUE(p.path_style);
  EXPECT_EQ(p.BucketUrl("b"), "http://minio:9000/b");
}

TEST_F(S3OptionsTest, AnEndpointOverrideIsAddressedPathStyle) {
  vars_["AWS_ACCESS_KEY_ID"] = "K";
  vars_["AWS_SECRET_ACCESS_KEY"] = "S";
  vars_["AWS_ENDPOINT_URL"] = "http://127.0.0.1:4568";
  ASSERT_OK_AND_ASSIGN(S3Options o, OptionsFromEnvironment(Env()));
  EXPECT_TRUE(o.path_style);
  EXPECT_EQ(o.BucketUrl("lake"), "http://127.0.0.1:4568/lake");
  vars_["AWS_ENDPOINT_URL_S3"] = "https://s3.example.com";
  ASSERT_OK_AND_ASSIGN(o, OptionsFromEnvironment(Env()));
  EXPECT_EQ(o.endpoint, "https://s3.example.com");
}

TEST_F(S3OptionsTest, DefaultPortsAndDottedBucketsAreAddressedAsCurlAndAwsNeed) {
  vars_["AWS_ACCESS_KEY_ID"] = "K";
  vars_["AWS_SECRET_ACCESS_KEY"] = "S";
  vars_["AWS_ENDPOINT_URL"] = "https://minio:443/";
  ASSERT_OK_AND_ASSIGN(S3Options o, OptionsFromEnvironment(Env()));
  EXPECT_EQ(o.endpoint, "https://minio");  // the Host header curl sends, which is signed
  vars_["AWS_ENDPOINT_URL"] = "http://minio:80";
  ASSERT_OK_AND_ASSIGN(o, OptionsFromEnvironment(Env()));
  EXPECT_EQ(o.endpoint, "http://minio");
  vars_["AWS_ENDPOINT_URL"] = "http://minio:8080";
  ASSERT_OK_AND_ASSIGN(o, OptionsFromEnvironment(Env()));
  EXPECT_EQ(o.endpoint, "http://minio:8080");
  vars_.erase("AWS_ENDPOINT_URL");
  vars_["AWS_REGION"] = "eu-west-1";
  ASSERT_OK_AND_ASSIGN(o, OptionsFromEnvironment(Env()));
  EXPECT_EQ(o.BucketUrl("plain"), "https://plain.s3.eu-west-1.amazonaws.com");
  EXPECT_EQ(o.BucketUrl("my.data"), "https://s3.eu-west-1.amazonaws.com/my.data");
}

TEST_F(S3OptionsTest, MissingCredentialsAndBadSettingsAreClearErrors) {
  ASSERT_ERROR(OptionsFromEnvironment(Env()), StatusCode::kInvalidArgument,
               "no credentials: set AWS_ACCESS_KEY_ID");
  vars_["AWS_ACCESS_KEY_ID"] = "K";
  vars_["AWS_SECRET_ACCESS_KEY"] = "S";
  vars_["AWS_ENDPOINT_URL"] = "minio:9000";
  ASSERT_ERROR(OptionsFromEnvironment(Env()), StatusCode::kInvalidArgument, "minio:9000");
  vars_.erase("AWS_ENDPOINT_URL");
  vars_["SLUICE_S3_PART_SIZE"] = "1000";
  ASSERT_ERROR(OptionsFromEnvironment(Env()), StatusCode::kInvalidArgument, "at least 5 MiB");
  vars_["SLUICE_S3_PART_SIZE"] = "lots";
  ASSERT_ERROR(OptionsFromEnvironment(Env()), StatusCode::kInvalidArgument, "positive integer");
}

}  // namespace
}  // namespace sluice::s3
