// FaultInjectingLogStorage: LogStorage over the local one that fails chosen calls
// (append, sync, create, truncate, remove, directory sync) until healed, for tests
// of the log's behaviour on a failing disk (EIO, a full disk). The FileIO
// counterpart is io/fault_injection_file_io.h.
//
// Thread-safe.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "log/segment_file.h"

namespace sluice::log {

enum class LogOp { kAppend, kSync, kCreate, kTruncate, kRemove, kSyncDir };
constexpr int kLogOpCount = 6;

class FaultInjectingLogStorage final : public LogStorage {
 public:
  // The `nth` call of `op` from now fails, then calls work again.
  void FailNth(LogOp op, int64_t nth);
  // Every call of `op` fails until Heal().
  void FailAll(LogOp op);
  void Heal();
  int64_t calls(LogOp op) const { return counts_[static_cast<int>(op)].load(); }

  Status CreateDir(const std::string& dir) override { return base_->CreateDir(dir); }
  Result<std::unique_ptr<SegmentFile>> Open(const std::string& path, bool create) override;
  Result<std::vector<std::string>> ListNames(const std::string& dir) override {
    return base_->ListNames(dir);
  }
  Status Remove(const std::string& path) override;
  Status SyncDir(const std::string& dir) override;

  // Counts a call and returns its injected error, if any (for the file wrapper).
  Status Check(LogOp op, const std::string& path);

 private:
  LogStorage* const base_ = PosixLogStorage();
  std::array<std::atomic<int64_t>, kLogOpCount> counts_{};
  std::array<std::atomic<int64_t>, kLogOpCount> fail_at_{};  // 0: none, -1: all
};

}  // namespace sluice::log
