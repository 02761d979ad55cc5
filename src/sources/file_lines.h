// The lines of a JSON-lines file, as a file source delivers them: one
// grammar (LineValueOf), read either one line after another by the source
// (FileSource::ReadFile) or, for a byte range of whole lines, in parts on
// several threads (DeferredLines) so that reading a file is not one
// thread's work. docs/pipelines.md "File source".
//
// The grammar: a line ends in '\n'; a '\r' before it is not part of the
// value; a UTF-8 byte-order mark that starts a file is not either; a line of
// nothing but spaces and tabs is blank and is no record (its bytes still
// advance the offset). A record's offset is where its line starts.
//
// Deferred reads. A file source asked to defer (RawBatch::defer_reads)
// reserves a range's bytes in the batch's buffer, unread, and records where
// they go (RawBatch::deferred); its position moves past the range at once.
// The range starts at a line start and ends right after a '\n' (the source
// probed the file for it), so every line in it is whole. DeferredLines then
// reads the range in parts of about kPartBytes, each part's bytes into their
// place in the buffer, and finds the line ends within its part, on whatever
// threads run the parts; Finish stitches the lines that cross parts and
// appends every record to the batch in file order, as one read after
// another would have. A part touches only its own bytes and its own
// records, so parts may run at once; Plan and Finish run alone.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "common/status.h"
#include "sources/raw_batch.h"

namespace sluice::sources {

// Where a line's value lies within the line [line, line + size) (the line
// without its '\n'), or nullopt for a blank line. `at_file_start`: the line
// starts at offset 0 of its file (a byte-order mark is dropped).
struct LineValue {
  size_t begin, end;
};
std::optional<LineValue> LineValueOf(const char* line, size_t size, bool at_file_start);

// Reads a batch's deferred ranges in parts. One object serves batch after
// batch (its parts' buffers are kept).
class DeferredLines {
 public:
  static constexpr int64_t kPartBytes = int64_t{512} << 10;

  // Splits `batch`'s deferred ranges into parts of about `part_bytes` each
  // and returns how many. Until Finish, the batch's raw buffer must not grow
  // while a part is being read, nor its deferred ranges change.
  int Plan(const RawBatch& batch, int64_t part_bytes = kPartBytes);
  // Claims the next part no thread has claimed, reads it into the batch's
  // buffer and finds its lines; false when none is left. Threads may call it
  // at once (each reads the parts it claims).
  bool ReadNext(RawBatch& batch);
  // Parts not claimed yet.
  int Unclaimed() const;
  // Once every part has been read: appends the lines of every range to the
  // batch's records in file order and clears its deferred ranges. The first
  // part's error (a read that failed, a file that shrank or changed while it
  // was read) names the source, file and offset; the batch is then not to be
  // used.
  Status Finish(RawBatch& batch);

 private:
  struct Part {
    size_t range = 0;
    int64_t begin = 0, end = 0;  // file offsets
    // raw indexes of the part's first and last '\n' (none: npos), and the
    // records of the lines between them (each starts after a '\n' of the part).
    size_t first_newline = 0, last_newline = 0;
    std::vector<RawRecord> records;
    Status status;
  };
  void ReadPart(RawBatch& batch, Part& p);

  std::vector<Part> parts_;
  std::atomic<int> next_{0};  // the next part to claim
};

}  // namespace sluice::sources
