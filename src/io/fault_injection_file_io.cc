#include "io/fault_injection_file_io.h"

namespace sluice {
namespace {

class FaultyInput final : public InputFile {
 public:
  FaultyInput(std::unique_ptr<InputFile> base, FaultInjectingFileIO* io)
      : base_(std::move(base)), io_(io) {}
  const std::string& path() const override { return base_->path(); }
  int64_t size() const override { return base_->size(); }
  Status ReadAt(int64_t offset, int64_t length, std::string* out) const override {
    RETURN_IF_ERROR(io_->Check(FileOp::kRead, path()));
    return base_->ReadAt(offset, length, out);
  }

 private:
  std::unique_ptr<InputFile> base_;
  FaultInjectingFileIO* io_;
};

class FaultyOutput final : public OutputFile {
 public:
  FaultyOutput(std::unique_ptr<OutputFile> base, FaultInjectingFileIO* io)
      : base_(std::move(base)), io_(io) {}
  ~FaultyOutput() override { Done(); }
  const std::string& path() const override { return base_->path(); }
  Status Append(std::string_view data) override {
    RETURN_IF_ERROR(io_->Check(FileOp::kAppend, path()));
    return base_->Append(data);
  }
  int64_t position() const override { return base_->position(); }
  Status Close(bool sync) override {
    Status injected = io_->Check(FileOp::kClose, path());
    if (!injected.ok()) {
      base_->Abort();  // a failed fsync/rename publishes nothing
      Done();
      return injected;
    }
    Status st = base_->Close(sync);
    Done();
    return st;
  }
  void Abort() override {
    base_->Abort();
    Done();
  }

 private:
  void Done() {
    if (!done_) io_->OutputClosed();
    done_ = true;
  }
  std::unique_ptr<OutputFile> base_;
  FaultInjectingFileIO* io_;
  bool done_ = false;
};

}  // namespace

std::string_view FileOpName(FileOp op) {
  switch (op) {
    case FileOp::kOpenInput: return "open";
    case FileOp::kRead: return "read";
    case FileOp::kOpenOutput: return "create";
    case FileOp::kAppend: return "write";
    case FileOp::kClose: return "close (fsync, rename)";
    case FileOp::kExists: return "exists";
    case FileOp::kDelete: return "delete";
    case FileOp::kList: return "list";
  }
  return "?";
}

Status InjectedIoError(FileOp op, std::string_view path) {
  return Status::IOError("{} {}: Input/output error (injected)", FileOpName(op), path);
}

Status InjectedNoSpace(FileOp op, std::string_view path) {
  return Status::IOError("{} {}: No space left on device (injected)", FileOpName(op), path);
}

void FaultInjectingFileIO::FailNth(FileOp op, int64_t nth, Kind kind) {
  std::lock_guard<std::mutex> lock(mu_);
  faults_[static_cast<int>(op)] = Fault{calls(op) + nth, false, kind};
}

void FaultInjectingFileIO::FailAll(FileOp op, Kind kind) {
  std::lock_guard<std::mutex> lock(mu_);
  faults_[static_cast<int>(op)] = Fault{0, true, kind};
}

void FaultInjectingFileIO::Heal() {
  std::lock_guard<std::mutex> lock(mu_);
  faults_ = {};
}

void FaultInjectingFileIO::ResetCounts() {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& c : counts_) c = 0;
  injected_ = 0;
  peak_open_outputs_ = open_outputs_.load();
  faults_ = {};
}

void FaultInjectingFileIO::BeforeEach(FileOp op, std::function<void(std::string_view)> hook) {
  std::lock_guard<std::mutex> lock(mu_);
  hooks_[static_cast<int>(op)] = std::move(hook);
  bool any = false;
  for (const auto& h : hooks_) any = any || static_cast<bool>(h);
  hooked_ = any;
}

Status FaultInjectingFileIO::Check(FileOp op, std::string_view path) {
  thread_local bool in_hook = false;  // (a hook's own calls run none)
  if (hooked_.load() && !in_hook) {
    std::function<void(std::string_view)> hook;
    {
      std::lock_guard<std::mutex> lock(mu_);
      hook = hooks_[static_cast<int>(op)];
    }
    if (hook) {
      in_hook = true;
      hook(path);
      in_hook = false;
    }
  }
  std::lock_guard<std::mutex> lock(mu_);
  int64_t n = ++counts_[static_cast<int>(op)];
  Fault& f = faults_[static_cast<int>(op)];
  if (!f.all && (f.at == 0 || n != f.at)) return Status::OK();
  ++injected_;
  Kind kind = f.kind;
  if (!f.all) f = Fault{};
  return kind == Kind::kNoSpace ? InjectedNoSpace(op, path) : InjectedIoError(op, path);
}

Result<std::unique_ptr<InputFile>> FaultInjectingFileIO::OpenInput(const std::string& path) {
  RETURN_IF_ERROR(Check(FileOp::kOpenInput, path));
  ASSIGN_OR_RETURN(auto in, base_->OpenInput(path));
  return std::unique_ptr<InputFile>(new FaultyInput(std::move(in), this));
}

Result<std::unique_ptr<OutputFile>> FaultInjectingFileIO::OpenOutput(const std::string& path,
                                                                     bool overwrite) {
  RETURN_IF_ERROR(Check(FileOp::kOpenOutput, path));
  ASSIGN_OR_RETURN(auto out, base_->OpenOutput(path, overwrite));
  int64_t now = ++open_outputs_;
  int64_t peak = peak_open_outputs_.load();
  while (now > peak && !peak_open_outputs_.compare_exchange_weak(peak, now)) {
  }
  return std::unique_ptr<OutputFile>(new FaultyOutput(std::move(out), this));
}

Result<bool> FaultInjectingFileIO::Exists(const std::string& path) {
  RETURN_IF_ERROR(Check(FileOp::kExists, path));
  return base_->Exists(path);
}

Status FaultInjectingFileIO::Delete(const std::string& path) {
  RETURN_IF_ERROR(Check(FileOp::kDelete, path));
  return base_->Delete(path);
}

Result<std::vector<std::string>> FaultInjectingFileIO::List(const std::string& prefix) {
  RETURN_IF_ERROR(Check(FileOp::kList, prefix));
  return base_->List(prefix);
}

Result<std::vector<FileStatus>> FaultInjectingFileIO::ListStatus(const std::string& prefix) {
  RETURN_IF_ERROR(Check(FileOp::kList, prefix));
  return base_->ListStatus(prefix);
}

}  // namespace sluice
