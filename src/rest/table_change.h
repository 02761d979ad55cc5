// TableChange: one table's commit in the Iceberg REST protocol — the
// requirements it asserts and the updates it applies (the spec's
// CommitTableRequest) — with the semantics of Iceberg's metadata builder; and
// the first metadata of a table a CreateTableRequest asks for.
//
// Contract:
// - Parse refuses (kInvalidArgument) a request that is not the spec's shape or
//   names a requirement `type` or update `action` the spec does not define,
//   before anything is checked or applied.
// - Check runs every requirement against the table's current metadata (null:
//   the table does not exist). The first that fails is kConflict naming it: the
//   client refreshes and retries (REST 409).
// - Apply runs the updates in order on a copy of `base`. An update that cannot
//   apply (a snapshot id in use, a ref to a missing snapshot, a format
//   downgrade, a location outside the warehouse, statistics of a snapshot
//   that does not exist) is kInvalidArgument (REST 400). Encryption keys,
//   which sluice's metadata does not model, are kNotImplemented (REST 406).
//   Statistics files are kept as sent. Nothing is written: the caller commits the result
//   through the table's compare-and-swap and, on a conflict, runs Check and
//   Apply again on the refreshed metadata.
// - A creating change (requirement assert-create) applies to EmptyMetadata; the
//   result must name a schema, gets a new uuid if none was assigned, and the
//   unpartitioned spec and unsorted order when it names none.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "common/status.h"
#include "iceberg/table_metadata.h"

namespace sluice::rest {

class TableChange {
 public:
  // `request` is a CommitTableRequest: {"requirements": [...], "updates": [...]}
  // ("identifier" is the caller's business). `warehouse` bounds locations.
  static Result<TableChange> Parse(const nlohmann::json& request, std::string warehouse);

  bool creates() const { return creates_; }
  Status Check(const iceberg::TableMetadata* current) const;
  Result<iceberg::TableMetadata> Apply(const iceberg::TableMetadata& base) const;

  // What a creating change starts from: format version 2, nothing else but
  // the default location.
  static iceberg::TableMetadata EmptyMetadata(std::string location);

 private:
  bool creates_ = false;
  nlohmann::json requirements_, updates_;
  std::string warehouse_;
};

// The first metadata of the table a CreateTableRequest describes ({"name",
// "schema", "location"?, "partition-spec"?, "write-order"?, "properties"?}),
// as Iceberg builds it: fresh field ids (1, 2, ... in the schema's order) with
// the spec's, sort order's and identifier fields' source ids moved along,
// partition field ids from 1000, format version from the "format-version"
// property (default 2). `location` is used when the request names none; one it
// names must lie under `warehouse`.
Result<iceberg::TableMetadata> NewTableFromRequest(const nlohmann::json& request,
                                                   const std::string& location,
                                                   const std::string& warehouse);

}  // namespace sluice::rest
