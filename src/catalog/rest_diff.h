// The Iceberg REST commit (requirements and updates) that turns one metadata
// file of a table into another: how a client of a REST catalog commits a
// change it staged as a whole new metadata file, as sluice's Table does.
//
// Contract:
// - Requirements: the table's uuid; every ref the change moves or removes is
//   where `from` has it (or absent, when `from` lacks it); the current schema
//   and last column id when the change adds or switches schemas; the default
//   spec and last partition id when it changes specs; the default sort order
//   when it changes that. A concurrent change to anything else (a property, a
//   snapshot on a branch this change leaves alone) does not fail the commit.
// - Updates, in an order the server can apply: format upgrade, added schemas,
//   specs and sort orders (each as `to` wrote it) and the defaults switched to
//   them, added snapshots (oldest first), ref moves and removals, dropped
//   snapshots, property changes, a new location.
// - Elements are matched by id: one both files have is left alone (the
//   server's file may spell it differently). Removing snapshots also asserts
//   main (the removal was judged against that history). Refused
//   (kNotImplemented): a change of the table's uuid.
#pragma once

#include <nlohmann/json.hpp>
#include <string_view>

#include "common/status.h"

namespace sluice::catalog {

// `from` and `to` are the two metadata files' JSON text; returns
// {"requirements": [...], "updates": [...]}.
Result<nlohmann::json> RestCommitFor(std::string_view from, std::string_view to);

}  // namespace sluice::catalog
