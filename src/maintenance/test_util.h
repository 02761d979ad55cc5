// Test helpers of src/maintenance: a throwaway table (a folder, a SQLite
// catalog, namespace db) to append to, read back and list the files of.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <map>
#include <set>
#include <utility>

#include "catalog/table.h"
#include "columnar/sql_schema.h"
#include "common/testing.h"
#include "iceberg/data_writer.h"
#include "iceberg/scan.h"
#include "iceberg/table_builder.h"

namespace sluice::maintenance {

class TableFixture : public ::testing::Test {
 protected:
  // db.events of `columns`, partitioned by `partition` ("" for none), sorted
  // by `sort` ("" for no sort order), of `format_version`.
  void MakeTable(const std::string& columns, const std::string& partition,
                 const std::string& sort = "", int format_version = 2,
                 std::map<std::string, std::string> properties = {}) {
    dir_ = std::filesystem::temp_directory_path() /
           ("sluice_maintenance_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    ASSERT_OK_AND_ASSIGN(catalog_, catalog::OpenCatalog((dir_ / "catalog.db").string()));
    ASSERT_OK(catalog_->CreateNamespace({"db"}, {}));
    io_ = MakeLocalFileIO();
    auto schema = ParseColumnList(columns);
    ASSERT_OK(schema);
    ASSERT_OK_AND_ASSIGN(auto spec, iceberg::ParsePartitionSpec(partition, *schema));
    iceberg::SortOrder order;
    if (!sort.empty()) {
      ASSERT_OK_AND_ASSIGN(order, iceberg::ParseSortOrder(sort, *schema));
    }
    iceberg::NewTableOptions options;
    options.format_version = format_version;
    options.properties = std::move(properties);
    ASSERT_OK_AND_ASSIGN(auto md, iceberg::NewTableMetadata(
                                      *schema, spec, order,
                                      catalog::DefaultTableLocation(dir_.string(), id_), options));
    ASSERT_OK_AND_ASSIGN(table_, catalog::Table::Create(*catalog_, *io_, id_, md));
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // One commit of the rows `fill` appends to a batch of the table's schema.
  void AppendRows(const std::function<void(Batch*)>& fill) {
    Batch b = Batch::Make(std::make_shared<const Schema>(*table_->metadata().current_schema()));
    fill(&b);
    ASSERT_OK_AND_ASSIGN(auto w, iceberg::DataWriter::Make(*io_, table_->metadata()));
    ASSERT_OK(w->Write(b));
    ASSERT_OK_AND_ASSIGN(auto files, w->Close());
    ASSERT_OK(table_->Append(files));
  }

  // Tables of (id BIGINT): one commit of ids [from, to).
  void AppendIds(int64_t from, int64_t to) {
    AppendRows([&](Batch* b) {
      for (int64_t id = from; id < to; ++id) b->columns[0].Append<int64_t>(id);
    });
  }

  // Tables of (id BIGINT, kind STRING): one commit of ids [from, to), all of
  // `kind` (one small file).
  void Append(int64_t from, int64_t to, const std::string& kind) {
    AppendRows([&](Batch* b) {
      for (int64_t id = from; id < to; ++id) {
        b->columns[0].Append<int64_t>(id);
        b->columns[1].AppendBytes(kind);
      }
    });
  }

  // The first column (a BIGINT id) of every row the current snapshot reads.
  std::set<int64_t> Ids() {
    std::set<int64_t> ids;
    EXPECT_TRUE(table_->Refresh().ok());
    auto md = std::make_shared<const iceberg::TableMetadata>(table_->metadata());
    auto scan = iceberg::TableScan::Make(*io_, md, {});
    EXPECT_TRUE(scan.ok());
    Batch b;
    while (true) {
      auto more = (*scan)->Next(&b);
      EXPECT_TRUE(more.ok()) << more.status().ToString();
      if (!more.ok() || !*more) break;
      for (int64_t i = 0; i < b.num_rows(); ++i) {
        EXPECT_TRUE(ids.insert(b.columns[0].Value<int64_t>(i)).second) << "a row twice";
      }
    }
    return ids;
  }

  // Format v3: each row's (_row_id, _last_updated_sequence_number) by its id
  // (the first column, a BIGINT).
  std::map<int64_t, std::pair<int64_t, int64_t>> Lineage() {
    std::map<int64_t, std::pair<int64_t, int64_t>> out;
    EXPECT_TRUE(table_->Refresh().ok());
    auto md = std::make_shared<const iceberg::TableMetadata>(table_->metadata());
    iceberg::ScanOptions o;
    o.with_row_lineage = true;
    auto scan = iceberg::TableScan::Make(*io_, md, o);
    EXPECT_TRUE(scan.ok());
    const Schema& schema = *(*scan)->schema();
    Batch b;
    while (true) {
      auto more = (*scan)->Next(&b);
      EXPECT_TRUE(more.ok()) << more.status().ToString();
      if (!more.ok() || !*more) break;
      const Column& row_id = b.columns[schema.fields.size() - 2];
      const Column& seq = b.columns[schema.fields.size() - 1];
      for (int64_t i = 0; i < b.num_rows(); ++i) {
        EXPECT_TRUE(row_id.IsValid(i));
        out[b.columns[0].Value<int64_t>(i)] = {row_id.Value<int64_t>(i), seq.Value<int64_t>(i)};
      }
    }
    return out;
  }

  // Every file under the table's folder `sub` ("" for all of it).
  std::set<std::string> Files(const std::string& sub = "") {
    std::set<std::string> out;
    for (const auto& e :
         std::filesystem::recursive_directory_iterator(dir_ / "db" / "events" / sub)) {
      if (e.is_regular_file()) out.insert(e.path().string());
    }
    return out;
  }

  catalog::TableIdent id_{{"db"}, "events"};
  std::filesystem::path dir_;
  std::unique_ptr<catalog::Catalog> catalog_;
  std::unique_ptr<FileIO> io_;
  std::unique_ptr<catalog::Table> table_;
};

}  // namespace sluice::maintenance
