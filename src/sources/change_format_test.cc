// Change formats, on messages written by hand from Debezium's documented
// event formats (PostgreSQL, MySQL, SQL Server connectors; the JSON converter
// with and without schemas) and Kafka's upsert convention.
#include "sources/change_format.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "common/testing.h"

namespace sluice::sources {
namespace {

using Kind = Change::Kind;

Change ParseOk(ChangeFormat format, std::optional<std::string_view> value,
               std::string_view key = "") {
  ChangeParser p(format);
  Change c;
  Status st = p.Parse(value, key, &c);
  EXPECT_TRUE(st.ok()) << st.ToString();
  // The image stays valid only until the next parse: copy it for the caller.
  static thread_local std::string image;
  image.assign(c.image);
  c.image = image;
  return c;
}

Status ParseError(ChangeFormat format, std::optional<std::string_view> value,
                  std::string_view key = "") {
  ChangeParser p(format);
  Change c;
  return p.Parse(value, key, &c);
}

constexpr std::string_view kPostgresInsert = R"({
  "before": null,
  "after": {"id": 1, "first_name": "Anne", "last_name": "Kretchmar", "email": "annek@noanswer.org"},
  "source": {"version": "2.5.0.Final", "connector": "postgresql", "name": "PostgreSQL_server",
             "ts_ms": 1559033904863, "snapshot": "false", "db": "postgres",
             "sequence": "[\"24023119\",\"24023128\"]", "schema": "public", "table": "customers",
             "txId": 555, "lsn": 24023128, "xmin": null},
  "op": "c", "ts_ms": 1559033904863})";

TEST(ChangeFormatTest, DebeziumCreateUpsertsTheAfterImageAtItsLogPosition) {
  Change c = ParseOk(ChangeFormat::kDebezium, kPostgresInsert);
  EXPECT_EQ(c.kind, Kind::kUpsert);
  EXPECT_EQ(
      c.image,
      R"({"id": 1, "first_name": "Anne", "last_name": "Kretchmar", "email": "annek@noanswer.org"})");
  EXPECT_EQ(c.position, "00000000000024023119/00000000000024023128");
  EXPECT_FALSE(c.snapshot);
}

TEST(ChangeFormatTest, DebeziumUpdateUpsertsAfterAndDeleteTakesTheKeyOfBefore) {
  Change u = ParseOk(ChangeFormat::kDebezium, R"({"before": {"id": 1, "first_name": "Anne"},
    "after": {"id": 1, "first_name": "Anne Marie"},
    "source": {"connector": "postgresql", "snapshot": "false", "sequence": "[\"24023128\",\"24023200\"]", "lsn": 24023200},
    "op": "u", "ts_ms": 1465581029523})");
  EXPECT_EQ(u.kind, Kind::kUpsert);
  EXPECT_EQ(u.image, R"({"id": 1, "first_name": "Anne Marie"})");
  // Default REPLICA IDENTITY: before holds the key's columns only.
  Change d = ParseOk(ChangeFormat::kDebezium, R"({"before": {"id": 1, "first_name": null},
    "after": null, "source": {"connector": "postgresql", "sequence": "[\"24023200\",\"24023320\"]"},
    "op": "d", "ts_ms": 1465581902461})");
  EXPECT_EQ(d.kind, Kind::kDelete);
  EXPECT_EQ(d.image, R"({"id": 1, "first_name": null})");
  EXPECT_LT(u.position, d.position);
}

TEST(ChangeFormatTest, DebeziumWithTheConvertersSchemaWrapperReadsThePayload) {
  Change c = ParseOk(ChangeFormat::kDebezium, R"({"schema": {"type": "struct", "fields": [
      {"type": "struct", "fields": [{"type": "int32", "optional": false, "field": "id"}],
       "optional": true, "name": "dbserver1.inventory.customers.Value", "field": "before"}],
      "optional": false, "name": "dbserver1.inventory.customers.Envelope"},
    "payload": {"before": null, "after": {"id": 1004, "email": "annek@noanswer.org"},
      "source": {"version": "2.5.0.Final", "connector": "mysql", "name": "mysql-server-1",
                 "ts_ms": 1465491411000, "snapshot": "false", "db": "inventory", "table": "customers",
                 "server_id": 223344, "gtid": null, "file": "mysql-bin.000003", "pos": 484, "row": 0,
                 "thread": 7, "query": null},
      "op": "c", "ts_ms": 1465491411815}})");
  EXPECT_EQ(c.kind, Kind::kUpsert);
  EXPECT_EQ(c.image, R"({"id": 1004, "email": "annek@noanswer.org"})");
  EXPECT_EQ(c.position, "mysql-bin.000003/00000000000000000484/00000000000000000000");
}

// With schemas on, the JSON converter writes temporal columns as epoch
// integers of the precision the schema names, and decimals as base64 bytes:
// they come out as the text the JSON reader reads exactly.
constexpr std::string_view kEncodedValuesSchema = R"({"type": "struct", "fields": [
    {"type": "struct", "field": "after", "optional": true, "name": "pg.public.orders.Value",
     "fields": [
      {"type": "int32", "optional": false, "field": "id"},
      {"type": "int64", "optional": true, "name": "io.debezium.time.Timestamp", "version": 1,
       "field": "created_at"},
      {"type": "int64", "optional": true, "name": "io.debezium.time.MicroTimestamp",
       "field": "updated_at"},
      {"type": "int64", "optional": true, "name": "io.debezium.time.NanoTimestamp",
       "field": "seen_at"},
      {"type": "int32", "optional": true, "name": "io.debezium.time.Date", "field": "birthday"},
      {"type": "int32", "optional": true, "name": "io.debezium.time.Time", "field": "opens"},
      {"type": "int64", "optional": true, "name": "io.debezium.time.MicroTime", "field": "closes"},
      {"type": "bytes", "optional": true, "name": "org.apache.kafka.connect.data.Decimal",
       "parameters": {"scale": "2", "connect.decimal.precision": "10"}, "field": "price"},
      {"type": "bytes", "optional": true, "name": "org.apache.kafka.connect.data.Decimal",
       "parameters": {"scale": "2"}, "field": "refund"},
      {"type": "struct", "optional": true, "name": "io.debezium.data.VariableScaleDecimal",
       "fields": [{"type": "int32", "field": "scale"}, {"type": "bytes", "field": "value"}],
       "field": "weight"},
      {"type": "string", "optional": true, "name": "io.debezium.time.ZonedTimestamp",
       "field": "shipped_at"}]}],
  "name": "pg.public.orders.Envelope"})";

std::string EncodedEvent(std::string_view after) {
  return fmt::format(R"({{"schema": {}, "payload": {{"before": null, "after": {}, "op": "c",
      "source": {{"connector": "postgresql", "sequence": "[null,\"23\"]"}}}}}})",
                     kEncodedValuesSchema, after);
}

TEST(ChangeFormatTest, DebeziumValuesTheSchemaNamesAsEncodingsAreDecoded) {
  Change c = ParseOk(ChangeFormat::kDebezium, EncodedEvent(R"({"id": 7,
      "created_at": 1559033904863, "updated_at": 1559033904863123,
      "seen_at": 1559033904863123456, "birthday": 18000, "opens": 32400000,
      "closes": 72000000001, "price": "MDk=", "refund": "z8c=",
      "weight": {"scale": 3, "value": "AeJA"}, "shipped_at": "2019-05-28T08:58:24.863Z"})"));
  ASSERT_EQ(c.kind, Kind::kUpsert);
  auto row = nlohmann::json::parse(c.image);
  EXPECT_EQ(row["id"], 7);
  EXPECT_EQ(row["created_at"], "2019-05-28T08:58:24.863000");
  EXPECT_EQ(row["updated_at"], "2019-05-28T08:58:24.863123");
  EXPECT_EQ(row["seen_at"], "2019-05-28T08:58:24.863123456");
  EXPECT_EQ(row["birthday"], 18000);  // days: read as they are
  EXPECT_EQ(row["opens"], "09:00:00.000000");
  EXPECT_EQ(row["closes"], "20:00:00.000001");
  EXPECT_EQ(row["price"], "123.45");
  EXPECT_EQ(row["refund"], "-123.45");
  EXPECT_EQ(row["weight"], "123.456");
  EXPECT_EQ(row["shipped_at"], "2019-05-28T08:58:24.863Z");
  // Nulls stay null; an event without the encoded columns is read as it is.
  Change n = ParseOk(ChangeFormat::kDebezium, EncodedEvent(R"({"id": 8, "price": null})"));
  EXPECT_EQ(nlohmann::json::parse(n.image), nlohmann::json::parse(R"({"id": 8, "price": null})"));
  // A value that does not decode fails the record, naming the column.
  Status bad = ParseError(ChangeFormat::kDebezium, EncodedEvent(R"({"id": 9, "price": "!!"})"));
  EXPECT_EQ(bad.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.message().find("price"), std::string::npos) << bad.ToString();
  bad = ParseError(ChangeFormat::kDebezium, EncodedEvent(R"({"id": 9, "opens": 90000000})"));
  EXPECT_NE(bad.message().find("opens"), std::string::npos) << bad.ToString();
  // The flattened row (ExtractNewRecordState) with its own row schema.
  Change flat = ParseOk(ChangeFormat::kUpsert, R"({"schema": {"type": "struct", "fields": [
      {"type": "int64", "name": "org.apache.kafka.connect.data.Timestamp", "field": "ts"}]},
      "payload": {"ts": 0}})");
  EXPECT_EQ(nlohmann::json::parse(flat.image)["ts"], "1970-01-01T00:00:00.000000");
  // The databases' sentinel dates fit; values past any day or time do not,
  // and malformed base64 is refused rather than read as a wrong number.
  Change far = ParseOk(ChangeFormat::kDebezium,
                       EncodedEvent(R"({"id": 10, "created_at": 253402300799000})"));
  EXPECT_EQ(nlohmann::json::parse(far.image)["created_at"], "9999-12-31T23:59:59.000000");
  for (std::string_view after : {R"({"id": 11, "opens": 9223372036854775})",
                                 R"({"id": 11, "created_at": 9223372036854775807})",
                                 R"({"id": 11, "price": "Q=Q="})", R"({"id": 11, "price": "Q==="})",
                                 R"({"id": 11, "weight": {"scale": 4294967298, "value": "AeJA"}})",
                                 R"({"id": 11, "closes": 18446744073709551615})"}) {
    EXPECT_EQ(ParseError(ChangeFormat::kDebezium, EncodedEvent(after)).code(),
              StatusCode::kInvalidArgument)
        << after;
  }
}

TEST(ChangeFormatTest, ChangesBelowTheAppliedPositionAreReplays) {
  constexpr std::string_view kRead = R"({"before": null, "after": {"id": 7},
    "source": {"connector": "mysql", "snapshot": "true", "file": "mysql-bin.000003", "pos": 154, "row": 0},
    "op": "r", "ts_ms": 1486500577691})";
  Change read = ParseOk(ChangeFormat::kDebezium, kRead);
  EXPECT_TRUE(read.snapshot);
  const std::string later = "mysql-bin.000004/00000000000000000100/00000000000000000000";
  // Below the position applied: a replay (a snapshot read included: sent
  // again after rows changed, it would bring old values back)...
  EXPECT_TRUE(ChangeReplayed(later, read.position));
  // ...at exactly it, not (a key update is a delete and a create at one
  // position; a snapshot's reads share one), nor later, nor without one.
  EXPECT_FALSE(ChangeReplayed(read.position, read.position));
  EXPECT_FALSE(ChangeReplayed(read.position, later));
  EXPECT_FALSE(ChangeReplayed(read.position, ""));
  EXPECT_FALSE(ChangeReplayed("", read.position));
  std::string applied;
  AdvanceChangePosition(read.position, &applied);
  EXPECT_EQ(applied, read.position);
  AdvanceChangePosition(later, &applied);
  EXPECT_EQ(applied, later);
  AdvanceChangePosition(read.position, &applied);  // never backwards
  EXPECT_EQ(applied, later);
  AdvanceChangePosition("", &applied);
  EXPECT_EQ(applied, later);
}

TEST(ChangeFormatTest, DebeziumSqlServerPositionsOrderByCommitThenChange) {
  auto event = [](const char* commit, const char* change, int serial) {
    return ParseOk(ChangeFormat::kDebezium,
                   fmt::format(R"({{"before": null, "after": {{"id": 1}}, "source": {{
                     "connector": "sqlserver", "snapshot": "false", "change_lsn": "{}",
                     "commit_lsn": "{}", "event_serial_no": {}}}, "op": "c", "ts_ms": 1}})",
                               change, commit, serial))
        .position;
  };
  // Within a commit, by change; across commits, by commit (a transaction
  // that began first but committed later has the lower change_lsn).
  EXPECT_LT(event("00000027:00000758:0005", "00000027:00000758:0003", 1),
            event("00000027:00000758:0005", "00000027:00000758:0004", 1));
  EXPECT_LT(event("00000027:00000758:0005", "00000027:00000758:0004", 1),
            event("00000027:00000900:0002", "00000027:00000700:0001", 1));
  EXPECT_LT(event("00000027:00000758:0005", "00000027:00000758:0004", 1),
            event("00000027:00000758:0005", "00000027:00000758:0004", 2));
}

TEST(ChangeFormatTest, PostgresEventsWithoutASequenceHaveNoPosition) {
  // Their lsn alone is not in stream order across transactions.
  Change c = ParseOk(ChangeFormat::kDebezium, R"({"before": null, "after": {"id": 1},
    "source": {"connector": "postgresql", "lsn": 28581784, "txId": 644, "snapshot": false},
    "op": "c", "ts_ms": 1601213844598})");
  EXPECT_EQ(c.kind, Kind::kUpsert);
  EXPECT_EQ(c.position, "");
  EXPECT_FALSE(c.snapshot);
}

TEST(ChangeFormatTest, DebeziumTombstonesChangeNothing) {
  EXPECT_EQ(ParseOk(ChangeFormat::kDebezium, std::nullopt, R"({"id": 1})").kind, Kind::kNone);
  EXPECT_EQ(ParseOk(ChangeFormat::kDebezium, "null").kind, Kind::kNone);
  EXPECT_EQ(
      ParseOk(ChangeFormat::kDebezium, R"({"schema": {"type": "struct"}, "payload": null})").kind,
      Kind::kNone);
}

TEST(ChangeFormatTest, DebeziumEventsThatAreNotRowChangesAreErrors) {
  ASSERT_ERROR(ParseError(ChangeFormat::kDebezium, R"({"before": null, "after": null,
    "source": {}, "op": "t", "ts_ms": 1})"),
               StatusCode::kInvalidArgument, "op \"t\" is not a row change");
  ASSERT_ERROR(ParseError(ChangeFormat::kDebezium, R"({"after": {"id": 1}})"),
               StatusCode::kInvalidArgument, "has no op");
  ASSERT_ERROR(ParseError(ChangeFormat::kDebezium, R"({"op": "d", "before": null})"),
               StatusCode::kInvalidArgument, "without a before image");
  ASSERT_ERROR(ParseError(ChangeFormat::kDebezium, R"({"op": "u", "before": {"id": 1}})"),
               StatusCode::kInvalidArgument, "without an after image");
  ASSERT_ERROR(ParseError(ChangeFormat::kDebezium, R"({"op": "c", "after": {"id": 1)"),
               StatusCode::kInvalidArgument, "the change event");
  ASSERT_ERROR(ParseError(ChangeFormat::kDebezium, R"([1, 2])"), StatusCode::kInvalidArgument,
               "not a JSON object");
  ASSERT_ERROR(ParseError(ChangeFormat::kUpsert, R"({"id": 1} {"id": 2})"),
               StatusCode::kInvalidArgument, "trailing content after the object");
  ASSERT_ERROR(ParseError(ChangeFormat::kDebezium, R"({"op": "c", "after": {"id": 1},
    "source": {"sequence": "[\"12\"]"}})"),
               StatusCode::kInvalidArgument, "source.sequence has 1 LSNs");
  ASSERT_ERROR(ParseError(ChangeFormat::kDebezium, R"({"op": "c", "after": {"id": 1},
    "source": {"file": "mysql-bin.000001", "pos": -3}})"),
               StatusCode::kInvalidArgument, "source.pos is -3");
}

TEST(ChangeFormatTest, UpsertRowsReplaceAndTombstonesDeleteTheirKey) {
  Change row = ParseOk(ChangeFormat::kUpsert, R"({"id": 5, "name": "x"})", R"({"id": 5})");
  EXPECT_EQ(row.kind, Kind::kUpsert);
  EXPECT_EQ(row.image, R"({"id": 5, "name": "x"})");
  EXPECT_EQ(row.position, "");
  Change tomb = ParseOk(ChangeFormat::kUpsert, std::nullopt, R"({"id": 5})");
  EXPECT_EQ(tomb.kind, Kind::kDelete);
  EXPECT_EQ(tomb.image, R"({"id": 5})");
  // The key in the converter's wrapper, and the null literal as a value.
  Change wrapped = ParseOk(ChangeFormat::kUpsert, "null",
                           R"({"schema": {"type": "struct"}, "payload": {"id": 6}})");
  EXPECT_EQ(wrapped.kind, Kind::kDelete);
  EXPECT_EQ(wrapped.image, R"({"id": 6})");
  // The converter's wrapper with a null payload is a tombstone too.
  Change wrapped_null = ParseOk(
      ChangeFormat::kUpsert, R"({"schema": {"type": "struct"}, "payload": null})", R"({"id": 7})");
  EXPECT_EQ(wrapped_null.kind, Kind::kDelete);
  EXPECT_EQ(wrapped_null.image, R"({"id": 7})");
  ASSERT_ERROR(ParseError(ChangeFormat::kUpsert, std::nullopt, ""), StatusCode::kInvalidArgument,
               "has no key");
  ASSERT_ERROR(
      ParseError(ChangeFormat::kUpsert, std::nullopt, R"({"schema": {}, "payload": null})"),
      StatusCode::kInvalidArgument, "the record's key is null");
  ASSERT_ERROR(ParseError(ChangeFormat::kUpsert, std::nullopt, "42"), StatusCode::kInvalidArgument,
               "the record's key is not a JSON object");
}

// A tombstone's message key with the converter's schema: its encoded key
// columns are decoded as a row's are, so the delete finds the row.
TEST(ChangeFormatTest, AnUpsertKeysEncodedColumnsAreDecodedByItsSchema) {
  const std::string key = R"({"schema": {"type": "struct", "fields": [
      {"type": "int64", "name": "io.debezium.time.MicroTimestamp", "field": "at"},
      {"type": "bytes", "name": "org.apache.kafka.connect.data.Decimal",
       "parameters": {"scale": "2"}, "field": "price"},
      {"type": "int32", "field": "id"}]},
      "payload": {"at": 1559033904863123, "price": "MDk=", "id": 6}})";
  Change tomb = ParseOk(ChangeFormat::kUpsert, std::nullopt, key);
  EXPECT_EQ(tomb.kind, Kind::kDelete);
  auto image = nlohmann::json::parse(tomb.image);
  EXPECT_EQ(image["at"], "2019-05-28T08:58:24.863123");
  EXPECT_EQ(image["price"], "123.45");
  EXPECT_EQ(image["id"], 6);
  // The same key under a wrapped null payload; a key that does not decode
  // fails the record, naming the column.
  Change wrapped = ParseOk(ChangeFormat::kUpsert, R"({"schema": {}, "payload": null})", key);
  EXPECT_EQ(nlohmann::json::parse(wrapped.image), image);
  std::string bad = key;
  bad.replace(bad.find("MDk="), 4, "!!!!");
  ASSERT_ERROR(ParseError(ChangeFormat::kUpsert, std::nullopt, bad), StatusCode::kInvalidArgument,
               "price");
}

TEST(ChangeFormatTest, ImagesAreTheObjectWithoutTheWhitespaceAroundIt) {
  // Found by change_format_fuzz: a key with a leading tab made an image that
  // did not start with '{'.
  Change tomb = ParseOk(ChangeFormat::kUpsert, std::nullopt, "\t{\"id\": 5} \r\n");
  EXPECT_EQ(tomb.kind, Kind::kDelete);
  EXPECT_EQ(tomb.image, R"({"id": 5})");
  Change row = ParseOk(ChangeFormat::kUpsert, "\n  {\"id\": 5}\t", "");
  EXPECT_EQ(row.image, R"({"id": 5})");
  // Whitespace is JSON's: a vertical tab is not.
  ASSERT_ERROR(ParseError(ChangeFormat::kUpsert, std::nullopt, "\v{\"id\": 5}"),
               StatusCode::kInvalidArgument, "key");
}

TEST(ChangeFormatTest, UpsertRowsMarkedDeletedByDebeziumsFlatteningDeleteTheirKey) {
  Change d = ParseOk(ChangeFormat::kUpsert, R"({"id": 5, "name": "x", "__deleted": "true"})");
  EXPECT_EQ(d.kind, Kind::kDelete);
  EXPECT_EQ(d.image, R"({"id": 5, "name": "x", "__deleted": "true"})");
  EXPECT_EQ(ParseOk(ChangeFormat::kUpsert, R"({"id": 5, "__deleted": false})").kind, Kind::kUpsert);
  EXPECT_EQ(ParseOk(ChangeFormat::kUpsert, R"({"id": 5, "__deleted": true})").kind, Kind::kDelete);
  ASSERT_ERROR(ParseError(ChangeFormat::kUpsert, R"({"id": 5, "__deleted": "yes"})"),
               StatusCode::kInvalidArgument, "__deleted is \"yes\"");
}

TEST(ChangeFormatTest, ChangelogRecordsUpsertPlusesAndDeleteMinuses) {
  EXPECT_EQ(ParseOk(ChangeFormat::kChangelog, R"({"_change":"+I","id":1})").kind, Kind::kUpsert);
  EXPECT_EQ(ParseOk(ChangeFormat::kChangelog, R"({"_change":"+U","id":1})").kind, Kind::kUpsert);
  // -U deletes the old row's key (the +U after it upserts the new row).
  Change before = ParseOk(ChangeFormat::kChangelog, R"({"_change":"-U","id":1,"v":2})");
  EXPECT_EQ(before.kind, Kind::kDelete);
  EXPECT_EQ(before.image, R"({"_change":"-U","id":1,"v":2})");
  EXPECT_EQ(ParseOk(ChangeFormat::kChangelog, R"({"_change":"-D","id":1})").kind, Kind::kDelete);
  ASSERT_ERROR(ParseError(ChangeFormat::kChangelog, R"({"id":1})"), StatusCode::kInvalidArgument,
               "_change is missing");
  ASSERT_ERROR(ParseError(ChangeFormat::kChangelog, R"({"_change":"U","id":1})"),
               StatusCode::kInvalidArgument, "_change is \"U\"");
}

TEST(ChangeFormatTest, FormatNamesParse) {
  ASSERT_OK_AND_ASSIGN(ChangeFormat f, ParseChangeFormat("debezium"));
  EXPECT_EQ(f, ChangeFormat::kDebezium);
  EXPECT_STREQ(ChangeFormatName(f), "DEBEZIUM");
  ASSERT_ERROR(ParseChangeFormat("avro"), StatusCode::kInvalidArgument, "JSON, UPSERT, DEBEZIUM");
}

}  // namespace
}  // namespace sluice::sources
