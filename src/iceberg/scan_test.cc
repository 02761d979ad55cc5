#include "iceberg/scan.h"

#include <fmt/ranges.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "columnar/json_writer.h"
#include "columnar/sql_schema.h"
#include "common/testing.h"
#include "iceberg/data_writer.h"
#include "iceberg/scan_internal.h"
#include "iceberg/table_builder.h"

namespace sluice::iceberg {
namespace {

namespace fs = std::filesystem;

Result<std::vector<std::string>> ScanRows(FileIO& io, std::shared_ptr<const TableMetadata> md,
                                          ScanOptions o, ScanStats* stats = nullptr) {
  ASSIGN_OR_RETURN(auto scan, TableScan::Make(io, std::move(md), std::move(o)));
  std::vector<std::string> rows;
  Batch b;
  while (true) {
    ASSIGN_OR_RETURN(bool more, scan->Next(&b));
    if (!more) break;
    for (int64_t i = 0; i < b.num_rows(); ++i) {
      std::string s;
      AppendJsonRow(b, i, &s);
      rows.push_back(std::move(s));
    }
  }
  if (stats) *stats = scan->stats();
  std::sort(rows.begin(), rows.end());
  return rows;
}

// Every fixture table written by another engine scans; tables without
// delete files return exactly the snapshot's total-records.
TEST(ScanTest, FixtureTables) {
  auto io = MakeLocalFileIO();
  int tables = 0;
  for (const auto& e : fs::recursive_directory_iterator("../shared/fixtures/iceberg")) {
    std::string path = e.path().string();
    if (!e.is_regular_file() || !path.ends_with(".metadata.json")) continue;
    auto md = ParseTableMetadata(testing::ReadFileBytes(path), path);
    if (!md.ok() || !md->current_snapshot()) continue;
    // Only the newest metadata file of each table.
    bool newest = true;
    for (const auto& other : fs::directory_iterator(e.path().parent_path())) {
      std::string o = other.path().filename().string();
      if (o.ends_with(".metadata.json") && o > e.path().filename().string() &&
          o.find("v3-upgraded") == std::string::npos) {
        newest = false;
      }
    }
    if (!newest) continue;
    ScanOptions o;
    o.remaps = {{md->location, e.path().parent_path().parent_path().string()}};
    auto shared = std::make_shared<TableMetadata>(*md);
    auto rows = ScanRows(*io, shared, o);
    if (!rows.ok() && (rows.status().code() == StatusCode::kNotImplemented)) continue;
    if (!rows.ok() && rows.status().code() == StatusCode::kNotFound) continue;  // files not shipped
    ASSERT_TRUE(rows.ok()) << path << ": " << rows.status().ToString();
    const auto& summary = md->current_snapshot()->summary;
    auto get = [&](const char* k) -> int64_t {
      auto it = summary.find(k);
      return it == summary.end() ? -1 : std::stoll(it->second);
    };
    if (get("total-delete-files") == 0 && get("total-records") >= 0) {
      EXPECT_EQ(static_cast<int64_t>(rows->size()), get("total-records")) << path;
    } else if (get("total-records") >= 0) {
      EXPECT_LE(static_cast<int64_t>(rows->size()), get("total-records")) << path;
    }
    ++tables;
  }
  EXPECT_GT(tables, 20);
}

TEST(DeleteFileIndexTest, AFileGetsTheDeletesNamingItItsPartitionsAndGlobalOnesInManifestOrder) {
  // Spec 1 is partitioned, spec 0 is not (its equality deletes are global).
  auto entry = [](FileContent content, int32_t spec, std::string part,
                  std::optional<std::string> ref) {
    ManifestEntry e;
    e.file.content = content;
    e.file.spec_id = spec;
    if (spec == 1) e.file.partition = {std::move(part)};
    e.file.referenced_data_file = std::move(ref);
    e.file.file_path = fmt::format("d-{}-{}-{}", static_cast<int>(content), spec,
                                   e.file.referenced_data_file.value_or("none"));
    return e;
  };
  const FileContent pos = FileContent::kPositionDeletes, eq = FileContent::kEqualityDeletes;
  std::vector<ManifestEntry> entries = {
      entry(eq, 0, "", std::nullopt),    // 0: global
      entry(pos, 1, "a", "f1"),          // 1: f1 only
      entry(pos, 1, "a", std::nullopt),  // 2: partition a
      entry(eq, 1, "b", std::nullopt),   // 3: partition b
      entry(pos, 1, "b", "f2"),          // 4: f2 only
      entry(eq, 1, "a", std::nullopt),   // 5: partition a
      entry(pos, 1, "a", "f3"),          // 6: f3 only
  };
  entries[6].file.content_offset = 4;  // (a deletion vector)
  std::vector<const ManifestEntry*> deletes;
  for (const auto& e : entries) deletes.push_back(&e);
  internal::DeleteFileIndex index(deletes,
                                  [](const ManifestEntry& d) { return d.file.spec_id == 0; });
  auto names = [&](const std::string& path, const std::string& part) {
    DataFile f;
    f.file_path = path;
    f.spec_id = 1;
    f.partition = {part};
    std::vector<std::string> out;
    for (const ManifestEntry* e : index.CandidatesFor(f)) {
      out.push_back(std::to_string(e - entries.data()));
    }
    return fmt::format("{}", fmt::join(out, ","));
  };
  EXPECT_EQ(names("f1", "a"), "0,1,2,5");
  EXPECT_EQ(names("f2", "b"), "0,3,4");
  EXPECT_EQ(names("f3", "a"), "0,2,5,6");
  EXPECT_EQ(names("f4", "c"), "0");
}

// Commits `files` by hand as snapshot 1 of `md`: one manifest, its list, the snapshot.
Status CommitFiles(FileIO& io, TableMetadata* md, const std::vector<DataFile>& files) {
  ManifestWriterOptions wo;
  wo.snapshot_id = 1;
  ASSIGN_OR_RETURN(
      auto mw, ManifestWriter::Open(io, md->location + "/metadata/m.avro", *md->current_schema(),
                                    md->partition_specs[0], wo));
  for (const auto& f : files) {
    ManifestEntry e;
    e.file = f;
    RETURN_IF_ERROR(mw->Add(e));
  }
  ASSIGN_OR_RETURN(ManifestFile mf, mw->Close());
  ManifestListOptions lo;
  lo.snapshot_id = 1;
  lo.sequence_number = 1;
  const std::string list = md->location + "/metadata/snap-1.avro";
  RETURN_IF_ERROR(WriteManifestList(io, list, {mf}, lo).status());
  Snapshot snap;
  snap.snapshot_id = 1;
  snap.sequence_number = 1;
  snap.manifest_list = list;
  md->snapshots.push_back(snap);
  md->current_snapshot_id = 1;
  md->last_sequence_number = 1;
  return Status::OK();
}

class ScanRoundTrip : public ::testing::Test {
 protected:
  void SetUp() override {
    io_ = MakeMemoryFileIO();
    ASSERT_OK_AND_ASSIGN(schema_, ParseColumnList("id BIGINT NOT NULL, kind STRING, "
                                                  "ts TIMESTAMPTZ, amount DOUBLE"));
  }
  std::unique_ptr<FileIO> io_;
  Schema schema_;
};

TEST_F(ScanRoundTrip, PartitionedWritePruneFilterProject) {
  ASSERT_OK_AND_ASSIGN(PartitionSpec spec, ParsePartitionSpec("day(ts), kind", schema_));
  NewTableOptions no;
  ASSERT_OK_AND_ASSIGN(TableMetadata md, NewTableMetadata(schema_, spec, SortOrder{}, "/w/t", no));
  ASSERT_OK_AND_ASSIGN(auto writer, DataWriter::Make(*io_, md));
  Batch b = Batch::Make(std::make_shared<Schema>(schema_));
  const char* kinds[] = {"click", "view", "buy"};
  std::vector<std::tuple<int64_t, std::string, int64_t, double>> input;
  for (int i = 0; i < 3000; ++i) {
    int64_t ts = 1704067200000000LL + int64_t{i % 5} * 86400000000LL + i;  // 5 days from 2024-01-01
    std::string kind = kinds[i % 3];
    b.columns[0].Append<int64_t>(i);
    b.columns[1].AppendBytes(kind);
    b.columns[2].Append<int64_t>(ts);
    if (i % 7 == 0) {
      b.columns[3].AppendNull();
    } else {
      b.columns[3].Append<double>(i * 0.5);
    }
    input.emplace_back(i, kind, ts, i * 0.5);
  }
  ASSERT_OK(writer->Write(b));
  ASSERT_OK_AND_ASSIGN(auto files, writer->Close());
  EXPECT_EQ(files.size(), 15u);  // 5 days x 3 kinds
  EXPECT_NE(files[0].file_path.find("/w/t/data/ts_day=2024-01-0"), std::string::npos)
      << files[0].file_path;

  ASSERT_OK(CommitFiles(*io_, &md, files));
  auto shared = std::make_shared<const TableMetadata>(md);

  // Everything.
  ScanOptions all;
  ASSERT_OK_AND_ASSIGN(auto rows, ScanRows(*io_, shared, all));
  EXPECT_EQ(rows.size(), 3000u);

  // A selective filter prunes files by partition and returns exactly the matching rows.
  ScanOptions o;
  o.filter = "ts >= '2024-01-03' AND ts < '2024-01-04' AND kind = 'view' AND amount > 100";
  o.columns = {"id"};
  ScanStats stats;
  ASSERT_OK_AND_ASSIGN(rows, ScanRows(*io_, shared, o, &stats));
  std::vector<std::string> want;
  for (const auto& [id, kind, ts, amount] : input) {
    bool day = ts >= 1704240000000000LL && ts < 1704326400000000LL;
    if (day && kind == "view" && id % 7 != 0 && amount > 100) {
      want.push_back(fmt::format("{{\"id\":{}}}", id));
    }
  }
  std::sort(want.begin(), want.end());
  EXPECT_EQ(rows, want);
  EXPECT_EQ(stats.files_scanned, 1);
  EXPECT_EQ(stats.files_total, 15);

  // IS NULL, IN, NOT and OR.
  o.filter = "amount IS NULL AND NOT (kind IN ('buy', 'view') OR id > 100)";
  ASSERT_OK_AND_ASSIGN(rows, ScanRows(*io_, shared, o));
  want.clear();
  for (const auto& [id, kind, ts, amount] : input) {
    if (id % 7 == 0 && kind == "click" && id <= 100) {
      want.push_back(fmt::format("{{\"id\":{}}}", id));
    }
  }
  std::sort(want.begin(), want.end());
  EXPECT_EQ(rows, want);

  o.filter = "nope = 1";
  ASSERT_ERROR(ScanRows(*io_, shared, o), StatusCode::kInvalidArgument, "no column named 'nope'");
  o.filter = "id = 'abc'";
  ASSERT_ERROR(ScanRows(*io_, shared, o), StatusCode::kInvalidArgument, "'abc' is a string");
  o.filter = "id = ";
  ASSERT_ERROR(ScanRows(*io_, shared, o), StatusCode::kInvalidArgument, "expected a literal");
}

TEST(ExpressionTest, ParseAndPrint) {
  ASSERT_OK_AND_ASSIGN(ExprPtr e, ParseFilter("a = 1 AND (b < 'x''y' OR NOT c IS NULL)"));
  EXPECT_EQ(e->ToString(), "(a = 1 AND (b < x'y OR NOT c IS NULL))");
  ASSERT_OK_AND_ASSIGN(e, ParseFilter("5 < a"));
  EXPECT_EQ(e->ToString(), "a > 5");
  ASSERT_ERROR(ParseFilter("a = 'unterminated"), StatusCode::kInvalidArgument, "unterminated");
  ASSERT_ERROR(ParseFilter("a IN (1, 2"), StatusCode::kInvalidArgument, "IN list");
}

}  // namespace
}  // namespace sluice::iceberg

namespace sluice::iceberg {
namespace {

// A column added with an initial-default (by pyiceberg) reads as that default
// in rows written before it existed; a file without field ids reads through
// the table's name mapping.
TEST(ScanTest, InitialDefaultsAndNameMapping) {
  auto io = MakeLocalFileIO();
  const std::string root =
      "../shared/fixtures/iceberg/duckdb-iceberg/add_columns_with_defaults/default.db/"
      "add_columns_with_defaults";
  std::string newest;
  for (const auto& e : fs::directory_iterator(root + "/metadata")) {
    std::string p = e.path().string();
    if (p.ends_with(".metadata.json") && p > newest) newest = p;
  }
  ASSERT_OK_AND_ASSIGN(TableMetadata md,
                       ParseTableMetadata(testing::ReadFileBytes(newest), newest));
  EXPECT_EQ(md.current_schema()->initial_defaults.size(), 14u);
  ScanOptions o;
  o.remaps = {{md.location, root}};
  o.filter = "col1 = 'click'";
  o.columns = {"col1", "col_integer", "col_decimal", "col_uuid"};
  ASSERT_OK_AND_ASSIGN(auto rows, ScanRows(*io, std::make_shared<TableMetadata>(md), o));
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0], R"({"col1":"click","col_integer":342342,"col_decimal":"12345.00",)"
                     R"("col_uuid":"f79c3e09-677c-4bbd-a479-3f349cb785e7"})");
  // The defaults survive a metadata write/read.
  ASSERT_OK_AND_ASSIGN(TableMetadata again, ParseTableMetadata(TableMetadataToJson(md), "x"));
  EXPECT_EQ(again.current_schema()->initial_defaults, md.current_schema()->initial_defaults);
}

// The scan moves a file's columns into the result when their types match the
// table's: a struct column before the one a filter reads, a column projected
// twice and a struct that gained a member since the file was written must
// still read right.
TEST(ScanTest, StructColumnsRepeatedColumnsAndNewMembersRead) {
  auto io = MakeMemoryFileIO();
  ASSERT_OK_AND_ASSIGN(Schema schema,
                       ParseColumnList("id BIGINT NOT NULL, s STRUCT<a: INT, b: STRING>, x INT"));
  ASSERT_OK_AND_ASSIGN(TableMetadata md,
                       NewTableMetadata(schema, PartitionSpec{}, SortOrder{}, "/w/t", {}));
  ASSERT_OK_AND_ASSIGN(auto writer, DataWriter::Make(*io, md));
  Batch b = Batch::Make(std::make_shared<Schema>(*md.current_schema()));
  for (int i = 0; i < 5; ++i) {
    b.columns[0].Append<int64_t>(i);
    Column& st = b.columns[1];
    st.mutable_child(0)->Append<int32_t>(i * 10);
    st.mutable_child(1)->AppendBytes("v" + std::to_string(i));
    st.FinishNested();
    b.columns[2].Append<int32_t>(i * 100);
  }
  ASSERT_OK(writer->Write(b));
  ASSERT_OK_AND_ASSIGN(auto files, writer->Close());
  ASSERT_OK(CommitFiles(*io, &md, files));
  auto shared = std::make_shared<const TableMetadata>(md);

  ScanOptions o;
  o.filter = "x = 300";
  ASSERT_OK_AND_ASSIGN(auto rows, ScanRows(*io, shared, o));
  EXPECT_EQ(rows, std::vector<std::string>{R"({"id":3,"s":{"a":30,"b":"v3"},"x":300})"});
  o.columns = {"s"};
  ASSERT_OK_AND_ASSIGN(rows, ScanRows(*io, shared, o));
  EXPECT_EQ(rows, std::vector<std::string>{R"({"s":{"a":30,"b":"v3"}})"});
  ScanOptions twice;
  twice.columns = {"x", "id", "x"};
  twice.filter = "id = 1";
  auto repeated = ScanRows(*io, shared, twice);
  if (repeated.ok()) {  // either read twice, or refused: never a moved-from column
    ASSERT_EQ(repeated->size(), 1u);
    EXPECT_NE((*repeated)[0].find("100"), std::string::npos) << (*repeated)[0];
  }

  // A member c of s and a column y added after the file was written read as null.
  Schema evolved = *md.current_schema();
  evolved.schema_id = 1;
  std::vector<Field> members = evolved.fields[1].type->fields();
  members.push_back(Field{6, "c", DataType::Int(), false, ""});
  evolved.fields[1].type = DataType::Struct(members);
  evolved.fields.push_back(Field{7, "y", DataType::String(), false, ""});
  md.schemas.push_back(evolved);
  md.current_schema_id = 1;
  md.last_column_id = 7;
  ScanOptions all;
  all.filter = "x = 100";
  ASSERT_OK_AND_ASSIGN(rows, ScanRows(*io, std::make_shared<const TableMetadata>(md), all));
  EXPECT_EQ(rows, std::vector<std::string>{
                      R"({"id":1,"s":{"a":10,"b":"v1","c":null},"x":100,"y":null})"});
}

}  // namespace
}  // namespace sluice::iceberg

namespace sluice::iceberg {
namespace {

// Identity-partition columns that the data files do not hold (Hive-style
// tables) read their value from the manifest entry.
TEST(ScanTest, IdentityPartitionValuesFromManifests) {
  auto io = MakeLocalFileIO();
  const std::string root = "../shared/fixtures/iceberg/duckdb-iceberg/partition_integer";
  ASSERT_OK_AND_ASSIGN(
      TableMetadata md,
      ParseTableMetadata(testing::ReadFileBytes(root + "/metadata/v2.metadata.json"), "v2"));
  ScanOptions o;
  o.remaps = {{md.location, root}};
  o.columns = {"partition_col"};
  ASSERT_OK_AND_ASSIGN(auto rows, ScanRows(*io, std::make_shared<TableMetadata>(md), o));
  ASSERT_EQ(rows.size(), 2u);
  for (const auto& r : rows) EXPECT_EQ(r.find("null"), std::string::npos) << r;
  // Pruning by the partition value finds exactly one of the two files.
  o.filter = "partition_col = " +
             rows[0].substr(rows[0].find(':') + 1, rows[0].size() - rows[0].find(':') - 2);
  ScanStats stats;
  ASSERT_OK_AND_ASSIGN(auto one, ScanRows(*io, std::make_shared<TableMetadata>(md), o, &stats));
  EXPECT_EQ(one, std::vector<std::string>{rows[0]});
  EXPECT_EQ(stats.files_scanned, 1);
}

}  // namespace
}  // namespace sluice::iceberg
