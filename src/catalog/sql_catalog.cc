#include "catalog/sql_catalog.h"

#include <algorithm>
#include <set>

namespace sluice::catalog {

namespace {

constexpr const char* kExistsProperty = "exists";

}  // namespace

std::string JoinNamespace(const std::vector<std::string>& ns) {
  std::string out;
  for (size_t i = 0; i < ns.size(); ++i) out += (i ? "." : "") + ns[i];
  return out;
}

std::vector<std::string> SplitNamespace(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    size_t dot = s.find('.', start);
    out.push_back(s.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
    if (dot == std::string::npos) return out;
    start = dot + 1;
  }
}

std::string TableIdent::NamespaceString() const { return JoinNamespace(ns); }
std::string TableIdent::ToString() const {
  return ns.empty() ? name : NamespaceString() + "." + name;
}

Status ValidateNamePart(std::string_view part, std::string_view what) {
  if (part.empty()) return Status::Invalid("{} name is empty", what);
  if (part == "." || part == "..")
    return Status::Invalid("{} name '{}' is not allowed", what, part);
  for (char c : part) {
    if (c == '/' || c == '\\' || static_cast<unsigned char>(c) < 0x20) {
      return Status::Invalid("{} name '{}' contains '/', '\\' or a control character", what,
                             PrintableText(part));
    }
  }
  if (part.size() > 255) return Status::Invalid("{} name is longer than 255 bytes", what);
  return Status::OK();
}

Result<TableIdent> TableIdent::Parse(std::string_view text) {
  if (text.find("..") != std::string_view::npos) {
    return Status::Invalid("table name '{}' contains '..'", text);
  }
  size_t dot = text.rfind('.');
  if (dot == std::string_view::npos) {
    return Status::Invalid("table name '{}' needs a namespace: NAMESPACE.TABLE", text);
  }
  TableIdent id;
  id.ns = SplitNamespace(std::string(text.substr(0, dot)));
  id.name = std::string(text.substr(dot + 1));
  for (const auto& level : id.ns) RETURN_IF_ERROR(ValidateNamePart(level, "namespace"));
  RETURN_IF_ERROR(ValidateNamePart(id.name, "table"));
  return id;
}

Result<std::unique_ptr<SqlCatalog>> SqlCatalog::Make(std::unique_ptr<SqlConnection> conn,
                                                     std::string catalog_name) {
  std::unique_ptr<SqlCatalog> c(new SqlCatalog(std::move(conn), std::move(catalog_name)));
  RETURN_IF_ERROR(c->Init());
  return c;
}

Status SqlCatalog::Init() {
  // Two processes creating the tables at once can collide on PostgreSQL's
  // catalog (unique violation); the loser retries and finds them there.
  Status st = CreateTables();
  if (st.code() == StatusCode::kAlreadyExists) st = CreateTables();
  return st;
}

Status SqlCatalog::CreateTables() {
  std::lock_guard<std::mutex> lock(mu_);
  RETURN_IF_ERROR(
      conn_->Execute("CREATE TABLE IF NOT EXISTS iceberg_tables ("
                     "catalog_name VARCHAR(255) NOT NULL, table_namespace VARCHAR(255) NOT NULL, "
                     "table_name VARCHAR(255) NOT NULL, metadata_location VARCHAR(1000), "
                     "previous_metadata_location VARCHAR(1000), iceberg_type VARCHAR(5), "
                     "PRIMARY KEY (catalog_name, table_namespace, table_name))",
                     {}));
  RETURN_IF_ERROR(
      conn_->Execute("CREATE TABLE IF NOT EXISTS iceberg_namespace_properties ("
                     "catalog_name VARCHAR(255) NOT NULL, namespace VARCHAR(255) NOT NULL, "
                     "property_key VARCHAR(255) NOT NULL, property_value VARCHAR(1000) NOT NULL, "
                     "PRIMARY KEY (catalog_name, namespace, property_key))",
                     {}));
  has_type_column_ = conn_->HasColumn("iceberg_tables", "iceberg_type");
  return Status::OK();
}

std::string SqlCatalog::TableTypeFilter() const {
  return has_type_column_ ? " AND (iceberg_type = 'TABLE' OR iceberg_type IS NULL)" : "";
}

template <typename Fn>
Status SqlCatalog::InTransaction(Fn&& fn) {
  RETURN_IF_ERROR(conn_->BeginWrite());
  Status st = fn();
  if (!st.ok()) {
    conn_->Rollback();
    return st;
  }
  st = conn_->Commit();
  if (!st.ok()) conn_->Rollback();
  return st;
}

Status SqlCatalog::CreateNamespace(const std::vector<std::string>& ns,
                                   const std::map<std::string, std::string>& properties) {
  for (const auto& level : ns) RETURN_IF_ERROR(ValidateNamePart(level, "namespace"));
  if (ns.empty()) return Status::Invalid("namespace name is empty");
  std::lock_guard<std::mutex> lock(mu_);
  std::string n = JoinNamespace(ns);
  return InTransaction([&]() -> Status {
    std::vector<SqlRow> rows;
    RETURN_IF_ERROR(conn_->Execute(
        "SELECT 1 FROM iceberg_namespace_properties WHERE catalog_name = ? AND namespace = ? "
        "UNION SELECT 1 FROM iceberg_tables WHERE catalog_name = ? AND table_namespace = ?",
        {catalog_name_, n, catalog_name_, n}, &rows));
    if (!rows.empty()) return Status::AlreadyExists("namespace {} already exists", n);
    RETURN_IF_ERROR(
        conn_->Execute("INSERT INTO iceberg_namespace_properties VALUES (?, ?, ?, ?)",
                       {catalog_name_, n, std::string(kExistsProperty), std::string("true")}));
    for (const auto& [k, v] : properties) {
      if (k == kExistsProperty) return Status::Invalid("namespace property 'exists' is reserved");
      RETURN_IF_ERROR(conn_->Execute("INSERT INTO iceberg_namespace_properties VALUES (?, ?, ?, ?)",
                                     {catalog_name_, n, k, v}));
    }
    return Status::OK();
  });
}

Result<std::vector<std::vector<std::string>>> SqlCatalog::ListNamespaces() {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<SqlRow> rows;
  RETURN_IF_ERROR(conn_->Execute(
      "SELECT DISTINCT table_namespace FROM iceberg_tables WHERE catalog_name = ? "
      "UNION SELECT DISTINCT namespace FROM iceberg_namespace_properties WHERE catalog_name = ? "
      "ORDER BY 1",
      {catalog_name_, catalog_name_}, &rows));
  std::vector<std::vector<std::string>> out;
  for (const auto& r : rows) {
    if (r[0]) out.push_back(SplitNamespace(*r[0]));
  }
  return out;
}

Result<bool> SqlCatalog::NamespaceExists(const std::vector<std::string>& ns) {
  ASSIGN_OR_RETURN(auto all, ListNamespaces());
  return std::find(all.begin(), all.end(), ns) != all.end();
}

Result<std::map<std::string, std::string>> SqlCatalog::NamespaceProperties(
    const std::vector<std::string>& ns) {
  ASSIGN_OR_RETURN(bool exists, NamespaceExists(ns));
  if (!exists) return Status::NotFound("namespace {} does not exist", JoinNamespace(ns));
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<SqlRow> rows;
  RETURN_IF_ERROR(
      conn_->Execute("SELECT property_key, property_value FROM iceberg_namespace_properties "
                     "WHERE catalog_name = ? AND namespace = ?",
                     {catalog_name_, JoinNamespace(ns)}, &rows));
  std::map<std::string, std::string> out;
  for (const auto& r : rows) {
    if (r[0] && *r[0] != kExistsProperty) out[*r[0]] = r[1].value_or("");
  }
  return out;
}

Result<std::vector<std::string>> SqlCatalog::UpdateNamespaceProperties(
    const std::vector<std::string>& ns, const std::map<std::string, std::string>& updates,
    const std::vector<std::string>& removals) {
  std::string n = JoinNamespace(ns);
  for (const std::string& key : removals) {
    if (updates.count(key)) {
      return Status::Invalid("namespace {}: property '{}' is both set and removed", n, key);
    }
  }
  for (const std::string& key : removals) {
    if (key == kExistsProperty) return Status::Invalid("namespace property 'exists' is reserved");
  }
  for (const auto& [key, value] : updates) {
    if (key == kExistsProperty) return Status::Invalid("namespace property 'exists' is reserved");
  }
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> missing;
  RETURN_IF_ERROR(InTransaction([&]() -> Status {
    missing.clear();
    // Checked inside the transaction: a namespace dropped meanwhile is not
    // brought back by the rows this inserts.
    std::vector<SqlRow> rows;
    RETURN_IF_ERROR(conn_->Execute(
        "SELECT 1 FROM iceberg_namespace_properties WHERE catalog_name = ? AND namespace = ? "
        "UNION SELECT 1 FROM iceberg_tables WHERE catalog_name = ? AND table_namespace = ?",
        {catalog_name_, n, catalog_name_, n}, &rows));
    if (rows.empty()) return Status::NotFound("namespace {} does not exist", n);
    for (const std::string& key : removals) {
      ASSIGN_OR_RETURN(int64_t gone,
                       conn_->Execute("DELETE FROM iceberg_namespace_properties WHERE "
                                      "catalog_name = ? AND namespace = ? AND property_key = ?",
                                      {catalog_name_, n, key}));
      if (gone == 0) missing.push_back(key);
    }
    for (const auto& [key, value] : updates) {
      // One statement (SQLite and PostgreSQL): no window between an UPDATE
      // finding no row and an INSERT racing another writer's.
      RETURN_IF_ERROR(
          conn_->Execute("INSERT INTO iceberg_namespace_properties VALUES (?, ?, ?, ?) "
                         "ON CONFLICT (catalog_name, namespace, property_key) "
                         "DO UPDATE SET property_value = excluded.property_value",
                         {catalog_name_, n, key, value}));
    }
    return Status::OK();
  }));
  return missing;
}

Status SqlCatalog::DropNamespace(const std::vector<std::string>& ns) {
  ASSIGN_OR_RETURN(auto tables, ListTables(ns));
  if (!tables.empty()) {
    return Status::Invalid("namespace {} is not empty ({} tables)", JoinNamespace(ns),
                           tables.size());
  }
  std::lock_guard<std::mutex> lock(mu_);
  ASSIGN_OR_RETURN(int64_t n, conn_->Execute("DELETE FROM iceberg_namespace_properties WHERE "
                                             "catalog_name = ? AND namespace = ?",
                                             {catalog_name_, JoinNamespace(ns)}));
  if (n == 0) return Status::NotFound("namespace {} does not exist", JoinNamespace(ns));
  return Status::OK();
}

Status SqlCatalog::CreateTable(const TableIdent& table, const std::string& metadata_location) {
  ASSIGN_OR_RETURN(bool exists, NamespaceExists(table.ns));
  if (!exists) return Status::NotFound("namespace {} does not exist", table.NamespaceString());
  std::lock_guard<std::mutex> lock(mu_);
  std::string sql =
      has_type_column_ ? "INSERT INTO iceberg_tables VALUES (?, ?, ?, ?, NULL, 'TABLE')"
                       : "INSERT INTO iceberg_tables (catalog_name, table_namespace, table_name, "
                         "metadata_location, previous_metadata_location) VALUES (?, ?, ?, ?, NULL)";
  auto r =
      conn_->Execute(sql, {catalog_name_, table.NamespaceString(), table.name, metadata_location});
  if (!r.ok() && r.status().code() == StatusCode::kAlreadyExists) {
    return Status::AlreadyExists("table {} already exists", table.ToString());
  }
  return r.status();
}

Result<std::string> SqlCatalog::LoadTable(const TableIdent& table) {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<SqlRow> rows;
  RETURN_IF_ERROR(
      conn_->Execute("SELECT metadata_location FROM iceberg_tables WHERE catalog_name = ? AND "
                     "table_namespace = ? AND table_name = ?" +
                         TableTypeFilter(),
                     {catalog_name_, table.NamespaceString(), table.name}, &rows));
  if (rows.empty() || !rows[0][0]) {
    return Status::NotFound("table {} does not exist", table.ToString());
  }
  return *rows[0][0];
}

Result<std::vector<TableIdent>> SqlCatalog::ListTables(const std::vector<std::string>& ns) {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<SqlRow> rows;
  RETURN_IF_ERROR(
      conn_->Execute("SELECT table_name FROM iceberg_tables WHERE catalog_name = ? "
                     "AND table_namespace = ?" +
                         TableTypeFilter() + " ORDER BY table_name",
                     {catalog_name_, JoinNamespace(ns)}, &rows));
  std::vector<TableIdent> out;
  for (const auto& r : rows) out.push_back(TableIdent{ns, r[0].value_or("")});
  return out;
}

Status SqlCatalog::DropTable(const TableIdent& table) {
  std::lock_guard<std::mutex> lock(mu_);
  ASSIGN_OR_RETURN(int64_t n, conn_->Execute("DELETE FROM iceberg_tables WHERE catalog_name = ? "
                                             "AND table_namespace = ? AND table_name = ?" +
                                                 TableTypeFilter(),
                                             {catalog_name_, table.NamespaceString(), table.name}));
  if (n == 0) return Status::NotFound("table {} does not exist", table.ToString());
  return Status::OK();
}

Status SqlCatalog::RenameTable(const TableIdent& from, const TableIdent& to) {
  ASSIGN_OR_RETURN(bool exists, NamespaceExists(to.ns));
  if (!exists) return Status::NotFound("namespace {} does not exist", to.NamespaceString());
  std::lock_guard<std::mutex> lock(mu_);
  return InTransaction([&]() -> Status {
    auto r = conn_->Execute(
        "UPDATE iceberg_tables SET table_namespace = ?, table_name = ? "
        "WHERE catalog_name = ? AND table_namespace = ? AND table_name = ?" +
            TableTypeFilter(),
        {to.NamespaceString(), to.name, catalog_name_, from.NamespaceString(), from.name});
    if (!r.ok() && r.status().code() == StatusCode::kAlreadyExists) {
      return Status::AlreadyExists("table {} already exists", to.ToString());
    }
    RETURN_IF_ERROR(r);
    if (*r == 0) return Status::NotFound("table {} does not exist", from.ToString());
    return Status::OK();
  });
}

Status SqlCatalog::CommitTables(const std::vector<TableCommit>& commits) {
  std::lock_guard<std::mutex> lock(mu_);
  return InTransaction([&]() -> Status {
    for (const auto& c : commits) {
      ASSIGN_OR_RETURN(
          int64_t n,
          conn_->Execute("UPDATE iceberg_tables SET metadata_location = ?, "
                         "previous_metadata_location = ? WHERE catalog_name = ? AND "
                         "table_namespace = ? AND table_name = ? AND metadata_location = ?" +
                             TableTypeFilter(),
                         {c.new_location, c.expected_location, catalog_name_,
                          c.table.NamespaceString(), c.table.name, c.expected_location}));
      if (n == 0) {
        return Status::Conflict("table {}: metadata changed since {} (concurrent commit)",
                                c.table.ToString(), c.expected_location);
      }
    }
    return Status::OK();
  });
}

Result<std::unique_ptr<Catalog>> OpenCatalog(const std::string& uri,
                                             const std::string& catalog_name) {
  if (uri.starts_with("http://") || uri.starts_with("https://")) {
    return Status::Invalid("catalog {}: a REST catalog opens with OpenRestCatalog (rest_client.h)",
                           uri);
  }
  std::unique_ptr<SqlConnection> conn;
  if (uri.starts_with("postgresql://") || uri.starts_with("postgres://")) {
    ASSIGN_OR_RETURN(conn, OpenPostgres(uri));
  } else {
    ASSIGN_OR_RETURN(conn, OpenSqlite(uri.starts_with("sqlite:") ? uri.substr(7) : uri));
  }
  ASSIGN_OR_RETURN(auto catalog, SqlCatalog::Make(std::move(conn), catalog_name));
  return std::unique_ptr<Catalog>(std::move(catalog));
}

}  // namespace sluice::catalog
