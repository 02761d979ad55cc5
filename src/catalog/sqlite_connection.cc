#include <sqlite3.h>

#include <filesystem>

#include "catalog/sql_connection.h"

namespace sluice::catalog {
namespace {

class SqliteConnection final : public SqlConnection {
 public:
  SqliteConnection(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}
  ~SqliteConnection() override { sqlite3_close_v2(db_); }

  Result<int64_t> Execute(const std::string& sql, const std::vector<SqlValue>& params,
                          std::vector<SqlRow>* rows) override {
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &stmt, nullptr) != SQLITE_OK) {
      return Error("prepare");
    }
    std::unique_ptr<sqlite3_stmt, int (*)(sqlite3_stmt*)> guard(stmt, sqlite3_finalize);
    for (size_t i = 0; i < params.size(); ++i) {
      int rc = params[i] ? sqlite3_bind_text(stmt, static_cast<int>(i + 1), params[i]->data(),
                                             static_cast<int>(params[i]->size()), SQLITE_TRANSIENT)
                         : sqlite3_bind_null(stmt, static_cast<int>(i + 1));
      if (rc != SQLITE_OK) return Error("bind");
    }
    while (true) {
      int rc = sqlite3_step(stmt);
      if (rc == SQLITE_DONE) break;
      if (rc != SQLITE_ROW) {
        if (sqlite3_extended_errcode(db_) == SQLITE_CONSTRAINT_PRIMARYKEY ||
            sqlite3_extended_errcode(db_) == SQLITE_CONSTRAINT_UNIQUE) {
          return Status::AlreadyExists("catalog {}: {}", path_, sqlite3_errmsg(db_));
        }
        return Error("execute");
      }
      if (rows != nullptr) {
        SqlRow row;
        for (int c = 0; c < sqlite3_column_count(stmt); ++c) {
          const unsigned char* text = sqlite3_column_text(stmt, c);
          row.push_back(text ? SqlValue(reinterpret_cast<const char*>(text)) : std::nullopt);
        }
        rows->push_back(std::move(row));
      }
    }
    return static_cast<int64_t>(sqlite3_changes(db_));
  }

  Status BeginWrite() override { return Simple("BEGIN IMMEDIATE"); }
  Status Commit() override { return Simple("COMMIT"); }
  void Rollback() override { (void)Simple("ROLLBACK"); }

  bool HasColumn(const std::string& table, const std::string& column) override {
    std::vector<SqlRow> rows;
    if (!Execute("SELECT name FROM pragma_table_info(?)", {table}, &rows).ok()) return false;
    for (const auto& r : rows) {
      if (r[0] && *r[0] == column) return true;
    }
    return false;
  }

 private:
  Status Simple(const char* sql) {
    char* err = nullptr;
    if (sqlite3_exec(db_, sql, nullptr, nullptr, &err) != SQLITE_OK) {
      std::string msg = err ? err : "unknown error";
      sqlite3_free(err);
      bool busy = sqlite3_errcode(db_) == SQLITE_BUSY || sqlite3_errcode(db_) == SQLITE_LOCKED;
      return Status(StatusCode::kIOError, fmt::format("catalog {}: {}: {}", path_, sql, msg), busy);
    }
    return Status::OK();
  }

  Status Error(std::string_view what) {
    int code = sqlite3_errcode(db_);
    bool busy = code == SQLITE_BUSY || code == SQLITE_LOCKED;
    return Status(StatusCode::kIOError,
                  fmt::format("catalog {}: {}: {}", path_, what, sqlite3_errmsg(db_)), busy);
  }

  sqlite3* db_;
  std::string path_;
};

}  // namespace

Result<std::unique_ptr<SqlConnection>> OpenSqlite(const std::string& path) {
  std::error_code ec;
  auto parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  sqlite3* db = nullptr;
  int rc =
      sqlite3_open_v2(path.c_str(), &db,
                      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    std::string msg = db ? sqlite3_errmsg(db) : "out of memory";
    sqlite3_close_v2(db);
    return Status::IOError("catalog {}: cannot open: {}", path, msg);
  }
  // Several processes commit to one catalog file: wait for the lock rather than fail.
  sqlite3_busy_timeout(db, 30000);
  auto conn = std::make_unique<SqliteConnection>(db, path);
  // WAL lets readers proceed while a commit holds the write lock.
  RETURN_IF_ERROR(conn->Execute("PRAGMA journal_mode=WAL", {}, nullptr));
  RETURN_IF_ERROR(conn->Execute("PRAGMA synchronous=FULL", {}, nullptr));
  return std::unique_ptr<SqlConnection>(std::move(conn));
}

}  // namespace sluice::catalog
