// FileSource: a pipeline source reading JSON-lines files in one folder (for
// backfills and demos). docs/pipelines.md "File source".
//
// Partitions are file names relative to the folder (matching `pattern`, not
// recursive, hidden files skipped); offsets are byte offsets of the next line
// to read. Files are read in name order; a file appearing later is picked up
// by a rescan of the folder, which a Poll does when it finds nothing new (at
// most every `scan_interval_ms`). A line is delivered only once it ends in
// '\n' (the partial last line of a file being appended to waits); a trailing
// '\r' is stripped; blank lines are skipped but advance the offset. Each
// record's offset is where its line starts, its timestamp the file's mtime.
//
// A file must only ever grow: a tracked file that shrinks below its position
// or disappears is kOutOfRange (from Seek, and from Poll while running), since
// the pipeline could not resume it exactly-once.
//
// Thread-safety: used by its pipeline's thread only (see source.h).
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "sources/file_lines.h"
#include "sources/source.h"

namespace sluice::sources {

struct FileSourceOptions {
  std::string dir;                  // the folder; must exist
  std::string pattern = "*.jsonl";  // fnmatch(3) glob on file names
  std::string name;                 // the SQL source's name (for messages)
  // How often a Poll that finds nothing new may list the folder again.
  int scan_interval_ms = 200;
  // A bounded run (`sluice run --bounded`) reads to the end of the files
  // there are: a Poll that finds nothing left lists the folder at once, and
  // returns once that finds nothing new (Exhausted), rather than waiting
  // for the scan interval and its timeout.
  bool bounded = false;
  // Lines are delivered whole however long (the pipeline decodes or
  // dead-letters them); one longer than this is kOutOfRange instead of an
  // unbounded allocation.
  int64_t max_line_bytes = int64_t{256} << 20;
};

class FileSource : public Source {
 public:
  // kNotFound when `options.dir` is missing or not a folder.
  static Result<std::unique_ptr<FileSource>> Open(FileSourceOptions options);

  std::string Describe() const override { return "file:" + options_.dir; }
  Status Seek(const Positions& positions) override;
  Result<int64_t> Poll(int64_t max_bytes, int timeout_ms,
                       const std::function<void(const SourceRecord&)>& sink) override;
  // Reads the lines straight into `out` (Poll copies them out of a buffer of
  // its own), or, when `out->defer_reads`, leaves ranges of whole lines to be
  // read (sources/file_lines.h); their positions move past them at once. Its
  // count is then of records and ranges.
  Result<int64_t> PollInto(int64_t max_bytes, int timeout_ms, RawBatch* out) override;
  Positions CurrentPositions() const override;
  // Per file, bytes not yet read (size at the last look - position).
  Positions Lag() const override;
  bool Exhausted() const override { return drained_; }

 private:
  struct FileState {
    int64_t next = 0;           // byte offset of the next line to read
    int64_t size = 0;           // size at the last look
    int64_t mtime_ms = 0;       // record timestamp
    int64_t stalled_size = -1;  // size at which only a partial line was left
  };
  using Files = std::map<std::string, FileState>;

  explicit FileSource(FileSourceOptions options) : options_(std::move(options)) {}

  std::string PathOf(const std::string& file) const { return options_.dir + "/" + file; }
  // The matching files in the folder, with sizes (positions 0).
  Result<Files> List() const;
  // Lists the folder: adds new files, refreshes sizes, fails on files that
  // vanished or shrank below their position.
  Status Rescan();
  Status StatTracked(const std::string& file, FileState& state) const;
  // Reads complete lines of every file with unread bytes, in name order.
  Result<int64_t> ReadAvailable(int64_t max_bytes, RawBatch* out);
  Result<int64_t> ReadFile(const std::string& file, FileState& state, int64_t max_bytes,
                           int64_t* bytes, RawBatch* out);
  // When `out->defer_reads`: the file's whole lines the budget reaches as a
  // range to be read later (1), or 0 when ReadFile must read them.
  Result<int64_t> DeferFile(const std::string& file, FileState& state, int64_t max_bytes,
                            int64_t* bytes, RawBatch* out);

  FileSourceOptions options_;
  Files files_;
  RawBatch scratch_;   // Poll's records
  std::string probe_;  // DeferFile's look for a line end
  // Reads a batch's ranges before ReadFile adds records after them.
  DeferredLines read_now_;
  std::chrono::steady_clock::time_point last_scan_{};
  bool drained_ = false;  // the last Poll found nothing new right after a rescan
};

}  // namespace sluice::sources
