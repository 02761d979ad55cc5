#include "state/state_property.h"

#include <gtest/gtest.h>

#include "common/testing.h"

namespace sluice::state {
namespace {

TEST(StatePropertyTest, ThePropertiesAreNamedByKindAndPipeline) {
  EXPECT_EQ(WindowStateProperty("q5"), "sluice.state.q5");
  EXPECT_EQ(KeyIndexProperty("mirror"), "sluice.keys.mirror");
  EXPECT_TRUE(IsStateProperty("sluice.state.q5"));
  EXPECT_TRUE(IsStateProperty("sluice.keys.mirror"));
  EXPECT_FALSE(IsStateProperty("sluice.maintenance.orphan-margin-ms"));
  EXPECT_FALSE(IsStateProperty("sluice.stat"));
}

TEST(StatePropertyTest, AWindowStateAndAKeyIndexDecodeAsTheyWereEncoded) {
  StateProperty window;
  window.checkpoint = 12;
  window.epoch = 3;
  window.files = {"/t/state/q5/000003-00000009-base.state",
                  "/t/state/q5/000003-00000010-delta.state"};
  window.watermark = R"({"watermark":1})";
  window.plan = "tumble 60s; count(*)";
  ASSERT_OK_AND_ASSIGN(StateProperty w, StateProperty::Decode("p", window.Encode()));
  EXPECT_EQ(w.checkpoint, 12);
  EXPECT_EQ(w.epoch, 3);
  EXPECT_EQ(w.files, window.files);
  EXPECT_EQ(w.watermark, window.watermark);
  EXPECT_EQ(w.plan, window.plan);
  EXPECT_FALSE(w.key.has_value());

  StateProperty keys;
  keys.checkpoint = 7;
  keys.epoch = 1;
  keys.key = "1:long";
  keys.files = {"/t/state/m/000001-00000007-keys-base.state"};
  ASSERT_OK_AND_ASSIGN(StateProperty k, StateProperty::Decode("p", keys.Encode()));
  EXPECT_EQ(k.checkpoint, 7);
  EXPECT_EQ(k.key, "1:long");
  EXPECT_EQ(k.files, keys.files);
  EXPECT_FALSE(k.watermark.has_value());
  EXPECT_FALSE(k.plan.has_value());
}

TEST(StatePropertyTest, TheJsonIsTheLayoutDocsStateMdShows) {
  // Tables written before this parser existed hold this text; it must decode.
  ASSERT_OK_AND_ASSIGN(
      StateProperty p,
      StateProperty::Decode("sluice.keys.m", R"({"checkpoint":4,"epoch":2,)"
                                             R"("files":["a","b"],"key":"1:long"})"));
  EXPECT_EQ(p.Encode(), R"({"checkpoint":4,"epoch":2,"files":["a","b"],"key":"1:long"})");
  // No epoch: older window state.
  ASSERT_OK_AND_ASSIGN(p, StateProperty::Decode("p", R"({"checkpoint":1,"files":[],"x":true})"));
  EXPECT_FALSE(p.epoch.has_value());
  EXPECT_TRUE(p.files.empty());
}

TEST(StatePropertyTest, AValueThatIsNotTheStateIsCorruptionNamingTheProperty) {
  for (const char* value : {
           "not json",
           "[1, 2]",
           R"({"files": []})",
           R"({"checkpoint": "12", "files": []})",
           R"({"checkpoint": 12})",
           R"({"checkpoint": 12, "files": "a"})",
           R"({"checkpoint": 12, "files": ["a", 3]})",
           R"({"checkpoint": 12, "epoch": 1.5, "files": []})",
           R"({"checkpoint": 12, "files": [], "watermark": 5})",
           R"({"checkpoint": 12, "files": [], "key": null})",
       }) {
    auto p = StateProperty::Decode("sluice.state.q5", value);
    ASSERT_FALSE(p.ok()) << value;
    EXPECT_EQ(p.status().code(), StatusCode::kCorruption) << value;
    EXPECT_NE(p.status().message().find("sluice.state.q5"), std::string::npos)
        << p.status().ToString();
  }
}

}  // namespace
}  // namespace sluice::state
