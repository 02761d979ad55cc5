#include "columnar/batch_sizer.h"

#include "columnar/sql_schema.h"
#include "common/testing.h"

namespace sluice {
namespace {

Batch Names(const std::vector<std::string>& names) {
  auto schema = std::make_shared<Schema>();
  schema->fields = {Field{1, "id", DataType::Long(), true, ""},
                    Field{2, "name", DataType::String(), true, ""}};
  Batch b = Batch::Make(schema);
  for (size_t i = 0; i < names.size(); ++i) {
    b.columns[0].Append<int64_t>(static_cast<int64_t>(i));
    b.columns[1].AppendBytes(names[i]);
  }
  return b;
}

TEST(BatchSizerTest, LearnsTheBytesOfEachByteColumnPerInputByte) {
  BatchSizer sizer;
  EXPECT_EQ(sizer.BytesPerInputByte(1), 0);  // nothing learned yet
  sizer.Learn(Names({"abcd", "efgh"}), 32);  // 8 bytes of names from 32 input bytes
  EXPECT_EQ(sizer.BytesPerInputByte(0), 0);  // a fixed-width column
  EXPECT_DOUBLE_EQ(sizer.BytesPerInputByte(1), 0.25);
  sizer.Learn(Names({"abcdefgh"}), 4);  // more bytes than input (a hint gone wrong): capped
  EXPECT_DOUBLE_EQ(sizer.BytesPerInputByte(1), 1.0);
  sizer.Learn(Names({"x"}), 0);  // no input: nothing to learn from
  EXPECT_DOUBLE_EQ(sizer.BytesPerInputByte(1), 1.0);
}

TEST(BatchSizerTest, ReservingLeavesTheBatchAsItWasAndItFillsAsUsual) {
  BatchSizer sizer;
  sizer.Learn(Names({"abcd", "efgh"}), 32);
  Batch b = Names({});
  sizer.Reserve(&b, 1000, 1 << 20);
  EXPECT_EQ(b.num_rows(), 0);
  EXPECT_EQ(b.columns[1].heap().size(), 0u);
  b.columns[0].Append<int64_t>(7);
  b.columns[1].AppendBytes("seven");
  EXPECT_EQ(b.columns[1].GetBytes(0), "seven");
  EXPECT_EQ(b.columns[0].Value<int64_t>(0), 7);
}

}  // namespace
}  // namespace sluice
