// FaultInjectingFileIO: a FileIO over another one that fails the calls a test
// chooses, and counts every call by kind, for tests of what sluice does when
// storage fails (RocksDB's fault-injection file system and leveldb's error-
// injecting Env are the models). It also counts output files open at once.
//
// A fault is "the n-th call of kind K from now fails with status S" (then the
// storage works again), or "every call of kind K fails" until Heal(). A failed
// call does nothing to the file underneath, except an OutputFile::Close that
// fails: the file is then discarded, as a failed rename or fsync would leave it.
//
// Thread-safe (calls from several threads are counted and failed consistently).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "io/file_io.h"

namespace sluice {

enum class FileOp {
  kOpenInput,
  kRead,
  kOpenOutput,
  kAppend,
  kClose,  // OutputFile::Close: the fsync and rename that publish a file
  kExists,
  kDelete,
  kList,
};
constexpr int kFileOpCount = 8;
std::string_view FileOpName(FileOp op);

// The errors storage gives: EIO-like and a full disk (both kIOError, as the local
// FileIO reports them), naming the operation and the path.
Status InjectedIoError(FileOp op, std::string_view path);
Status InjectedNoSpace(FileOp op, std::string_view path);

class FaultInjectingFileIO final : public FileIO {
 public:
  // Which error a fault gives.
  enum class Kind { kEio, kNoSpace };

  explicit FaultInjectingFileIO(FileIO* base) : base_(base) {}

  // The `nth` call of `op` from now (1 = the next one) fails; later ones work.
  void FailNth(FileOp op, int64_t nth, Kind kind = Kind::kEio);
  // Every call of `op` fails from now until Heal().
  void FailAll(FileOp op, Kind kind = Kind::kEio);
  // No more faults.
  void Heal();
  // Runs `hook` with the path at the start of each call of `op`, before it is
  // counted, outside any lock: another writer acting at exactly that moment,
  // say. A call the hook makes through this FileIO runs no hook. An empty
  // hook removes it.
  void BeforeEach(FileOp op, std::function<void(std::string_view path)> hook);

  int64_t calls(FileOp op) const { return counts_[static_cast<int>(op)].load(); }
  int64_t injected() const { return injected_.load(); }
  int64_t open_outputs() const { return open_outputs_.load(); }
  int64_t peak_open_outputs() const { return peak_open_outputs_.load(); }
  void ResetCounts();

  Result<std::unique_ptr<InputFile>> OpenInput(const std::string& path) override;
  Result<std::unique_ptr<OutputFile>> OpenOutput(const std::string& path,
                                                 bool overwrite = false) override;
  Result<bool> Exists(const std::string& path) override;
  Status Delete(const std::string& path) override;
  Result<std::vector<std::string>> List(const std::string& prefix) override;
  Result<std::vector<FileStatus>> ListStatus(const std::string& prefix) override;

  // Counts a call of `op` on `path` and returns the injected error, if any. For
  // the file wrappers.
  Status Check(FileOp op, std::string_view path);
  void OutputClosed() { --open_outputs_; }

 private:
  struct Fault {
    int64_t at = 0;  // fail when the op's count reaches this (0: none)
    bool all = false;
    Kind kind = Kind::kEio;
  };

  FileIO* const base_;
  std::array<std::atomic<int64_t>, kFileOpCount> counts_{};
  std::atomic<int64_t> injected_{0};
  std::atomic<int64_t> open_outputs_{0};
  std::atomic<int64_t> peak_open_outputs_{0};
  std::mutex mu_;
  std::array<Fault, kFileOpCount> faults_{};                                 // guarded by mu_
  std::array<std::function<void(std::string_view)>, kFileOpCount> hooks_{};  // guarded by mu_
  std::atomic<bool> hooked_{false};  // any hook set (calls without hooks skip a lock)
};

}  // namespace sluice
