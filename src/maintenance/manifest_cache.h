// ManifestCache: what a table's manifest lists and manifests list, remembered
// by path across maintenance runs. Both kinds of file are immutable once
// committed, so what was read once stays true: an expiry that runs every
// minute reads only the lists and manifests committed since the one before,
// not every snapshot's again (docs/maintenance.md "Expiry").
//
// A manifest is remembered as the hashes of the files it lists as live
// (ADDED or EXISTING), of their paths in one form (NormalizePath): 8 bytes a
// file, whatever the path's length. A hash tells that a file is live, never
// that it is not, so a collision (two paths of one 64-bit hash) can only keep
// a file that should go (orphan cleanup deletes it later); it cannot delete a
// live one. A list's manifests are kept as the first list naming each read
// them: what expiry needs (paths, content), not what planning would (a v3
// manifest's first_row_id is assigned when a list carries it over).
//
// The cache belongs to one table: BindTo forgets everything when the table's
// uuid or location is not the one it was filled from (a table dropped and
// created again under the same name reuses no path of the old one, but
// nothing here relies on that).
//
// Not thread-safe: one table's maintenance runs one step at a time.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "iceberg/manifest.h"
#include "iceberg/table_metadata.h"
#include "io/file_io.h"

namespace sluice::maintenance {

class ManifestCache {
 public:
  using Manifests = std::vector<std::shared_ptr<const iceberg::ManifestFile>>;

  // Forgets what was read unless it was read from this table (uuid, location).
  void BindTo(const iceberg::TableMetadata& m);

  // The manifests of snapshot `s`'s manifest list (kNotImplemented for a v1
  // snapshot without one: nothing is guessed).
  Result<const Manifests*> ManifestsOf(FileIO& io, const iceberg::TableMetadata& m,
                                       const iceberg::Snapshot& s);
  // The hashes (FileHash) of the files `manifest` lists as live.
  Result<const std::vector<uint64_t>*> LiveHashesOf(FileIO& io,
                                                    const iceberg::ManifestFile& manifest,
                                                    int format_version);
  // Forgets every list and manifest but these (what the table still reaches).
  void Retain(const std::set<std::string>& lists, const std::set<std::string>& manifests);

  // Files read since made: manifest lists and manifests (tests, metrics).
  int64_t files_read() const { return files_read_; }
  size_t lists() const { return lists_.size(); }
  size_t manifests() const { return live_.size(); }

  // The hash of a data or delete file's path, in its normalized form.
  static uint64_t FileHash(std::string_view path);

 private:
  std::map<std::string, Manifests, std::less<>> lists_;
  // One ManifestFile per path, however many lists name it.
  std::map<std::string, std::shared_ptr<const iceberg::ManifestFile>, std::less<>> interned_;
  std::map<std::string, std::vector<uint64_t>, std::less<>> live_;
  std::string table_uuid_, location_;
  int64_t files_read_ = 0;
};

}  // namespace sluice::maintenance
