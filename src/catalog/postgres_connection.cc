#include <libpq-fe.h>

#include <cstring>

#include "catalog/sql_connection.h"

namespace sluice::catalog {
namespace {

// Rewrites `?` placeholders as $1, $2, ... (the catalog's SQL has no `?` in literals).
std::string Numbered(const std::string& sql) {
  std::string out;
  int n = 0;
  for (char c : sql) {
    if (c == '?') {
      out += "$" + std::to_string(++n);
    } else {
      out.push_back(c);
    }
  }
  return out;
}

class PostgresConnection final : public SqlConnection {
 public:
  PostgresConnection(PGconn* conn, std::string where) : conn_(conn), where_(std::move(where)) {}
  ~PostgresConnection() override { PQfinish(conn_); }

  Result<int64_t> Execute(const std::string& sql, const std::vector<SqlValue>& params,
                          std::vector<SqlRow>* rows) override {
    std::vector<const char*> values;
    for (const auto& p : params) values.push_back(p ? p->c_str() : nullptr);
    PGresult* res = PQexecParams(conn_, Numbered(sql).c_str(), static_cast<int>(values.size()),
                                 nullptr, values.data(), nullptr, nullptr, 0);
    std::unique_ptr<PGresult, void (*)(PGresult*)> guard(res, PQclear);
    ExecStatusType st = PQresultStatus(res);
    if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) return Error(res, sql, false);
    if (rows != nullptr && st == PGRES_TUPLES_OK) {
      for (int r = 0; r < PQntuples(res); ++r) {
        SqlRow row;
        for (int c = 0; c < PQnfields(res); ++c) {
          row.push_back(PQgetisnull(res, r, c) ? std::nullopt : SqlValue(PQgetvalue(res, r, c)));
        }
        rows->push_back(std::move(row));
      }
    }
    const char* tuples = PQcmdTuples(res);
    return static_cast<int64_t>(tuples && *tuples ? std::atoll(tuples) : 0);
  }

  Status BeginWrite() override { return Simple("BEGIN", false); }
  Status Commit() override { return Simple("COMMIT", true); }
  void Rollback() override { (void)Simple("ROLLBACK", false); }

  bool HasColumn(const std::string& table, const std::string& column) override {
    std::vector<SqlRow> rows;
    auto r = Execute(
        "SELECT 1 FROM information_schema.columns WHERE table_name = ? AND "
        "column_name = ? AND table_schema = current_schema()",
        {table, column}, &rows);
    return r.ok() && !rows.empty();
  }

 private:
  Status Simple(const char* sql, bool is_commit) {
    PGresult* res = PQexec(conn_, sql);
    std::unique_ptr<PGresult, void (*)(PGresult*)> guard(res, PQclear);
    if (PQresultStatus(res) != PGRES_COMMAND_OK) return Error(res, sql, is_commit);
    return Status::OK();
  }

  Status Error(PGresult* res, const std::string& sql, bool is_commit) {
    const char* state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : nullptr;
    std::string msg = PQerrorMessage(conn_);
    while (!msg.empty() && (msg.back() == '\n' || msg.back() == ' ')) msg.pop_back();
    if (state && std::strcmp(state, "23505") == 0) {
      return Status::AlreadyExists("catalog {}: {}", where_, msg);
    }
    if (PQstatus(conn_) == CONNECTION_BAD) {
      // The server may have committed before the connection dropped.
      if (is_commit) {
        return Status(StatusCode::kCommitStateUnknown,
                      fmt::format("catalog {}: connection lost during COMMIT: {}", where_, msg));
      }
      PQreset(conn_);
      return Status(StatusCode::kIOError, fmt::format("catalog {}: {}", where_, msg), true);
    }
    // Serialization failures and deadlocks are retryable.
    bool retry = state && (std::strcmp(state, "40001") == 0 || std::strcmp(state, "40P01") == 0);
    return Status(StatusCode::kIOError, fmt::format("catalog {}: {}: {}", where_, sql, msg), retry);
  }

  PGconn* conn_;
  std::string where_;
};

// "postgresql://user:secret@host/db" → "postgresql://user@host/db" for messages.
std::string Redact(const std::string& uri) {
  size_t scheme = uri.find("://");
  size_t at = uri.find('@');
  if (scheme == std::string::npos || at == std::string::npos) return uri;
  size_t colon = uri.find(':', scheme + 3);
  if (colon == std::string::npos || colon > at) return uri;
  return uri.substr(0, colon) + uri.substr(at);
}

}  // namespace

Result<std::unique_ptr<SqlConnection>> OpenPostgres(const std::string& uri) {
  PGconn* conn = PQconnectdb(uri.c_str());
  if (conn == nullptr || PQstatus(conn) != CONNECTION_OK) {
    std::string msg = conn ? PQerrorMessage(conn) : "out of memory";
    while (!msg.empty() && msg.back() == '\n') msg.pop_back();
    PQfinish(conn);
    return Status(StatusCode::kIOError,
                  fmt::format("catalog {}: cannot connect: {}", Redact(uri), msg), true);
  }
  // Server NOTICEs ("relation already exists, skipping") are not for users.
  PQsetNoticeProcessor(
      conn, [](void*, const char*) {}, nullptr);
  return std::unique_ptr<SqlConnection>(new PostgresConnection(conn, Redact(uri)));
}

}  // namespace sluice::catalog
