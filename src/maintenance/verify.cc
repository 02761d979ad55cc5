#include "maintenance/verify.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <set>

#include "common/ascii.h"
#include "iceberg/deletion_vector.h"
#include "iceberg/manifest.h"
#include "maintenance/files.h"
#include "parquet/reader.h"

namespace sluice::maintenance {
namespace {

const char* KindOf(const iceberg::DataFile& f) {
  switch (f.content) {
    case iceberg::FileContent::kData: return "data file";
    case iceberg::FileContent::kPositionDeletes:
      return f.content_offset ? "deletion vector" : "position delete file";
    case iceberg::FileContent::kEqualityDeletes: return "equality delete file";
  }
  return "file";
}

// One pass over a table's snapshots, each list, manifest and file checked once.
class Verifier {
 public:
  Verifier(FileIO& io, const iceberg::TableMetadata& m, const VerifyOptions& o, VerifyReport* r)
      : io_(io), m_(m), options_(o), report_(r) {}

  void Check(const iceberg::Snapshot& s) {
    current_ = &report_->snapshots.emplace_back();
    current_->snapshot_id = s.snapshot_id;
    current_->operation = s.operation();
    CheckManifests(s);
    current_ = nullptr;  // (the next emplace_back may move the rows)
  }

 private:
  void Problem(const std::string& what) {
    report_->problems.push_back(fmt::format("snapshot {}: {}", current_->snapshot_id, what));
    ++current_->problems;
  }
  // A problem of file `f`, named with its kind and path.
  void FileProblem(const iceberg::DataFile& f, const Status& st) {
    Problem(fmt::format("{} {}: {}", KindOf(f), f.file_path, st.ToString()));
  }

  void CheckManifests(const iceberg::Snapshot& s) {
    if (s.manifest_list.empty()) {  // a format v1 snapshot with inline manifests
      ++report_->not_checked;
      return;
    }
    ++report_->manifest_lists;  // each snapshot has its own
    auto manifests = iceberg::ReadManifestList(io_, s.manifest_list, m_.format_version);
    if (!manifests.ok()) {
      Problem(fmt::format("manifest list {}: {}", s.manifest_list, manifests.status().ToString()));
      return;
    }
    for (const iceberg::ManifestFile& mf : *manifests) {
      const std::vector<iceberg::ManifestEntry>* entries = Entries(mf);
      if (entries == nullptr) continue;
      for (const iceberg::ManifestEntry& e : *entries) {
        const iceberg::DataFile& f = e.file;
        if (f.content == iceberg::FileContent::kData) {
          ++current_->data_files;
          current_->records += f.record_count;
        } else {
          ++current_->delete_files;
          current_->deletes += f.record_count;
        }
        CheckFile(f);
      }
    }
  }

  // A manifest's live entries, read once; nullptr when it does not read (a
  // problem of the first snapshot that reaches it).
  const std::vector<iceberg::ManifestEntry>* Entries(const iceberg::ManifestFile& mf) {
    auto [it, fresh] = manifests_.try_emplace(NormalizePath(mf.manifest_path));
    if (!fresh) return it->second.get();
    ++report_->manifests;
    iceberg::ManifestReadOptions o;
    o.column_stats = false;
    o.live_only = true;
    auto entries = iceberg::ReadManifest(io_, mf, m_.format_version, o);
    if (!entries.ok()) {
      Problem(fmt::format("manifest {}: {}", mf.manifest_path, entries.status().ToString()));
      return nullptr;
    }
    it->second = std::make_unique<std::vector<iceberg::ManifestEntry>>(std::move(*entries));
    return it->second.get();
  }

  // What a file holds, found once: its size (-1 when it does not open) and,
  // decoded, its rows (-1 when not decoded).
  struct Found {
    int64_t size = -1, rows = -1;
  };

  // A file is opened (and decoded) once, under the first entry that names it;
  // every entry that names it is compared with what it holds, each distinct
  // entry once (another manifest may record other values for the same file).
  void CheckFile(const iceberg::DataFile& f) {
    const std::string key = NormalizePath(f.file_path);
    auto [found, fresh] = files_.try_emplace(key);
    if (fresh) {
      ++report_->files;
      found->second = Open(f);
    }
    const std::string entry =
        fmt::format("{}\n{}\n{}\n{}\n{}", key, f.file_size_in_bytes, f.record_count,
                    f.content_offset.value_or(-1), f.content_size_in_bytes.value_or(-1));
    if (found->second.size < 0 || !entries_.insert(entry).second) return;
    if (found->second.size != f.file_size_in_bytes) {
      FileProblem(f, Status::Corruption("{} bytes, its manifest records {}", found->second.size,
                                        f.file_size_in_bytes));
    }
    if (f.content_offset) {
      Status st = CheckBlob(f, found->second.size);
      if (!st.ok()) FileProblem(f, st);
    } else if (found->second.rows >= 0 && found->second.rows != f.record_count) {
      FileProblem(f, Status::Corruption("{} rows decoded, its manifest records {}",
                                        found->second.rows, f.record_count));
    }
  }

  // Opens the file (a problem when it does not open) and, with read_data,
  // decodes a data or position delete file whole (a problem when it does not
  // decode): decoded even when its size differs from the recorded one, as what
  // it holds tells what happened to it.
  Found Open(const iceberg::DataFile& f) {
    Found found;
    auto in = io_.OpenInput(f.file_path);
    if (!in.ok()) {
      FileProblem(f, in.status().code() == StatusCode::kNotFound ? Status::NotFound("missing")
                                                                 : in.status());
      return found;
    }
    found.size = (*in)->size();
    if (options_.read_data && !f.content_offset) {
      auto rows = Decode(f, std::move(*in));
      if (rows.ok()) {
        found.rows = *rows;
      } else {
        FileProblem(f, rows.status());
      }
    }
    return found;
  }

  // The rows of a Parquet data or position delete file, decoded whole; -1 for
  // another format (not decoded).
  Result<int64_t> Decode(const iceberg::DataFile& f, std::unique_ptr<InputFile> in) {
    if (!EqualsIgnoreCase(f.file_format, "parquet")) {
      ++report_->not_decoded;
      return -1;
    }
    report_->bytes_read += in->size();
    ASSIGN_OR_RETURN(auto reader, parquet::ParquetReader::Open(std::move(in)));
    int64_t rows = 0;
    Batch batch;
    for (int g = 0; g < reader->num_row_groups(); ++g) {
      RETURN_IF_ERROR_CTX(reader->ReadRowGroup(g, &batch), "row group {}", g);
      rows += batch.num_rows();
    }
    return rows;
  }

  // A deletion vector's blob lies inside its Puffin file of `size` bytes; with
  // read_data it decodes (length, magic, CRC) to record_count positions.
  Status CheckBlob(const iceberg::DataFile& f, int64_t size) {
    if (!f.content_size_in_bytes) {
      return Status::Corruption("a deletion vector without content_size_in_bytes");
    }
    const int64_t begin = *f.content_offset, end = begin + *f.content_size_in_bytes;
    if (begin < 0 || end > size || end < begin) {
      return Status::Corruption("its blob [{}, {}) lies outside the file's {} bytes", begin, end,
                                size);
    }
    if (!options_.read_data) return Status::OK();
    report_->bytes_read += end - begin;
    return iceberg::ReadDeletionVector(io_, f.file_path, f).status();
  }

  FileIO& io_;
  const iceberg::TableMetadata& m_;
  const VerifyOptions& options_;
  VerifyReport* report_;
  SnapshotVerified* current_ = nullptr;
  std::map<std::string, std::unique_ptr<std::vector<iceberg::ManifestEntry>>> manifests_;
  std::map<std::string, Found> files_;  // by path
  std::set<std::string> entries_;       // (path, size, rows, blob) compared
};

}  // namespace

Result<VerifyReport> VerifyTable(FileIO& io, const iceberg::TableMetadata& metadata,
                                 const VerifyOptions& options) {
  std::vector<const iceberg::Snapshot*> order;
  for (const iceberg::Snapshot& s : metadata.snapshots) order.push_back(&s);
  std::stable_sort(order.begin(), order.end(), [](const auto* a, const auto* b) {
    return a->sequence_number != b->sequence_number ? a->sequence_number < b->sequence_number
                                                    : a->timestamp_ms < b->timestamp_ms;
  });
  VerifyReport report;
  Verifier verifier(io, metadata, options, &report);
  for (const iceberg::Snapshot* s : order) verifier.Check(*s);
  return report;
}

}  // namespace sluice::maintenance
