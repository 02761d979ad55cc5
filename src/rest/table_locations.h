// Where tables live. A table's files are everything under its location (a
// purge deletes them all), so the REST catalog keeps tables it places from
// sharing or nesting locations, and keeps client-chosen locations inside the
// warehouse.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "catalog/catalog.h"
#include "common/status.h"
#include "io/file_io.h"

namespace sluice::rest {

// kInvalidArgument unless `location` lies under `warehouse` (no ".." or "."
// segments; a file:// URI and a plain absolute path name the same place).
Status CheckLocationInWarehouse(const std::string& location, const std::string& warehouse);

// Whether one location equals or lies under the other (by path segments; a
// location with "." or ".." segments overlaps everything).
bool LocationsOverlap(std::string_view a, std::string_view b);

// The first table of `catalog` other than `self` whose location overlaps
// `location`, or nullopt. Reads every table's metadata: for creates and purges,
// not for hot paths. Tables dropped meanwhile or unreadable for good are
// skipped; a retryable failure to read one is returned.
Result<std::optional<catalog::TableIdent>> TableOverlapping(catalog::Catalog& catalog, FileIO& io,
                                                            const std::string& location,
                                                            const catalog::TableIdent* self);

}  // namespace sluice::rest
