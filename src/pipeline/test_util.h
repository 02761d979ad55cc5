// Helpers for the pipeline tests: a table's rows as sorted JSON lines, and
// the multiset of the ids those rows start with (to check exactly-once).
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "catalog/catalog.h"
#include "io/file_io.h"

namespace sluice::pipeline::testing {

// Every row of the table's current snapshot, as JSON lines, sorted. A table
// that cannot be loaded or scanned adds a test failure and yields no rows.
std::vector<std::string> TableRows(catalog::Catalog& catalog, FileIO& io,
                                   const catalog::TableIdent& table);
// The value of each row's first column (an integer id), as a multiset.
std::multiset<int64_t> LeadingIds(const std::vector<std::string>& rows);
// {from, ..., to - 1}
std::multiset<int64_t> IdRange(int64_t from, int64_t to);

}  // namespace sluice::pipeline::testing
