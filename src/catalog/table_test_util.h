// Test helpers of src/catalog: a throwaway SQLite catalog with namespace db,
// tables of (id BIGINT, ts TIMESTAMPTZ, kind STRING) to commit to, and data
// file entries to commit.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>

#include "catalog/catalog.h"
#include "catalog/table.h"
#include "columnar/sql_schema.h"
#include "common/testing.h"
#include "iceberg/table_builder.h"

namespace sluice::catalog {

namespace fs = std::filesystem;
using iceberg::DataFile;

class TableTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("sluice_table_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    catalog_path_ = (dir_ / "catalog.db").string();
    ASSERT_OK_AND_ASSIGN(catalog_, OpenCatalog(catalog_path_));
    ASSERT_OK(catalog_->CreateNamespace({"db"}, {}));
    io_ = MakeLocalFileIO();
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::unique_ptr<Table> MakeTable(const std::string& partition, int format_version = 2,
                                   const std::string& name = "events") {
    auto schema = ParseColumnList("id BIGINT NOT NULL, ts TIMESTAMPTZ, kind STRING");
    EXPECT_TRUE(schema.ok());
    auto spec = iceberg::ParsePartitionSpec(partition, *schema);
    EXPECT_TRUE(spec.ok()) << spec.status().ToString();
    iceberg::NewTableOptions o;
    o.format_version = format_version;
    TableIdent id{{"db"}, name};
    auto md = iceberg::NewTableMetadata(*schema, *spec, iceberg::SortOrder{},
                                        DefaultTableLocation(dir_.string(), id), o);
    EXPECT_TRUE(md.ok());
    auto t = Table::Create(*catalog_, *io_, id, *md);
    EXPECT_TRUE(t.ok()) << t.status().ToString();
    return t.ok() ? std::move(*t) : nullptr;
  }

  static DataFile File(const std::string& name, int64_t rows, iceberg::PartitionValues p = {}) {
    DataFile f;
    f.file_path = "/data/" + name;
    f.record_count = rows;
    f.file_size_in_bytes = rows * 10;
    f.partition = std::move(p);
    return f;
  }

  fs::path dir_;
  std::string catalog_path_;
  std::unique_ptr<Catalog> catalog_;
  std::unique_ptr<FileIO> io_;
};

}  // namespace sluice::catalog
