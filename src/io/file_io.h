// FileIO: the one interface through which sluice touches storage.
//
// Implementations: LocalFileIO (POSIX files, named by path or file:// URI;
// writes go to a temporary name and
// are renamed into place on Close, so a reader never sees a half-written file
// and a crash leaves none behind), MemoryFileIO (tests), S3FileIO
// (io/s3/s3_file_io.h, with MakeStorageFileIO routing by scheme), and wrappers
// (RemapFileIO, FaultInjectingFileIO). io/file_io_contract.h holds the tests
// every implementation passes.
//
// Thread-safety: a FileIO may be shared by threads; each InputFile/OutputFile is
// used by one thread at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace sluice {

// OK when [offset, offset + length) lies inside a file of `size` bytes, else
// the Corruption error every InputFile gives for a read past the end.
Status CheckReadRange(const std::string& path, int64_t offset, int64_t length, int64_t size);

// Random-access reader over an immutable file.
class InputFile {
 public:
  virtual ~InputFile() = default;
  virtual const std::string& path() const = 0;
  virtual int64_t size() const = 0;
  // Reads exactly `length` bytes at `offset` into `out` (resized). Reading past
  // the end is a Corruption error naming the file, offset and size.
  virtual Status ReadAt(int64_t offset, int64_t length, std::string* out) const = 0;
  // Reads the whole file.
  Status ReadAll(std::string* out) const { return ReadAt(0, size(), out); }
};

// Sequential writer. Nothing is visible at path() until Close() succeeds;
// destroying an unclosed OutputFile (or Abort()) discards what was written.
class OutputFile {
 public:
  virtual ~OutputFile() = default;
  virtual const std::string& path() const = 0;
  virtual Status Append(std::string_view data) = 0;
  virtual int64_t position() const = 0;  // bytes appended so far
  // Makes the file durable (fsync when `sync`) and visible at path().
  virtual Status Close(bool sync = true) = 0;
  virtual void Abort() = 0;
};

// A listed file: its size and last modification, where the store keeps them
// (-1: unknown).
struct FileStatus {
  std::string path;
  int64_t size = -1;
  int64_t modified_ms = -1;
};

class FileIO {
 public:
  virtual ~FileIO() = default;
  virtual Result<std::unique_ptr<InputFile>> OpenInput(const std::string& path) = 0;
  // Creates a new file; fails with kAlreadyExists if it exists and !overwrite.
  virtual Result<std::unique_ptr<OutputFile>> OpenOutput(const std::string& path,
                                                         bool overwrite = false) = 0;
  virtual Result<bool> Exists(const std::string& path) = 0;
  virtual Status Delete(const std::string& path) = 0;
  // Lists the files (recursively) whose path starts with `prefix`.
  virtual Result<std::vector<std::string>> List(const std::string& prefix) = 0;
  // Like List, with sizes and modification times (by default unknown).
  virtual Result<std::vector<FileStatus>> ListStatus(const std::string& prefix);
  // Deletes every path; a file already gone counts as deleted (the goal is its
  // absence). Returns "PATH: reason" for each file that could not be deleted.
  // By default one Delete per path; S3 sends up to 1,000 per request.
  virtual std::vector<std::string> DeleteAll(const std::vector<std::string>& paths);

  // Convenience: write a whole file.
  Status WriteFile(const std::string& path, std::string_view data, bool overwrite = false);
  Result<std::string> ReadFile(const std::string& path);
};

std::unique_ptr<FileIO> MakeLocalFileIO();
std::unique_ptr<FileIO> MakeMemoryFileIO();

}  // namespace sluice
