// RemapFileIO: a FileIO that reaches another's files under other names.
//
// Each remap is a (from, to) pair of location prefixes: a path starting with
// `from` is read, written, deleted and listed as the same path starting with
// `to` instead (the first pair that matches; other paths pass unchanged).
// Paths handed back (InputFile::path, OutputFile::path, listings) are in the
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

// `path` with the first matching `from` prefix replaced by its `to` (or as is).
std::string ApplyRemap(const std::string& path, const Remaps& remaps);

}  // namespace sluice
