// A pipeline over a file source: restarts resume exactly once.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <vector>

#include "columnar/sql_schema.h"
#include "common/testing.h"
#include "iceberg/table_builder.h"
#include "pipeline/pipeline.h"
#include "pipeline/test_util.h"
#include "sources/file_source.h"

namespace sluice::pipeline {
namespace {

namespace fs = std::filesystem;
using sources::FileSource;
using sources::FileSourceOptions;

fs::path TestDir(const std::string& prefix) {
  return fs::temp_directory_path() /
         (prefix + std::to_string(::getpid()) + "_" +
          ::testing::UnitTest::GetInstance()->current_test_info()->name());
}

void Append(const fs::path& file, const std::string& bytes) {
  std::ofstream out(file, std::ios::binary | std::ios::app);
  out << bytes;
  ASSERT_TRUE(out.good()) << file;
}

int64_t Sum(const Positions& p) {
  int64_t s = 0;
  for (const auto& [name, n] : p) s += n;
  return s;
}

class FileSourcePipelineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = TestDir("sluice_file_pipeline_");
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "in");
    warehouse_ = (dir_ / "wh").string();
    ASSERT_OK_AND_ASSIGN(catalog_, catalog::OpenCatalog((dir_ / "catalog.db").string()));
    io_ = MakeLocalFileIO();
    ASSERT_OK(catalog_->CreateNamespace({"lake"}, {}));
    ASSERT_OK_AND_ASSIGN(
        Schema schema,
        ParseColumnList("id BIGINT NOT NULL, user_id BIGINT, kind STRING, ts TIMESTAMPTZ"));
    schema_ = std::make_shared<Schema>(schema);
    ASSERT_OK_AND_ASSIGN(auto spec, iceberg::ParsePartitionSpec("day(ts)", schema));
    ASSERT_OK_AND_ASSIGN(
        auto md, iceberg::NewTableMetadata(schema, spec, iceberg::SortOrder{},
                                           catalog::DefaultTableLocation(warehouse_, target_),
                                           iceberg::NewTableOptions{}));
    ASSERT_OK(catalog::Table::Create(*catalog_, *io_, target_, md).status());
    ASSERT_OK(EnsureDeadLetterTable(*catalog_, *io_, warehouse_, target_));
  }
  void TearDown() override { fs::remove_all(dir_); }

  Result<std::unique_ptr<Pipeline>> Open() {
    PipelineOptions o;
    o.name = "load_files";
    o.target = target_;
    o.source_name = "files_in";
    o.source_schema = schema_;
    o.commit_interval_ms = 60'000;
    o.state_dir = (dir_ / "state").string();
    o.batch_rows = 16;
    o.poll_bytes = 512;  // several polls per file
    FileSourceOptions f;
    f.dir = (dir_ / "in").string();
    f.name = "files_in";
    ASSIGN_OR_RETURN(auto source, FileSource::Open(f));
    return Pipeline::Open(*catalog_, *io_, std::move(o), std::move(source));
  }
  // Events [from, to) appended to `file`, with CRLF endings and a blank line.
  void Produce(const std::string& file, int64_t from, int64_t to) {
    std::string bytes;
    for (int64_t i = from; i < to; ++i) {
      bytes += fmt::format(R"({{"id":{},"user_id":{},"kind":"k{}","ts":"2024-01-0{}T10:00:00Z"}})",
                           i, i % 7, i % 3, 1 + i % 3);
      bytes += i % 5 == 0 ? "\r\n\n" : "\n";
    }
    Append(dir_ / "in" / file, bytes);
  }
  static void Consume(Pipeline& p) {
    for (int i = 0; Sum(p.source().Lag()) > 0; ++i) {
      ASSERT_OK(p.Step(0).status());
      ASSERT_LT(i, 10'000);
    }
  }
  std::vector<std::string> Rows(const catalog::TableIdent& ident) {
    return testing::TableRows(*catalog_, *io_, ident);
  }
  std::multiset<int64_t> Ids() { return testing::LeadingIds(Rows(target_)); }
  static std::multiset<int64_t> Range(int64_t from, int64_t to) {
    return testing::IdRange(from, to);
  }
  std::string Offsets() {
    auto t = catalog::Table::Load(*catalog_, *io_, target_);
    EXPECT_TRUE(t.ok());
    if (!t.ok() || (*t)->metadata().current_snapshot() == nullptr) return "";
    return (*t)->metadata().current_snapshot()->summary.at("sluice.offsets");
  }
  int64_t Size(const std::string& file) {
    return static_cast<int64_t>(fs::file_size(dir_ / "in" / file));
  }

  fs::path dir_;
  std::string warehouse_;
  catalog::TableIdent target_{{"lake"}, "events"};
  std::shared_ptr<const Schema> schema_;
  std::unique_ptr<catalog::Catalog> catalog_;
  std::unique_ptr<FileIO> io_;
};

TEST_F(FileSourcePipelineTest, RestartResumesExactlyOnce) {
  Produce("2024-01-01.jsonl", 0, 30);
  Produce("2024-01-02.jsonl", 30, 50);
  Append(dir_ / "in" / "2024-01-02.jsonl", "not json\n");
  {
    ASSERT_OK_AND_ASSIGN(auto p, Open());
    Consume(*p);
    ASSERT_OK(p->Checkpoint());
  }
  EXPECT_EQ(Ids(), Range(0, 50));
  EXPECT_EQ(Rows(DeadLetterTable(target_)).size(), 1u);
  EXPECT_EQ(Offsets(),
            fmt::format(R"({{"files_in":{{"2024-01-01.jsonl":{},"2024-01-02.jsonl":{}}}}})",
                        Size("2024-01-01.jsonl"), Size("2024-01-02.jsonl")));
  const int64_t committed_02 = Size("2024-01-02.jsonl");

  // Run 2 reads more (mid-file and a new file) and dies before a checkpoint.
  Produce("2024-01-02.jsonl", 50, 70);
  Produce("2024-01-03.jsonl", 70, 100);
  {
    ASSERT_OK_AND_ASSIGN(auto p, Open());
    EXPECT_EQ(p->committed_positions().at("2024-01-02.jsonl"), committed_02);
    Consume(*p);
    EXPECT_EQ(p->stats().records_in.load(), 50);
  }
  EXPECT_EQ(Ids(), Range(0, 50));

  // Run 3 resumes from run 1's checkpoint: 50..99 once.
  Produce("2024-01-03.jsonl", 100, 120);
  {
    ASSERT_OK_AND_ASSIGN(auto p, Open());
    EXPECT_EQ(p->committed_positions().at("2024-01-02.jsonl"), committed_02);
    EXPECT_EQ(p->committed_positions().at("2024-01-03.jsonl"), 0);  // new since: from the start
    Consume(*p);
    EXPECT_EQ(p->stats().records_in.load(), 70);
    ASSERT_OK(p->Checkpoint());
  }
  EXPECT_EQ(Ids(), Range(0, 120));
  EXPECT_EQ(Rows(DeadLetterTable(target_)).size(), 1u);
  EXPECT_EQ(
      Offsets(),
      fmt::format(
          R"({{"files_in":{{"2024-01-01.jsonl":{},"2024-01-02.jsonl":{},"2024-01-03.jsonl":{}}}}})",
          Size("2024-01-01.jsonl"), Size("2024-01-02.jsonl"), Size("2024-01-03.jsonl")));

  // A file deleted under the pipeline cannot be resumed: Open refuses.
  fs::remove(dir_ / "in" / "2024-01-01.jsonl");
  ASSERT_ERROR(Open(), StatusCode::kOutOfRange, "2024-01-01.jsonl");
}

}  // namespace
}  // namespace sluice::pipeline
