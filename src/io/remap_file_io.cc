#include "io/remap_file_io.h"

namespace sluice {

std::string ApplyRemap(const std::string& path, const Remaps& remaps) {
  for (const auto& [from, to] : remaps) {
    if (path.compare(0, from.size(), from) == 0) return to + path.substr(from.size());
  }
  return path;
}

namespace {

// `path` (reached through a remap) back in the form its caller used.
std::string Unmap(const std::string& path, const Remaps& remaps) {
  for (const auto& [from, to] : remaps) {
    if (path.compare(0, to.size(), to) == 0) return from + path.substr(to.size());
  }
  return path;
}

class RemappedInput : public InputFile {
 public:
  RemappedInput(std::unique_ptr<InputFile> in, std::string path)
      : in_(std::move(in)), path_(std::move(path)) {}
  const std::string& path() const override { return path_; }
  int64_t size() const override { return in_->size(); }
  Status ReadAt(int64_t offset, int64_t length, std::string* out) const override {
    return in_->ReadAt(offset, length, out);
  }

 private:
  std::unique_ptr<InputFile> in_;
  std::string path_;
};

class RemappedOutput : public OutputFile {
 public:
  RemappedOutput(std::unique_ptr<OutputFile> out, std::string path)
      : out_(std::move(out)), path_(std::move(path)) {}
  const std::string& path() const override { return path_; }
  Status Append(std::string_view data) override { return out_->Append(data); }
  int64_t position() const override { return out_->position(); }
  Status Close(bool sync) override { return out_->Close(sync); }
  void Abort() override { out_->Abort(); }

 private:
  std::unique_ptr<OutputFile> out_;
  std::string path_;
};

class RemapFileIO : public FileIO {
 public:
  RemapFileIO(FileIO& base, Remaps remaps) : base_(base), remaps_(std::move(remaps)) {}

  Result<std::unique_ptr<InputFile>> OpenInput(const std::string& path) override {
    ASSIGN_OR_RETURN(auto in, base_.OpenInput(ApplyRemap(path, remaps_)));
    return std::unique_ptr<InputFile>(std::make_unique<RemappedInput>(std::move(in), path));
  }
  Result<std::unique_ptr<OutputFile>> OpenOutput(const std::string& path, bool overwrite) override {
    ASSIGN_OR_RETURN(auto out, base_.OpenOutput(ApplyRemap(path, remaps_), overwrite));
    return std::unique_ptr<OutputFile>(std::make_unique<RemappedOutput>(std::move(out), path));
  }
  Result<bool> Exists(const std::string& path) override {
    return base_.Exists(ApplyRemap(path, remaps_));
  }
  Status Delete(const std::string& path) override {
    return base_.Delete(ApplyRemap(path, remaps_));
  }
  Result<std::vector<std::string>> List(const std::string& prefix) override {
    ASSIGN_OR_RETURN(auto paths, base_.List(ApplyRemap(prefix, remaps_)));
    for (std::string& p : paths) p = Unmap(p, remaps_);
    return paths;
  }
  Result<std::vector<FileStatus>> ListStatus(const std::string& prefix) override {
    ASSIGN_OR_RETURN(auto files, base_.ListStatus(ApplyRemap(prefix, remaps_)));
    for (FileStatus& f : files) f.path = Unmap(f.path, remaps_);
    return files;
  }

 private:
  FileIO& base_;
  const Remaps remaps_;
};

}  // namespace

std::unique_ptr<FileIO> MakeRemapFileIO(FileIO& base, Remaps remaps) {
  return std::make_unique<RemapFileIO>(base, std::move(remaps));
}

}  // namespace sluice
