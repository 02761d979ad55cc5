// RemapFileIO: a FileIO that reaches another's files under other names.
//
// Each remap is a (from, to) pair of location prefixes: a path under `from`
// is read, written, deleted and listed as the same path under `to` instead
// (the first pair that holds it; other paths pass unchanged). A prefix holds
// a path equal to it or continuing with '/' (/data/t does not hold /data/t2),
// and the spellings of a local path (file:///a, file:/a, /a) are one.
// Paths handed back (InputFile::path, OutputFile::path, listings: through
// the remap the listed prefix took, and only paths under its `to`) are in the
// `from` form again, so that a table whose metadata names another machine's
// locations (a copy of it, a fixture, a bucket mirrored to disk) is read and
// maintained as it names itself: what is written refers to `from` paths.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "io/file_io.h"

namespace sluice {

using Remaps = std::vector<std::pair<std::string, std::string>>;

// `base` must outlive the result.
std::unique_ptr<FileIO> MakeRemapFileIO(FileIO& base, Remaps remaps);

// `path` under the first remap's `to` whose `from` holds it (or as is).
std::string ApplyRemap(const std::string& path, const Remaps& remaps);
// The other way: `path` under the `from` of the first remap whose `to` holds it.
std::string UnapplyRemap(const std::string& path, const Remaps& remaps);

}  // namespace sluice
