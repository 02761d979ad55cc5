#include "columnar/json_reader.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "columnar/json_writer.h"
#include "columnar/sql_schema.h"
#include "columnar/value_format.h"
#include "common/testing.h"

namespace sluice {
namespace {

std::shared_ptr<const Schema> MakeSchema(std::string_view sql) {
  auto r = ParseColumnList(sql);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return std::make_shared<const Schema>(std::move(r).value());
}

// Deep, bitwise comparison of two columns; returns a description of the first
// difference or "".
std::string Diff(const Column& a, const Column& b, int64_t i_a, int64_t i_b);

std::string DiffRange(const Column& a, const Column& b, uint32_t a0, uint32_t a1, uint32_t b0,
                      uint32_t b1) {
  if (a1 - a0 != b1 - b0) return "length differs";
  for (uint32_t k = 0; k < a1 - a0; ++k) {
    std::string d = Diff(a, b, a0 + k, b0 + k);
    if (!d.empty()) return fmt::format("[{}]: {}", k, d);
  }
  return "";
}

std::string Diff(const Column& a, const Column& b, int64_t ia, int64_t ib) {
  if (a.IsNull(ia) != b.IsNull(ib)) return "validity differs";
  if (a.IsNull(ia)) return "";
  const DataType& t = *a.type();
  if (t.is_binary_like()) return a.GetBytes(ia) == b.GetBytes(ib) ? "" : "bytes differ";
  switch (t.id()) {
    case TypeId::kStruct:
      for (int c = 0; c < a.num_children(); ++c) {
        std::string d = Diff(a.child(c), b.child(c), ia, ib);
        if (!d.empty()) return t.fields()[c].name + ": " + d;
      }
      return "";
    case TypeId::kList:
    case TypeId::kMap:
      for (int c = 0; c < a.num_children(); ++c) {
        std::string d = DiffRange(a.child(c), b.child(c), a.ListBegin(ia), a.ListEnd(ia),
                                  b.ListBegin(ib), b.ListEnd(ib));
        if (!d.empty()) return d;
      }
      return "";
    default: {
      int w = t.value_width();
      const uint8_t* pa = a.data<uint8_t>() + ia * w;
      const uint8_t* pb = b.data<uint8_t>() + ib * w;
      return std::memcmp(pa, pb, w) == 0 ? "" : "value differs";
    }
  }
}

TEST(JsonDecoder, DecodesScalars) {
  auto schema = MakeSchema(
      "b BOOLEAN, i INT, l BIGINT, f FLOAT, d DOUBLE, m DECIMAL(10,2), dt DATE, t TIME, "
      "ts TIMESTAMP, tz TIMESTAMPTZ, tn TIMESTAMP_NS, s STRING, bin BINARY, fx FIXED(2), u UUID");
  ASSERT_OK_AND_ASSIGN(auto dec, JsonDecoder::Make(schema));
  Batch batch = Batch::Make(schema);
  ASSERT_OK(dec->DecodeLine(
      R"({"b":true,"i":-7,"l":9007199254740993,"f":0.1,"d":"-Infinity","m":12.5,)"
      R"("dt":"2024-02-29","t":"13:45:00.000123","ts":"2024-01-01T00:00:01",)"
      R"("tz":"2024-01-01T01:00:00+01:00","tn":1,"s":"h\u00e9\"llo","bin":"00ff",)"
      R"("fx":"abcd","u":"f79c3e09-677c-4bbd-a479-3f349cb785e7","extra":[1,{"x":2}]})",
      1, &batch));
  ASSERT_EQ(batch.num_rows(), 1);
  EXPECT_TRUE(batch.columns[0].GetBool(0));
  EXPECT_EQ(batch.columns[1].Value<int32_t>(0), -7);
  EXPECT_EQ(batch.columns[2].Value<int64_t>(0), 9007199254740993LL);
  EXPECT_EQ(batch.columns[3].Value<float>(0), 0.1f);
  EXPECT_EQ(batch.columns[4].Value<double>(0), -std::numeric_limits<double>::infinity());
  EXPECT_TRUE(batch.columns[5].Value<int128_t>(0) == 1250);
  EXPECT_EQ(batch.columns[6].Value<int32_t>(0), DaysFromCivil(2024, 2, 29));
  EXPECT_EQ(batch.columns[7].Value<int64_t>(0), (13 * 3600 + 45 * 60) * 1000000LL + 123);
  int64_t jan1 = DaysFromCivil(2024, 1, 1) * 86400LL * 1000000;
  EXPECT_EQ(batch.columns[8].Value<int64_t>(0), jan1 + 1000000);
  EXPECT_EQ(batch.columns[9].Value<int64_t>(0), jan1);  // offset applied
  EXPECT_EQ(batch.columns[10].Value<int64_t>(0), 1);    // epoch ns
  EXPECT_EQ(batch.columns[11].GetBytes(0), "h\xc3\xa9\"llo");
  EXPECT_EQ(batch.columns[12].GetBytes(0), std::string("\x00\xff", 2));
  EXPECT_EQ(batch.columns[13].GetBytes(0), "\xab\xcd");
  EXPECT_EQ(batch.columns[14].GetBytes(0).size(), 16u);
  EXPECT_EQ(static_cast<uint8_t>(batch.columns[14].GetBytes(0)[0]), 0xf7);
}

TEST(JsonDecoder, MatchesKeysExactlyIncludingEscapedSpellings) {
  auto schema = MakeSchema(
      "id INT, idx INT, a_rather_long_field_name INT, a_rather_long_field_namf INT, "
      "`q\"uote` INT");
  ASSERT_OK_AND_ASSIGN(auto dec, JsonDecoder::Make(schema));
  Batch batch = Batch::Make(schema);
  ASSERT_OK(dec->DecodeLine(
      R"({"idx":2,"\u0069d":1,"a_rather_long_field_namf":4,"a_rather_long_field_name":3,)"
      R"("q\"uote":5,"i":9,"idxx":9})",
      1, &batch));
  ASSERT_EQ(batch.num_rows(), 1);
  for (int c = 0; c < 5; ++c) {
    ASSERT_TRUE(batch.columns[c].IsValid(0)) << c;
    EXPECT_EQ(batch.columns[c].Value<int32_t>(0), c + 1) << schema->fields[c].name;
  }
}

TEST(JsonDecoder, MissingAndNullOptionalFieldsAreNull) {
  auto schema = MakeSchema("id BIGINT NOT NULL, note STRING, tags ARRAY<STRING>");
  ASSERT_OK_AND_ASSIGN(auto dec, JsonDecoder::Make(schema));
  Batch batch = Batch::Make(schema);
  ASSERT_OK(dec->DecodeLine(R"({"id":1})", 1, &batch));
  ASSERT_OK(dec->DecodeLine(R"({"note":null,"id":2,"tags":null})", 2, &batch));
  ASSERT_OK(dec->DecodeLine(R"({"tags":[],"id":3,"note":"x"})", 3, &batch));
  ASSERT_EQ(batch.num_rows(), 3);
  EXPECT_TRUE(batch.columns[1].IsNull(0));
  EXPECT_TRUE(batch.columns[1].IsNull(1));
  EXPECT_EQ(batch.columns[1].GetBytes(2), "x");
  EXPECT_TRUE(batch.columns[2].IsNull(1));
  EXPECT_TRUE(batch.columns[2].IsValid(2));
  EXPECT_EQ(batch.columns[2].ListEnd(2) - batch.columns[2].ListBegin(2), 0u);
  EXPECT_EQ(batch.columns[0].Value<int64_t>(2), 3);
}

// A row's members past the 64th are marked in scratch lines of the node (the
// first 64 in a word of its own): members 100 and 580 lie in the first and the
// second such line, so duplicates and missing members are found in both, and
// each row starts with none of them seen.
TEST(JsonDecoder, FindsDuplicateAndMissingMembersOfAStructWiderThan64) {
  std::string columns;
  for (int i = 0; i < 600; ++i) {
    columns +=
        fmt::format("{}c{} INT{}", i == 0 ? "" : ", ", i, i == 70 || i == 590 ? " NOT NULL" : "");
  }
  auto schema = MakeSchema(columns);
  ASSERT_OK_AND_ASSIGN(auto dec, JsonDecoder::Make(schema));
  Batch batch = Batch::Make(schema);
  const std::string valid = R"({"c590":5,"c3":3,"c100":1,"c580":8,"c70":7,"c68":6})";
  ASSERT_OK(dec->DecodeLine(valid, 1, &batch));
  ASSERT_ERROR(dec->DecodeLine(R"({"c70":7,"c100":1,"c590":5,"c100":2})", 2, &batch),
               StatusCode::kInvalidArgument, "line 2: field c100: duplicate key");
  ASSERT_ERROR(dec->DecodeLine(R"({"c580":1,"c70":7,"c590":5,"c580":2})", 3, &batch),
               StatusCode::kInvalidArgument, "line 3: field c580: duplicate key");
  ASSERT_ERROR(dec->DecodeLine(R"({"c3":3,"c3":4,"c70":7,"c590":5})", 4, &batch),
               StatusCode::kInvalidArgument, "line 4: field c3: duplicate key");
  ASSERT_ERROR(dec->DecodeLine(R"({"c70":7,"c100":1})", 5, &batch), StatusCode::kInvalidArgument,
               "line 5: field c590: required field is missing");
  ASSERT_ERROR(dec->DecodeLine(R"({"c590":5})", 6, &batch), StatusCode::kInvalidArgument,
               "line 6: field c70: required field is missing");
  ASSERT_OK(dec->DecodeLine(valid, 7, &batch));
  ASSERT_OK(dec->DecodeLine(R"({"c70":-7,"c590":-5})", 8, &batch));
  ASSERT_EQ(batch.num_rows(), 3);
  for (int64_t row : {0, 1}) {
    EXPECT_EQ(batch.columns[3].Value<int32_t>(row), 3);
    EXPECT_EQ(batch.columns[100].Value<int32_t>(row), 1);
    EXPECT_EQ(batch.columns[580].Value<int32_t>(row), 8);
    EXPECT_EQ(batch.columns[68].Value<int32_t>(row), 6);
    EXPECT_EQ(batch.columns[590].Value<int32_t>(row), 5);
    EXPECT_TRUE(batch.columns[4].IsNull(row));
    EXPECT_TRUE(batch.columns[599].IsNull(row));
  }
  EXPECT_EQ(batch.columns[70].Value<int32_t>(2), -7);
  EXPECT_EQ(batch.columns[590].Value<int32_t>(2), -5);
  for (int c : {3, 68, 100, 580}) EXPECT_TRUE(batch.columns[c].IsNull(2)) << c;
}

// Nested structs keep marks of their own: each element of a list of wide
// structs starts with none seen, and structs of exactly 64 and 65 members find
// a missing required member in the first word (the 64th) and past it (the
// 65th).
TEST(JsonDecoder, EachElementOfAListOfWideStructsStartsWithNoMemberSeen) {
  auto members = [](int n, int required) {
    std::string m;
    for (int i = 0; i < n; ++i) {
      m += fmt::format("{}m{}: INT{}", i == 0 ? "" : ", ", i, i == required ? " NOT NULL" : "");
    }
    return m;
  };
  auto schema = MakeSchema(
      fmt::format("s64 STRUCT<{}>, l ARRAY<STRUCT<{}>>", members(64, 63), members(65, 64)));
  ASSERT_OK_AND_ASSIGN(auto dec, JsonDecoder::Make(schema));
  ASSERT_OK(dec->ReserveRecords(1 << 16));
  Batch batch = Batch::Make(schema);
  ASSERT_OK(
      dec->DecodeLine(R"({"s64":{"m63":1},"l":[{"m64":2,"m1":3},{"m1":4,"m64":5}]})", 1, &batch));
  ASSERT_ERROR(dec->DecodeLine(R"({"s64":{"m63":1},"l":[{"m64":2},{"m64":5,"m64":6}]})", 2, &batch),
               StatusCode::kInvalidArgument, "line 2: field l[1].m64: duplicate key");
  ASSERT_ERROR(dec->DecodeLine(R"({"s64":{"m63":1},"l":[{"m64":2},{"m0":5}]})", 3, &batch),
               StatusCode::kInvalidArgument, "line 3: field l[1].m64: required field is missing");
  ASSERT_ERROR(dec->DecodeLine(R"({"s64":{"m0":1,"m62":2},"l":[]})", 4, &batch),
               StatusCode::kInvalidArgument, "line 4: field s64.m63: required field is missing");
  // Every member of the first word set: the missing ones are past it.
  std::string first64;
  for (int i = 0; i < 64; ++i) first64 += fmt::format("{}\"m{}\":{}", i == 0 ? "" : ",", i, i);
  ASSERT_ERROR(
      dec->DecodeLine(fmt::format(R"({{"s64":{{{}}},"l":[{{{}}}]}})", first64, first64), 5, &batch),
      StatusCode::kInvalidArgument, "line 5: field l[0].m64: required field is missing");
  ASSERT_OK(dec->DecodeLine(
      fmt::format(R"({{"s64":{{{}}},"l":[{{{},"m64":64}}]}})", first64, first64), 6, &batch));
  ASSERT_EQ(batch.num_rows(), 2);
  EXPECT_EQ(batch.columns[0].child(0).Value<int32_t>(1), 0);
  EXPECT_EQ(batch.columns[0].child(62).Value<int32_t>(1), 62);
  EXPECT_EQ(batch.columns[0].child(63).Value<int32_t>(0), 1);
  EXPECT_TRUE(batch.columns[0].child(0).IsNull(0));
  const Column& elements = batch.columns[1].child(0);
  ASSERT_EQ(elements.size(), 3);
  EXPECT_EQ(elements.child(64).Value<int32_t>(2), 64);
  EXPECT_EQ(elements.child(63).Value<int32_t>(2), 63);
  EXPECT_EQ(elements.child(64).Value<int32_t>(0), 2);
  EXPECT_EQ(elements.child(64).Value<int32_t>(1), 5);
  EXPECT_EQ(elements.child(1).Value<int32_t>(0), 3);
  EXPECT_EQ(elements.child(1).Value<int32_t>(1), 4);
  EXPECT_TRUE(elements.child(0).IsNull(1));
}

TEST(JsonDecoder, ErrorsNameLineFieldAndReason) {
  auto schema = MakeSchema(
      "id BIGINT NOT NULL, amount DECIMAL(10,2), n INT, f FIXED(2), "
      "s STRUCT<a: INT NOT NULL, b ARRAY<INT>>, m MAP<STRING, INT>");
  ASSERT_OK_AND_ASSIGN(auto dec, JsonDecoder::Make(schema));
  Batch batch = Batch::Make(schema);
  ASSERT_ERROR(dec->DecodeLine(R"({"id":1,"amount":"12.345"})", 17, &batch),
               StatusCode::kOutOfRange, "line 17: field amount: decimal '12.345' has more than 2");
  ASSERT_ERROR(dec->DecodeLine(R"({"id":1,"amount":12.345})", 3, &batch), StatusCode::kOutOfRange,
               "decimal(10,2)");
  ASSERT_ERROR(dec->DecodeLine(R"({"amount":1})", 4, &batch), StatusCode::kInvalidArgument,
               "line 4: field id: required field is missing");
  ASSERT_ERROR(dec->DecodeLine(R"({"id":null})", 5, &batch), StatusCode::kInvalidArgument,
               "line 5: field id: required field is null");
  ASSERT_ERROR(dec->DecodeLine(R"({"id":1,"n":3000000000})", 6, &batch), StatusCode::kOutOfRange,
               "field n: 3000000000 is out of range for int");
  ASSERT_ERROR(dec->DecodeLine(R"({"id":1.5})", 7, &batch), StatusCode::kInvalidArgument,
               "field id: expected an integer, got 1.5");
  ASSERT_ERROR(dec->DecodeLine(R"({"id":"1"})", 8, &batch), StatusCode::kInvalidArgument,
               "expected an integer, got \"1\"");
  ASSERT_ERROR(dec->DecodeLine(R"({"id":1,"f":"abcdef"})", 9, &batch), StatusCode::kInvalidArgument,
               "field f: 3 bytes given for fixed[2]");
  ASSERT_ERROR(dec->DecodeLine(R"({"id":1,"s":{"b":[1,2,"x"],"a":1}})", 10, &batch),
               StatusCode::kInvalidArgument, "line 10: field s.b[2]: expected an integer");
  ASSERT_ERROR(dec->DecodeLine(R"({"id":1,"s":{"b":[]}})", 11, &batch),
               StatusCode::kInvalidArgument, "field s.a: required field is missing");
  ASSERT_ERROR(dec->DecodeLine(R"({"id":1,"m":{"k":1,"z":true}})", 12, &batch),
               StatusCode::kInvalidArgument, "field m[1]: expected an integer, got true");
  ASSERT_ERROR(dec->DecodeLine(R"({"id":1,"id":2})", 13, &batch), StatusCode::kInvalidArgument,
               "field id: duplicate key");
  ASSERT_ERROR(dec->DecodeLine(R"([1,2])", 14, &batch), StatusCode::kInvalidArgument,
               "line 14: not a JSON object");
  ASSERT_ERROR(dec->DecodeLine(R"({"id":1)", 15, &batch), StatusCode::kInvalidArgument, "line 15");
  ASSERT_ERROR(dec->DecodeLine(R"({"id":1} {})", 16, &batch), StatusCode::kInvalidArgument,
               "trailing content");
  EXPECT_EQ(batch.num_rows(), 0);
}

TEST(JsonDecoder, FailedLineLeavesBatchUnchanged) {
  auto schema =
      MakeSchema("a STRING, s STRUCT<x ARRAY<STRING>, y MAP<STRING, STRING>>, z BIGINT NOT NULL");
  ASSERT_OK_AND_ASSIGN(auto dec, JsonDecoder::Make(schema));
  Batch batch = Batch::Make(schema);
  const std::string good = R"({"a":"one","s":{"x":["p",null],"y":{"k":"v"}},"z":1})";
  ASSERT_OK(dec->DecodeLine(good, 1, &batch));
  std::string before;
  AppendJsonRow(batch, 0, &before);
  // Fails after appending to a, s.x and s.y: all must be rolled back.
  ASSERT_ERROR(
      dec->DecodeLine(R"({"a":"two","s":{"x":["q","r"],"y":{"k2":"v2"}},"z":"bad"})", 2, &batch),
      StatusCode::kInvalidArgument, "field z");
  ASSERT_EQ(batch.num_rows(), 1);
  EXPECT_EQ(batch.columns[1].child(0).child(0).size(), 2);
  EXPECT_EQ(batch.columns[1].child(1).child(0).size(), 1);
  EXPECT_EQ(batch.columns[0].heap(), "one");
  ASSERT_OK(dec->DecodeLine(good, 3, &batch));
  ASSERT_EQ(batch.num_rows(), 2);
  std::string after;
  AppendJsonRow(batch, 1, &after);
  EXPECT_EQ(before, after);
  EXPECT_EQ(batch.columns[1].child(0).child(0).null_count(), 2);
}

TEST(JsonDecoder, DecodeLinesDeadLettersBadLines) {
  auto schema = MakeSchema("id INT NOT NULL");
  ASSERT_OK_AND_ASSIGN(auto dec, JsonDecoder::Make(schema));
  Batch batch = Batch::Make(schema);
  std::vector<int64_t> bad;
  int64_t rows = 0;
  std::string input = "{\"id\":1}\r\n\n  \n{\"id\":\"x\"}\n{\"id\":3}\n{\"id\":4}";
  ASSERT_OK(dec->DecodeLines(
      input, 10, &batch,
      [&](int64_t line_no, std::string_view line, const Status& st) {
        bad.push_back(line_no);
        EXPECT_EQ(line, "{\"id\":\"x\"}");
        EXPECT_NE(st.message().find("line 13: field id"), std::string::npos) << st.message();
        return Status::OK();
      },
      &rows));
  EXPECT_EQ(rows, 3);
  EXPECT_EQ(bad, std::vector<int64_t>{13});
  ASSERT_EQ(batch.num_rows(), 3);
  EXPECT_EQ(batch.columns[0].Value<int32_t>(2), 4);
  // Without a handler the first bad line stops decoding.
  Batch b2 = Batch::Make(schema);
  ASSERT_ERROR(dec->DecodeLines(input, 1, &b2, nullptr, &rows), StatusCode::kInvalidArgument,
               "line 4");
  EXPECT_EQ(rows, 1);
}

TEST(JsonDecoder, DecodeLinesInPlaceReportsTheNextLine) {
  auto schema = MakeSchema("id INT NOT NULL, s STRING");
  ASSERT_OK_AND_ASSIGN(auto dec, JsonDecoder::Make(schema));
  Batch batch = Batch::Make(schema);
  // Lines parsed in place; what follows them (a partial next line) is ignored.
  std::string buf = "{\"id\":1,\"s\":\"a\"}\n\n{\"id\":2}\n{\"id\":3,\"s\":\"par";
  size_t end = buf.rfind('\n') + 1;
  buf.resize(buf.size() + JsonDecoder::kPadding, 'x');
  int64_t rows = 0, next = 0;
  ASSERT_OK(dec->DecodeLines(std::string_view(buf.data(), end), 5, &batch, nullptr, &rows,
                             /*padded=*/true, &next));
  EXPECT_EQ(rows, 2);
  EXPECT_EQ(next, 8);  // lines 5, 6 (blank) and 7 were read
  EXPECT_EQ(batch.columns[1].GetBytes(0), "a");
  EXPECT_TRUE(batch.columns[1].IsNull(1));
}

TEST(JsonDecoder, MapsFromObjectsAndKeyValueArrays) {
  auto schema = MakeSchema("m MAP<INT, STRING>, n MAP<STRING, DOUBLE>");
  ASSERT_OK_AND_ASSIGN(auto dec, JsonDecoder::Make(schema));
  Batch batch = Batch::Make(schema);
  ASSERT_OK(dec->DecodeLine(R"({"m":[{"value":"a","key":5},{"key":6}],"n":{"x":"NaN","y":-0.0}})",
                            1, &batch));
  const Column& m = batch.columns[0];
  ASSERT_EQ(m.ListEnd(0), 2u);
  EXPECT_EQ(m.child(0).Value<int32_t>(0), 5);
  EXPECT_EQ(m.child(1).GetBytes(0), "a");
  EXPECT_TRUE(m.child(1).IsNull(1));
  const Column& n = batch.columns[1];
  EXPECT_TRUE(std::isnan(n.child(1).Value<double>(0)));
  EXPECT_TRUE(std::signbit(n.child(1).Value<double>(1)));
  ASSERT_ERROR(dec->DecodeLine(R"({"m":{"5":"a"}})", 2, &batch), StatusCode::kInvalidArgument,
               "field m: map<int, string> needs an array");
  ASSERT_ERROR(dec->DecodeLine(R"({"m":[{"value":"a"}]})", 3, &batch), StatusCode::kInvalidArgument,
               "field m[0].key: required field is missing");
}

// Mutated lines either decode to one row or fail leaving every column (and
// nested child) exactly as it was.
TEST(JsonDecoder, MutatedInputNeverCorruptsTheBatch) {
  auto schema = MakeSchema(
      "id BIGINT NOT NULL, s STRING, d DECIMAL(9,2), tags ARRAY<STRING>, "
      "m MAP<STRING, INT>, st STRUCT<a INT NOT NULL, b ARRAY<DOUBLE>>");
  ASSERT_OK_AND_ASSIGN(auto dec, JsonDecoder::Make(schema));
  Batch batch = Batch::Make(schema);
  const std::string seed =
      R"({"id":12,"s":"h\u00e9","d":"1.25","tags":["a",null],"m":{"k":1},"st":{"a":3,"b":[1.5]}})";
  std::mt19937_64 rng(11);
  const char kBytes[] = "{}[]\",:0123456789.-e\\nulltrueabc \x80\xff";
  int ok = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string line = seed;
    for (int k = 1 + static_cast<int>(rng() % 3); k > 0; --k) {
      size_t pos = rng() % line.size();
      switch (rng() % 3) {
        case 0: line[pos] = kBytes[rng() % (sizeof(kBytes) - 1)]; break;
        case 1: line.erase(pos, 1 + rng() % 4); break;
        default: line.insert(pos, 1, kBytes[rng() % (sizeof(kBytes) - 1)]);
      }
      if (line.empty()) line = "{";
    }
    // A fresh batch every 100 lines keeps the full before/after comparison
    // linear in the number of lines.
    if (i % 100 == 0) batch = Batch::Make(schema);
    std::string before;
    for (int64_t r = 0; r < batch.num_rows(); ++r) AppendJsonRow(batch, r, &before);
    int64_t rows = batch.num_rows();
    int64_t children = batch.columns[3].child(0).size() + batch.columns[4].child(1).size() +
                       batch.columns[5].child(1).child(0).size();
    Status st = dec->DecodeLine(line, i + 1, &batch);
    if (st.ok()) {
      ++ok;
      ASSERT_EQ(batch.num_rows(), rows + 1) << line;
      continue;
    }
    ASSERT_EQ(batch.num_rows(), rows) << line;
    ASSERT_EQ(batch.columns[3].child(0).size() + batch.columns[4].child(1).size() +
                  batch.columns[5].child(1).child(0).size(),
              children)
        << line;
    ASSERT_NE(st.message().find(fmt::format("line {}", i + 1)), std::string::npos) << st.message();
    std::string after;
    for (int64_t r = 0; r < batch.num_rows(); ++r) AppendJsonRow(batch, r, &after);
    ASSERT_EQ(before, after) << line;
  }
  EXPECT_GT(ok, 100);
}

// Random rows of every type, written by AppendJsonRow, must decode to the
// identical values.
class RandomRows {
 public:
  explicit RandomRows(uint64_t seed) : rng_(seed) {}

  void Fill(Column* c, bool allow_null) {
    const DataType& t = *c->type();
    if (allow_null && Pick(6) == 0) {
      c->AppendNull();
      return;
    }
    switch (t.id()) {
      case TypeId::kBoolean: c->AppendBool(Pick(2)); break;
      case TypeId::kInt: c->Append<int32_t>(static_cast<int32_t>(rng_())); break;
      case TypeId::kLong: c->Append<int64_t>(static_cast<int64_t>(rng_())); break;
      case TypeId::kFloat: {
        float f;
        uint32_t bits = static_cast<uint32_t>(rng_());
        std::memcpy(&f, &bits, 4);
        if (std::isnan(f)) f = std::numeric_limits<float>::quiet_NaN();
        c->Append<float>(f);
        break;
      }
      case TypeId::kDouble: {
        double d;
        uint64_t bits = rng_();
        std::memcpy(&d, &bits, 8);
        if (std::isnan(d)) d = std::numeric_limits<double>::quiet_NaN();
        if (Pick(8) == 0) d = Pick(2) ? -0.0 : std::numeric_limits<double>::infinity();
        c->Append<double>(d);
        break;
      }
      case TypeId::kDecimal: {
        int128_t v = (static_cast<int128_t>(rng_()) << 64) | rng_();
        int128_t max = DecimalMaxUnscaled(t.precision());
        v %= (max + 1);
        c->Append<int128_t>(v);
        break;
      }
      case TypeId::kDate: c->Append<int32_t>(static_cast<int32_t>(Pick(3600000)) - 700000); break;
      case TypeId::kTime: c->Append<int64_t>(static_cast<int64_t>(rng_() % 86400000000ULL)); break;
      case TypeId::kTimestamp:
      case TypeId::kTimestampTz:
        c->Append<int64_t>(static_cast<int64_t>(rng_() % 310000000000000000ULL) -
                           62000000000000000LL);
        break;
      case TypeId::kTimestampNs:
      case TypeId::kTimestampTzNs: c->Append<int64_t>(static_cast<int64_t>(rng_() >> 1)); break;
      case TypeId::kString: {
        static const char* kPieces[] = {
            "a", "Z", "\"",  "\\", "\n", "\x01", "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80",
            " ", "/", "\x7f"};
        std::string s;
        for (int n = Pick(12); n > 0; --n) s += kPieces[Pick(12)];
        c->AppendBytes(s);
        break;
      }
      case TypeId::kBinary:
      case TypeId::kFixed:
      case TypeId::kUuid: {
        int len = t.id() == TypeId::kFixed ? t.width() : t.id() == TypeId::kUuid ? 16 : Pick(9);
        std::string s;
        for (int i = 0; i < len; ++i) s.push_back(static_cast<char>(rng_()));
        c->AppendBytes(s);
        break;
      }
      case TypeId::kStruct:
        for (int i = 0; i < c->num_children(); ++i) {
          Fill(c->mutable_child(i), !t.fields()[i].required);
        }
        c->FinishNested();
        break;
      case TypeId::kList:
      case TypeId::kMap: {
        for (int n = Pick(4); n > 0; --n) {
          if (t.id() == TypeId::kMap) {
            // Distinct keys are not required by the decoder, but keep them valid.
            Fill(c->mutable_child(0), false);
            Fill(c->mutable_child(1), !t.fields()[1].required);
          } else {
            Fill(c->mutable_child(0), !t.fields()[0].required);
          }
        }
        c->FinishNested();
        break;
      }
    }
  }

 private:
  int Pick(int n) { return static_cast<int>(rng_() % n); }
  std::mt19937_64 rng_;
};

TEST(JsonDecoder, RoundTripsAppendJsonRowOnRandomData) {
  auto schema = MakeSchema(
      "b BOOLEAN, i INT, l BIGINT NOT NULL, f FLOAT, d DOUBLE, m DECIMAL(9,2), "
      "big DECIMAL(38,10), dt DATE, t TIME, ts TIMESTAMP, tz TIMESTAMPTZ, tn TIMESTAMP_NS, "
      "tzn TIMESTAMPTZ_NS, s STRING, bin BINARY, fx FIXED(3), u UUID, "
      "li ARRAY<DOUBLE>, ms MAP<STRING, ARRAY<INT>>, mi MAP<BIGINT, STRING>, "
      "st STRUCT<a INT NOT NULL, b STRUCT<c STRING, d ARRAY<STRUCT<e DATE>>>>");
  Batch original = Batch::Make(schema);
  RandomRows gen(42);
  const int kRows = 3000;
  for (int r = 0; r < kRows; ++r) {
    for (size_t c = 0; c < original.columns.size(); ++c) {
      gen.Fill(&original.columns[c], !schema->fields[c].required);
    }
  }
  std::string text;
  for (int r = 0; r < kRows; ++r) {
    AppendJsonRow(original, r, &text);
    text.push_back('\n');
  }
  ASSERT_OK_AND_ASSIGN(auto dec, JsonDecoder::Make(schema));
  Batch decoded = Batch::Make(schema);
  ASSERT_OK(dec->DecodeLines(text, 1, &decoded));
  ASSERT_EQ(decoded.num_rows(), kRows);
  for (int r = 0; r < kRows; ++r) {
    for (size_t c = 0; c < original.columns.size(); ++c) {
      std::string d = Diff(original.columns[c], decoded.columns[c], r, r);
      ASSERT_EQ(d, "") << "row " << r << " column " << schema->fields[c].name;
    }
  }
}

}  // namespace
}  // namespace sluice
