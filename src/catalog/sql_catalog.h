// The SQL catalog in the Iceberg JDBC layout (tables `iceberg_tables` and
// `iceberg_namespace_properties`, the same columns Iceberg Java's JdbcCatalog
// and pyiceberg's SqlCatalog use), on any SqlConnection (SQLite embedded,
// PostgreSQL shared).
//
// Commits are `UPDATE ... WHERE metadata_location = <expected>` inside one
// transaction for all tables of a commit; an update count of 0 is a conflict.
// Catalog files written by pyiceberg (without the `iceberg_type` column) open
// as they are; new catalogs get the column (Java's "V1" schema), NULL = TABLE.
// Thread-safety: one mutex serializes use of the connection.
#pragma once

#include <memory>
#include <mutex>

#include "catalog/catalog.h"
#include "catalog/sql_connection.h"

namespace sluice::catalog {

class SqlCatalog final : public Catalog {
 public:
  static Result<std::unique_ptr<SqlCatalog>> Make(std::unique_ptr<SqlConnection> conn,
                                                  std::string catalog_name);

  std::string name() const override { return catalog_name_; }
  Status CreateNamespace(const std::vector<std::string>& ns,
                         const std::map<std::string, std::string>& properties) override;
  Result<std::vector<std::vector<std::string>>> ListNamespaces() override;
  Result<bool> NamespaceExists(const std::vector<std::string>& ns) override;
  Result<std::map<std::string, std::string>> NamespaceProperties(
      const std::vector<std::string>& ns) override;
  Result<std::vector<std::string>> UpdateNamespaceProperties(
      const std::vector<std::string>& ns, const std::map<std::string, std::string>& updates,
      const std::vector<std::string>& removals) override;
  Status DropNamespace(const std::vector<std::string>& ns) override;
  Status CreateTable(const TableIdent& table, const std::string& metadata_location) override;
  Result<std::string> LoadTable(const TableIdent& table) override;
  Result<std::vector<TableIdent>> ListTables(const std::vector<std::string>& ns) override;
  Status DropTable(const TableIdent& table) override;
  Status RenameTable(const TableIdent& from, const TableIdent& to) override;
  Status CommitTables(const std::vector<TableCommit>& commits) override;

 private:
  SqlCatalog(std::unique_ptr<SqlConnection> conn, std::string catalog_name)
      : conn_(std::move(conn)), catalog_name_(std::move(catalog_name)) {}
  Status Init();
  Status CreateTables();
  // Runs `fn` inside a write transaction; rolls back on error.
  template <typename Fn>
  Status InTransaction(Fn&& fn);
  std::string TableTypeFilter() const;

  std::mutex mu_;
  std::unique_ptr<SqlConnection> conn_;  // guarded by mu_
  std::string catalog_name_;
  bool has_type_column_ = false;
};

}  // namespace sluice::catalog
