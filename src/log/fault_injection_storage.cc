#include "log/fault_injection_storage.h"

namespace sluice::log {
namespace {

constexpr const char* kOpNames[kLogOpCount] = {"append",   "fsync",  "create",
                                               "truncate", "remove", "fsync of the folder"};

class FaultyFile final : public SegmentFile {
 public:
  FaultyFile(std::unique_ptr<SegmentFile> base, FaultInjectingLogStorage* storage)
      : base_(std::move(base)), storage_(storage) {}
  const std::string& path() const override { return base_->path(); }
  int64_t size() const override { return base_->size(); }
  Status Append(std::string_view data) override {
    RETURN_IF_ERROR(storage_->Check(LogOp::kAppend, path()));
    return base_->Append(data);
  }
  Status Sync() override {
    RETURN_IF_ERROR(storage_->Check(LogOp::kSync, path()));
    return base_->Sync();
  }
  Status ReadAt(int64_t offset, int64_t length, std::string* out) const override {
    return base_->ReadAt(offset, length, out);
  }
  Status Truncate(int64_t size) override {
    RETURN_IF_ERROR(storage_->Check(LogOp::kTruncate, path()));
    return base_->Truncate(size);
  }

 private:
  std::unique_ptr<SegmentFile> base_;
  FaultInjectingLogStorage* storage_;
};

}  // namespace

void FaultInjectingLogStorage::FailNth(LogOp op, int64_t nth) {
  fail_at_[static_cast<int>(op)] = calls(op) + nth;
}

void FaultInjectingLogStorage::FailAll(LogOp op) { fail_at_[static_cast<int>(op)] = -1; }

void FaultInjectingLogStorage::Heal() {
  for (auto& f : fail_at_) f = 0;
}

Status FaultInjectingLogStorage::Check(LogOp op, const std::string& path) {
  int i = static_cast<int>(op);
  int64_t n = ++counts_[i];
  int64_t at = fail_at_[i].load();
  if (at == 0 || (at > 0 && n != at)) return Status::OK();
  if (at > 0) fail_at_[i] = 0;
  return Status::IOError("{} {}: No space left on device (injected)", kOpNames[i], path);
}

Result<std::unique_ptr<SegmentFile>> FaultInjectingLogStorage::Open(const std::string& path,
                                                                    bool create) {
  if (create) RETURN_IF_ERROR(Check(LogOp::kCreate, path));
  ASSIGN_OR_RETURN(auto file, base_->Open(path, create));
  return std::unique_ptr<SegmentFile>(new FaultyFile(std::move(file), this));
}

Status FaultInjectingLogStorage::Remove(const std::string& path) {
  RETURN_IF_ERROR(Check(LogOp::kRemove, path));
  return base_->Remove(path);
}

Status FaultInjectingLogStorage::SyncDir(const std::string& dir) {
  RETURN_IF_ERROR(Check(LogOp::kSyncDir, dir));
  return base_->SyncDir(dir);
}

}  // namespace sluice::log
