// Creating tables and committing to them through the REST catalog: the spec's
// requirements and updates, staged creates, multi-table transactions,
// namespace properties, metrics reports, and concurrent committers.
#include <atomic>
#include <random>
#include <thread>

#include "rest/rest_test_util.h"

namespace sluice::rest {
namespace {

constexpr const char* kSchema = R"({"type":"struct","schema-id":0,"fields":[
    {"id":7,"name":"id","required":true,"type":"long"},
    {"id":9,"name":"ts","required":false,"type":"timestamptz"},
    {"id":4,"name":"kind","required":false,"type":"string"}]})";

class RestCommitTest : public RestCatalogTest {
 protected:
  json Create(const std::string& name, json extra = json::object()) {
    json req = {{"name", name}, {"schema", json::parse(kSchema)}};
    req.update(extra);
    auto r = Client().Post("/v1/namespaces/db/tables", req.dump(), "application/json");
    EXPECT_EQ(r->status, 200) << r->body;
    return Body(r);
  }
  httplib::Result Commit(const std::string& table, const json& body) {
    return Client().Post("/v1/namespaces/db/tables/" + table, body.dump(), "application/json");
  }
  json Load(const std::string& table) {
    return Body(Client().Get("/v1/namespaces/db/tables/" + table))["metadata"];
  }
  // A snapshot of `table` (whose files it lists) to add to another table as
  // the child of `parent` with sequence number `seq`.
  static json SnapshotFrom(const catalog::Table& source, int64_t id, std::optional<int64_t> parent,
                           int64_t seq) {
    const iceberg::Snapshot* s = source.metadata().current_snapshot();
    json snap = {{"snapshot-id", id},
                 {"sequence-number", seq},
                 {"timestamp-ms", s->timestamp_ms},
                 {"manifest-list", s->manifest_list},
                 {"summary", {{"operation", "append"}}},
                 {"schema-id", 0}};
    if (parent) snap["parent-snapshot-id"] = *parent;
    return snap;
  }
  static json AppendCommit(const json& metadata, const json& snapshot) {
    json main = metadata.contains("current-snapshot-id") &&
                        !metadata["current-snapshot-id"].is_null() &&
                        metadata["current-snapshot-id"] != -1
                    ? metadata["current-snapshot-id"]
                    : json(nullptr);
    return {{"requirements",
             {{{"type", "assert-table-uuid"}, {"uuid", metadata["table-uuid"]}},
              {{"type", "assert-ref-snapshot-id"}, {"ref", "main"}, {"snapshot-id", main}}}},
            {"updates",
             {{{"action", "add-snapshot"}, {"snapshot", snapshot}},
              {{"action", "set-snapshot-ref"},
               {"ref-name", "main"},
               {"type", "branch"},
               {"snapshot-id", snapshot["snapshot-id"]}}}}};
  }
};

TEST_F(RestCommitTest, CreatingATableAssignsFreshIdsAndWritesItsFirstMetadata) {
  json spec = {
      {"spec-id", 0},
      {"fields",
       {{{"name", "ts_day"}, {"transform", "day"}, {"source-id", 9}, {"field-id", 1000}}}}};
  json order = {{"order-id", 1},
                {"fields",
                 {{{"source-id", 4},
                   {"transform", "identity"},
                   {"direction", "desc"},
                   {"null-order", "nulls-last"}}}}};
  json made = Create("clicks", {{"partition-spec", spec},
                                {"write-order", order},
                                {"properties", {{"format-version", "3"}, {"owner", "ann"}}}});
  json md = made["metadata"];
  EXPECT_EQ(md["format-version"], 3);
  EXPECT_EQ(md["schemas"][0]["fields"][0]["id"], 1);  // ids 7, 9, 4 become 1, 2, 3
  EXPECT_EQ(md["schemas"][0]["fields"][2]["id"], 3);
  EXPECT_EQ(md["partition-specs"][0]["fields"][0]["source-id"], 2);
  EXPECT_EQ(md["sort-orders"][1]["fields"][0]["source-id"], 3);
  EXPECT_EQ(md["properties"]["owner"], "ann");
  EXPECT_FALSE(md["properties"].contains("format-version"));
  // The library reads what the catalog now points at.
  ASSERT_OK_AND_ASSIGN(auto table, catalog::Table::Load(*catalog_, *io_, {{"db"}, "clicks"}));
  EXPECT_EQ(made["metadata-location"], table->metadata_location());
  EXPECT_EQ(table->metadata().partition_specs[0].fields[0].name, "ts_day");
  EXPECT_EQ(Type(Client().Post("/v1/namespaces/db/tables",
                               json{{"name", "clicks"}, {"schema", json::parse(kSchema)}}.dump(),
                               "application/json")),
            "AlreadyExistsException");
  // Refused: a source column the schema lacks, a location outside the warehouse.
  json bad_spec = {{"fields", {{{"name", "x"}, {"transform", "identity"}, {"source-id", 99}}}}};
  json req = {{"name", "bad"}, {"schema", json::parse(kSchema)}, {"partition-spec", bad_spec}};
  EXPECT_EQ(Type(Client().Post("/v1/namespaces/db/tables", req.dump(), "application/json")),
            "BadRequestException");
  req = {{"name", "bad"}, {"schema", json::parse(kSchema)}, {"location", "/etc/sluice"}};
  EXPECT_EQ(Type(Client().Post("/v1/namespaces/db/tables", req.dump(), "application/json")),
            "BadRequestException");
  req["location"] = dir_.string() + "/db/../../escape";
  EXPECT_EQ(Type(Client().Post("/v1/namespaces/db/tables", req.dump(), "application/json")),
            "BadRequestException");
  EXPECT_EQ(Type(Client().Post("/v1/namespaces/nope/tables", req.dump(), "application/json")),
            "NoSuchNamespaceException");
}

TEST_F(RestCommitTest, AStagedCreateWritesNothingUntilItsAssertCreateCommit) {
  json staged = Create("ctas", {{"stage-create", true}});
  EXPECT_FALSE(staged.contains("metadata-location"));
  EXPECT_EQ(Client().Head("/v1/namespaces/db/tables/ctas")->status, 404);
  json md = staged["metadata"];
  // What a Java client's create transaction sends, with a first snapshot
  // (here one of another table's, whose files it lists).
  auto events = MakeTable("");
  ASSERT_OK(events->Append({File("a.parquet", 10), File("b.parquet", 5)}).status());
  json commit = {
      {"requirements", {{{"type", "assert-create"}}}},
      {"updates",
       {{{"action", "assign-uuid"}, {"uuid", md["table-uuid"]}},
        {{"action", "upgrade-format-version"}, {"format-version", 2}},
        {{"action", "add-schema"}, {"schema", md["schemas"][0]}, {"last-column-id", 3}},
        {{"action", "set-current-schema"}, {"schema-id", -1}},
        {{"action", "add-spec"}, {"spec", md["partition-specs"][0]}},
        {{"action", "set-default-spec"}, {"spec-id", -1}},
        {{"action", "add-sort-order"}, {"sort-order", md["sort-orders"][0]}},
        {{"action", "set-default-sort-order"}, {"sort-order-id", -1}},
        {{"action", "set-location"}, {"location", md["location"]}},
        {{"action", "set-properties"}, {"updates", {{"created-by", "test"}}}},
        {{"action", "add-snapshot"}, {"snapshot", SnapshotFrom(*events, 42, std::nullopt, 1)}},
        {{"action", "set-snapshot-ref"},
         {"ref-name", "main"},
         {"type", "branch"},
         {"snapshot-id", 42}}}}};
  auto r = Commit("ctas", commit);
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(Body(r)["metadata"]["table-uuid"], md["table-uuid"]);
  ASSERT_OK_AND_ASSIGN(auto table, catalog::Table::Load(*catalog_, *io_, {{"db"}, "ctas"}));
  EXPECT_EQ(table->metadata().current_snapshot_id, 42);
  EXPECT_EQ(table->metadata().properties.at("created-by"), "test");
  ASSERT_OK_AND_ASSIGN(auto live, table->LiveFiles(42));
  EXPECT_EQ(live.size(), 2u);
  // A second create loses: the table exists now.
  EXPECT_EQ(Type(Commit("ctas", commit)), "CommitFailedException");
}

TEST_F(RestCommitTest, CommitsCheckTheirRequirementsAndApplyTheirUpdates) {
  auto events = MakeTable("");
  ASSERT_OK(events->Append({File("a.parquet", 10)}).status());
  json md = Create("mirror")["metadata"];
  auto r = Commit("mirror", AppendCommit(md, SnapshotFrom(*events, 100, std::nullopt, 1)));
  ASSERT_EQ(r->status, 200) << r->body;
  json after = Body(r);
  EXPECT_EQ(after["metadata"]["current-snapshot-id"], 100);
  EXPECT_EQ(after["metadata-location"], *catalog_->LoadTable({{"db"}, "mirror"}));
  EXPECT_EQ(after["metadata"]["metadata-log"].size(), 1u);  // the create's file
  // The same commit again: main moved, so its requirement fails (409), and
  // nothing changes.
  EXPECT_EQ(Type(Commit("mirror", AppendCommit(md, SnapshotFrom(*events, 101, std::nullopt, 1)))),
            "CommitFailedException");
  json wrong_uuid = {{"requirements", {{{"type", "assert-table-uuid"}, {"uuid", "nope"}}}},
                     {"updates", json::array()}};
  EXPECT_EQ(Type(Commit("mirror", wrong_uuid)), "CommitFailedException");
  json stale_schema = {
      {"requirements", {{{"type", "assert-current-schema-id"}, {"current-schema-id", 5}}}},
      {"updates", json::array()}};
  EXPECT_EQ(Type(Commit("mirror", stale_schema)), "CommitFailedException");
  EXPECT_EQ(Load("mirror")["current-snapshot-id"], 100);

  // A snapshot planned against an older table (its sequence number is not
  // above the table's): 409, the client plans again.
  json older = AppendCommit(Load("mirror"), SnapshotFrom(*events, 102, 100, 1));  // seq 1 again
  EXPECT_EQ(Type(Commit("mirror", older)), "CommitFailedException");
  // Updates that cannot apply are the client's error (400), and change nothing.
  json dangling = {{"requirements", json::array()},
                   {"updates",
                    {{{"action", "set-snapshot-ref"},
                      {"ref-name", "audit"},
                      {"type", "tag"},
                      {"snapshot-id", 999}}}}};
  EXPECT_EQ(Type(Commit("mirror", dangling)), "BadRequestException");
  json unknown = {{"requirements", json::array()}, {"updates", {{{"action", "make-it-fast"}}}}};
  EXPECT_EQ(Type(Commit("mirror", unknown)), "BadRequestException");
  json stats = {{"requirements", json::array()},
                {"updates", {{{"action", "set-statistics"}, {"statistics", json::object()}}}}};
  EXPECT_EQ(Type(Commit("mirror", stats)), "BadRequestException") << "no path, no snapshot";
  EXPECT_EQ(Type(Commit("nope", stats)), "NoSuchTableException");
  json keys = {{"requirements", json::array()},
               {"updates", {{{"action", "add-encryption-key"}, {"key", json::object()}}}}};
  EXPECT_EQ(Type(Commit("mirror", keys)), "UnsupportedOperationException");

  // Statistics files (ANALYZE): kept as sent, one per snapshot, removable.
  auto stats_file = [](int64_t snapshot, const std::string& path) {
    return json{{"snapshot-id", snapshot},
                {"statistics-path", path},
                {"file-size-in-bytes", 413},
                {"file-footer-size-in-bytes", 42},
                {"blob-metadata",
                 {{{"type", "apache-datasketches-theta-v1"},
                   {"snapshot-id", snapshot},
                   {"sequence-number", 1},
                   {"fields", {1}},
                   {"properties", {{"ndv", "10"}}}}}}};
  };
  auto set_stats = [&](const json& file) {
    return json{{"requirements", json::array()},
                {"updates", {{{"action", "set-statistics"}, {"statistics", file}}}}};
  };
  ASSERT_EQ(Commit("mirror", set_stats(stats_file(100, "/w/a.stats")))->status, 200);
  r = Commit("mirror", set_stats(stats_file(100, "/w/b.stats")));  // replaces a.stats
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(Load("mirror")["statistics"], json::array({stats_file(100, "/w/b.stats")}));
  EXPECT_EQ(Type(Commit("mirror", set_stats(stats_file(555, "/w/c.stats")))), "BadRequestException")
      << "snapshot 555 does not exist";
  json no_footer = stats_file(100, "/w/d.stats");
  no_footer.erase("file-footer-size-in-bytes");
  EXPECT_EQ(Type(Commit("mirror", set_stats(no_footer))), "BadRequestException")
      << "Java's readers need every required member";
  json empty_blob = stats_file(100, "/w/e.stats");
  empty_blob["blob-metadata"] = json::array({json::object()});
  EXPECT_EQ(Type(Commit("mirror", set_stats(empty_blob))), "BadRequestException")
      << "and every blob's";
  json partition_stats = {
      {"requirements", json::array()},
      {"updates",
       {{{"action", "set-partition-statistics"},
         {"partition-statistics",
          {{"snapshot-id", 100}, {"statistics-path", "/w/p.stats"}, {"file-size-in-bytes", 7}}}}}}};
  ASSERT_EQ(Commit("mirror", partition_stats)->status, 200);
  EXPECT_EQ(Load("mirror")["partition-statistics"][0]["statistics-path"], "/w/p.stats");
  json unstats = {{"requirements", json::array()},
                  {"updates",
                   {{{"action", "remove-statistics"}, {"snapshot-id", 100}},
                    {{"action", "remove-partition-statistics"}, {"snapshot-id", 100}}}}};
  ASSERT_EQ(Commit("mirror", unstats)->status, 200);
  EXPECT_FALSE(Load("mirror").contains("statistics"));
  EXPECT_FALSE(Load("mirror").contains("partition-statistics"));

  // Schema evolution, a tag, properties; then removing the tag.
  json evolve = {
      {"requirements",
       {{{"type", "assert-last-assigned-field-id"}, {"last-assigned-field-id", 3}},
        {{"type", "assert-current-schema-id"}, {"current-schema-id", 0}}}},
      {"updates",
       {{{"action", "add-schema"},
         {"schema",
          {{"type", "struct"},
           {"schema-id", 1},
           {"fields",
            {{{"id", 1}, {"name", "id"}, {"required", true}, {"type", "long"}},
             {{"id", 2}, {"name", "ts"}, {"required", false}, {"type", "timestamptz"}},
             {{"id", 3}, {"name", "kind"}, {"required", false}, {"type", "string"}},
             {{"id", 4}, {"name", "amount"}, {"required", false}, {"type", "double"}}}}}}},
        {{"action", "set-current-schema"}, {"schema-id", -1}},
        {{"action", "set-snapshot-ref"}, {"ref-name", "v1"}, {"type", "tag"}, {"snapshot-id", 100}},
        {{"action", "set-properties"}, {"updates", {{"a", "1"}, {"b", "2"}}}},
        {{"action", "remove-properties"}, {"removals", {"a"}}}}}};
  r = Commit("mirror", evolve);
  ASSERT_EQ(r->status, 200) << r->body;
  ASSERT_OK_AND_ASSIGN(auto table, catalog::Table::Load(*catalog_, *io_, {{"db"}, "mirror"}));
  EXPECT_EQ(table->metadata().current_schema_id, 1);
  EXPECT_EQ(table->metadata().last_column_id, 4);
  EXPECT_FALSE(table->metadata().refs.at("v1").is_branch);
  EXPECT_EQ(table->metadata().properties.count("a"), 0u);
  EXPECT_EQ(table->metadata().properties.at("b"), "2");
  json untag = {{"requirements", json::array()},
                {"updates", {{{"action", "remove-snapshot-ref"}, {"ref-name", "v1"}}}}};
  ASSERT_EQ(Commit("mirror", untag)->status, 200);
  EXPECT_FALSE(Load("mirror")["refs"].contains("v1"));
}

TEST_F(RestCommitTest, MalformedValuesAreBadRequestsNotCrashes) {
  Create("t");
  auto c = Client();
  json staged = {{"name", "u"}, {"schema", json::parse(kSchema)}, {"stage-create", "yes"}};
  EXPECT_EQ(Type(c.Post("/v1/namespaces/db/tables", staged.dump(), "application/json")),
            "BadRequestException");
  EXPECT_EQ(Type(c.Post("/v1/namespaces/db/tables/t/metrics", R"({"report-type":5})",
                        "application/json")),
            "BadRequestException");
  json bad_schema = {{"requirements", json::array()},
                     {"updates",
                      {{{"action", "add-schema"},
                        {"schema", {{"type", "struct"}, {"schema-id", "x"}, {"fields", 3}}}}}}};
  EXPECT_EQ(Type(Commit("t", bad_schema)), "BadRequestException");
  json bad_ref = {{"requirements", json::array()},
                  {"updates",
                   {{{"action", "set-snapshot-ref"},
                     {"ref-name", "main"},
                     {"type", 7},
                     {"snapshot-id", "one"}}}}};
  EXPECT_EQ(Type(Commit("t", bad_ref)), "BadRequestException");
  EXPECT_EQ(c.Get("/v1/namespaces/db/tables/t")->status, 200);  // still serving
}

TEST_F(RestCommitTest, RemovingATaggedSnapshotOrLoggingBackwardsIsRefused) {
  auto events = MakeTable("");
  ASSERT_OK(events->Append({File("a.parquet", 10)}).status());
  json md = Create("m")["metadata"];
  ASSERT_EQ(Commit("m", AppendCommit(md, SnapshotFrom(*events, 100, std::nullopt, 1)))->status,
            200);
  md = Load("m");
  json later = SnapshotFrom(*events, 101, 100, 2);
  ASSERT_EQ(Commit("m", AppendCommit(md, later))->status, 200);
  json tag = {{"requirements", json::array()},
              {"updates",
               {{{"action", "set-snapshot-ref"},
                 {"ref-name", "keep"},
                 {"type", "tag"},
                 {"snapshot-id", 100}}}}};
  ASSERT_EQ(Commit("m", tag)->status, 200);
  // An expiry planned before the tag: 409, and the snapshot stays.
  json expire = {{"requirements", json::array()},
                 {"updates", {{{"action", "remove-snapshots"}, {"snapshot-ids", {100}}}}}};
  EXPECT_EQ(Type(Commit("m", expire)), "CommitFailedException");
  EXPECT_EQ(Load("m")["snapshots"].size(), 2u);
  // A writer whose clock is an hour behind: its snapshot would make the log
  // run backwards, which Java readers refuse.
  md = Load("m");
  json stale = SnapshotFrom(*events, 102, 101, 3);
  stale["timestamp-ms"] = md["snapshot-log"].back()["timestamp-ms"].get<int64_t>() - 3600000;
  EXPECT_EQ(Type(Commit("m", AppendCommit(md, stale))), "BadRequestException");
}

TEST_F(RestCommitTest, TablesNeverShareALocation) {
  json first = Create("first")["metadata"];
  json req = {
      {"name", "second"}, {"schema", json::parse(kSchema)}, {"location", first["location"]}};
  auto c = Client();
  EXPECT_EQ(Type(c.Post("/v1/namespaces/db/tables", req.dump(), "application/json")),
            "BadRequestException");
  req["location"] = first["location"].get<std::string>() + "/inside";
  EXPECT_EQ(Type(c.Post("/v1/namespaces/db/tables", req.dump(), "application/json")),
            "BadRequestException");
  // A renamed table keeps its location: a new table of the old name gets another.
  ASSERT_EQ(c.Post("/v1/tables/rename",
                   R"({"source":{"namespace":["db"],"name":"first"},
                       "destination":{"namespace":["db"],"name":"moved"}})",
                   "application/json")
                ->status,
            204);
  json again = Create("first")["metadata"];
  EXPECT_NE(again["location"], first["location"]);
  EXPECT_TRUE(
      again["location"].get<std::string>().starts_with(first["location"].get<std::string>() + "-"));
  // Two names for one table's files (registered): purging either is refused.
  ASSERT_OK_AND_ASSIGN(std::string moved, catalog_->LoadTable({{"db"}, "moved"}));
  json reg = {{"name", "alias"}, {"metadata-location", moved}};
  ASSERT_EQ(c.Post("/v1/namespaces/db/register", reg.dump(), "application/json")->status, 200);
  EXPECT_EQ(Type(c.Delete("/v1/namespaces/db/tables/alias?purgeRequested=true")),
            "BadRequestException");
  ASSERT_OK_AND_ASSIGN(bool kept, io_->Exists(moved));
  EXPECT_TRUE(kept);
  EXPECT_EQ(c.Delete("/v1/namespaces/db/tables/alias")->status, 204);  // without purge: fine
}

TEST_F(RestCommitTest, ATransactionCommitsEveryTableOrNone) {
  Create("a");
  Create("b");
  auto change = [](const std::string& table, const json& requirements, const std::string& value) {
    return json{{"identifier", {{"namespace", {"db"}}, {"name", table}}},
                {"requirements", requirements},
                {"updates", {{{"action", "set-properties"}, {"updates", {{"k", value}}}}}}};
  };
  json stale = {{{"type", "assert-default-spec-id"}, {"default-spec-id", 7}}};
  json tx = {{"table-changes", {change("a", json::array(), "1"), change("b", stale, "1")}}};
  auto c = Client();
  EXPECT_EQ(Type(c.Post("/v1/transactions/commit", tx.dump(), "application/json")),
            "CommitFailedException");
  EXPECT_FALSE(Load("a")["properties"].contains("k"));  // a's change did not land either
  tx = {{"table-changes", {change("a", json::array(), "2"), change("b", json::array(), "2")}}};
  auto r = c.Post("/v1/transactions/commit", tx.dump(), "application/json");
  ASSERT_EQ(r->status, 204) << r->body;
  EXPECT_EQ(Load("a")["properties"]["k"], "2");
  EXPECT_EQ(Load("b")["properties"]["k"], "2");
  tx = {{"table-changes", {change("a", json::array(), "3"), change("a", json::array(), "4")}}};
  EXPECT_EQ(Type(c.Post("/v1/transactions/commit", tx.dump(), "application/json")),
            "BadRequestException");
  tx = {{"table-changes", {change("a", json::array(), "3"), change("nope", json::array(), "3")}}};
  EXPECT_EQ(Type(c.Post("/v1/transactions/commit", tx.dump(), "application/json")),
            "NoSuchTableException");
  EXPECT_EQ(Load("a")["properties"]["k"], "2");
}

TEST_F(RestCommitTest, NamespacePropertiesAreUpdatedAndRemoved) {
  auto c = Client();
  ASSERT_EQ(c.Post("/v1/namespaces", R"({"namespace":["ops"],"properties":{"a":"1","b":"2"}})",
                   "application/json")
                ->status,
            200);
  auto r = c.Post("/v1/namespaces/ops/properties",
                  R"({"removals":["a","zz"],"updates":{"b":"3","c":"4"}})", "application/json");
  ASSERT_EQ(r->status, 200) << r->body;
  json j = Body(r);
  EXPECT_EQ(j["updated"], json::parse(R"(["b","c"])"));
  EXPECT_EQ(j["removed"], json::parse(R"(["a"])"));
  EXPECT_EQ(j["missing"], json::parse(R"(["zz"])"));
  EXPECT_EQ(Body(c.Get("/v1/namespaces/ops"))["properties"], json::parse(R"({"b":"3","c":"4"})"));
  EXPECT_EQ(Type(c.Post("/v1/namespaces/ops/properties",
                        R"({"removals":["b"],"updates":{"b":"5"}})", "application/json")),
            "UnprocessableEntityException");
  EXPECT_EQ(Type(c.Post("/v1/namespaces/nope/properties", R"({"updates":{"b":"5"}})",
                        "application/json")),
            "NoSuchNamespaceException");
}

// A commit retried under its Idempotency-Key (its first answer lost) is
// answered as it landed, not refused as a conflict with itself, and lands
// once; the config advertises the keys' lifetime.
TEST_F(RestCommitTest, ACommitRetriedUnderItsIdempotencyKeyLandsOnce) {
  EXPECT_EQ(Body(Client().Get("/v1/config"))["idempotency-key-lifetime"], "PT30M");
  auto events = MakeTable("");
  ASSERT_OK(events->Append({File("a.parquet", 10)}).status());
  json md = Create("mirror")["metadata"];
  const std::string body = AppendCommit(md, SnapshotFrom(*events, 100, std::nullopt, 1)).dump();
  const httplib::Headers key = {{"Idempotency-Key", "0190f2a4-7b3c-7def-8123-456789abcdef"}};
  auto first = Client().Post("/v1/namespaces/db/tables/mirror", key, body, "application/json");
  ASSERT_EQ(first->status, 200) << first->body;
  auto retry = Client().Post("/v1/namespaces/db/tables/mirror", key, body, "application/json");
  ASSERT_EQ(retry->status, 200) << retry->body;
  EXPECT_EQ(retry->get_header_value("Idempotent-Replayed"), "true");
  EXPECT_EQ(Body(retry), Body(first));
  EXPECT_EQ(Load("mirror")["snapshots"].size(), 1u);
  // Without the key the same request is a conflict with the commit it repeats.
  EXPECT_EQ(Type(Commit("mirror", json::parse(body))), "CommitFailedException");
  // The key names that request only.
  auto other = Client().Post(
      "/v1/namespaces/db/tables/mirror", key,
      AppendCommit(Load("mirror"), SnapshotFrom(*events, 101, 100, 2)).dump(), "application/json");
  EXPECT_EQ(other->status, 422);
  EXPECT_EQ(Type(other), "UnprocessableEntityException");
  EXPECT_EQ(Load("mirror")["snapshots"].size(), 1u);
}

TEST_F(RestCommitTest, MetricsReportsAreAcceptedAndCounted) {
  Create("t");
  auto c = Client();
  EXPECT_EQ(c.Post("/v1/namespaces/db/tables/t/metrics",
                   R"({"report-type":"scan-report","table-name":"db.t","snapshot-id":1})",
                   "application/json")
                ->status,
            204);
  EXPECT_EQ(Type(c.Post("/v1/namespaces/db/tables/t/metrics", R"({"report-type":"gossip"})",
                        "application/json")),
            "BadRequestException");
  EXPECT_EQ(Type(c.Post("/v1/namespaces/db/tables/nope/metrics",
                        R"({"report-type":"commit-report"})", "application/json")),
            "NoSuchTableException");
  EXPECT_EQ(handler_->scan_reports(), 1);
  EXPECT_EQ(handler_->commit_reports(), 0);
}

// Four clients append to one table through the catalog at once, each
// reloading and retrying when its requirement fails (409): every snapshot a
// client was told committed is in main's history, which is one unbroken chain.
TEST_F(RestCommitTest, ConcurrentCommittersLoseNothing) {
  auto events = MakeTable("");
  ASSERT_OK(events->Append({File("a.parquet", 10)}).status());
  Create("shared");
  constexpr int kClients = 4, kCommits = 12;
  std::atomic<int64_t> next_id{1000};
  std::atomic<int> conflicts{0};
  std::vector<std::vector<int64_t>> committed(kClients);
  std::vector<std::thread> threads;
  for (int c = 0; c < kClients; ++c) {
    threads.emplace_back([&, c] {
      auto client = Client();
      for (int i = 0; i < kCommits; ++i) {
        int64_t id = next_id++;
        for (int attempt = 0; attempt < 200; ++attempt) {
          json md = Body(client.Get("/v1/namespaces/db/tables/shared"))["metadata"];
          std::optional<int64_t> parent;
          if (md.contains("current-snapshot-id") && md["current-snapshot-id"].is_number() &&
              md["current-snapshot-id"] != -1) {
            parent = md["current-snapshot-id"].get<int64_t>();
          }
          int64_t seq = md["last-sequence-number"].get<int64_t>() + 1;
          auto r = client.Post("/v1/namespaces/db/tables/shared",
                               AppendCommit(md, SnapshotFrom(*events, id, parent, seq)).dump(),
                               "application/json");
          ASSERT_TRUE(r);
          if (r->status == 200) {
            committed[c].push_back(id);
            break;
          }
          ASSERT_EQ(r->status, 409) << r->body;
          ++conflicts;
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  ASSERT_OK_AND_ASSIGN(auto table, catalog::Table::Load(*catalog_, *io_, {{"db"}, "shared"}));
  const auto& md = table->metadata();
  auto chain = md.Ancestry(*md.current_snapshot_id);
  ASSERT_EQ(chain.size(), size_t{kClients * kCommits});
  std::set<int64_t> in_chain;
  for (size_t i = 0; i < chain.size(); ++i) {
    in_chain.insert(chain[i]->snapshot_id);
    EXPECT_EQ(chain[i]->sequence_number, static_cast<int64_t>(chain.size() - i));
  }
  for (const auto& ids : committed) {
    EXPECT_EQ(ids.size(), size_t{kCommits});
    for (int64_t id : ids) EXPECT_TRUE(in_chain.count(id)) << id;
  }
  EXPECT_EQ(md.last_sequence_number, kClients * kCommits);
  std::printf("%d commits by %d clients, %d conflicts answered 409\n", kClients * kCommits,
              kClients, conflicts.load());
}

}  // namespace
}  // namespace sluice::rest
