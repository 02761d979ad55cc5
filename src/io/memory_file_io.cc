#include <map>
#include <mutex>

#include "io/file_io.h"

namespace sluice {
namespace {

using FileMap = std::map<std::string, std::shared_ptr<const std::string>>;

struct SharedState {
  std::mutex mu;
  FileMap files;  // guarded by mu
};

class MemoryInputFile final : public InputFile {
 public:
  MemoryInputFile(std::string path, std::shared_ptr<const std::string> data)
      : path_(std::move(path)), data_(std::move(data)) {}
  const std::string& path() const override { return path_; }
  int64_t size() const override { return static_cast<int64_t>(data_->size()); }
  Status ReadAt(int64_t offset, int64_t length, std::string* out) const override {
    RETURN_IF_ERROR(CheckReadRange(path_, offset, length, size()));
    out->assign(*data_, static_cast<size_t>(offset), static_cast<size_t>(length));
    return Status::OK();
  }

 private:
  std::string path_;
  std::shared_ptr<const std::string> data_;
};

class MemoryOutputFile final : public OutputFile {
 public:
  MemoryOutputFile(std::string path, std::shared_ptr<SharedState> state, bool overwrite)
      : path_(std::move(path)), state_(std::move(state)), overwrite_(overwrite) {}
  const std::string& path() const override { return path_; }
  Status Append(std::string_view data) override {
    if (closed_) return Status::Internal("file {}: append after close", path_);
    data_.append(data);
    return Status::OK();
  }
  int64_t position() const override { return static_cast<int64_t>(data_.size()); }
  Status Close(bool) override {
    if (closed_) return Status::Internal("file {}: closed twice", path_);
    closed_ = true;
    std::lock_guard<std::mutex> lock(state_->mu);
    if (!overwrite_ && state_->files.count(path_)) {
      return Status::AlreadyExists("file {} already exists", path_);
    }
    state_->files[path_] = std::make_shared<const std::string>(std::move(data_));
    return Status::OK();
  }
  void Abort() override { closed_ = true; }

 private:
  std::string path_;
  std::shared_ptr<SharedState> state_;
  bool overwrite_;
  bool closed_ = false;
  std::string data_;
};

class MemoryFileIO final : public FileIO {
 public:
  Result<std::unique_ptr<InputFile>> OpenInput(const std::string& path) override {
    std::lock_guard<std::mutex> lock(state_->mu);
    auto it = state_->files.find(path);
    if (it == state_->files.end()) return Status::NotFound("file {} does not exist", path);
    return std::unique_ptr<InputFile>(new MemoryInputFile(path, it->second));
  }
  Result<std::unique_ptr<OutputFile>> OpenOutput(const std::string& path, bool overwrite) override {
    {
      std::lock_guard<std::mutex> lock(state_->mu);
      if (!overwrite && state_->files.count(path)) {
        return Status::AlreadyExists("file {} already exists", path);
      }
    }
    return std::unique_ptr<OutputFile>(new MemoryOutputFile(path, state_, overwrite));
  }
  Result<bool> Exists(const std::string& path) override {
    std::lock_guard<std::mutex> lock(state_->mu);
    return state_->files.count(path) > 0;
  }
  Status Delete(const std::string& path) override {
    std::lock_guard<std::mutex> lock(state_->mu);
    if (state_->files.erase(path) == 0) return Status::NotFound("file {} does not exist", path);
    return Status::OK();
  }
  Result<std::vector<std::string>> List(const std::string& prefix) override {
    std::lock_guard<std::mutex> lock(state_->mu);
    std::vector<std::string> out;
    for (auto it = state_->files.lower_bound(prefix);
         it != state_->files.end() && it->first.compare(0, prefix.size(), prefix) == 0; ++it) {
      out.push_back(it->first);
    }
    return out;
  }

 private:
  std::shared_ptr<SharedState> state_ = std::make_shared<SharedState>();
};

}  // namespace

std::unique_ptr<FileIO> MakeMemoryFileIO() { return std::make_unique<MemoryFileIO>(); }

}  // namespace sluice
