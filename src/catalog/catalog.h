// Catalog: where each table's current metadata file is recorded, and the
// compare-and-swap that makes a commit atomic.
//
// A commit writes a new metadata file, then swaps the table's pointer from the
// metadata location it started from (`expected`) to the new one. If another
// writer swapped first, the swap fails with kConflict and changes nothing; the
// caller refreshes and retries. If the catalog cannot tell whether the swap
// happened (connection lost mid-commit), it returns kCommitStateUnknown and the
// caller must not delete the new files.
//
// Thread-safety: implementations are safe to share between threads.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"

namespace sluice::catalog {

// A table name: a namespace (levels, e.g. {"db", "sub"}) and a name.
struct TableIdent {
  std::vector<std::string> ns;
  std::string name;

  // "db.sub.events"
  std::string ToString() const;
  std::string NamespaceString() const;  // levels joined with '.'
  // Parses "db.events" (the last dot separates the name). Rejects empty parts,
  // "..", '/', '\\' and control characters, which could escape the warehouse.
  static Result<TableIdent> Parse(std::string_view text);
  bool operator==(const TableIdent& o) const { return ns == o.ns && name == o.name; }
};

// Namespace levels <-> their dotted form as stored in the SQL catalog ("db.sub").
std::string JoinNamespace(const std::vector<std::string>& ns);
std::vector<std::string> SplitNamespace(const std::string& dotted);

// Rejects namespace levels or names that are unsafe as path components.
Status ValidateNamePart(std::string_view part, std::string_view what);

struct TableCommit {
  TableIdent table;
  std::string expected_location;  // the metadata location the commit started from
  std::string new_location;
};

class Catalog {
 public:
  virtual ~Catalog() = default;
  virtual std::string name() const = 0;

  virtual Status CreateNamespace(const std::vector<std::string>& ns,
                                 const std::map<std::string, std::string>& properties) = 0;
  virtual Result<std::vector<std::vector<std::string>>> ListNamespaces() = 0;
  virtual Result<bool> NamespaceExists(const std::vector<std::string>& ns) = 0;
  virtual Result<std::map<std::string, std::string>> NamespaceProperties(
      const std::vector<std::string>& ns) = 0;
  // Sets `updates` and removes `removals` in one transaction; returns the
  // removals that were not set. kInvalidArgument if a key is in both or is
  // reserved; kNotFound if the namespace is missing.
  virtual Result<std::vector<std::string>> UpdateNamespaceProperties(
      const std::vector<std::string>& ns, const std::map<std::string, std::string>& updates,
      const std::vector<std::string>& removals) = 0;
  // Fails with kInvalidArgument when the namespace still holds tables.
  virtual Status DropNamespace(const std::vector<std::string>& ns) = 0;

  // Registers a table whose first metadata file is already written.
  // kAlreadyExists if the name is taken; kNotFound if the namespace is missing.
  virtual Status CreateTable(const TableIdent& table, const std::string& metadata_location) = 0;
  // The table's current metadata location, or kNotFound.
  virtual Result<std::string> LoadTable(const TableIdent& table) = 0;
  virtual Result<std::vector<TableIdent>> ListTables(const std::vector<std::string>& ns) = 0;
  virtual Status DropTable(const TableIdent& table) = 0;
  virtual Status RenameTable(const TableIdent& from, const TableIdent& to) = 0;

  // Swaps every table's pointer in one transaction: all or none. kConflict
  // (naming the table) when any table's current location != expected.
  virtual Status CommitTables(const std::vector<TableCommit>& commits) = 0;
  // True when CommitTables makes the catalog name the caller's new metadata
  // file, and conflicts with any concurrent change (a compare-and-swap of the
  // whole file). False for a REST catalog: it applies the difference as the
  // spec's requirements and updates, which check only the refs and ids the
  // change moves (a concurrent property change does not conflict), and names
  // a file it writes itself.
  virtual bool SwapsMetadataFiles() const { return true; }
  Status CommitTable(const TableCommit& commit) { return CommitTables({commit}); }
};

// Opens a catalog from a URI:
//   "sqlite:PATH" or a plain file path → the SQL catalog on SQLite (created if missing);
//   "postgresql://..." → the SQL catalog on PostgreSQL (when built with libpq).
// `catalog_name` is the value of the catalog_name column (default "sluice").
Result<std::unique_ptr<Catalog>> OpenCatalog(const std::string& uri,
                                             const std::string& catalog_name = "sluice");

}  // namespace sluice::catalog
