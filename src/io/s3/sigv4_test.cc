#include "io/s3/sigv4.h"

#include <gtest/gtest.h>

namespace sluice::s3 {
namespace {

// The worked example of AWS's S3 SigV4 documentation ("Example: GET Object"):
// GET /test.txt of examplebucket with a Range header, 2013-05-24, us-east-1, the
// documentation's example keys. Its published signature is the check.
TEST(SigV4Test, SignsTheDocumentedGetObjectExample) {
  Credentials creds{"AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", ""};
  std::string empty_hash = Sha256Hex("");
  SignInput in{"GET",
               "/test.txt",
               {},
               {{"Host", "examplebucket.s3.amazonaws.com"},
                {"Range", "bytes=0-9"},
                {"x-amz-content-sha256", empty_hash},
                {"x-amz-date", "20130524T000000Z"}},
               empty_hash};
  EXPECT_EQ(Authorization(in, creds, "us-east-1", "s3", "20130524T000000Z"),
            "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/"
            "aws4_request,SignedHeaders=host;range;x-amz-content-sha256;x-amz-date,"
            "Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41");
}

TEST(SigV4Test, TheCanonicalRequestSortsEncodesAndTrims) {
  SignInput in{"POST",
               "/bucket/a%20b/c",
               {{"uploads", ""}, {"prefix", "x/y z"}, {"list-type", "2"}},
               {{"X-Amz-Date", "20260101T000000Z"}, {"Host", "h:1"}, {"My-Header", "  a   b  "}},
               "abc"};
  EXPECT_EQ(CanonicalRequest(in),
            "POST\n/bucket/a%20b/c\nlist-type=2&prefix=x%2Fy%20z&uploads=\n"
            "host:h:1\nmy-header:a b\nx-amz-date:20260101T000000Z\n\n"
            "host;my-header;x-amz-date\nabc");
}

TEST(SigV4Test, UriEncodingKeepsOnlyUnreservedCharactersAndOptionallySlashes) {
  EXPECT_EQ(UriEncode("a-b_c.d~e/f g+h%", false), "a-b_c.d~e/f%20g%2Bh%25");
  EXPECT_EQ(UriEncode("a/b", true), "a%2Fb");
  EXPECT_EQ(UriEncode("\xC3\xA9", false), "%C3%A9");
}

TEST(SigV4Test, AmzDateIsUtcBasicFormat) {
  EXPECT_EQ(AmzDate(std::chrono::system_clock::time_point(std::chrono::seconds(1369353600))),
            "20130524T000000Z");
  EXPECT_EQ(Sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

}  // namespace
}  // namespace sluice::s3
