#include "common/status.h"

#include "common/testing.h"

namespace sluice {
namespace {

Result<int> Half(int v) {
  if (v % 2) return Status::Invalid("{} is odd", v);
  return v / 2;
}

Result<int> Quarter(int v) {
  ASSIGN_OR_RETURN(int h, Half(v));
  ASSIGN_OR_RETURN(int q, Half(h));
  return q;
}

Status CheckEven(int v) {
  RETURN_IF_ERROR_CTX(Half(v), "value #{}", 7);
  return Status::OK();
}

TEST(StatusTest, OkAndErrors) {
  EXPECT_TRUE(Status::OK().ok());
  Status s = Status::Corruption("file {}: bad magic", "a.parquet");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kCorruption);
  EXPECT_EQ(s.ToString(), "Corruption: file a.parquet: bad magic");
  EXPECT_FALSE(s.retryable());
  EXPECT_TRUE(Status::Conflict("x").retryable());
}

TEST(StatusTest, ContextIsPrefixed) {
  Status s = Status::Invalid("bad").WithContext("column ts").WithContext("file f");
  EXPECT_EQ(s.message(), "file f: column ts: bad");
  EXPECT_TRUE(Status::OK().WithContext("x").ok());
}

TEST(StatusTest, PrintableTextKeepsEveryByteVisible) {
  EXPECT_EQ(PrintableText(std::string("table na\0me\n\x1b[31m", 17)),
            "table na\\x00me\\x0a\\x1b[31m");
  EXPECT_EQ(PrintableText("caf\xc3\xa9 ok"), "caf\xc3\xa9 ok");  // UTF-8 stays
}

TEST(ResultTest, MacrosPropagate) {
  ASSERT_OK_AND_ASSIGN(int q, Quarter(8));
  EXPECT_EQ(q, 2);
  ASSERT_ERROR(Quarter(6), StatusCode::kInvalidArgument, "3 is odd");
  ASSERT_ERROR(CheckEven(3), StatusCode::kInvalidArgument, "value #7: 3 is odd");
  EXPECT_OK(CheckEven(4));
}

}  // namespace
}  // namespace sluice
