// Fail points: unarmed they pass; armed, exactly the chosen hit of the chosen
// name fails, once, with an error naming it.
#include "common/kill_point.h"

#include <gtest/gtest.h>

namespace sluice {
namespace {

TEST(FailPointTest, AnArmedPointFailsItsNthHitOnceAndOthersPass) {
  EXPECT_TRUE(FailPoint("test.point").ok());
  ArmFailPoint("test.point", 3);
  EXPECT_TRUE(FailPoint("test.point").ok());
  EXPECT_TRUE(FailPoint("test.other").ok());  // (another name counts no hit)
  EXPECT_TRUE(FailPoint("test.point").ok());
  Status third = FailPoint("test.point");
  EXPECT_EQ(third.code(), StatusCode::kIOError);
  EXPECT_NE(third.ToString().find("test.point"), std::string::npos) << third.ToString();
  for (int i = 0; i < 5; ++i) EXPECT_TRUE(FailPoint("test.point").ok()) << "once";
  ArmFailPoint("test.point");  // armed again: hits count from here
  EXPECT_FALSE(FailPoint("test.point").ok());
  ArmFailPoint("test.point", 2);
  ArmFailPoint("");  // disarmed
  EXPECT_TRUE(FailPoint("test.point").ok());
  EXPECT_TRUE(FailPoint("test.point").ok());
}

}  // namespace
}  // namespace sluice
