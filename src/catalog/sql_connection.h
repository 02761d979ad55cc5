// Internal: the small SQL surface the SQL catalog needs, implemented for
// SQLite (and PostgreSQL). Statements use `?` placeholders; values are text or
// NULL. One SqlConnection is used by one thread at a time.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"

namespace sluice::catalog {

using SqlValue = std::optional<std::string>;  // nullopt = NULL
using SqlRow = std::vector<SqlValue>;

class SqlConnection {
 public:
  virtual ~SqlConnection() = default;
  // Runs a statement; fills `rows` for queries. Returns the number of rows
  // changed (for INSERT/UPDATE/DELETE). A unique-key violation is kAlreadyExists;
  // a lost connection during COMMIT is kCommitStateUnknown.
  virtual Result<int64_t> Execute(const std::string& sql, const std::vector<SqlValue>& params,
                                  std::vector<SqlRow>* rows = nullptr) = 0;
  // BEGIN that takes the write lock up front (SQLite: BEGIN IMMEDIATE).
  virtual Status BeginWrite() = 0;
  virtual Status Commit() = 0;
  virtual void Rollback() = 0;
  virtual bool HasColumn(const std::string& table, const std::string& column) = 0;
};

Result<std::unique_ptr<SqlConnection>> OpenSqlite(const std::string& path);
// `uri` is a libpq connection URI or keyword string ("postgresql://user@host:port/db").
Result<std::unique_ptr<SqlConnection>> OpenPostgres(const std::string& uri);

}  // namespace sluice::catalog
