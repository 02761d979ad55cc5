#include "pipeline/test_util.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>

#include "catalog/table.h"
#include "columnar/json_writer.h"
#include "columnar/sql_schema.h"
#include "common/testing.h"
#include "iceberg/scan.h"
#include "iceberg/table_builder.h"
#include "sources/log_source.h"
#include "sources/table_source.h"

namespace sluice::pipeline::testing {

std::vector<std::string> TableRows(catalog::Catalog& catalog, FileIO& io,
                                   const catalog::TableIdent& table) {
  std::vector<std::string> rows;
  auto t = catalog::Table::Load(catalog, io, table);
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  if (!t.ok()) return rows;
  auto md = std::make_shared<const iceberg::TableMetadata>((*t)->metadata());
  auto scan = iceberg::TableScan::Make(io, md, {});
  EXPECT_TRUE(scan.ok()) << scan.status().ToString();
  Batch b;
  while (scan.ok()) {
    auto more = (*scan)->Next(&b);
    EXPECT_TRUE(more.ok()) << more.status().ToString();
    if (!more.ok() || !*more) break;
    for (int64_t r = 0; r < b.num_rows(); ++r) {
      std::string line;
      AppendJsonRow(b, r, &line);
      rows.push_back(std::move(line));
    }
  }
  std::sort(rows.begin(), rows.end());
  return rows;
}

std::multiset<int64_t> LeadingIds(const std::vector<std::string>& rows) {
  std::multiset<int64_t> ids;
  for (const auto& r : rows) ids.insert(std::strtoll(r.c_str() + r.find(':') + 1, nullptr, 10));
  return ids;
}

std::multiset<int64_t> IdRange(int64_t from, int64_t to) {
  std::multiset<int64_t> s;
  for (int64_t i = from; i < to; ++i) s.insert(i);
  return s;
}

namespace fs = std::filesystem;
constexpr char kColumns[] = "id BIGINT NOT NULL, user_id BIGINT, kind STRING, ts TIMESTAMPTZ";

void PipelineFixture::SetUp() {
  dir_ =
      fs::temp_directory_path() / ("sluice_pipeline_" + std::to_string(::getpid()) + "_" +
                                   ::testing::UnitTest::GetInstance()->current_test_info()->name());
  Reset();
}

void PipelineFixture::TearDown() {
  log_.reset();
  table_.reset();
  catalog_.reset();
  fs::remove_all(dir_);
}

void PipelineFixture::Reset() {
  TearDown();
  faults_.Heal();
  fs::create_directories(dir_);
  warehouse_ = (dir_ / "wh").string();
  ASSERT_OK_AND_ASSIGN(catalog_, catalog::OpenCatalog((dir_ / "catalog.db").string()));
  ASSERT_OK(catalog_->CreateNamespace({"lake"}, {}));
  ASSERT_OK_AND_ASSIGN(Schema schema, ParseColumnList(kColumns));
  schema_ = std::make_shared<Schema>(schema);
  ASSERT_OK_AND_ASSIGN(auto spec, iceberg::ParsePartitionSpec("day(ts)", schema));
  ASSERT_OK_AND_ASSIGN(auto md,
                       iceberg::NewTableMetadata(schema, spec, iceberg::SortOrder{},
                                                 catalog::DefaultTableLocation(warehouse_, target_),
                                                 iceberg::NewTableOptions{}));
  ASSERT_OK(catalog::Table::Create(*catalog_, *io_, target_, md).status());
  ASSERT_OK(EnsureDeadLetterTable(*catalog_, *io_, warehouse_, target_));
  ASSERT_OK(EnsureDeadLetterTable(*catalog_, *io_, warehouse_, target_));  // idempotent
  ASSERT_OK_AND_ASSIGN(log_, log::StreamLog::Open((dir_ / "log").string()));
}

PipelineOptions PipelineFixture::Options(int64_t interval_ms) {
  PipelineOptions o;
  o.name = "load_events";
  o.target = target_;
  o.source_name = "events_in";
  o.source_schema = schema_;
  o.commit_interval_ms = interval_ms;
  o.state_dir = (dir_ / "state" / "load_events").string();
  o.batch_rows = 16;  // small: files get written between checkpoints
  return o;
}

Result<std::unique_ptr<Pipeline>> PipelineFixture::Open(PipelineOptions o) {
  return Pipeline::Open(*catalog_, *io_, std::move(o),
                        std::make_unique<sources::LogSource>("events_in", log_.get()));
}

Result<std::unique_ptr<Pipeline>> PipelineFixture::OpenOnChangelog(PipelineOptions o,
                                                                   const catalog::TableIdent& table,
                                                                   const std::string& source_name) {
  sources::TableSourceOptions to;
  to.table = table;
  to.name = source_name;
  to.changelog = true;
  to.refresh_interval_ms = 0;
  ASSIGN_OR_RETURN(auto source, sources::TableSource::Open(*catalog_, *io_, to));
  return Pipeline::Open(*catalog_, *io_, std::move(o), std::move(source));
}

std::string PipelineFixture::Event(int64_t id) {
  return fmt::format(R"({{"id":{},"user_id":{},"kind":"k{}","ts":"2024-01-0{}T10:00:00Z"}})", id,
                     id % 7, id % 3, 1 + id % 3);
}

void PipelineFixture::Produce(int64_t from, int64_t to) {
  std::vector<std::string> recs;
  for (int64_t i = from; i < to; ++i) recs.push_back(Event(i));
  ASSERT_OK(log_->Append(recs).status());
}

void PipelineFixture::Consume(Pipeline& p) { ASSERT_OK(TryConsume(p)); }

Status PipelineFixture::TryConsume(Pipeline& p) {
  while (p.source().Lag().at(sources::LogSource::kPartition) > 0)
    RETURN_IF_ERROR(p.Step(0).status());
  return Status::OK();
}

void PipelineFixture::CreateKeyedTable(const catalog::TableIdent& table, const std::string& columns,
                                       const std::vector<std::string>& key, int format_version) {
  ASSERT_OK_AND_ASSIGN(Schema schema, ParseColumnList(columns));
  ASSERT_OK(SetPrimaryKey(&schema, key));
  ASSERT_OK_AND_ASSIGN(auto spec,
                       iceberg::ParsePartitionSpec(fmt::format("bucket(4, {})", key[0]), schema));
  iceberg::NewTableOptions to;
  to.format_version = format_version;
  ASSERT_OK_AND_ASSIGN(
      auto md, iceberg::NewTableMetadata(schema, spec, iceberg::SortOrder{},
                                         catalog::DefaultTableLocation(warehouse_, table), to));
  ASSERT_OK(catalog::Table::Create(*catalog_, *io_, table, md).status());
  ASSERT_OK(EnsureDeadLetterTable(*catalog_, *io_, warehouse_, table));
}

const iceberg::Snapshot* PipelineFixture::Current() {
  table_ = catalog::Table::Load(*catalog_, *io_, target_).value();
  return table_->metadata().current_snapshot();
}

}  // namespace sluice::pipeline::testing
