#include "iceberg/transform.h"

#include "columnar/value_format.h"
#include "common/testing.h"

namespace sluice::iceberg {
namespace {

template <typename T>
Column Make(TypePtr type, std::vector<T> values) {
  Column c(std::move(type));
  for (T v : values) c.Append<T>(v);
  return c;
}

Column Strings(TypePtr type, std::vector<std::string> values) {
  Column c(std::move(type));
  for (const auto& v : values) c.AppendBytes(v);
  return c;
}

Result<Column> Apply(std::string_view t, const Column& c) {
  ASSIGN_OR_RETURN(Transform tr, Transform::Parse(t));
  return tr.Apply(c);
}

TEST(TransformTest, ParseAndPrint) {
  for (const char* s :
       {"identity", "bucket[16]", "truncate[4]", "year", "month", "day", "hour", "void"}) {
    ASSERT_OK_AND_ASSIGN(Transform t, Transform::Parse(s));
    EXPECT_EQ(t.ToString(), s);
  }
  ASSERT_OK_AND_ASSIGN(Transform u, Transform::Parse("zorder"));
  EXPECT_EQ(u.kind, Transform::Kind::kUnknown);
  ASSERT_ERROR(u.Apply(Column(DataType::Int())), StatusCode::kNotImplemented, "zorder");
  ASSERT_ERROR(Transform::Parse("bucket[0]"), StatusCode::kInvalidArgument, "positive");
  ASSERT_ERROR(Transform::Parse("truncate[x]"), StatusCode::kInvalidArgument, "positive");
}

TEST(TransformTest, BucketSpecExample) {
  // bucket[16](34) = 3 for int and long alike (spec Appendix B worked example).
  ASSERT_OK_AND_ASSIGN(Column a, Apply("bucket[16]", Make<int32_t>(DataType::Int(), {34})));
  ASSERT_OK_AND_ASSIGN(Column b, Apply("bucket[16]", Make<int64_t>(DataType::Long(), {34})));
  EXPECT_EQ(a.Value<int32_t>(0), 3);
  EXPECT_EQ(b.Value<int32_t>(0), 3);
  // Hashes of the Appendix B vectors through typed columns.
  ASSERT_OK_AND_ASSIGN(int32_t h, BucketHash(Make<int128_t>(DataType::Decimal(4, 2), {1420}), 0));
  EXPECT_EQ(h, -500754589);
  ASSERT_OK_AND_ASSIGN(h, BucketHash(Make<int32_t>(DataType::Date(), {17486}), 0));
  EXPECT_EQ(h, -653330422);
  ASSERT_OK_AND_ASSIGN(
      h, BucketHash(Make<int64_t>(DataType::TimestampNs(), {1510871468000001001}), 0));
  EXPECT_EQ(h, -1207196810);
  ASSERT_OK_AND_ASSIGN(h, BucketHash(Strings(DataType::String(), {"iceberg"}), 0));
  EXPECT_EQ(h, 1210000089);
  ASSERT_ERROR(Apply("bucket[4]", Make<double>(DataType::Double(), {1.0})),
               StatusCode::kInvalidArgument, "cannot apply");
}

TEST(TransformTest, TruncateFloorsTowardNegativeInfinity) {
  ASSERT_OK_AND_ASSIGN(Column c,
                       Apply("truncate[10]", Make<int32_t>(DataType::Int(), {1, -1, 10})));
  EXPECT_EQ(c.Value<int32_t>(0), 0);
  EXPECT_EQ(c.Value<int32_t>(1), -10);
  EXPECT_EQ(c.Value<int32_t>(2), 10);
  // decimal 10.65 with W=50 at scale 2 → 10.50
  ASSERT_OK_AND_ASSIGN(c, Apply("truncate[50]", Make<int128_t>(DataType::Decimal(9, 2), {1065})));
  EXPECT_EQ(static_cast<int64_t>(c.Value<int128_t>(0)), 1050);
  // strings by code point, never splitting UTF-8
  ASSERT_OK_AND_ASSIGN(
      c, Apply("truncate[2]", Strings(DataType::String(), {"\xc3\xa9t\xc3\xa9", "a"})));
  EXPECT_EQ(c.GetBytes(0), "\xc3\xa9t");
  EXPECT_EQ(c.GetBytes(1), "a");
}

TEST(TransformTest, TimeTransformsFloor) {
  // -1 µs is 1969-12-31T23:59:59.999999: day -1, hour -1, month -1, year -1.
  Column ts = Make<int64_t>(DataType::TimestampTz(), {-1, 0, 1706708700123456});
  ASSERT_OK_AND_ASSIGN(Column d, Apply("day", ts));
  EXPECT_EQ(d.type()->id(), TypeId::kDate);
  EXPECT_EQ(d.Value<int32_t>(0), -1);
  EXPECT_EQ(d.Value<int32_t>(2), 19753);
  ASSERT_OK_AND_ASSIGN(Column h, Apply("hour", ts));
  EXPECT_EQ(h.Value<int32_t>(0), -1);
  EXPECT_EQ(h.Value<int32_t>(2), 474085);
  ASSERT_OK_AND_ASSIGN(Column m, Apply("month", ts));
  EXPECT_EQ(m.Value<int32_t>(0), -1);
  EXPECT_EQ(m.Value<int32_t>(2), (2024 - 1970) * 12);
  ASSERT_OK_AND_ASSIGN(Column y, Apply("year", Make<int32_t>(DataType::Date(), {-1, 19753})));
  EXPECT_EQ(y.Value<int32_t>(0), -1);
  EXPECT_EQ(y.Value<int32_t>(1), 54);
  ASSERT_ERROR(Apply("hour", Make<int32_t>(DataType::Date(), {1})), StatusCode::kInvalidArgument,
               "hour cannot apply to a date");
}

TEST(TransformTest, NullsAndVoid) {
  Column c(DataType::Long());
  c.Append<int64_t>(5);
  c.AppendNull();
  ASSERT_OK_AND_ASSIGN(Column id, Apply("identity", c));
  EXPECT_EQ(id.Value<int64_t>(0), 5);
  EXPECT_TRUE(id.IsNull(1));
  ASSERT_OK_AND_ASSIGN(Column v, Apply("void", c));
  EXPECT_EQ(v.null_count(), 2);
}

}  // namespace
}  // namespace sluice::iceberg
